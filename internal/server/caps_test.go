package server

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/memstore"
)

// TestMemoryStoreBounded: the memory store at its bounds, through the whole
// server, every answer checked against openapi.yaml. A keyed create beyond
// the kept outcomes is refused 507 idempotency_keys_full with Retry-After
// (no outcome is forgotten to make room), an unkeyed one still stores; a
// create beyond the pets is refused 507 store_full; a refusal writes
// nothing; a kept outcome replays (and refuses another body) at both bounds.
func TestMemoryStoreBounded(t *testing.T) {
	const key = "cap-key-0123456789abcdef0123456789"
	base, _, _, _ := startServer(t, map[string]string{
		"PETSTORE_API_KEYS":             key,
		"PETSTORE_MAX_PETS":             "3",
		"PETSTORE_MAX_IDEMPOTENCY_KEYS": "2",
		"PETSTORE_IDEMPOTENCY_TTL":      "2h",
	})
	c := &apitest.Client{Contract: apitest.Load(t), BaseURL: base, Key: key}
	create := func(body, idemKey string) apitest.Response {
		t.Helper()
		if idemKey == "" {
			return c.Do(t, "POST", apitest.Path("/pets"), body)
		}
		return c.Do(t, "POST", apitest.Path("/pets"), body, "Idempotency-Key", idemKey)
	}
	want := func(what string, res apitest.Response, status int, code string) {
		t.Helper()
		if res.Status != status {
			t.Fatalf("%s: got %d %s, want %d", what, res.Status, res.Body, status)
		}
		if code != "" {
			if e := res.Error(t); string(e.Code) != code {
				t.Fatalf("%s: got code %q, want %q", what, e.Code, code)
			}
		}
	}
	count := func() int {
		t.Helper()
		var page []map[string]any
		c.Do(t, "GET", apitest.Path("/pets?limit=100"), "").JSON(t, &page)
		return len(page)
	}

	first := create(apitest.Body(`{"name":"Rex","categoryId":1}`), "k1")
	want("keyed create 1", first, http.StatusCreated, "")
	want("keyed create 2", create(apitest.Body(`{"name":"Tom","categoryId":1}`), "k2"), http.StatusCreated, "")

	full := create(apitest.Body(`{"name":"Kit","categoryId":1}`), "k3")
	want("keyed create beyond the kept outcomes", full, http.StatusInsufficientStorage, "idempotency_keys_full")
	ra, err := strconv.Atoi(full.Header.Get("Retry-After"))
	if err != nil || ra < 7000 || ra > 7200 {
		t.Errorf("Retry-After: got %q, want the seconds until k1's outcome expires (about 7200)", full.Header.Get("Retry-After"))
	}
	if n := count(); n != 2 {
		t.Fatalf("pets after the refusal: got %d, want 2", n)
	}
	replay := create(apitest.Body(`{"name":"Rex","categoryId":1}`), "k1")
	want("replay at the outcomes' bound", replay, http.StatusCreated, "")
	if replay.Header.Get("Idempotent-Replayed") != "true" || string(replay.Body) != string(first.Body) {
		t.Errorf("replay: got %s (Idempotent-Replayed %q), want %s replayed", replay.Body, replay.Header.Get("Idempotent-Replayed"), first.Body)
	}
	want("k1 for another pet", create(apitest.Body(`{"name":"Max","categoryId":1}`), "k1"), http.StatusUnprocessableEntity, "idempotency_key_reused")

	want("unkeyed create at the outcomes' bound", create(apitest.Body(`{"name":"Ada","categoryId":1}`), ""), http.StatusCreated, "")
	stored := create(apitest.Body(`{"name":"Bob","categoryId":1}`), "")
	want("unkeyed create beyond the pets", stored, http.StatusInsufficientStorage, "store_full")
	if h := stored.Header.Get("Retry-After"); h != "" {
		t.Errorf("store_full: Retry-After %q, want none (pets are never removed)", h)
	}
	want("keyed create beyond the pets", create(apitest.Body(`{"name":"Kit","categoryId":1}`), "k3"), http.StatusInsufficientStorage, "store_full")
	want("replay at the pets' bound", create(apitest.Body(`{"name":"Tom","categoryId":1}`), "k2"), http.StatusCreated, "")
	if n := count(); n != 3 {
		t.Fatalf("pets at the bound: got %d, want 3", n)
	}
	want("a read at the bound", c.Do(t, "GET", apitest.Path("/pets/1"), ""), http.StatusOK, "")
}

// TestBoundsFlags: the bounds' defaults are memstore's, and a bound that is
// not a positive integer stops the start with one line naming it.
func TestBoundsFlags(t *testing.T) {
	cfg, err := configure(nil, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxPets != memstore.DefaultMaxPets || cfg.MaxIdempotencyKeys != memstore.DefaultMaxKeys {
		t.Errorf("defaults: got %d pets, %d keys; want %d, %d", cfg.MaxPets, cfg.MaxIdempotencyKeys, memstore.DefaultMaxPets, memstore.DefaultMaxKeys)
	}
	for _, tc := range []struct{ env, value string }{
		{"PETSTORE_MAX_PETS", "0"},
		{"PETSTORE_MAX_PETS", "1e6"},
		{"PETSTORE_MAX_IDEMPOTENCY_KEYS", "-1"},
		{"PETSTORE_MAX_CONNECTIONS", "0"},
		{"PETSTORE_MAX_CONNECTIONS", "many"},
	} {
		_, err := configure(nil, func(k string) string {
			if k == tc.env {
				return tc.value
			}
			return ""
		})
		if err == nil {
			t.Errorf("%s=%s: got no error", tc.env, tc.value)
			continue
		}
		if want := fmt.Sprintf("%s %q", tc.env, tc.value); !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s=%s: got %q, want it to start with %s", tc.env, tc.value, err, want)
		}
	}
}

// TestConnectionLimit: auto leaves an eighth of the descriptors (at least
// 64) to other uses and takes at most 1024; a number must fit the room.
func TestConnectionLimit(t *testing.T) {
	for _, tc := range []struct {
		value  string
		nofile int
		want   int
		err    string
	}{
		{"auto", 1024, 896, ""},
		{"auto", 256, 192, ""},
		{"auto", 1 << 20, 1024, ""},
		{"auto", 0, 1024, ""},
		{"5000", 1 << 20, 5000, ""},
		{"897", 1024, 0, "want at most 896"},
		{"auto", 64, 0, "only 64 file descriptors"},
		{"+5", 1024, 0, "want auto or a positive integer"},
	} {
		got, err := connectionLimit(tc.value, tc.nofile)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s with %d descriptors: got %d, %v; want an error containing %q", tc.value, tc.nofile, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s with %d descriptors: got %d, %v; want %d", tc.value, tc.nofile, got, err, tc.want)
		}
	}
}

package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/pets"
)

// created checks a 201 answer to a create and returns its pet, and whether
// it is marked as a replay.
func created(t *testing.T, res apitest.Response) (gen.Pet, bool) {
	t.Helper()
	if res.Status != http.StatusCreated {
		t.Fatalf("got %d %s, want 201", res.Status, res.Body)
	}
	var p gen.Pet
	res.JSON(t, &p)
	if want := apitest.Path(fmt.Sprintf("/pets/%d", p.Id)); res.Header.Get("Location") != want {
		t.Fatalf("Location: got %q, want %q", res.Header.Get("Location"), want)
	}
	switch v := res.Header.Values("Idempotent-Replayed"); {
	case len(v) == 0:
		return p, false
	case len(v) == 1 && v[0] == "true":
		return p, true
	default:
		t.Fatalf("Idempotent-Replayed: got %q, want absent or true", v)
		return p, false
	}
}

// testIdempotentCreate walks the table of the contract's Idempotency-Key
// cases in order, through the whole app, on one store.
func testIdempotentCreate(t *testing.T, c *apitest.Client) {
	other := *c
	other.Key = otherKey
	rex := apitest.Body(`{"name":"Rex","categoryId":3}`)
	var first gen.Pet
	for _, tc := range []struct {
		name   string
		client *apitest.Client
		key    string // the Idempotency-Key header; none when empty
		body   string
		status int
		code   gen.ErrorCode
		replay bool // want a replay of first
	}{
		{name: "first", key: "k-1", body: rex, status: 201},
		{name: "retry", key: "k-1", body: rex, status: 201, replay: true},
		{name: "retry, members reordered, default spelt out", key: "k-1", body: apitest.Body("{ \"status\": \"available\",\n \"categoryId\": 3, \"name\": \"R\\u0065x\" }"), status: 201, replay: true},
		{name: "retry, structured-field form", key: `"k-1"`, body: rex, status: 201, replay: true},
		{name: "same key, another name", key: "k-1", body: apitest.Body(`{"name":"Tom","categoryId":3}`), status: 422, code: gen.ErrorCodeIdempotencyKeyReused},
		{name: "same key, another status", key: "k-1", body: apitest.Body(`{"name":"Rex","categoryId":3,"status":"sold"}`), status: 422, code: gen.ErrorCodeIdempotencyKeyReused},
		{name: "another API key, same key", client: &other, key: "k-1", body: rex, status: 201},
		{name: "another key", key: "k-2", body: rex, status: 201},
		{name: "no key", body: rex, status: 201},
		{name: "bad body with a key", key: "k-3", body: apitest.Body(`{"name":"","categoryId":3}`), status: 400, code: gen.ErrorCodeInvalidRequest},
		{name: "the key of a refused request is free", key: "k-3", body: rex, status: 201},
		{name: "first still replays", key: "k-1", body: rex, status: 201, replay: true},
	} {
		client := tc.client
		if client == nil {
			client = c
		}
		var header []string
		if tc.key != "" {
			header = []string{"Idempotency-Key", tc.key}
		}
		res := client.Do(t, "POST", apitest.Path("/pets"), tc.body, header...)
		if tc.status != 201 {
			wantError(t, res, tc.status, tc.code, "")
			continue
		}
		p, replayed := created(t, res)
		switch {
		case tc.name == "first":
			first = p
		case tc.replay && (!replayed || p != first):
			t.Fatalf("%s: got %+v, replayed %v; want %+v replayed", tc.name, p, replayed, first)
		case !tc.replay && (replayed || p.Id == first.Id):
			t.Fatalf("%s: got %+v, replayed %v; want a new pet", tc.name, p, replayed)
		}
	}
	var list []gen.Pet
	c.Do(t, "GET", apitest.Path("/pets"), "").JSON(t, &list)
	if len(list) != 5 || list[0] != first {
		t.Fatalf("after the table: got %d pets (%+v), want 5, the first %+v", len(list), list, first)
	}
}

// testIdempotentConcurrent: one key sent many times at once creates one pet;
// every answer is that pet (once fresh, else replayed) or the documented 409.
func testIdempotentConcurrent(t *testing.T, c *apitest.Client) {
	const n = 12
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		results []apitest.Response
	)
	start := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			res := c.Do(t, "POST", apitest.Path("/pets"), apitest.Body(`{"name":"Rex","categoryId":3}`), "Idempotency-Key", "race")
			mu.Lock()
			results = append(results, res)
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	var list []gen.Pet
	c.Do(t, "GET", apitest.Path("/pets"), "").JSON(t, &list)
	if len(list) != 1 {
		t.Fatalf("%d concurrent creates with one key: %d pets, want 1", n, len(list))
	}
	fresh, conflicts := 0, 0
	for _, res := range results {
		if res.Status == http.StatusConflict {
			wantError(t, res, http.StatusConflict, gen.ErrorCodeIdempotencyKeyInFlight, "retry later")
			conflicts++
			continue
		}
		p, replayed := created(t, res)
		if p != list[0] {
			t.Fatalf("answer %+v, want the one pet %+v", p, list[0])
		}
		if !replayed {
			fresh++
		}
	}
	if fresh != 1 {
		t.Fatalf("%d answers not marked as replays, want 1", fresh)
	}
	t.Logf("%d concurrent creates: 1 created, %d replayed, %d in flight", n, n-1-conflicts, conflicts)
}

// TestIdempotencyErrors: each store error of an idempotent create gets its
// documented answer, and a 503 says whether the pet may have been created.
func TestIdempotencyErrors(t *testing.T) {
	body := apitest.Body(`{"name":"Rex","categoryId":1}`)
	lost := fmt.Errorf("commit: %w: %w: unexpected EOF", pets.ErrUnavailable, pets.ErrOutcomeUnknown)
	for _, tc := range []struct {
		name   string
		err    error
		key    bool
		status int
		code   gen.ErrorCode
		msg    string
	}{
		{"in flight", fmt.Errorf("k: %w", pets.ErrKeyInFlight), true, 409, gen.ErrorCodeIdempotencyKeyInFlight, "retry later with the same key"},
		{"reused", fmt.Errorf("k: %w", pets.ErrKeyReused), true, 422, gen.ErrorCodeIdempotencyKeyReused, "a different request"},
		{"outcome unknown, with a key", lost, true, 503, gen.ErrorCodeOutcomeUnknown, "the pet may have been created; retry with the same Idempotency-Key"},
		{"outcome unknown, without a key", lost, false, 503, gen.ErrorCodeOutcomeUnknown, "the pet may have been created; list the pets"},
		{"nothing written, with a key", fmt.Errorf("dial: %w", pets.ErrUnavailable), true, 503, gen.ErrorCodeUnavailable, "nothing was written"},
		{"nothing written, without a key", fmt.Errorf("dial: %w", pets.ErrUnavailable), false, 503, gen.ErrorCodeUnavailable, "nothing was written"},
		{"deadline before sending", context.DeadlineExceeded, true, 503, gen.ErrorCodeUnavailable, "nothing was written"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, failingStore{err: tc.err})
			var header []string
			if tc.key {
				header = []string{"Idempotency-Key", "k"}
			}
			wantError(t, c.Do(t, "POST", apitest.Path("/pets"), body, header...), tc.status, tc.code, tc.msg)
		})
	}
	if errors.Is(lost, pets.ErrOutcomeUnknown) != true {
		t.Fatal("the lost error does not wrap ErrOutcomeUnknown")
	}
}

// TestIdempotencyKeyEmpty: a header sent with no value (which apitest's
// header pairs cannot send) is refused, not taken for no header.
func TestIdempotencyKeyEmpty(t *testing.T) {
	c := newClient(t, memstore.New())
	req := httptest.NewRequest("POST", apitest.Path("/pets"), strings.NewReader(apitest.Body(`{"name":"Rex","categoryId":1}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.Key)
	req.Header["Idempotency-Key"] = []string{""}
	rec := httptest.NewRecorder()
	c.Handler.ServeHTTP(rec, req)
	res := apitest.Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	c.Contract.Check(t, req, res.Status, res.Header, res.Body)
	wantError(t, res, http.StatusBadRequest, gen.ErrorCodeInvalidRequest, "Idempotency-Key")
	if list := c.Do(t, "GET", apitest.Path("/pets"), ""); strings.TrimSpace(string(list.Body)) != "[]" {
		t.Fatalf("after the refused create: GET /pets got %s, want []", list.Body)
	}
}

package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/syncbuf"
)

// startServer runs the whole program on a loopback port and returns its base
// URL, its log, and a function that stops it and returns run's error.
func startServer(t *testing.T, env map[string]string) (baseURL string, stdout, stderr *syncbuf.Buffer, stop func() error) {
	t.Helper()
	stdout = &syncbuf.Buffer{}
	baseURL, stderr, stop = apitest.Start(t, env, stdout, func(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer) error {
		return run(ctx, []string{"petstore"}, getenv, stdout, stderr)
	})
	return baseURL, stdout, stderr, stop
}

func TestServeEndToEnd(t *testing.T) {
	const key = "e2e-key-0123456789abcdef0123456789"
	base, stdout, stderr, stop := startServer(t, map[string]string{"PETSTORE_API_KEYS": key})
	c := &apitest.Client{Contract: apitest.Load(t), BaseURL: base, Key: key}

	res := c.Do(t, "POST", apitest.Path("/pets"), apitest.Body(`{"name":"Rex","categoryId":3}`), "X-Request-Id", "e2e-create-1")
	if res.Status != http.StatusCreated {
		t.Fatalf("create: got %d %s", res.Status, res.Body)
	}
	var p gen.Pet
	res.JSON(t, &p)
	res = c.Do(t, "GET", apitest.Path("/pets?status=available"), "")
	var list []gen.Pet
	res.JSON(t, &list)
	if res.Status != http.StatusOK || len(list) != 1 || list[0] != p {
		t.Fatalf("list: got %d %+v, want [%+v]", res.Status, list, p)
	}
	if res := c.Do(t, "GET", apitest.Path("/pets/999"), ""); res.Status != http.StatusNotFound {
		t.Fatalf("get unknown: got %d", res.Status)
	}
	anon := *c
	anon.Key = ""
	if res := anon.Do(t, "GET", apitest.Path("/pets"), ""); res.Status != http.StatusUnauthorized {
		t.Fatalf("no key: got %d", res.Status)
	}

	// This server's request ids share a random prefix; another test's
	// server may take the freed port after shutdown, and has another.
	res = c.Do(t, "GET", "/healthz", "")
	id := res.Header.Get("X-Request-Id")
	prefix := id[:strings.LastIndexByte(id, '-')+1]
	if prefix == "" {
		t.Fatalf("X-Request-Id %q: want a generated id, prefix-counter", id)
	}

	if err := stop(); err != nil {
		t.Fatalf("run after cancel: got %v, want nil (clean shutdown)", err)
	}
	logs := stdout.String()
	for _, want := range []string{`"msg":"request"`, `"method":"POST"`, `"path":"` + apitest.Base() + `/pets"`, `"status":201`, `"request_id":"e2e-create-1"`, `"latency":`, `"msg":"stopped"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %s:\n%s", want, logs)
		}
	}
	if strings.Contains(logs+stderr.String(), key) {
		t.Errorf("the API key appears in the output")
	}
	if res, err := http.Get(base + "/healthz"); err == nil {
		res.Body.Close()
		if strings.HasPrefix(res.Header.Get("X-Request-Id"), prefix) {
			t.Errorf("server still answers after shutdown")
		}
	}
}

func TestBadConfiguration(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	refused := apitest.RefusedAddr(t)
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"bad log format", nil, map[string]string{"PETSTORE_LOG_FORMAT": "xml"}, `PETSTORE_LOG_FORMAT "xml": want json or text`},
		{"short key", nil, map[string]string{"PETSTORE_API_KEYS": "abc"}, "PETSTORE_API_KEYS: API key 1"},
		{"short key flag", []string{"-api-keys", "short"}, map[string]string{}, "-api-keys: API key 1: want " + apikey.Syntax},
		{"short key flag beats env", []string{"-api-keys", "short"}, map[string]string{"PETSTORE_API_KEYS": "fine-key-0123456789abcdef0123456789"}, "-api-keys: API key 1"},
		{"missing keys file flag", []string{"-api-keys-file", missing}, map[string]string{}, "-api-keys-file: open"},
		{"extra argument", []string{"serve", "extra"}, map[string]string{}, `serve: unexpected argument "extra"`},
		{"shutdown delay not a duration", nil, map[string]string{"PETSTORE_SHUTDOWN_DELAY": "soon"}, `PETSTORE_SHUTDOWN_DELAY "soon": want a duration from 0s`},
		{"shutdown delay negative", []string{"-shutdown-delay", "-1s"}, map[string]string{}, `-shutdown-delay "-1s"`},
		{"bad log format flag", []string{"-log-format", "xml"}, map[string]string{}, `-log-format "xml"`},
		{"missing keys file", nil, map[string]string{"PETSTORE_API_KEYS_FILE": missing}, "PETSTORE_API_KEYS_FILE"},
		{"bad address", nil, map[string]string{"PETSTORE_ADDR": "nonsense"}, `PETSTORE_ADDR "nonsense": address nonsense: missing port in address`},
		{"port out of range", []string{"-addr", ":99999"}, map[string]string{}, `-addr ":99999": address 99999: invalid port`},
		{"unknown flag", []string{"-bogus"}, map[string]string{}, "flag provided but not defined"},
		{"unknown command", []string{"fly"}, map[string]string{}, `unknown command "fly"`},
		{"flag beats env", []string{"-log-format", "yaml"}, map[string]string{"PETSTORE_LOG_FORMAT": "text"}, `-log-format "yaml"`},
		{"bad database url", nil, map[string]string{"PETSTORE_DATABASE_URL": "postgres://%zz"}, "PETSTORE_DATABASE_URL: cannot parse"},
		{"unreachable database", nil, map[string]string{"PETSTORE_DATABASE_URL": "postgres://petstore:secret-pw@" + refused + "/petstore"}, "PETSTORE_DATABASE_URL: pgstore: migrate: store unavailable"},
		{"idempotency TTL not a duration", nil, map[string]string{"PETSTORE_IDEMPOTENCY_TTL": "1 day"}, `PETSTORE_IDEMPOTENCY_TTL "1 day": want a duration from 1s to 720h`},
		{"idempotency TTL zero", nil, map[string]string{"PETSTORE_IDEMPOTENCY_TTL": "0s"}, `PETSTORE_IDEMPOTENCY_TTL "0s"`},
		{"idempotency TTL negative", []string{"-idempotency-ttl", "-1h"}, map[string]string{}, `-idempotency-ttl "-1h"`},
		{"idempotency TTL too long", nil, map[string]string{"PETSTORE_IDEMPOTENCY_TTL": "721h"}, `PETSTORE_IDEMPOTENCY_TTL "721h"`},
		{"idempotency TTL flag beats env", []string{"-idempotency-ttl", "5"}, map[string]string{"PETSTORE_IDEMPOTENCY_TTL": "1h"}, `-idempotency-ttl "5"`},
		{"pprof on every interface", []string{"-pprof", ":6060"}, map[string]string{}, `-pprof ":6060": want a loopback host`},
		{"pprof on a public address", nil, map[string]string{"PETSTORE_PPROF_ADDR": "192.0.2.1:6060"}, `PETSTORE_PPROF_ADDR "192.0.2.1:6060"`},
		{"pprof without port", []string{"-pprof", "127.0.0.1"}, map[string]string{}, `-pprof "127.0.0.1"`},
		{"database flag beats env", []string{"-database-url", "postgres://%zz"}, map[string]string{"PETSTORE_DATABASE_URL": "postgres://127.0.0.1:1/x"}, "-database-url: cannot parse"},
		{"key of the old minimum", nil, map[string]string{"PETSTORE_API_KEYS": "dev-key-0123456789"}, "PETSTORE_API_KEYS: API key 1: want 32–256 characters"},
		{"auth failures not a rate", nil, map[string]string{"PETSTORE_AUTH_FAILURES": "many"}, `PETSTORE_AUTH_FAILURES "many": want N/s or N/m`},
		{"auth failures none", []string{"-auth-failures", "0/s"}, map[string]string{}, `-auth-failures "0/s": count 0`},
		{"trusted proxy not an address", nil, map[string]string{"PETSTORE_TRUSTED_PROXIES": "10.0.0.0/8,lb.internal"}, `PETSTORE_TRUSTED_PROXIES "10.0.0.0/8,lb.internal": "lb.internal": want an IP address or a CIDR prefix`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(context.Background(), append([]string{"petstore"}, tc.args...), func(k string) string { return tc.env[k] }, &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run: got %v, want an error containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q spans lines; want one clear line", err)
			}
			if strings.Contains(err.Error()+out.String()+errOut.String(), "secret-pw") {
				t.Errorf("the database password appears in the output: %v", err)
			}
		})
	}
}

func TestKeygen(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"petstore", "keygen"}, func(string) string { return "" }, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("keygen: got %q, want a key line and a digest line", out.String())
	}
	ds, err := apikey.ParseDigests(strings.NewReader(lines[1]))
	if err != nil {
		t.Fatalf("digest line %q: %v", lines[1], err)
	}
	if _, ok := apikey.NewSet(ds...).Verify(lines[0]); !ok {
		t.Fatalf("key %q does not verify against its digest line %q", lines[0], lines[1])
	}
}

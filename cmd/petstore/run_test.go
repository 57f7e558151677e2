package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/syncbuf"
)

// serveSetting starts the server with a key and one setting from the
// environment, requires its listening line to name the setting as logged,
// and returns a client of it.
func serveSetting(t *testing.T, env, value, logged string) *apitest.Client {
	t.Helper()
	const key = "e2e-key-0123456789abcdef0123456789"
	base, stdout, _, _ := startServer(t, map[string]string{"PETSTORE_API_KEYS": key, env: value})
	if !strings.Contains(stdout.String(), logged) {
		t.Errorf("the listening line does not name %s=%s:\n%s", env, value, stdout)
	}
	return &apitest.Client{Contract: apitest.Load(t), BaseURL: base, Key: key}
}

// startServer runs the whole program on a loopback port and returns its base
// URL, its log, and a function that stops it and returns run's error.
func startServer(t *testing.T, env map[string]string) (baseURL string, stdout, stderr *syncbuf.Buffer, stop func() error) {
	t.Helper()
	stdout = &syncbuf.Buffer{}
	baseURL, stderr, stop = startServerTo(t, env, stdout)
	return baseURL, stdout, stderr, stop
}

// startServerTo is startServer with the log written to stdout.
func startServerTo(t *testing.T, env map[string]string, stdout interface {
	io.Writer
	String() string
}) (baseURL string, stderr *syncbuf.Buffer, stop func() error) {
	t.Helper()
	env["PETSTORE_ADDR"] = "127.0.0.1:0"
	if _, ok := env["PETSTORE_SHUTDOWN_DELAY"]; !ok {
		env["PETSTORE_SHUTDOWN_DELAY"] = "0" // stop at once; drain_test.go tests the delay
	}
	ctx, cancel := context.WithCancel(context.Background())
	stderr = &syncbuf.Buffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"petstore"}, func(k string) string { return env[k] }, stdout, stderr)
	}()
	var addr string
	apitest.Eventually(t, "the listening log line", func() bool {
		select {
		case err := <-done:
			t.Fatalf("run returned early: %v\nstderr: %s", err, stderr)
		default:
		}
		addr = logAddr(stdout.String(), "listening")
		return addr != ""
	})
	baseURL = "http://" + addr
	apitest.Eventually(t, "/healthz", func() bool {
		res, err := http.Get(baseURL + "/healthz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	var once sync.Once
	var runErr error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(15 * time.Second):
				t.Fatal("run did not return after cancel")
			}
		})
		return runErr
	}
	t.Cleanup(func() { stop() })
	return baseURL, stderr, stop
}

// logAddr returns the addr of the first JSON log line whose msg is msg, or "".
func logAddr(log, msg string) string {
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		var line struct{ Msg, Addr string }
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == msg {
			return line.Addr
		}
	}
	return ""
}

func TestServeEndToEnd(t *testing.T) {
	const key = "e2e-key-0123456789abcdef0123456789"
	base, stdout, stderr, stop := startServer(t, map[string]string{"PETSTORE_API_KEYS": key})
	c := &apitest.Client{Contract: apitest.Load(t), BaseURL: base, Key: key}

	res := c.Do(t, "POST", apitest.Path("/pets"), `{"name":"Rex","categoryId":3}`, "X-Request-Id", "e2e-create-1")
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

// TestShutdownFinishesInFlight checks that a request being served when the
// context is cancelled still gets its answer.
func TestShutdownFinishesInFlight(t *testing.T) {
	const key = "e2e-key-0123456789abcdef0123456789"
	base, stdout, _, stop := startServer(t, map[string]string{"PETSTORE_API_KEYS": key})
	defer func() {
		if t.Failed() {
			t.Logf("server log:\n%s", stdout)
		}
	}()
	// With Expect: 100-continue the server asks for the body only once the
	// handler reads it, so Got100Continue proves the request is in flight.
	pr, pw := io.Pipe()
	continued := make(chan struct{})
	trace := &httptrace.ClientTrace{Got100Continue: func() { close(continued) }}
	req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "POST", base+apitest.Path("/pets"), pr)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Expect", "100-continue")
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, ExpectContinueTimeout: time.Minute}}
	got := make(chan int, 1)
	go func() {
		res, err := client.Do(req)
		if err != nil {
			t.Logf("in-flight request: %v", err)
			got <- -1
			return
		}
		res.Body.Close()
		got <- res.StatusCode
	}()
	select {
	case <-continued:
	case <-time.After(10 * time.Second):
		t.Fatal("no 100 Continue from the server")
	}
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	// Shutdown has begun once new connections are refused.
	apitest.Eventually(t, "the listener to close", func() bool {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
		}
		return err != nil
	})
	pw.Write([]byte(`{"name":"Slow","categoryId":1}`))
	pw.Close()
	if status := <-got; status != http.StatusCreated {
		t.Fatalf("in-flight create: got %d, want 201", status)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("run: got %v, want nil", err)
	}
}

func TestGeneratedKey(t *testing.T) {
	base, stdout, stderr, _ := startServer(t, map[string]string{})
	var key string
	for _, f := range strings.Fields(stderr.String()) {
		if strings.HasPrefix(f, apikey.Prefix) {
			key = f
		}
	}
	if key == "" {
		t.Fatalf("no generated key printed on stderr: %q", stderr)
	}
	c := &apitest.Client{Contract: apitest.Load(t), BaseURL: base, Key: key}
	if res := c.Do(t, "GET", apitest.Path("/pets"), ""); res.Status != http.StatusOK {
		t.Fatalf("with the generated key: got %d %s", res.Status, res.Body)
	}
	if strings.Contains(stdout.String(), key) {
		t.Errorf("the generated key appears in the log")
	}
}

func TestKeysFile(t *testing.T) {
	key, digest, err := apikey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(file, []byte("# ops team\n"+digest.String()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base, _, _, _ := startServer(t, map[string]string{"PETSTORE_API_KEYS_FILE": file})
	c := &apitest.Client{Contract: apitest.Load(t), BaseURL: base, Key: key}
	if res := c.Do(t, "GET", apitest.Path("/pets"), ""); res.Status != http.StatusOK {
		t.Fatalf("with a key from the file: got %d %s", res.Status, res.Body)
	}
	c.Key = "psk_not-the-right-key-000000000000"
	if res := c.Do(t, "GET", apitest.Path("/pets"), ""); res.Status != http.StatusUnauthorized {
		t.Fatalf("with another key: got %d", res.Status)
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

// TestPprof checks that -pprof serves the profiles on the loopback address
// it names, beside the API, and that they stop with the server.
func TestPprof(t *testing.T) {
	_, stdout, _, stop := startServer(t, map[string]string{"PETSTORE_API_KEYS": "pprof-key-0123456789abcdef0123456789", "PETSTORE_PPROF_ADDR": "127.0.0.1:0"})
	addr := logAddr(stdout.String(), "pprof listening")
	if addr == "" {
		t.Fatalf("no pprof listening line with its address in the log:\n%s", stdout)
	}
	res, err := http.Get("http://" + addr + "/debug/pprof/heap?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "heap profile") {
		t.Fatalf("heap profile: got %d %.200s", res.StatusCode, body)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	apitest.Eventually(t, "pprof closed after shutdown", func() bool {
		res, err := http.Get("http://" + addr + "/debug/pprof/heap?debug=1")
		if err != nil {
			return true
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		// Another test's listener may have taken the freed port since.
		return !strings.Contains(string(body), "heap profile")
	})
}

// TestNoLogLineLostAtShutdown checks that the access log has every
// request's line by the time run returns from a clean shutdown.
func TestNoLogLineLostAtShutdown(t *testing.T) {
	const key, n = "shutdown-key-0123456789abcdef0123456789", 200
	base, stdout, _, stop := startServer(t, map[string]string{"PETSTORE_API_KEYS": key})
	c := &apitest.Client{Contract: apitest.Load(t), BaseURL: base, Key: key}
	for i := range n {
		if res := c.Do(t, "GET", apitest.Path("/pets"), "", "X-Request-Id", fmt.Sprintf("shutdown-%d", i)); res.Status != http.StatusOK {
			t.Fatalf("list: got %d", res.Status)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	logs := stdout.String()
	for i := range n {
		if !strings.Contains(logs, fmt.Sprintf(`"request_id":"shutdown-%d"`, i)) {
			t.Fatalf("no access log line for request %d of %d after shutdown", i, n)
		}
	}
	if !strings.HasSuffix(logs, "\"msg\":\"stopped\"}\n") {
		t.Errorf("log does not end with the stopped line:\n%.300s", logs[max(0, len(logs)-300):])
	}
}

// flakyWriter is a syncbuf.Buffer whose writes fail while fail is set; refused
// counts the writes it failed.
type flakyWriter struct {
	syncbuf.Buffer
	fail    atomic.Bool
	refused atomic.Int64
}

func (w *flakyWriter) Write(p []byte) (int, error) {
	if w.fail.Load() {
		w.refused.Add(1)
		return 0, errors.New("disk full")
	}
	return w.Buffer.Write(p)
}

// TestLogResumesAfterWriteError: while the log's writer fails, the failure
// is reported once on stderr, however many lines fail; once it writes again,
// so does the log, and the lines of later requests are there; a second
// failing stretch is reported once again.
func TestLogResumesAfterWriteError(t *testing.T) {
	const key = "logerr-key-0123456789abcdef0123456789"
	out := &flakyWriter{}
	base, stderr, stop := startServerTo(t, map[string]string{"PETSTORE_API_KEYS": key}, out)
	c := &apitest.Client{Contract: apitest.Load(t), BaseURL: base, Key: key}
	failStretch := func() {
		t.Helper()
		out.fail.Store(true)
		from := out.refused.Load()
		apitest.Eventually(t, "three log writes failed", func() bool {
			c.Do(t, "GET", apitest.Path("/pets"), "")
			return out.refused.Load() >= from+3
		})
		out.fail.Store(false)
	}
	failStretch()
	const n = 20
	for i := range n {
		c.Do(t, "GET", apitest.Path("/pets"), "", "X-Request-Id", fmt.Sprintf("after-error-%d", i))
	}
	for i := range n {
		if !strings.Contains(out.String(), fmt.Sprintf(`"request_id":"after-error-%d"`, i)) {
			t.Fatalf("no access log line for request %d after the writer recovered:\n%s", i, out.String())
		}
	}
	if got := strings.Count(stderr.String(), "disk full"); got != 1 {
		t.Errorf("stderr reports the first failing stretch %d times, want once:\n%s", got, stderr)
	}
	failStretch()
	c.Do(t, "GET", apitest.Path("/pets"), "")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(stderr.String(), "disk full"); got != 2 {
		t.Errorf("stderr reports two failing stretches %d times, want twice:\n%s", got, stderr)
	}
}

// TestWrongKeysThrottledByDefault: serve limits wrong keys per client
// address unless told otherwise: 30 at once from one address, then 429
// with Retry-After, for the valid key too; -auth-failures off lifts it.
func TestWrongKeysThrottledByDefault(t *testing.T) {
	const key = "throttle-key-0123456789abcdef0123456789"
	for _, tc := range []struct {
		failures string
		want     int
	}{{"", http.StatusTooManyRequests}, {"off", http.StatusOK}} {
		env := map[string]string{"PETSTORE_API_KEYS": key}
		if tc.failures != "" {
			env["PETSTORE_AUTH_FAILURES"] = tc.failures
		}
		base, _, _, _ := startServer(t, env)
		c := &apitest.Client{Contract: apitest.Load(t), BaseURL: base, Key: "wrong-key-0123456789abcdef0123456789"}
		for i := range 30 {
			if res := c.Do(t, "GET", apitest.Path("/pets"), ""); res.Status != http.StatusUnauthorized {
				t.Fatalf("auth failures %q: wrong key %d: got %d, want 401", tc.failures, i+1, res.Status)
			}
		}
		c.Key = key
		if res := c.Do(t, "GET", apitest.Path("/pets"), ""); res.Status != tc.want {
			t.Errorf("auth failures %q: the valid key after 30 wrong ones from its address: got %d %s, want %d", tc.failures, res.Status, res.Body, tc.want)
		}
	}
}

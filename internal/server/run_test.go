package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/syncbuf"
)

// runEnv is petstore serve with no arguments and the environment getenv
// gives: the settings read through Settings, then Run.
func runEnv(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := configure(nil, getenv)
	if err != nil {
		return err
	}
	return Run(ctx, cfg, stdout, stderr)
}

// configure reads the configuration from args (serve's flags) and getenv,
// as petstore serve does.
func configure(args []string, getenv func(string) string) (Config, error) {
	fs := Flags()
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	return Configure(fs, getenv)
}

// startServer runs the server on a loopback port and returns its base URL,
// its log, and a function that stops it and returns Run's error.
func startServer(t *testing.T, env map[string]string) (baseURL string, stdout, stderr *syncbuf.Buffer, stop func() error) {
	t.Helper()
	stdout = &syncbuf.Buffer{}
	baseURL, stderr, stop = apitest.Start(t, env, stdout, runEnv)
	return baseURL, stdout, stderr, stop
}

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
	pw.Write([]byte(apitest.Body(`{"name":"Slow","categoryId":1}`)))
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

// TestPprof checks that -pprof serves the profiles on the loopback address
// it names, beside the API, and that they stop with the server.
func TestPprof(t *testing.T) {
	_, stdout, _, stop := startServer(t, map[string]string{"PETSTORE_API_KEYS": "pprof-key-0123456789abcdef0123456789", "PETSTORE_PPROF_ADDR": "127.0.0.1:0"})
	addr := apitest.LogAddr(stdout.String(), "pprof listening")
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
// request's line by the time Run returns from a clean shutdown.
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
	base, stderr, stop := apitest.Start(t, map[string]string{"PETSTORE_API_KEYS": key}, out, runEnv)
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
	// The access log is written at an interval (logbuf): poll for it.
	apitest.Eventually(t, "an access log line for each request after the writer recovered", func() bool {
		for i := range n {
			if !strings.Contains(out.String(), fmt.Sprintf(`"request_id":"after-error-%d"`, i)) {
				return false
			}
		}
		return true
	})
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

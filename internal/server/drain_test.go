package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/syncbuf"
)

// TestDrain checks the shutdown delay: from the first signal on /readyz
// answers 503 while every request is still served; the second signal ends
// the delay long before it would run out, and the server stops cleanly.
func TestDrain(t *testing.T) { testDrain(t, map[string]string{}) }

// testDrain runs TestDrain with env added to the server's: the store's.
func testDrain(t *testing.T, env map[string]string) {
	const key, delay = "drain-key-0123456789abcdef0123456789", 10 * time.Minute
	env["PETSTORE_ADDR"], env["PETSTORE_API_KEYS"], env["PETSTORE_SHUTDOWN_DELAY"] = "127.0.0.1:0", key, delay.String()
	ctx, signal1 := context.WithCancel(context.Background())
	defer signal1()
	skip := make(chan struct{})
	stdout, stderr := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	done := make(chan error, 1)
	go func() {
		done <- runEnv(WithSkipDelay(ctx, skip), func(k string) string { return env[k] }, stdout, stderr)
	}()
	var base string
	apitest.Eventually(t, "the listening log line", func() bool {
		base = apitest.LogAddr(stdout.String(), "listening")
		return base != ""
	})
	base = "http://" + base
	defer func() {
		if t.Failed() {
			t.Logf("server log:\n%s\nstderr: %s", stdout, stderr)
		}
	}()

	// Load: workers create and read pets until told to stop, bounded in
	// count. A failure before the second signal is a refusal the drain
	// should have prevented; after it, the server may stop at any moment.
	var (
		signalled2 atomic.Bool
		served     atomic.Int64
		stopLoad   = make(chan struct{})
		wg         sync.WaitGroup
		mu         sync.Mutex
		refused    []string
	)
	client := &http.Client{Timeout: 10 * time.Second}
	do := func(method, path, body string) (int, []byte, error) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err == nil && strings.HasPrefix(path, apitest.Path("/")) {
			// The API's answers keep openapi.yaml, the drain's included.
			check, _ := http.NewRequest(method, path, nil)
			check.Header = req.Header
			apitest.Load(t).Check(t, check, res.StatusCode, res.Header, b)
		}
		return res.StatusCode, b, err
	}
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20000; i++ {
				select {
				case <-stopLoad:
					return
				default:
				}
				status, body, err := do("POST", apitest.Path("/pets"), fmt.Sprintf(apitest.Body(`{"name":"w%d-%d","categoryId":1}`), w, i))
				if err == nil && status == http.StatusCreated {
					var p gen.Pet
					if err = json.Unmarshal(body, &p); err == nil {
						status, _, err = do("GET", apitest.Path(fmt.Sprintf("/pets/%d", p.Id)), "")
					}
				}
				if err == nil && status == http.StatusOK {
					served.Add(1)
					continue
				}
				if signalled2.Load() {
					return
				}
				mu.Lock()
				refused = append(refused, fmt.Sprintf("status %d, error %v", status, err))
				mu.Unlock()
				return
			}
		}()
	}
	apitest.Eventually(t, "requests served before the signal", func() bool { return served.Load() >= 20 })
	if status, _, err := do("GET", "/readyz", ""); err != nil || status != http.StatusOK {
		t.Fatalf("GET /readyz before the signal: %d %v, want 200", status, err)
	}

	signal1()
	// The very first probe after the signal, and every one after it.
	before := served.Load()
	status, body, err := do("GET", "/readyz", "")
	var e gen.Error
	if err != nil || status != http.StatusServiceUnavailable || json.Unmarshal(body, &e) != nil || e.Code != gen.ErrorCodeUnavailable || !strings.Contains(e.Message, "shutting down") {
		t.Fatalf("GET /readyz right after the signal: %d %s %v, want 503 unavailable, shutting down", status, body, err)
	}
	apitest.Eventually(t, "requests served during the delay", func() bool {
		if status, _, err := do("GET", "/readyz", ""); err != nil || status != http.StatusServiceUnavailable {
			t.Fatalf("GET /readyz during the delay: %d %v, want 503", status, err)
		}
		return served.Load() >= before+200
	})
	if !strings.Contains(stdout.String(), `"msg":"draining"`) || strings.Contains(stdout.String(), `"msg":"shutting down"`) {
		t.Fatalf("want a draining line and no shutting down line yet")
	}
	// A keep-alive client is told to reconnect (to a replica that stays).
	res, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if !res.Close || res.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz during the delay: %d, Connection: close %v; want 200 and close", res.StatusCode, res.Close)
	}

	start := time.Now()
	signalled2.Store(true)
	close(skip)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v, want a clean stop", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the second signal did not end the %v delay within 30s", delay)
	}
	t.Logf("stopped %v after the second signal; %d create+get pairs served", time.Since(start), served.Load())
	close(stopLoad)
	wg.Wait()
	if len(refused) > 0 {
		t.Errorf("%d requests refused before the second signal; first: %s", len(refused), refused[0])
	}
	if !strings.Contains(stdout.String(), `"msg":"second signal`) || !strings.Contains(stdout.String(), `"msg":"stopped"`) {
		t.Errorf("want the second signal's and the stopped lines in the log")
	}
}

// TestDrainDelayEnds checks that without a second signal the server stops
// by itself once the delay has run out.
func TestDrainDelayEnds(t *testing.T) {
	_, stdout, _, stop := startServer(t, map[string]string{"PETSTORE_API_KEYS": "drain-key-0123456789abcdef0123456789", "PETSTORE_SHUTDOWN_DELAY": "200ms"})
	start := time.Now()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 200*time.Millisecond {
		t.Errorf("stopped %v after the signal, before the 200ms delay ran out", took)
	}
	if !strings.Contains(stdout.String(), `"msg":"draining","shutdown_delay":"200ms"`) {
		t.Errorf("no draining line naming the delay:\n%s", stdout)
	}
}

// TestShutdownDelayDefault: 5s unless set; 0 turns it off.
func TestShutdownDelayDefault(t *testing.T) {
	for env, want := range map[string]time.Duration{"": 5 * time.Second, "0": 0, "1m": time.Minute} {
		cfg, err := configure(nil, func(k string) string {
			if k == "PETSTORE_SHUTDOWN_DELAY" {
				return env
			}
			return ""
		})
		if err != nil || cfg.ShutdownDelay != want {
			t.Errorf("PETSTORE_SHUTDOWN_DELAY=%q: got %v %v, want %v", env, cfg.ShutdownDelay, err, want)
		}
	}
}

// TestSignals sends the process two real signals: the first ends the
// context, the second closes its skip channel.
func TestSignals(t *testing.T) {
	ctx := Signals(context.Background())
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the first SIGTERM did not end the context")
	}
	select {
	case <-skipDelay(ctx):
		t.Fatal("the delay is skipped after one signal")
	default:
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-skipDelay(ctx):
	case <-time.After(10 * time.Second):
		t.Fatal("the second signal did not skip the delay")
	}
}

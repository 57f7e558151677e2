package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/server"
)

// Set in the environment of this package's test binary, these make it a
// process of the attack instead of running tests: envServeNofile, the
// server under that many file descriptors (a descriptor limit is the whole
// process's); envSlowClients, "ADDR N": N slow clients of ADDR (a process
// of their own, as an attacker is: in the test's process they would starve
// the probes' goroutines of the test's CPU, not the server).
const (
	envServeNofile = "PETSTORE_TEST_SERVE_NOFILE"
	envSlowClients = "PETSTORE_TEST_SLOW_CLIENTS_OF"
)

func TestMain(m *testing.M) {
	if n := os.Getenv(envServeNofile); n != "" {
		os.Exit(serveUnderNofile(n))
	}
	if a := os.Getenv(envSlowClients); a != "" {
		os.Exit(slowClients(a))
	}
	os.Exit(m.Run())
}

func serveUnderNofile(n string) int {
	limit, err := strconv.ParseUint(n, 10, 64)
	if err == nil {
		err = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: limit, Max: limit})
	}
	if err == nil {
		err = run(server.Signals(context.Background()), []string{"petstore", "serve"}, os.Getenv, os.Stdout, os.Stderr)
	}
	if err != nil {
		os.Stderr.WriteString("petstore: " + err.Error() + "\n")
		return 1
	}
	return 0
}

// TestSlowClientsKeepProbesAnswering is the attack of issue 45: more slow
// clients than the server has file descriptors, each holding a connection
// with half a request and opening another as soon as the server closes it.
// Each /healthz and /readyz must still be answered 200, well within the 5 s
// read-header timeout that the probes waited out before the connection cap
// (Accept failed with EMFILE until slow clients timed out). What is left is
// the probe's wait in the kernel's accept queue behind the clients
// reconnecting: tens of milliseconds, hundreds with -race on a busy
// machine; the test allows 2 s. Loopback only; bounded:
// PETSTORE_TEST_SLOW_CLIENTS clients (400) against a limit of
// PETSTORE_TEST_NOFILE descriptors (256), for the time of the probes.
func TestSlowClientsKeepProbesAnswering(t *testing.T) {
	clients := envInt(t, "PETSTORE_TEST_SLOW_CLIENTS", 400)
	nofile := envInt(t, "PETSTORE_TEST_NOFILE", 256)
	addr, _ := startChild(t, "listening", envServeNofile+"="+strconv.Itoa(nofile),
		"PETSTORE_ADDR=127.0.0.1:0", "PETSTORE_API_KEYS=conn-key-0123456789abcdef0123456789", "PETSTORE_SHUTDOWN_DELAY=0")
	_, attack := startChild(t, "connected", fmt.Sprintf("%s=%s %d", envSlowClients, addr, clients))

	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var worst time.Duration
	for i := range 6 {
		path := []string{"/healthz", "/readyz"}[i%2]
		start := time.Now()
		res, err := hc.Get("http://" + addr + path)
		took := time.Since(start)
		if err != nil {
			t.Fatalf("GET %s under %d slow clients (limit %d descriptors): %v after %v", path, clients, nofile, err, took.Round(time.Millisecond))
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: got %d, want 200", path, res.StatusCode)
		}
		worst = max(worst, took)
	}
	t.Logf("%d slow clients, %d descriptors: slowest probe %v; %s", clients, nofile, worst.Round(time.Millisecond), attack())
	if worst > 2*time.Second {
		t.Errorf("slowest /healthz or /readyz: %v, want under 2s", worst.Round(time.Millisecond))
	}
}

// slowClients runs the attack that spec ("ADDR N") describes until SIGTERM:
// it prints "connected" once every client has a connection, and at the end
// how many connections the server closed and the clients opened again.
func slowClients(spec string) int {
	addr, n, _ := strings.Cut(spec, " ")
	clients, err := strconv.Atoi(n)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	var wg sync.WaitGroup
	var open, reopened atomic.Int64
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slowClient(ctx, addr, &open, &reopened)
		}()
	}
	for open.Load() < int64(clients) && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println(`{"msg":"connected"}`)
	wg.Wait()
	fmt.Printf("{\"msg\":\"reopened\",\"addr\":\"%d connections reopened\"}\n", reopened.Load())
	return 0
}

// slowClient holds a connection with half a request's header sent, and
// opens another when the server closes it, until ctx ends.
func slowClient(ctx context.Context, addr string, open, reopened *atomic.Int64) {
	first := true
	var d net.Dialer
	for ctx.Err() == nil {
		dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		c, err := d.DialContext(dctx, "tcp", addr)
		cancel()
		if err != nil {
			continue
		}
		stop := context.AfterFunc(ctx, func() { c.Close() })
		if _, err := io.WriteString(c, "GET "+apitest.Base()+"/pets HTTP/1.1\r\nHost: petstore\r\n"); err == nil {
			if first {
				open.Add(1)
				first = false
			} else {
				reopened.Add(1)
			}
			c.Read(make([]byte, 1)) // until the server closes it
		}
		stop()
		c.Close()
	}
}

// startChild starts this test binary with env as its whole environment (see
// TestMain), as startProcess does.
func startChild(t *testing.T, ready string, env ...string) (addr string, end func() string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = env
	return startProcess(t, cmd, ready)
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

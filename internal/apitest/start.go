package apitest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/syncbuf"
)

// RunFunc serves until ctx ends, configured by the environment getenv
// gives: petstore's run, or server.Run with the settings read from it.
type RunFunc func(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer) error

// Log is where a server started by Start writes its log.
type Log interface {
	io.Writer
	String() string
}

// Start runs run with env as its whole environment, on a loopback port
// (PETSTORE_ADDR) and with no shutdown delay unless env sets one, and
// waits until its JSON log on stdout has the listening line and /healthz
// answers. It returns the server's base URL, its stderr, and a function
// that stops it and returns run's error; the test's end stops it too.
func Start(t testing.TB, env map[string]string, stdout Log, run RunFunc) (baseURL string, stderr *syncbuf.Buffer, stop func() error) {
	t.Helper()
	env["PETSTORE_ADDR"] = "127.0.0.1:0"
	if _, ok := env["PETSTORE_SHUTDOWN_DELAY"]; !ok {
		env["PETSTORE_SHUTDOWN_DELAY"] = "0" // stop at once; the drain's tests test the delay
	}
	ctx, cancel := context.WithCancel(context.Background())
	stderr = &syncbuf.Buffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, func(k string) string { return env[k] }, stdout, stderr)
	}()
	var addr string
	Eventually(t, "the listening log line", func() bool {
		select {
		case err := <-done:
			t.Fatalf("run returned early: %v\nstderr: %s", err, stderr)
		default:
		}
		addr = LogAddr(stdout.String(), "listening")
		return addr != ""
	})
	baseURL = "http://" + addr
	Eventually(t, "/healthz", func() bool {
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

// LogAddr returns the addr of the first JSON log line whose msg is msg, or "".
func LogAddr(log, msg string) string {
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		var line struct{ Msg, Addr string }
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == msg {
			return line.Addr
		}
	}
	return ""
}

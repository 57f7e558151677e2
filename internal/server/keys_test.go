package server

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
)

// rotationKey returns a new key and its digest line.
func rotationKey(t *testing.T) (string, string) {
	t.Helper()
	k, d, err := apikey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return k, d.String()
}

// replaceFile writes lines to a new file and renames it over path.
func replaceFile(t *testing.T, path string, lines ...string) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// keyStatus sends GET /pets with key, checks the answer against
// openapi.yaml (t.Errorf: safe from the load's goroutines) and returns its
// status.
func keyStatus(t *testing.T, client *http.Client, base, key string) (int, error) {
	target := apitest.Path("/pets?limit=1")
	req, err := http.NewRequest("GET", base+target, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return 0, err
	}
	check, _ := http.NewRequest("GET", target, nil)
	check.Header = req.Header
	apitest.Load(t).Check(t, check, res.StatusCode, res.Header, body)
	return res.StatusCode, nil
}

// sent is one request of the load: its key, when it was sent and answered,
// and its status.
type sent struct {
	key        string
	start, end time.Time
	status     int
}

// TestServeKeyRotation rotates the keys file of a running server A → A+B →
// B while clients send requests with A, B and a key from PETSTORE_API_KEYS
// all along: the environment's key is never refused; A is accepted until its
// removal and refused within 2s of it; B, once accepted, is never refused
// again (it is in A+B and in B: the swap between them is atomic).
func TestServeKeyRotation(t *testing.T) {
	keyA, lineA := rotationKey(t)
	keyB, lineB := rotationKey(t)
	const envKey = "env-key-0123456789abcdef0123456789"
	path := filepath.Join(t.TempDir(), "keys")
	replaceFile(t, path, lineA)
	// The load's clients share one address; a removed key's 401s would
	// throttle it, valid keys with it (docs/operating.md, wrong keys).
	base, stdout, _, _ := startServer(t, map[string]string{"PETSTORE_API_KEYS_FILE": path, "PETSTORE_API_KEYS": envKey, "PETSTORE_AUTH_FAILURES": "off"})
	if !strings.Contains(stdout.String(), `"keys":2`) {
		t.Errorf("the listening line does not count 2 keys (the file's and the environment's):\n%s", stdout)
	}

	var mu sync.Mutex
	var log []sent
	stop := make(chan struct{})
	var wg sync.WaitGroup
	// The workers stop before the test ends, even when it fails first: a
	// t.Errorf after the end would panic.
	stopped := false
	stopLoad := func() {
		if !stopped {
			stopped = true
			close(stop)
			wg.Wait()
		}
	}
	t.Cleanup(stopLoad)
	client := &http.Client{Timeout: 10 * time.Second}
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keys := []string{envKey, keyA, keyB}
			for i := w; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := keys[i%len(keys)]
				s := sent{key: k, start: time.Now()}
				status, err := keyStatus(t, client, base, k)
				if err != nil {
					t.Errorf("request: %v", err)
					return
				}
				s.status, s.end = status, time.Now()
				mu.Lock()
				log = append(log, s)
				mu.Unlock()
			}
		}()
	}
	// waitFor polls with the test's own requests until key answers want.
	waitFor := func(what, key string, want int, within time.Duration) time.Time {
		t.Helper()
		deadline := time.Now().Add(within)
		for {
			status, err := keyStatus(t, client, base, key)
			if err != nil {
				t.Fatal(err)
			}
			if status == want {
				return time.Now()
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: still %d after %v", what, status, within)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	added := time.Now()
	replaceFile(t, path, "# A and B", lineA, lineB)
	waitFor("B to be accepted", keyB, http.StatusOK, 20*time.Second)
	removed := time.Now()
	replaceFile(t, path, "# B", lineB)
	refused := waitFor("A to be refused within 2s of its removal", keyA, http.StatusUnauthorized, 2*time.Second)
	t.Logf("A refused %v after its removal", refused.Sub(removed))
	stopLoad()

	// B's first acceptance in the load.
	var bIn time.Time
	for _, s := range log {
		if s.key == keyB && s.status == http.StatusOK && (bIn.IsZero() || s.end.Before(bIn)) {
			bIn = s.end
		}
	}
	counts := map[string]int{}
	for _, s := range log {
		counts[fmt.Sprint(s.key == envKey, s.key == keyA, s.status)]++
		var bad string
		switch {
		case s.status != http.StatusOK && s.status != http.StatusUnauthorized:
			bad = "neither 200 nor 401"
		case s.key == envKey && s.status != http.StatusOK:
			bad = "the environment's key refused"
		case s.key == keyA && s.end.Before(removed) && s.status != http.StatusOK:
			bad = "A refused before its removal"
		case s.key == keyA && s.start.After(refused) && s.status != http.StatusUnauthorized:
			bad = "A accepted after it was seen refused"
		case s.key == keyB && s.end.Before(added) && s.status != http.StatusUnauthorized:
			bad = "B accepted before it was added"
		case s.key == keyB && !bIn.IsZero() && s.start.After(bIn) && s.status != http.StatusOK:
			bad = "B refused after it was accepted"
		}
		if bad != "" {
			t.Errorf("%s: status %d, sent %v after the start of the rotation", bad, s.status, s.start.Sub(added))
		}
	}
	t.Logf("%d requests under rotation", len(log))
	if len(log) < 30 {
		t.Errorf("only %d requests under rotation: the load proves little", len(log))
	}
}

// metric returns the value of the /metrics line that starts with series.
func metric(t *testing.T, base, series string) string {
	t.Helper()
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			return v
		}
	}
	return ""
}

// TestServeKeysSIGHUP: SIGHUP to the process reloads the keys file, an
// unchanged one too, and /metrics counts it; a file that does not parse then
// keeps the key in force and is counted as an error.
func TestServeKeysSIGHUP(t *testing.T) {
	key, line := rotationKey(t)
	path := filepath.Join(t.TempDir(), "keys")
	replaceFile(t, path, line)
	base, stdout, _, _ := startServer(t, map[string]string{"PETSTORE_API_KEYS_FILE": path})
	ok := `petstore_api_keys_reloads_total{outcome="ok"}`
	if got := metric(t, base, ok); got != "0" {
		t.Fatalf("%s at start: got %q, want 0", ok, got)
	}
	if metric(t, base, "petstore_api_keys_last_reload_success_timestamp_seconds") == "" || metric(t, base, "petstore_api_keys") != "1" {
		t.Errorf("/metrics lacks the last load's time or the count of keys in force (1)")
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	apitest.Eventually(t, "SIGHUP to reload the file", func() bool { return metric(t, base, ok) == "1" })

	if err := os.WriteFile(path, []byte(line+"\n"+key+"\n"), 0o600); err != nil { // a key pasted on line 2
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	apitest.Eventually(t, "the broken file to be refused", func() bool {
		return metric(t, base, `petstore_api_keys_reloads_total{outcome="error"}`) != "0"
	})
	if status, err := keyStatus(t, http.DefaultClient, base, key); err != nil || status != http.StatusOK {
		t.Errorf("the key after a broken file: got %d %v, want 200", status, err)
	}
	if strings.Contains(stdout.String(), key) || !strings.Contains(stdout.String(), path+":2:") {
		t.Errorf("the log quotes the key, or does not name %s:2:\n%s", path, stdout)
	}
}

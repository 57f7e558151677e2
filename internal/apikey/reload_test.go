package apikey_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/syncbuf"
)

// newKey returns a fresh key and its digest line.
func newKey(t *testing.T) (string, string) {
	t.Helper()
	k, d, err := apikey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return k, d.String()
}

// writeAtomic replaces path with the lines, as a careful operator does:
// a new file renamed over the old.
func writeAtomic(t *testing.T, path string, lines ...string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func accepts(r apikey.Source, key string) bool {
	_, ok := r.Current().Lookup(key)
	return ok
}

// reloads returns the reloader's reload count for outcome.
func reloads(t *testing.T, r *apikey.Reloader, outcome string) float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	for _, c := range r.Collectors() {
		if err := reg.Register(c); err != nil {
			t.Fatal(err)
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "petstore_api_keys_reloads_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetLabel()[0].GetValue() == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no petstore_api_keys_reloads_total{outcome=%q}", outcome)
	return 0
}

// run starts r.Run until the test ends, with hup as its SIGHUP.
func run(t *testing.T, r *apikey.Reloader, hup chan os.Signal) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx, hup)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// TestReloaderRotation rotates A → A+B → B by renaming new files over the
// keys file, while readers ask for A, B and the fixed key all along: the
// fixed key is never refused, a key in both of two consecutive sets is never
// refused across their swap, and A is refused within 2s of its removal.
func TestReloaderRotation(t *testing.T) {
	keyA, lineA := newKey(t)
	keyB, lineB := newKey(t)
	fixed, _ := newKey(t)
	path := filepath.Join(t.TempDir(), "keys")
	writeAtomic(t, path, "# key A", lineA)
	r, err := apikey.NewReloader(path, []apikey.Digest{apikey.Hash(fixed)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Debounce = 20 * time.Millisecond
	run(t, r, nil)

	// mustAccept holds the keys that must be accepted at every moment.
	var mu sync.Mutex
	mustAccept := map[string]string{fixed: "the fixed key", keyA: "A"}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				must := make(map[string]string, len(mustAccept))
				for k, v := range mustAccept {
					must[k] = v
				}
				mu.Unlock()
				for k, name := range must {
					if !accepts(r, k) {
						select {
						case errs <- name + " refused while in force":
						default:
						}
					}
				}
			}
		}()
	}

	writeAtomic(t, path, "# keys A and B", lineA, lineB)
	apitest.Eventually(t, "B to be accepted", func() bool { return accepts(r, keyB) })
	mu.Lock()
	mustAccept[keyB] = "B" // in A+B and B: never refused from here on
	delete(mustAccept, keyA)
	mu.Unlock()

	removed := time.Now()
	writeAtomic(t, path, "# key B", lineB)
	deadline := removed.Add(2 * time.Second)
	for accepts(r, keyA) {
		if time.Now().After(deadline) {
			t.Fatalf("A still accepted %v after its removal, want refused within 2s", time.Since(removed))
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("A refused %v after its removal", time.Since(removed))
	close(stop)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if got := reloads(t, r, "ok"); got != 2 {
		t.Errorf("reloads ok: got %v, want 2", got)
	}
	if got := r.Current().Len(); got != 2 {
		t.Errorf("keys in force: got %d, want 2 (B and the fixed key)", got)
	}
}

// TestReloaderBrokenFile: a file with a bad line changes nothing, and the
// refusal is one ERROR line that names file:line and quotes no key, on a
// SIGHUP as on a change on disk; a good file then loads.
func TestReloaderBrokenFile(t *testing.T) {
	keyA, lineA := newKey(t)
	keyB, lineB := newKey(t)
	path := filepath.Join(t.TempDir(), "keys")
	writeAtomic(t, path, lineA)
	var log syncbuf.Buffer
	r, err := apikey.NewReloader(path, nil, slog.New(slog.NewJSONHandler(&log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	r.Debounce = 20 * time.Millisecond

	// A key pasted where its digest belongs, on line 3.
	writeAtomic(t, path, "# keys", lineA, keyB, lineB)
	if err := r.Reload(); err == nil {
		t.Fatal("Reload of a broken file: got nil error")
	}
	// checkRefusal: the set is A alone, and the log from offset on is one
	// ERROR line naming path:line and quoting no key.
	checkRefusal := func(what string, from, line int) {
		t.Helper()
		if !accepts(r, keyA) || accepts(r, keyB) {
			t.Errorf("%s: the set changed: A accepted %v, B accepted %v; want A only", what, accepts(r, keyA), accepts(r, keyB))
		}
		out := log.String()[from:]
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 1 {
			t.Fatalf("%s: got %d log lines, want one:\n%s", what, len(lines), out)
		}
		if !strings.Contains(lines[0], `"level":"ERROR"`) || !strings.Contains(lines[0], fmt.Sprintf("%s:%d:", path, line)) || !strings.Contains(lines[0], fmt.Sprintf(`"line":%d`, line)) {
			t.Errorf("%s: got %s; want an ERROR line naming %s:%d", what, lines[0], path, line)
		}
		for _, secret := range []string{keyA, keyB, lineA, lineB} {
			if strings.Contains(out, secret) {
				t.Errorf("%s: the log quotes a key or a digest: %s", what, lines[0])
			}
		}
	}
	checkRefusal("Reload", 0, 3)
	if got := reloads(t, r, "error"); got != 1 {
		t.Errorf("reloads error: got %v, want 1", got)
	}

	// The watcher meets another broken file, broken on line 4: one more
	// line, one more count; the same file seen again (Run's first read,
	// broken on line 3) is neither.
	run(t, r, nil)
	from := len(log.String())
	writeAtomic(t, path, "# keys", lineA, lineA, "not hex", lineB)
	apitest.Eventually(t, "the watcher to refuse the new broken file", func() bool { return reloads(t, r, "error") == 2 })
	checkRefusal("watch", from, 4)

	writeAtomic(t, path, lineB)
	apitest.Eventually(t, "the fixed file to load", func() bool { return accepts(r, keyB) && !accepts(r, keyA) })
}

// TestReloaderSIGHUP: with changes on disk ignored (a debounce and a most
// delay longer than the test), SIGHUP alone reloads; it reloads an
// unchanged file too.
func TestReloaderSIGHUP(t *testing.T) {
	keyA, lineA := newKey(t)
	keyB, lineB := newKey(t)
	path := filepath.Join(t.TempDir(), "keys")
	writeAtomic(t, path, lineA)
	r, err := apikey.NewReloader(path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Debounce, r.MaxDelay = time.Hour, time.Hour
	hup := make(chan os.Signal, 1)
	run(t, r, hup)
	hup <- os.Interrupt // any value: Run is given SIGHUP alone
	apitest.Eventually(t, "SIGHUP to reload the unchanged file", func() bool { return reloads(t, r, "ok") == 1 })
	writeAtomic(t, path, lineB)
	hup <- os.Interrupt
	apitest.Eventually(t, "SIGHUP to load B", func() bool { return accepts(r, keyB) && !accepts(r, keyA) })
	if got := reloads(t, r, "ok"); got != 2 {
		t.Errorf("reloads ok: got %v, want 2", got)
	}
}

// TestReloaderSymlinkSwap: the layout an orchestrator mounts (Kubernetes:
// keys → ..data/keys, ..data → a directory of the version) is updated by
// renaming a new ..data link over the old one; the file itself never
// changes, and the reloader sees it.
func TestReloaderSymlinkSwap(t *testing.T) {
	keyA, lineA := newKey(t)
	keyB, lineB := newKey(t)
	dir := t.TempDir()
	version := func(name, line string) {
		if err := os.Mkdir(filepath.Join(dir, name), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "keys"), []byte(line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(name, filepath.Join(dir, "..data_tmp")); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
	}
	version("..v1", lineA)
	path := filepath.Join(dir, "keys")
	if err := os.Symlink(filepath.Join("..data", "keys"), path); err != nil {
		t.Fatal(err)
	}
	r, err := apikey.NewReloader(path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Debounce = 20 * time.Millisecond
	run(t, r, nil)
	if !accepts(r, keyA) {
		t.Fatal("A not accepted at start")
	}
	version("..v2", lineB) // ..v1 stays, unchanged: only the swap tells
	apitest.Eventually(t, "the swap to load B", func() bool { return accepts(r, keyB) && !accepts(r, keyA) })
}

// TestReloaderStart: a file that is missing or broken at start is an error,
// as before: the server does not start with keys it was not given.
func TestReloaderStart(t *testing.T) {
	dir := t.TempDir()
	if _, err := apikey.NewReloader(filepath.Join(dir, "missing"), nil, nil); err == nil {
		t.Error("NewReloader of a missing file: got nil error")
	}
	path := filepath.Join(dir, "keys")
	writeAtomic(t, path, "nope")
	if _, err := apikey.NewReloader(path, nil, nil); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("NewReloader of a broken file: got %v, want an error naming line 1", err)
	}
}

// The metrics lint clean (names, help, types).
func TestReloaderMetricsLint(t *testing.T) {
	_, line := newKey(t)
	path := filepath.Join(t.TempDir(), "keys")
	writeAtomic(t, path, line)
	r, err := apikey.NewReloader(path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Collectors() {
		problems, err := testutil.CollectAndLint(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Errorf("%s: %s", p.Metric, p.Text)
		}
	}
}

// watching writes lineA to path, runs a Reloader of it with the default
// timing, and returns it once it has seen a change (to A and B) through its
// watch: Run's own first read cannot be what saw it.
func watching(t *testing.T, path, lineA, keyB, lineB string) *apikey.Reloader {
	t.Helper()
	writeAtomic(t, path, lineA)
	r, err := apikey.NewReloader(path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	run(t, r, nil)
	writeAtomic(t, path, lineA, lineB)
	apitest.Eventually(t, "B to be accepted", func() bool { return accepts(r, keyB) })
	return r
}

// TestReloaderBusyDirectory: another file in the keys file's directory
// changing every 10 ms (a log, a lock, a sidecar's state) does not postpone
// a reload past one second; the debounce is the default one.
func TestReloaderBusyDirectory(t *testing.T) {
	_, lineA := newKey(t)
	keyB, lineB := newKey(t)
	keyC, lineC := newKey(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "keys")
	r := watching(t, path, lineA, keyB, lineB)

	stop := make(chan struct{})
	done := make(chan struct{})
	underWay := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
				os.WriteFile(filepath.Join(dir, "noise"), []byte(fmt.Sprint(i)), 0o600)
				if i == 20 { // longer than a debounce: it keeps being reset
					close(underWay)
				}
			}
		}
	}()
	defer func() { close(stop); <-done }()
	<-underWay
	writeAtomic(t, path, lineC)
	apitest.Within(t, time.Second, "C in force while the directory is busy", func() bool { return accepts(r, keyC) })
}

// TestReloaderDirectoryReplaced: the keys file's directory is replaced (a
// new one renamed in place of the old; the old removed and made again; or
// renamed away, and a new one put in place only once the reloader has found
// the file gone), and the reloader reads the new directory's file within a
// second, then goes on watching it: a later change there is seen within a
// second too.
func TestReloaderDirectoryReplaced(t *testing.T) {
	for _, how := range []string{"renamed", "removed", "late"} {
		t.Run(how, func(t *testing.T) {
			keyA, lineA := newKey(t)
			keyB, lineB := newKey(t)
			keyC, lineC := newKey(t)
			keyD, lineD := newKey(t)
			root := t.TempDir()
			dir := filepath.Join(root, "secrets")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "keys")
			r := watching(t, path, lineA, keyB, lineB)

			switch how {
			case "renamed":
				next := filepath.Join(root, "secrets.new")
				if err := os.Mkdir(next, 0o700); err != nil {
					t.Fatal(err)
				}
				writeAtomic(t, filepath.Join(next, "keys"), lineC)
				if err := os.Rename(dir, filepath.Join(root, "secrets.old")); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(next, dir); err != nil {
					t.Fatal(err)
				}
			case "removed":
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				writeAtomic(t, path, lineC)
			case "late":
				if err := os.Rename(dir, filepath.Join(root, "secrets.old")); err != nil {
					t.Fatal(err)
				}
				apitest.Eventually(t, "the file found gone", func() bool { return reloads(t, r, "error") == 1 })
				next := filepath.Join(root, "secrets.new")
				if err := os.Mkdir(next, 0o700); err != nil {
					t.Fatal(err)
				}
				writeAtomic(t, filepath.Join(next, "keys"), lineC)
				if err := os.Rename(next, dir); err != nil {
					t.Fatal(err)
				}
			}
			apitest.Within(t, time.Second, "the new directory's keys in force", func() bool {
				return accepts(r, keyC) && !accepts(r, keyA) && !accepts(r, keyB)
			})
			writeAtomic(t, path, lineD)
			apitest.Within(t, time.Second, "a change in the new directory seen", func() bool { return accepts(r, keyD) && !accepts(r, keyC) })
		})
	}
}

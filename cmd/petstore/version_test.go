package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/apitest"
)

// petstore version, and -version on every command, print the same facts on
// stdout and do nothing else.
func TestVersionOnEveryCommand(t *testing.T) {
	want, _, err := runCLI(t, "version")
	if err != nil {
		t.Fatalf("petstore version: %v", err)
	}
	if !strings.HasPrefix(want, "petstore "+buildVersion()+"\n") || !strings.Contains(want, "\nrevision:") || !strings.Contains(want, "\nmodified:") || !strings.Contains(want, "\nmodule:") {
		t.Errorf("petstore version:\n%s\nwant the version, then module:, revision: and modified: lines", want)
	}
	argss := [][]string{{"-version"}, {"--version"}, {"help", "-version"}}
	for _, c := range program.Commands {
		argss = append(argss, []string{c.Name, "-version"}, []string{c.Name, "--version"})
	}
	// A bad flag before it does not matter: -version asks for nothing else.
	argss = append(argss, []string{"serve", "-addr", ":99999", "-version"}, []string{"conform", "http://127.0.0.1:1" + apitest.Base(), "-version"})
	for _, args := range argss {
		out, errOut, err := runCLI(t, args...)
		if err != nil || out != want || errOut != "" {
			t.Errorf("petstore %s: got %v, stdout\n%s\nstderr %q; want petstore version's output only", strings.Join(args, " "), err, out, errOut)
		}
	}
	// After "--" it is an argument, not a flag.
	if _, _, err := runCLI(t, "serve", "--", "-version"); err == nil || !strings.Contains(err.Error(), `unexpected argument "-version"`) {
		t.Errorf(`petstore serve -- -version: got %v, want -version refused as an argument`, err)
	}
}

// A usage error exits 2 whatever the command; a failure that is not one
// exits 1. TestCLIRefuses holds the unknown commands, flags and arguments.
func TestUsageExitStatus(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "-addr", ":99999"},
		{"serve", "-pprof", "127.0.0.1:99999"},
		{"serve", "-log-format", "xml"},
		{"serve", "-api-keys", "short"},
		{"conform", "-bogus"},
		{"conform"},
	} {
		_, _, err := runCLI(t, args...)
		if got := exitStatus(err); err == nil || got != exitUsage {
			t.Errorf("petstore %s: %v, exit status %d; want a usage error, %d", strings.Join(args, " "), err, got, exitUsage)
		}
	}
	busy := listenBusy(t)
	_, _, err := runCLI(t, "serve", "-addr", busy)
	if got := exitStatus(err); err == nil || got != exitFailure {
		t.Errorf("serve on a busy address: %v, exit status %d; want %d", err, got, exitFailure)
	}
}

// /metrics' petstore_build_info says what petstore version says: the
// stamped version, and the revision (the stamp's, or the one Go recorded).
func TestBuildInfoMetricAgreesWithVersion(t *testing.T) {
	wasVersion, wasRevision := version, revision
	t.Cleanup(func() { version, revision = wasVersion, wasRevision }) // after the server stops
	version, revision = "9.9.9-test", "0123abcd"
	out, _, err := runCLI(t, "version")
	if err != nil {
		t.Fatalf("petstore version: %v", err)
	}
	m := regexp.MustCompile(`(?m)^revision: *(\S+)$`).FindStringSubmatch(out)
	if !strings.HasPrefix(out, "petstore 9.9.9-test\n") || m == nil {
		t.Fatalf("petstore version:\n%s\nwant the stamped version and a revision: line", out)
	}
	base, _, _, _ := startServer(t, map[string]string{"PETSTORE_API_KEYS": "e2e-key-0123456789abcdef0123456789"})
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("petstore_build_info{go_version=%q,revision=%q,version=%q} 1\n", runtime.Version(), m[1], "9.9.9-test")
	if !strings.Contains(string(body), want) {
		t.Errorf("GET /metrics lacks %q (petstore version:\n%s)", want, out)
	}
}

// listenBusy returns a loopback address something listens on until the
// test ends.
func listenBusy(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}

// serve checks its flags before it does anything: a bad one prints no
// generated key, no log line; a server that cannot listen prints no key
// either (the key is printed once it listens).
func TestServeFailsBeforeSideEffects(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "-addr", ":99999"},
		{"serve", "-addr", "nonsense"},
		{"serve", "-log-format", "xml"},
		{"serve", "-addr", listenBusy(t)},
	} {
		out, errOut, err := runCLI(t, args...)
		if err == nil {
			t.Fatalf("petstore %s: ran, want an error", strings.Join(args, " "))
		}
		// run returns its error (main prints it): nothing else may be
		// written, neither a key nor a log line (the log is stdout).
		if out != "" || errOut != "" {
			t.Errorf("petstore %s printed before failing: stdout %q, stderr %q; want nothing", strings.Join(args, " "), out, errOut)
		}
	}
}

// make build's binary says which commit it was built from: petstore version
// prints the revision git names and the version make stamped.
func TestVersionOfMakeBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary with make build")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): nothing to stamp", err)
	}
	dirtyBefore := gitDirty(t, root)
	bin := filepath.Join(t.TempDir(), "petstore")
	cmd := exec.Command("make", "-s", "-C", root, "build", "PETSTORE_BIN="+bin, "VERSION=9.9.9-test")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	dirtyAfter := gitDirty(t, root)
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("petstore version: %v", err)
	}
	t.Logf("petstore version:\n%s", out)
	field := func(name string) string {
		m := regexp.MustCompile(`(?m)^` + name + `: *(\S+)$`).FindSubmatch(out)
		if m == nil {
			t.Fatalf("petstore version: no %s: line\n%s", name, out)
		}
		return string(m[1])
	}
	if !bytes.HasPrefix(out, []byte("petstore 9.9.9-test\n")) {
		t.Errorf("first line: want petstore 9.9.9-test (make build's VERSION)")
	}
	if got, want := field("revision"), strings.TrimSpace(string(head)); got != want {
		t.Errorf("revision: %s, want git's HEAD %s", got, want)
	}
	// Go calls the tree modified when git status lists anything; other
	// tests may write files meanwhile, so compare only when it held still.
	if dirtyBefore == dirtyAfter {
		if got, want := field("modified"), map[bool]string{true: "true", false: "false"}[dirtyBefore]; got != want {
			t.Errorf("modified: %s, want %s (git status --porcelain)", got, want)
		}
	}
}

func gitDirty(t *testing.T, root string) bool {
	t.Helper()
	cmd := exec.Command("git", "status", "--porcelain")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git status: %v", err)
	}
	return len(out) > 0
}

// The exit statuses are what help says they are.
func TestHelpDocumentsExitStatus(t *testing.T) {
	out, _, err := runCLI(t, "help")
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"Exit status: 0 done; 1 failed", "2 a usage error, alike for every command", "takes -version"} {
		if !strings.Contains(flat, want) {
			t.Errorf("petstore help does not say %q:\n%s", want, out)
		}
	}
}

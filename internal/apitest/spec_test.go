package apitest_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/apitest"
)

// The base path and the operations are the spec's: those of openapi.yaml as
// the contract checker routes it.
func TestBaseAndOperationsAreTheSpecs(t *testing.T) {
	c := apitest.Load(t)
	if got, want := apitest.Base(), c.BasePath(); got != want || want == "" {
		t.Errorf("Base: got %q, want %q (openapi.yaml's servers)", got, want)
	}
	if got := apitest.Path("/pets?limit=1"); got != c.BasePath()+"/pets?limit=1" {
		t.Errorf("Path: got %q", got)
	}
	n := 0
	for path, item := range c.Spec().Paths.Map() {
		for method, op := range item.Operations() {
			n++
			got := apitest.Op(op.OperationID)
			want := apitest.Operation{ID: op.OperationID, Method: method, Path: c.BasePath() + path, Deprecated: op.Deprecated}
			if got != want {
				t.Errorf("Op(%q): got %+v, want %+v", op.OperationID, got, want)
			}
		}
	}
	if ops := apitest.Operations(); len(ops) != n || n == 0 {
		t.Errorf("Operations: got %d, want the spec's %d", len(ops), n)
	}
}

// .ci/base-path, the scripts' reading of the base path, reads the one the
// server serves, here and in a spec moved to another base path.
func TestBasePathScript(t *testing.T) {
	spec, err := apitest.SpecFile()
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(filepath.Dir(spec), ".ci", "base-path")
	out, err := exec.Command(script).Output()
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	if got := strings.TrimSpace(string(out)); got != apitest.Base() {
		t.Errorf(".ci/base-path: got %q, want %q", got, apitest.Base())
	}
	for _, tc := range []struct{ spec, want string }{
		{"servers:\n  - url: https://a.example/v7/\n    description: x\n  - url: https://b.example/v7\n", "/v7"},
		{"servers:\n- url: 'http://a.example:8080/api/shop'\npaths: {}\n", "/api/shop"},
		{"info:\n  title: t\nservers:\n  # c\n  - description: x\n    url: \"https://a.example\"\n", ""},
	} {
		file := filepath.Join(t.TempDir(), "openapi.yaml")
		writeFile(t, file, tc.spec)
		out, err := exec.Command(script, file).Output()
		if got := strings.TrimSuffix(string(out), "\n"); err != nil || got != tc.want {
			t.Errorf(".ci/base-path on %q: got %q (%v), want %q", tc.spec, got, err, tc.want)
		}
	}
	file := filepath.Join(t.TempDir(), "openapi.yaml")
	writeFile(t, file, "openapi: 3.0.3\npaths: {}\n")
	if out, err := exec.Command(script, file).Output(); err == nil {
		t.Errorf(".ci/base-path on a spec without servers: got %q and success, want a failure", out)
	}
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestNoBasePathWritten keeps the base path out of the tests and the
// scripts: they take it from the spec (Base, Path, .ci/base-path), so that a
// tree make new-major moved passes them (make test-new-major proves it, at
// the cost of a second make test). It flags each line of a *_test.go file or
// a .ci script that writes the spec's base path as a path, but for
//   - tools/compat, whose tests state the version rule for majors 1 and 2;
//   - internal/conform/report_test.go, the made-up target of the report
//     fixtures, whose golden files print it;
//   - OTLP's own paths (…/v1/traces, the collector's package), another
//     protocol's version that only looks like it.
func TestNoBasePathWritten(t *testing.T) {
	spec, err := apitest.SpecFile()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(spec)
	writes := basePathWriter(apitest.Base())
	skip := map[string]bool{"gen": true, "node_modules": true, "bin": true, ".git": true, "tools/compat": true, "internal/conform/report_test.go": true}
	n := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if skip[rel] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !strings.HasSuffix(rel, "_test.go") && !strings.HasPrefix(rel, ".ci/") {
			return nil
		}
		n++
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if writes(line, strings.HasSuffix(rel, ".go")) {
				t.Errorf("%s:%d writes the base path %s: take it from the spec (apitest.Path, apitest.Base, .ci/base-path)\n\t%s", rel, i+1, apitest.Base(), strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 50 {
		t.Errorf("read %d test files and scripts under %s, want the repository's", n, root)
	}
}

// basePathWriter reports whether a line of Go (goFile) or of a script writes
// the base path base as a path. In Go, not after a letter: a module path's
// major (math/rand/v2) is not the base path; in a script, after a variable
// ($port), it is, but not inside a Go module path (a host with a dot, no
// scheme or port: github.com/x/y/v2/cmd/z). OTLP's lines are another
// protocol's version.
func basePathWriter(base string) func(line string, goFile bool) bool {
	after := `([^0-9A-Za-z._-]|$)`
	inGo := regexp.MustCompile(`(^|[^A-Za-z])` + regexp.QuoteMeta(base) + after)
	inScript := regexp.MustCompile(regexp.QuoteMeta(base) + after)
	module := regexp.MustCompile(`(^|[\s"'=(])[a-z0-9-]+(\.[a-z0-9-]+)+/[^\s"':]+`)
	otlp := regexp.MustCompile(`(?i)traces|otlp`)
	return func(line string, goFile bool) bool {
		if otlp.MatchString(line) {
			return false
		}
		if goFile {
			return inGo.MatchString(line)
		}
		return inScript.MatchString(module.ReplaceAllString(line, "$1"))
	}
}

func TestBasePathWriter(t *testing.T) {
	writes := basePathWriter("/zz2") // not a base path any tree has: this file is read by TestNoBasePathWritten
	for _, tc := range []struct {
		line   string
		goFile bool
		want   bool
	}{
		{`curl -s "http://127.0.0.1:$port/zz2/pets"`, false, true},
		{`url=http://localhost:8080/zz2`, false, true},
		{`go build -o "$tmp/oapi-codegen" github.com/oapi-codegen/oapi-codegen/zz2/cmd/oapi-codegen`, false, false},
		{`go install golang.org/x/tools/zz2@v2.0.0`, false, false},
		{`get(t, srv.URL+"/zz2/pets")`, true, true},
		{`import "math/rand/zz2"`, true, false},
		{`endpoint http://collector:4318/zz2/traces`, false, false},
	} {
		if got := writes(tc.line, tc.goFile); got != tc.want {
			t.Errorf("writes(%q, go=%v) = %v, want %v", tc.line, tc.goFile, got, tc.want)
		}
	}
}

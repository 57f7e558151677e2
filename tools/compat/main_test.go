package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// gateTree copies what the gate reads into a temporary directory: the
// contract, the release, the waivers, the changelog, and gen/'s files with
// a "fresh generation" of them beside it. It returns the directory and the
// fresh generation's.
func gateTree(t *testing.T) (dir, fresh string) {
	t.Helper()
	dir, fresh = t.TempDir(), t.TempDir()
	for _, f := range []string{"openapi.yaml", "released/openapi.yaml", "released/waivers.yaml", "CHANGELOG.md", "gen/openapi.yaml", "gen/openapi.json"} {
		data, err := os.ReadFile(filepath.Join("../..", f))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, f), data)
		if dir, ok := strings.CutPrefix(f, "gen/"); ok {
			write(t, filepath.Join(fresh, dir), data)
		}
	}
	return dir, fresh
}

func write(t *testing.T, file string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// gate runs compat check on dir as make check-compat does.
func gate(t *testing.T, dir, fresh string, flags ...string) (string, error) {
	t.Helper()
	t.Chdir(".") // run moves to -dir; this puts the test back afterwards
	var out bytes.Buffer
	err := run(append([]string{"check", "-dir", dir, "-generated", fresh}, flags...), &out)
	return out.String(), err
}

// A tree that passes gets one line, "ok: …", whether its files are
// committed or not (the gate reads files, never git).
func TestCheckOK(t *testing.T) {
	dir, fresh := gateTree(t)
	out, err := gate(t, dir, fresh)
	if err != nil {
		t.Fatalf("check: %v\n%s", err, out)
	}
	if !strings.HasPrefix(out, "ok: openapi.yaml ") || strings.Count(out, "\n") != 1 {
		t.Errorf("check on a passing tree printed\n%s\nwant one line, ok: …", out)
	}
	// -v lists the changes under the same line.
	if out, err := gate(t, dir, fresh, "-v"); err != nil || !strings.HasPrefix(out, "ok: ") || strings.Count(out, "\n") < 3 {
		t.Errorf("check -v: %v\n%s", err, out)
	}
}

// A tree that does not pass gets every need listed at once: gen/ to
// regenerate, the version, the old base path's places, the changelog.
func TestCheckListsNeeds(t *testing.T) {
	dir, fresh := gateTree(t)
	// The contract, a 1.x one (realSpec), as released and as generated, and
	// no waiver: the needs below are those of a change to the release.
	data := realSpec(t)
	spec := filepath.Join(dir, "openapi.yaml")
	for _, f := range []string{spec, filepath.Join(dir, "released/openapi.yaml"), filepath.Join(dir, "gen/openapi.yaml")} {
		write(t, f, data)
	}
	if err := os.Remove(filepath.Join(dir, "released/waivers.yaml")); err != nil {
		t.Fatal(err)
	}
	// A breaking change, with servers at /v2 but the rest left at /v1, and
	// info.version left unraised.
	data = bytes.Replace(data, []byte("        maximum: 100\n        default: 20\n"), []byte("        maximum: 50\n        default: 20\n"), 1)
	data = bytes.ReplaceAll(data, []byte(".example.com/v1\n"), []byte(".example.com/v2\n"))
	write(t, spec, data)
	write(t, filepath.Join(fresh, "openapi.yaml"), data) // what make generate would copy

	out, err := gate(t, dir, fresh)
	if err == nil {
		t.Fatalf("check passed:\n%s", out)
	}
	for _, want := range []string{
		"not ok: openapi.yaml ",
		"  - make generate: gen/openapi.yaml not what openapi.yaml generates",
		"need a major raise of info.version: at least 2.0.0",
		"make new-major moves both",
		"  - openapi.yaml:" + strconv.Itoa(lineOf(t, data, "pattern: '^/v1/pets/")) + ": paths./pets.post.responses.201.headers.Location.schema.pattern",
		"still names the old base path /v1",
		"  - make changelog: CHANGELOG.md does not list the changes of openapi.yaml",
		"  breaking  GET /pets: for the `query` request parameter `limit`, the max was decreased",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check's output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\nok") {
		t.Errorf("a failing check prints an ok line:\n%s", out)
	}
}

// drift names each file that differs from the fresh generation, and a file
// the generation writes that gen/ lacks.
func TestDrift(t *testing.T) {
	gen, fresh := t.TempDir(), t.TempDir()
	write(t, filepath.Join(gen, "a.go"), []byte("same"))
	write(t, filepath.Join(fresh, "a.go"), []byte("same"))
	write(t, filepath.Join(gen, "config.yaml"), []byte("hand-written, not generated"))
	if got, err := drift(gen, fresh); err != nil || len(got) != 0 {
		t.Errorf("the same files: %v %v", got, err)
	}
	write(t, filepath.Join(fresh, "b.json"), []byte("new"))
	write(t, filepath.Join(fresh, "a.go"), []byte("changed"))
	got, err := drift(gen, fresh)
	if err != nil || strings.Join(got, " ") != filepath.ToSlash(filepath.Join(gen, "a.go"))+" "+filepath.ToSlash(filepath.Join(gen, "b.json")) {
		t.Errorf("drift: %v %v, want a.go and b.json", got, err)
	}
	if _, err := drift(gen, t.TempDir()); err == nil {
		t.Errorf("an empty generation: no error")
	}
	// A subdirectory's files (gen/shape) are compared too.
	write(t, filepath.Join(fresh, "a.go"), []byte("same"))
	write(t, filepath.Join(gen, "b.json"), []byte("new"))
	write(t, filepath.Join(fresh, "shape", "shape.go"), []byte("table"))
	got, err = drift(gen, fresh)
	if err != nil || strings.Join(got, " ") != filepath.ToSlash(filepath.Join(gen, "shape", "shape.go")) {
		t.Errorf("drift: %v %v, want shape/shape.go", got, err)
	}
}

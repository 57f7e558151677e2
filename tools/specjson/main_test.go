package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestYAMLToJSON(t *testing.T) {
	doc := `openapi: 3.0.3
b: &x {max: 9223372036854775807, min: -9223372036854775808, big: 18446744073709551615}
a: *x
f: 1.5
inf: .inf
s: "007"
t: 2026-01-01
n: null
yes: true
l: [1, two]
`
	want := `{
  "openapi": "3.0.3",
  "b": {
    "max": 9223372036854775807,
    "min": -9223372036854775808,
    "big": 18446744073709551615
  },
  "a": {
    "max": 9223372036854775807,
    "min": -9223372036854775808,
    "big": 18446744073709551615
  },
  "f": 1.5,
  "inf": ".inf",
  "s": "007",
  "t": "2026-01-01",
  "n": null,
  "yes": true,
  "l": [
    1,
    "two"
  ]
}
`
	got, err := yamlToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	for _, bad := range []string{"", "? [1, 2]\n: x\n", "<<: {a: 1}\n"} {
		if _, err := yamlToJSON([]byte(bad)); err == nil {
			t.Errorf("%q: converted; want an error", bad)
		}
	}
}

func TestConvert(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.yaml"), filepath.Join(dir, "out.json")
	if err := os.WriteFile(in, []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := convert(in, out); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "{\n  \"a\": 1\n}\n" {
		t.Errorf("got %q", b)
	}
	if err := convert(filepath.Join(dir, "missing.yaml"), out); err == nil {
		t.Error("a missing input converted")
	}
}

package pets_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/pets"
)

const nameRule = "name: must not contain control characters or explicit bidirectional formatting characters, and must not be only white space"

// nameOK reports whether the domain accepts name as a pet's name.
func nameOK(name string) bool {
	_, err := pets.NewPet{Name: name, CategoryID: 1}.Normalize()
	return err == nil
}

func TestNameRule(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"Rex", true},
		{"Rex the 2nd", true},
		{" Rex ", true},
		{"a\u00a0b", true},                 // no-break space inside a name
		{"\u05e8\u05e7\u05e1\u200f", true}, // right-to-left mark
		{"Rex\u200e", true},                // left-to-right mark
		{"\u0631\u0643\u0633\u061c", true}, // Arabic letter mark
		{"🐈\u200d⬛", true},                 // zero-width joiner (black cat)
		{"\u200b", true},                   // zero-width space is not White_Space
		{"a\x00b", false},
		{"a\tb", false},
		{"a\x7fb", false},
		{"a\u0080b", false},
		{"Rex\u0085", false}, // NEL, a C1 control
		{"a\u009fb", false},
		{"evil\u202egnp.exe", false}, // right-to-left override
		{"a\u202ab", false},
		{"a\u202db", false},
		{"a\u2066b", false},
		{"a\u2069b", false},
		{" ", false},
		{"\u00a0", false},
		{"\u3000", false},
		{"\u2028", false},
		{"\u1680\u2000\u200a\u202f\u205f", false},
	} {
		_, err := pets.NewPet{Name: tc.name, CategoryID: 1}.Normalize()
		if tc.ok && err != nil {
			t.Errorf("Normalize(name %+q): %v, want accepted", tc.name, err)
		}
		if !tc.ok {
			var verr *pets.ValidationError
			if !errors.As(err, &verr) || err.Error() != nameRule {
				t.Errorf("Normalize(name %+q): got %v, want %q", tc.name, err, nameRule)
			}
		}
	}
}

// TestNamePatternIsTheRule checks that openapi.yaml's PetName says what the
// domain does, for every BMP code point (surrogates aside: no Go string
// holds one): alone (the white-space rule) and after a letter (the
// character rule). Three readers must agree with internal/pets: kin-openapi
// (Go's regexp, which the server validates with) and ECMAScript under Node,
// with and without the u flag (Prism and JavaScript clients).
func TestNamePatternIsTheRule(t *testing.T) {
	schema := apitest.Load(t).Spec().Components.Schemas["PetName"].Value

	var names []string
	for c := rune(0); c <= 0xffff; c++ {
		if !utf8.ValidRune(c) {
			continue
		}
		names = append(names, string(c), "a"+string(c))
	}
	domain := make([]bool, len(names))
	for i, n := range names {
		domain[i] = nameOK(n)
		kin := schema.VisitJSON(n) == nil
		if kin != domain[i] {
			t.Errorf("name %+q: the domain accepts it: %v; kin-openapi on PetName: %v", n, domain[i], kin)
		}
	}
	for _, flags := range []string{"", "u"} {
		got := matchInNode(t, schema.Pattern, flags, names)
		if len(got) != len(names) {
			t.Fatalf("node: got %d answers for %d names", len(got), len(names))
		}
		bad := 0
		for i, n := range names {
			if got[i] != domain[i] {
				if bad++; bad <= 20 {
					t.Errorf("name %+q: the domain accepts it: %v; new RegExp(pattern, %q): %v", n, domain[i], flags, got[i])
				}
			}
		}
		if bad > 20 {
			t.Errorf("... %d disagreements in all with flags %q", bad, flags)
		}
	}
}

// matchInNode tests each name against pattern with ECMAScript's RegExp.
func matchInNode(t *testing.T, pattern, flags string, names []string) []bool {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node is not installed; CI installs it (.ci/run)")
		}
		t.Skip("node is not installed: skipping the ECMAScript reading of the pattern")
	}
	in, err := json.Marshal(map[string]any{"pattern": pattern, "flags": flags, "names": names})
	if err != nil {
		t.Fatal(err)
	}
	const script = `let s = ""; process.stdin.on("data", d => s += d).on("end", () => {
	const {pattern, flags, names} = JSON.parse(s);
	const re = new RegExp(pattern, flags);
	process.stdout.write(names.map(n => re.test(n) ? "1" : "0").join(""));
});`
	cmd := exec.Command(node, "-e", script)
	cmd.Stdin = bytes.NewReader(in)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	got := make([]bool, len(out))
	for i, b := range out {
		got[i] = b == '1'
	}
	return got
}

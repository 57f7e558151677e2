package conform_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/conform"
)

// The README's mutants table is the suite's: one row per mutant, in order,
// with the check that catches it.
func TestMutantsTableInREADME(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- mutants:", "<!-- /mutants -->"
	s := string(readme)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the mutants table between %q and %q", begin, end)
	}
	var got []string
	for _, line := range strings.Split(s[i:j], "\n") {
		if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| mutant ") {
			got = append(got, line)
		}
	}
	var want []string
	for _, m := range mutants {
		want = append(want, fmt.Sprintf("| %s | `%s` |", m.name, m.check))
	}
	if !slices.Equal(got, want) {
		t.Errorf("README.md's mutants table:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The README's checks table names every check of the kit, in its order.
func TestChecksTableInREADME(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	i := strings.Index(s, "| check | what it catches |")
	if i < 0 {
		t.Fatal(`README.md lacks the checks table ("| check | what it catches |")`)
	}
	s = s[i:]
	if j := strings.Index(s, "\n\n"); j >= 0 {
		s = s[:j]
	}
	var got, want []string
	for _, line := range strings.Split(s, "\n") {
		if name, ok := strings.CutPrefix(line, "| `"); ok {
			got = append(got, name[:strings.Index(name, "`")])
		}
	}
	for _, c := range conform.Checks {
		want = append(want, c.Name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("README.md's checks table lists %v, the kit has %v", got, want)
	}
}

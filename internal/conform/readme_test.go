package conform_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/conform"
)

// The README's mutants table is the suite's: one row per mutant, in order,
// with the check that catches it.
func TestMutantsTableInREADME(t *testing.T) {
	var got, want []string
	for _, row := range apitest.READMETable(t, "| mutant | caught by |") {
		got = append(got, fmt.Sprint(row))
	}
	for _, m := range mutants {
		want = append(want, fmt.Sprint([]string{m.name, "`" + m.check + "`"}))
	}
	if !slices.Equal(got, want) {
		t.Errorf("README.md's mutants table:\n%q\nwant:\n%q", got, want)
	}
}

// The README's checks table names every check of the kit, in its order.
func TestChecksTableInREADME(t *testing.T) {
	var want []string
	for _, c := range conform.Checks {
		want = append(want, c.Name)
	}
	if got := apitest.READMEColumn(t, "| check | what it catches |"); !slices.Equal(got, want) {
		t.Errorf("README.md's checks table lists %v, the kit has %v", got, want)
	}
}

package conform_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/conform"
	"github.com/petstore/petstore/internal/conform/cases"
)

// The docs' mutants tables are the suite's: one row per mutant, in order,
// with its family and the check that catches it, and the older kit's
// verdict (.ci/kit-mutants.sh): those of issue 42 against the kit before
// it (5953675), those of the later sentences against the kit of issue 42
// (f204cc2), those of issues 51 and 59 against the kits before them.
func TestMutantsTableInREADME(t *testing.T) {
	older := mutants[:len(mutants)-len(edgeMutants)-len(mutants51)-len(mutants59)]
	for _, table := range []struct {
		header string
		ms     []mutant
	}{
		{"| mutant | family | caught by | kit at 5953675 |", older},
		{"| mutant | family | caught by | kit at f204cc2 |", edgeMutants},
		{"| mutant | family | caught by | kit at 95dcf58 |", mutants51},
		{"| mutant | family | caught by | kit at 8211542 |", mutants59},
	} {
		var got, want []string
		for _, row := range apitest.READMETable(t, table.header) {
			if len(row) != 4 || row[3] == "" {
				t.Errorf("row %q: want four cells, the last the older kit's verdict", row)
				continue
			}
			got = append(got, fmt.Sprint(row[:3]))
		}
		for _, m := range table.ms {
			caught := "`" + m.check + "`"
			if v := mutantOptions[m.name].verdict; v != "" {
				caught = v + " (exit 3)"
			}
			want = append(want, fmt.Sprint([]string{m.name, m.family, caught}))
		}
		if !slices.Equal(got, want) {
			t.Errorf("the docs' mutants table %s:\n%q\nwant:\n%q", table.header, got, want)
		}
	}
	for _, m := range mutants {
		if !slices.Contains(conform.Families, m.family) {
			t.Errorf("mutant %q: family %q is none of %v", m.name, m.family, conform.Families)
		}
	}
}

// The docs' checks table names every check of the kit, in its order, with
// its families.
func TestChecksTableInREADME(t *testing.T) {
	var got, want []string
	for _, row := range apitest.READMETable(t, "| check | families | what it catches |") {
		got = append(got, fmt.Sprint(row[:2]))
	}
	for _, c := range conform.Checks {
		want = append(want, fmt.Sprint([]string{"`" + c.Name + "`", strings.Join(c.Families, ", ")}))
	}
	if !slices.Equal(got, want) {
		t.Errorf("the docs' checks table:\n%q\nthe kit has:\n%q", got, want)
	}
}

// The docs' catalogue of near misses is the kit's, row for row.
func TestNearMissTableInDocs(t *testing.T) {
	var got, want []string
	for _, row := range apitest.READMETable(t, "| value | near miss | the contract's answer | sentence |") {
		got = append(got, strings.Join(row, " | "))
	}
	var table strings.Builder
	for _, row := range cases.NearMisses() {
		rule := "the schema"
		if row[3] != "" {
			rule = "`" + row[3] + "`"
		}
		want = append(want, strings.Join([]string{row[0], row[1], row[2], rule}, " | "))
		fmt.Fprintf(&table, "| %s | %s | %s | %s |\n", row[0], row[1], row[2], rule)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the docs' catalogue of near misses differs from the kit's; the kit's:\n%s", table.String())
	}
}

// The docs' table of sentences names every sentence and answer rule of the
// kit, in its order.
func TestSentencesTableInDocs(t *testing.T) {
	got := apitest.READMEColumn(t, "| sentence | where the spec states it | legal forms, accepted | illegal forms, refused |")
	if want := cases.SentenceNames(); !slices.Equal(got, want) {
		t.Errorf("the docs' sentences table lists\n%v\nthe kit has\n%v", got, want)
	}
}

package apitest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// READMETable returns the rows of the README table that starts with the line
// header, up to the first blank line, each split into its trimmed cells, so
// tests can keep a documented table equal to what the code does.
func READMETable(t testing.TB, header string) [][]string {
	t.Helper()
	spec, err := SpecFile()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(filepath.Dir(spec), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	i := strings.Index(s, "\n"+header+"\n")
	if i < 0 {
		t.Fatalf("README.md has no table headed %q", header)
	}
	s = s[i+1:]
	if j := strings.Index(s, "\n\n"); j >= 0 {
		s = s[:j]
	}
	var rows [][]string
	for n, line := range strings.Split(s, "\n") {
		if n < 2 || !strings.HasPrefix(line, "|") { // header, delimiter row, comments
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		for k := range cells {
			cells[k] = strings.TrimSpace(cells[k])
		}
		rows = append(rows, cells)
	}
	return rows
}

// READMEColumn returns the first cell of each row of that table, with the
// backquotes of a code span removed.
func READMEColumn(t testing.TB, header string) []string {
	t.Helper()
	var col []string
	for _, row := range READMETable(t, header) {
		col = append(col, strings.Trim(row[0], "`"))
	}
	return col
}

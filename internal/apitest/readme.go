package apitest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// READMETable returns the rows of the table that starts with the line
// header in README.md or docs/*.md (the first file that has it), up to the
// first blank line, each split into its trimmed cells, so tests can keep a
// documented table equal to what the code does.
func READMETable(t testing.TB, header string) [][]string {
	t.Helper()
	spec, err := SpecFile()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(spec)
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	var s string
	found := false
	for _, f := range append([]string{filepath.Join(root, "README.md")}, docs...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if i := strings.Index(string(b), "\n"+header+"\n"); i >= 0 {
			s, found = string(b)[i+1:], true
			break
		}
	}
	if !found {
		t.Fatalf("neither README.md nor docs/*.md has a table headed %q", header)
	}
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

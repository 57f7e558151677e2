package conformance

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// The README's table of what the kit finds in Prism's mock lists the checks
// TestPrismMock pins, in order.
func TestMockSummaryInREADME(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const heading = "### What it finds in Prism's mock"
	s := string(readme)
	i := strings.Index(s, heading)
	if i < 0 {
		t.Fatalf("README.md lacks %q", heading)
	}
	s = s[i+len(heading):]
	if j := strings.Index(s, "\n#"); j >= 0 {
		s = s[:j]
	}
	var got []string
	for _, line := range strings.Split(s, "\n") {
		if name, ok := strings.CutPrefix(line, "| `"); ok {
			got = append(got, name[:strings.Index(name, "`")])
		}
	}
	if !slices.Equal(got, mockFails) {
		t.Errorf("README.md lists %v, TestPrismMock pins %v", got, mockFails)
	}
}

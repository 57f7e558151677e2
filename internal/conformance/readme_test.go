package conformance

import (
	"slices"
	"testing"

	"github.com/petstore/petstore/internal/apitest"
)

// The README's table of what the kit finds in Prism's mock lists the checks
// TestPrismMock pins, in order.
func TestMockSummaryInREADME(t *testing.T) {
	var got, want []string
	for _, row := range apitest.READMETable(t, "| check | why the mock fails it |") {
		got = append(got, row[0])
	}
	for _, c := range mockFails {
		want = append(want, "`"+c+"`")
	}
	if !slices.Equal(got, want) {
		t.Errorf("README.md lists %v, TestPrismMock pins %v", got, want)
	}
}

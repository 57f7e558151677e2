package conformance

import (
	"slices"
	"testing"

	"github.com/petstore/petstore/internal/apitest"
)

// The README's table of what the kit finds in Prism's mock lists the checks
// TestPrismMock pins, in order.
func TestMockSummaryInREADME(t *testing.T) {
	if got := apitest.READMEColumn(t, "| check | why the mock fails it |"); !slices.Equal(got, mockFails) {
		t.Errorf("README.md lists %v, TestPrismMock pins %v", got, mockFails)
	}
}

package chaos

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/chaos/broken"
	"github.com/petstore/petstore/internal/check"
)

// TestBrokenKinds: -broken knows every kind internal/chaos/broken plants.
func TestBrokenKinds(t *testing.T) {
	if got := slices.Sorted(maps.Keys(brokenKinds)); !slices.Equal(got, broken.Kinds) {
		t.Fatalf("brokenKinds %v; broken.Kinds %v", got, broken.Kinds)
	}
}

// TestCaughtNeedsEvidence: a run with a planted defect passes only when
// the audit reports the defect's anomaly and the plant left evidence that
// it took effect; without the evidence (a plant that was a no-op) it
// fails, whatever the audit found.
func TestCaughtNeedsEvidence(t *testing.T) {
	lost := &check.Result{Lost: []string{"lost: pet 7"}}
	evidence := filepath.Join(t.TempDir(), "evidence")
	planted, err := broken.Took(evidence, broken.Reorder) // the server never wrote it
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if got := caught(lost, broken.Reorder, planted, &out); got != 1 || !strings.Contains(out.String(), "NOT PLANTED") {
		t.Fatalf("a plant with no evidence: %d, %q; want 1, NOT PLANTED", got, out.String())
	}
	if err := broken.Record(evidence, broken.Reorder); err != nil {
		t.Fatal(err)
	}
	if planted, err = broken.Took(evidence, broken.Reorder); err != nil || !planted {
		t.Fatalf("evidence recorded: %v, %v", planted, err)
	}
	out.Reset()
	if got := caught(lost, broken.Reorder, planted, &out); got != 0 || !strings.Contains(out.String(), "caught, 1 lost") {
		t.Fatalf("planted and caught: %d, %q; want 0, caught", got, out.String())
	}
	out.Reset()
	if got := caught(&check.Result{}, broken.Reorder, planted, &out); got != 1 || !strings.Contains(out.String(), "MISSED") {
		t.Fatalf("planted and missed: %d, %q; want 1, MISSED", got, out.String())
	}
}

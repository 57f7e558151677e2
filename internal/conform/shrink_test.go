package conform

import (
	"slices"
	"testing"
)

// Deleting a step deletes the steps that use it (a get, a retry, a reuse
// of its create) and no others: a create or a listing that carries the
// field stays, or the shrinker could never delete the first create of a
// sequence whose later creates happen to name it.
func TestWithout(t *testing.T) {
	seq := []step{
		{kind: stepCreate, of: -1},
		{kind: stepCreate, of: 0},
		{kind: stepGet, of: 0},
		{kind: stepCreate, of: 1},
		{kind: stepList, of: 0},
		{kind: stepGet, of: 1},
		{kind: stepRetry, of: 2}, // of a dropped get: dropped too
	}
	got := without(seq, 0)
	want := []step{
		{kind: stepCreate, of: -1},
		{kind: stepCreate, of: 0},
		{kind: stepList, of: -1},
		{kind: stepGet, of: 0},
	}
	if !slices.EqualFunc(got, want, func(a, b step) bool { return a.kind == b.kind && a.of == b.of }) {
		t.Errorf("without(seq, 0) = %+v, want %+v", got, want)
	}
}

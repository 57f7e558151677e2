package main

import (
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/memstore"
)

// TestDocumentsAgree fails when a document's figures are not what the
// memory store's worst case, computed from openapi.yaml, makes them: run
// make generate.
func TestDocumentsAgree(t *testing.T) {
	stale, err := update("../..", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Errorf("%s disagree with the computed bounds: run make generate", strings.Join(stale, ", "))
	}
}

// TestUnbounded: a schema that leaves a member unbounded is said so, never
// given a figure.
func TestUnbounded(t *testing.T) {
	w := memstore.WorstAt(10, 10)
	w.Bounded = false
	// The text is wrapped where the unbounded member's name puts the breaks.
	unwrapped := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	if got := unwrapped(deploying(w)); !strings.Contains(got, "no size is safe") {
		t.Errorf("deploying: %q", got)
	}
	if got := unwrapped(operating(w)); !strings.Contains(got, "no size of the memory store is safe") {
		t.Errorf("operating: %q", got)
	}
}

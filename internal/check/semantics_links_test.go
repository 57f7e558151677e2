package check_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/check"
	"github.com/petstore/petstore/internal/history"
)

// A PATCH is a merge: the members it does not send stay as the read before
// it showed them; a link followed is answered 2xx. Legal histories pass,
// the mutants are caught naming the operation.
func TestMethodSemanticsMergeAndLinks(t *testing.T) {
	patch := check.Call{Operation: "updatePet", Method: "PATCH", Target: "/pets/7", Status: 200, Sent: history.Members{"name": `"max"`}}
	merged := get200
	merged.Got = history.Members{"name": `"max"`, "status": `"available"`}
	dropped := get200
	dropped.Got = history.Members{"name": `"max"`}
	link := func(status int) check.Call {
		c := get200
		c.Status, c.Link = status, &check.Link{Name: "GetPetById", Operation: "createPet", From: 0}
		return c
	}
	for _, tc := range []struct {
		name    string
		calls   []check.Call
		verdict string
		op      string
		want    string
	}{
		{"patch merged", []check.Call{post, get200, with, patch, merged}, check.Valid, "", ""},
		{"patch replaced: a member it did not send dropped", []check.Call{post, get200, with, patch, dropped}, check.Invalid, "updatePet", "the others as the read before"},
		{"patch with no read before: members sent only", []check.Call{post, with, patch, dropped}, check.Valid, "", ""},
		{"link followed, 200", []check.Call{post, link(200), with}, check.Valid, "", ""},
		{"link followed, 404", []check.Call{post, link(404), with}, check.Invalid, "createPet", "link GetPetById"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := check.MethodSemantics(tc.calls)
			if s.Verdict != tc.verdict {
				t.Fatalf("verdict %s, want %s: %+v", s.Verdict, tc.verdict, s)
			}
			if tc.op == "" {
				return
			}
			if !slices.ContainsFunc(s.Findings, func(f check.Finding) bool {
				return f.Operation == tc.op && strings.Contains(f.Want, tc.want)
			}) {
				t.Errorf("findings %+v, want one of %s that says %q", s.Findings, tc.op, tc.want)
			}
		})
	}
}

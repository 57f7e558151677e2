package check_test

import (
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/check"
	"github.com/petstore/petstore/internal/history"
)

// The calls of a history of method semantics, as the kit makes them.
var (
	rex     = history.Members{"name": `"rex"`, "status": `"available"`}
	rexAt   = check.Listed{Target: "/pets/7", Members: rex}
	other   = check.Listed{Target: "/pets/8", Members: history.Members{"name": `"tom"`, "status": `"available"`}}
	post    = check.Call{Operation: "createPet", Method: "POST", Target: "/pets", Status: 201, Location: "/pets/7", Sent: rex}
	get200  = check.Call{Operation: "getPet", Method: "GET", Target: "/pets/7", Status: 200, Got: rex}
	del     = check.Call{Operation: "deletePet", Method: "DELETE", Target: "/pets/7", Status: 204}
	get404  = check.Call{Operation: "getPet", Method: "GET", Target: "/pets/7", Status: 404}
	without = check.Call{Operation: "listPets", Method: "GET", Target: "/pets", Status: 200, Listing: true, Whole: true, Listed: []check.Listed{other}}
	with    = check.Call{Operation: "listPets", Method: "GET", Target: "/pets", Status: 200, Listing: true, Whole: true, Listed: []check.Listed{rexAt, other}}
)

func status(c check.Call, s int) check.Call { c.Status = s; return c }

// deleteFlow is the kit's flow for a DELETE with the answers given: the
// create, a read, the delete, a read, a listing, the delete again, a read.
func deleteFlow(afterGet, list, again check.Call) []check.Call {
	return []check.Call{post, get200, with, del, afterGet, list, again, afterGet}
}

// MethodSemantics passes the answers RFC 9110 allows a conforming server
// and catches each mutant, naming the operation whose meaning is broken.
func TestMethodSemantics(t *testing.T) {
	put := check.Call{Operation: "replacePet", Method: "PUT", Target: "/pets/7", Status: 200, Sent: history.Members{"name": `"max"`}}
	patch := check.Call{Operation: "updatePet", Method: "PATCH", Target: "/pets/7", Status: 200, Sent: history.Members{"status": "null"}}
	maxed := get200
	maxed.Got = history.Members{"name": `"max"`, "status": `"available"`}
	unstatused := get200
	unstatused.Got = history.Members{"name": `"rex"`}
	twice := with
	twice.Listed = []check.Listed{rexAt, {Target: "/pets/8", Members: rex}}
	elsewhere := with
	elsewhere.Listed = []check.Listed{{Target: "/pets/9", Members: rex}}
	for _, tc := range []struct {
		name    string
		calls   []check.Call
		verdict string
		op      string // the operation a finding names
		want    string // in its want
	}{
		{"delete, then 404", deleteFlow(get404, without, status(del, 404)), check.Valid, "", ""},
		{"delete, then 410", deleteFlow(status(get404, 410), without, status(del, 410)), check.Valid, "", ""},
		{"delete repeated 204", deleteFlow(get404, without, del), check.Valid, "", ""},
		{"delete a no-op: 204, nothing deleted", deleteFlow(get200, with, del), check.Invalid, "deletePet", "404 or 410"},
		{"delete, the listing still shows it", deleteFlow(get404, with, status(del, 404)), check.Invalid, "deletePet", "no listing shows it"},
		{"delete repeated 500", deleteFlow(get404, without, status(del, 500)), check.Invalid, "deletePet", "repeated"},
		{"a post that creates two", []check.Call{post, twice}, check.Invalid, "createPet", "exactly one"},
		{"a post listed elsewhere than its Location", []check.Call{post, elsewhere}, check.Invalid, "createPet", "Location"},
		{"a post whose Location is not found", []check.Call{post, get404, with}, check.Invalid, "createPet", "Location"},
		{"a post, listed once", []check.Call{post, get200, with}, check.Valid, "", ""},
		{"put, then read", []check.Call{post, with, put, maxed, put, maxed}, check.Valid, "", ""},
		{"put not applied", []check.Call{post, with, put, get200}, check.Invalid, "replacePet", "each member sent"},
		{"put repeated 409", []check.Call{post, with, put, maxed, status(put, 409), maxed}, check.Invalid, "replacePet", "repeated"},
		{"patch to null, then gone", []check.Call{post, with, patch, unstatused}, check.Valid, "", ""},
		{"patch to null, still there", []check.Call{post, with, patch, get200}, check.Invalid, "updatePet", "each member sent"},
		{"a delete with no read after it", []check.Call{post, with, del}, check.Unknown, "", ""},
		{"a delete answered 503", []check.Call{post, with, status(del, 503), get200}, check.Unknown, "", ""},
		{"no write", []check.Call{get200}, check.Unknown, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := check.MethodSemantics(tc.calls)
			if s.Verdict != tc.verdict {
				t.Fatalf("verdict %s, want %s: %+v", s.Verdict, tc.verdict, s)
			}
			if tc.op == "" {
				return
			}
			f := s.Findings[0]
			if f.Operation != tc.op || !strings.Contains(f.Want, tc.want) || f.Check != check.CheckMethodSemantics {
				t.Errorf("finding %+v, want one of %s that says %q", f, tc.op, tc.want)
			}
		})
	}
}

// A write the history shows nothing after is named with why, and leaves
// the verdict unknown even when another operation's writes are valid.
func TestMethodSemanticsUnjudged(t *testing.T) {
	s := check.MethodSemantics([]check.Call{post, with, del})
	if s.Verdict != check.Unknown || s.Unjudged["deletePet"] == "" || s.Judged["createPet"] == 0 {
		t.Errorf("got %+v, want unknown, deletePet unjudged, createPet judged", s)
	}
}

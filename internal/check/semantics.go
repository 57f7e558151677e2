package check

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/petstore/petstore/internal/history"
)

// Method semantics: what HTTP itself says a write means, for any operation,
// one the kit was written for or not (docs/conformance-kit.md, "Method
// semantics"). MethodSemantics judges a history of calls, in the order they
// were made (one after another), by these rules:
//
//   - DELETE (RFC 9110 §9.3.5): after a 2xx DELETE of a resource, a GET of
//     it is answered 404 or 410, and no listing shows it; the DELETE
//     repeated (idempotent, §9.2.2) leaves the same state and says so: 2xx,
//     404 or 410;
//   - PUT (§9.3.4) and PATCH (RFC 5789, as a merge patch, RFC 7396): after
//     a 2xx, a GET of the resource and every listing that shows it show each
//     member sent (a member patched to null is gone), and after a PATCH the
//     members it did not send as the last read before it showed them (a
//     merge patch changes only what it names); the same PUT repeated is
//     answered 2xx and leaves the same state;
//   - POST to a collection (§9.3.3, §15.3.2): a 2xx creates exactly one
//     resource: the first whole listing of the collection after it shows
//     exactly one resource with the members sent, at the 201's Location
//     when it gives one; a GET of that Location is answered 200 with them.
//   - links (OpenAPI 3.0, Link Object): a call that follows a link of an
//     answer (Call.Link) is answered 2xx, the linked operation's success.
//
// A rule judges a write until the next write of the same resource that is
// not the same request repeated.

// KindMethodSemantics is the kind of anomaly MethodSemantics finds.
const KindMethodSemantics = "method semantics"

// CheckMethodSemantics is the kit's check that reports it.
const CheckMethodSemantics = "method_semantics"

// Call is one request of a method-semantics history and its answer.
type Call struct {
	Operation string `json:"operation"` // the operationId it was routed to
	Method    string `json:"method"`
	Target    string `json:"target"`           // its path below the base, without the query: /pets/7, or the collection /pets
	Status    int    `json:"status,omitempty"` // 0: no answer
	Location  string `json:"location,omitempty"`
	// Sent is a POST's, PUT's or PATCH's body, member by member, defaults
	// applied for a create (history.Members' forms).
	Sent history.Members `json:"sent,omitempty"`
	// Got is the resource a 200 to a GET of one showed.
	Got history.Members `json:"got,omitempty"`
	// Listing marks a GET of a collection answered 200; Listed are the resources a listing (a GET of a collection, 200)
	// showed, in order, each at its own path; Whole, that it went on to the
	// end of the collection from below every resource the earlier calls
	// created.
	Listing bool     `json:"listing,omitempty"`
	Listed  []Listed `json:"listed,omitempty"`
	Whole   bool     `json:"whole,omitempty"`
	// Link marks a call that follows a link of an earlier call's answer.
	Link *Link `json:"link,omitempty"`
}

// Link is the link a call follows: its name, in the answer of call From,
// an answer of Operation.
type Link struct {
	Name      string `json:"name"`
	Operation string `json:"operation"`
	From      int    `json:"from"`
}

// Listed is one resource of a listing, at its own path.
type Listed struct {
	Target  string          `json:"target"`
	Members history.Members `json:"members,omitempty"`
}

// Finding is one anomaly of method semantics: the operation whose meaning
// the history shows broken, the write (a call's index) judged, and the
// call that showed it.
type Finding struct {
	Anomaly
	Operation string `json:"operation"`
	Write     int    `json:"write"`
	Call      int    `json:"call"`
}

// Semantics is what MethodSemantics found over a history.
type Semantics struct {
	Verdict  string            `json:"verdict"` // Valid, Invalid or Unknown
	Findings []Finding         `json:"findings"`
	Judged   map[string]int    `json:"judged"`             // by operation: the cases judged
	Unjudged map[string]string `json:"unjudged,omitempty"` // by operation written, none judged: why
}

// MethodSemantics judges calls by the rules above: invalid with a finding
// for each broken; unknown when a write of some operation had no later
// call to show its effect (Unjudged says why); else valid.
func MethodSemantics(calls []Call) Semantics {
	s := Semantics{Findings: []Finding{}, Judged: map[string]int{}, Unjudged: map[string]string{}}
	for i := range calls {
		s.linked(calls, i)
		w := &calls[i]
		if !isWrite(w.Method) {
			continue
		}
		if w.Status < 200 || w.Status > 299 {
			s.Unjudged[w.Operation] = fmt.Sprintf("%s %s was answered %s: nothing done to judge", w.Method, w.Target, answerText(w.Status))
			continue
		}
		n := len(s.Findings)
		var judged int
		switch w.Method {
		case http.MethodDelete:
			judged = s.deleted(calls, i)
		case http.MethodPut, http.MethodPatch:
			judged = s.replaced(calls, i)
		case http.MethodPost:
			judged = s.created(calls, i)
		}
		s.Judged[w.Operation] += judged
		if judged == 0 && len(s.Findings) == n {
			s.Unjudged[w.Operation] = fmt.Sprintf("no call after %s %s showed what it did", w.Method, w.Target)
		}
	}
	for op, n := range s.Judged {
		if n > 0 {
			delete(s.Unjudged, op)
		}
	}
	switch {
	case len(s.Findings) > 0:
		s.Verdict = Invalid
	case len(s.Unjudged) > 0 || len(s.Judged) == 0:
		s.Verdict = Unknown
	default:
		s.Verdict = Valid
	}
	return s
}

// linked judges call i when it follows a link: the linked operation
// answers 2xx, as the link promises.
func (s *Semantics) linked(calls []Call, i int) {
	c := &calls[i]
	if c.Link == nil || c.Status == 0 || c.Link.From < 0 || c.Link.From >= i {
		return
	}
	s.Judged[c.Link.Operation]++
	if c.Status < 200 || c.Status > 299 {
		s.find(calls, c.Link.From, i, fmt.Sprintf("its link %s, followed, is answered 2xx: the linked operation's success (OpenAPI 3.0, Link Object)", c.Link.Name), "")
	}
}

// isWrite reports whether a method is a write these rules judge.
func isWrite(method string) bool {
	switch method {
	case http.MethodDelete, http.MethodPut, http.MethodPatch, http.MethodPost:
		return true
	}
	return false
}

func answerText(status int) string {
	if status == 0 {
		return "nothing (no answer)"
	}
	return fmt.Sprint(status)
}

// find records a finding of write i shown by call j.
func (s *Semantics) find(calls []Call, i, j int, want, got string) {
	w := &calls[i]
	if got == "" {
		got = fmt.Sprintf("%s %s answered %s", calls[j].Method, calls[j].Target, answerText(calls[j].Status))
	}
	s.Findings = append(s.Findings, Finding{
		Anomaly:   Anomaly{Kind: KindMethodSemantics, Check: CheckMethodSemantics, Want: fmt.Sprintf("after %s %s answered %d: %s", w.Method, w.Target, w.Status, want), Got: got},
		Operation: w.Operation, Write: i, Call: j,
	})
}

// writeWindow is the calls after write i that its rule judges: up to the next
// write of target that is not the same request repeated.
func writeWindow(calls []Call, i int, target string) []int {
	w := &calls[i]
	var out []int
	for j := i + 1; j < len(calls); j++ {
		c := &calls[j]
		if isWrite(c.Method) && c.Status >= 200 && c.Status <= 299 && (c.Target == target || target != "" && c.Location == target) &&
			!(c.Method == w.Method && c.Target == w.Target && maps.Equal(c.Sent, w.Sent)) {
			break
		}
		out = append(out, j)
	}
	return out
}

// listed is the index of target among a listing's resources, or -1
// (for a call that is no listing too).
func (c *Call) listed(target string) int {
	if !c.Listing {
		return -1
	}
	return slices.IndexFunc(c.Listed, func(l Listed) bool { return l.Target == target })
}

// read reports whether c is an answered GET of target.
func (c *Call) read(target string) bool {
	return c.Method == http.MethodGet && c.Target == target && c.Status != 0
}

// deleted judges a 2xx DELETE, call i: the resource is gone, and stays so.
func (s *Semantics) deleted(calls []Call, i int) int {
	target, judged := calls[i].Target, 0
	for _, j := range writeWindow(calls, i, target) {
		c := &calls[j]
		switch {
		case c.read(target):
			judged++
			if c.Status != http.StatusNotFound && c.Status != http.StatusGone {
				s.find(calls, i, j, fmt.Sprintf("GET %s is answered 404 or 410: the resource is gone (RFC 9110 §9.3.5)", target), "")
			}
		case c.listed(target) >= 0:
			judged++
			s.find(calls, i, j, "no listing shows it", fmt.Sprintf("GET %s listed %s", c.Target, target))
		case c.Listing:
			judged++ // a listing without it
		case c.Method == http.MethodDelete && c.Target == target && c.Status != 0 && c.Status != http.StatusServiceUnavailable:
			judged++
			if (c.Status < 200 || c.Status > 299) && c.Status != http.StatusNotFound && c.Status != http.StatusGone {
				s.find(calls, i, j, "the DELETE repeated leaves the same state and says so: 2xx, 404 or 410 (RFC 9110 §9.2.2, idempotent)", "")
			}
		}
	}
	return judged
}

// replaced judges a 2xx PUT or PATCH, call i: reads show what it sent, and
// the same PUT repeated is answered 2xx.
func (s *Semantics) replaced(calls []Call, i int) int {
	w := &calls[i]
	target, judged := w.Target, 0
	rule, kept := "every read shows each member sent ("+rfcOfWrite(w.Method)+")", history.Members{}
	if before := readBefore(calls, i); w.Method == http.MethodPatch && before != nil {
		rule = "every read shows each member sent, the others as the read before it showed them (" + rfcOfWrite(w.Method) + ")"
		for k, v := range before {
			if _, sent := w.Sent[k]; !sent {
				kept[k] = v
			}
		}
	}
	for _, j := range writeWindow(calls, i, target) {
		c := &calls[j]
		var shown history.Members
		switch {
		case c.read(target) && c.Status == http.StatusOK:
			shown = c.Got
		case c.read(target):
			judged++
			s.find(calls, i, j, fmt.Sprintf("GET %s is answered 200 with what was sent", target), "")
			continue
		case c.listed(target) >= 0:
			shown = c.Listed[c.listed(target)].Members
		case c.Method == w.Method && c.Target == target && c.Status != 0 && c.Status != http.StatusServiceUnavailable:
			judged++
			if c.Status < 200 || c.Status > 299 {
				s.find(calls, i, j, "the same "+w.Method+" repeated is answered 2xx and leaves the same state (RFC 9110 §9.2.2)", "")
			}
			continue
		default:
			continue
		}
		judged++
		d := strings.Join(slices.DeleteFunc([]string{unlike(w.Sent, shown, w.Method == http.MethodPatch), unlikeAs(kept, shown, false, "was")},
			func(s string) bool { return s == "" }), "; ")
		if d != "" {
			s.find(calls, i, j, rule, fmt.Sprintf("%s %s showed %s", c.Method, c.Target, d))
		}
	}
	return judged
}

// readBefore is what the last 200 to a GET of write i's target before it
// showed, with no 2xx write of the target between; nil when none did.
func readBefore(calls []Call, i int) history.Members {
	target := calls[i].Target
	for j := i - 1; j >= 0; j-- {
		c := &calls[j]
		switch {
		case isWrite(c.Method) && c.Status >= 200 && c.Status <= 299 && (c.Target == target || c.Location == target):
			return nil
		case c.read(target) && c.Status == http.StatusOK:
			return c.Got
		}
	}
	return nil
}

func rfcOfWrite(method string) string {
	if method == http.MethodPatch {
		return "RFC 5789, a merge patch: RFC 7396"
	}
	return "RFC 9110 §9.3.4"
}

// unlike says how shown differs from the members sent ("" when it shows
// each): with patch, a member sent null must be gone.
func unlike(sent, shown history.Members, patch bool) string {
	return unlikeAs(sent, shown, patch, "sent")
}

// unlikeAs is unlike, naming the members wanted by word: "sent", "was".
func unlikeAs(sent, shown history.Members, patch bool, word string) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(sent)) {
		v, ok := shown[k]
		switch {
		case patch && sent[k] == "null":
			if ok {
				out = append(out, fmt.Sprintf("%s %s, patched away", k, CutText(v)))
			}
		case !ok:
			out = append(out, k+" missing, "+word+" "+CutText(sent[k]))
		case v != sent[k]:
			out = append(out, fmt.Sprintf("%s %s, %s %s", k, CutText(v), word, CutText(sent[k])))
		}
	}
	return strings.Join(out, "; ")
}

// created judges a 2xx POST to a collection, call i: exactly one resource
// with the members sent, at its Location.
func (s *Semantics) created(calls []Call, i int) int {
	w := &calls[i]
	if len(w.Sent) == 0 {
		return 0
	}
	judged, listed := 0, false
	for _, j := range writeWindow(calls, i, w.Location) {
		c := &calls[j]
		switch {
		case w.Location != "" && c.Method == http.MethodDelete && c.Target == w.Location:
			return judged // gone: no more to judge
		case w.Location != "" && c.read(w.Location):
			judged++
			if c.Status != http.StatusOK {
				s.find(calls, i, j, "GET of its Location ("+w.Location+") is answered 200 with the resource created (RFC 9110 §15.3.2)", "")
			} else if d := unlike(w.Sent, c.Got, false); d != "" {
				s.find(calls, i, j, "GET of its Location shows each member sent", fmt.Sprintf("GET %s showed %s", c.Target, d))
			}
		case !listed && c.Listing && c.Target == w.Target && c.Whole:
			listed = true
			judged++
			s.createdOnce(calls, i, j)
		}
	}
	return judged
}

// createdOnce judges listing j, whole, after POST i: one resource with the
// members sent, at the POST's Location.
func (s *Semantics) createdOnce(calls []Call, i, j int) {
	w, c := &calls[i], &calls[j]
	var at []string
	for _, l := range c.Listed {
		if unlike(w.Sent, l.Members, false) == "" {
			at = append(at, l.Target)
		}
	}
	switch {
	case len(at) != 1:
		s.find(calls, i, j, "exactly one resource created, with the members sent, listed once",
			fmt.Sprintf("GET %s, whole, listed %d: %s", c.Target, len(at), strings.Join(at, " ")))
	case w.Location != "" && at[0] != w.Location:
		s.find(calls, i, j, "the resource created is at the 201's Location, "+w.Location, fmt.Sprintf("GET %s listed it at %s", c.Target, at[0]))
	}
}

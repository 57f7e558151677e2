package check

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/history"
)

func pet(id int64, name, status string) history.Pet {
	return history.Pet{ID: id, Name: name, CategoryID: 1, Status: status}
}

func body(name, status string) *history.Body {
	return &history.Body{Name: name, CategoryID: 1, Status: status}
}

// page is a walk's page from r1, answered 200 with n pets.
func page(after int64, n int, next string) history.Page {
	return history.Page{After: after, Replica: "r1", Status: 200, N: n, Next: next}
}

func ptr[T any](v T) *T { return &v }

// clean is a history with every kind of operation and no anomaly, and its
// final state: key k1 acknowledged after a timeout and a 503, key k2 left
// unknown but stored, key k3 refused and not stored, a keyless create
// acknowledged, one unknown and stored, one unknown and not stored, one
// refused; walks and gets that agree.
func clean() ([]history.Op, []history.Pet) {
	ops := []history.Op{
		{Kind: history.Fault, Fault: "kill", Target: "r1", Invoke: 5, Complete: 50},
		{Kind: history.Create, Invoke: 10, Complete: 20, Key: "k1", Body: body("a", "sold"), Attempt: 1, Outcome: history.Indeterminate, Requests: 1},
		{Kind: history.Create, Invoke: 21, Complete: 25, Key: "k1", Body: body("a", "sold"), Attempt: 2, Outcome: history.Failed, Status: 503, Code: "unavailable", Requests: 1},
		// A replay: attempt 1, which got no answer, may have written it.
		{Kind: history.Create, Invoke: 26, Complete: 30, Key: "k1", Body: body("a", "sold"), Attempt: 3, Outcome: history.OK, Status: 201, Pet: ptr(pet(1, "a", "sold")), Replayed: true, Requests: 1, Answered: 1},
		{Kind: history.Create, Invoke: 11, Complete: 40, Key: "k2", Body: body("b", "available"), Attempt: 1, Outcome: history.Indeterminate, Status: 503, Code: "outcome_unknown", Requests: 1},
		{Kind: history.Create, Invoke: 12, Complete: 13, Key: "k3", Body: body("c", "available"), Attempt: 1, Outcome: history.Failed, Status: 503, Code: "unavailable", Requests: 1},
		{Kind: history.Create, Invoke: 14, Complete: 35, Body: body("d", "pending"), Outcome: history.OK, Status: 201, Pet: ptr(pet(3, "d", "pending")), Requests: 1, Answered: 1},
		{Kind: history.Create, Invoke: 15, Complete: 36, Body: body("e", "pending"), Outcome: history.Indeterminate, Requests: 1},
		{Kind: history.Create, Invoke: 16, Complete: 37, Body: body("f", "pending"), Outcome: history.Indeterminate, Requests: 1},
		{Kind: history.Create, Invoke: 17, Complete: 18, Body: body("g", "pending"), Outcome: history.Failed, Status: 503, Code: "unavailable", Requests: 1},
		// A walk that began before pet 3 was acknowledged may miss it.
		{Kind: history.Walk, Invoke: 32, Complete: 60, Outcome: history.OK, Limit: 2, IDs: []int64{1, 2}, Requests: 2, Answered: 2,
			Pages: []history.Page{page(0, 2, apitest.Path("/pets?after=2&limit=2")), page(2, 0, "")},
			Pets:  []history.Pet{pet(1, "a", "sold"), pet(2, "b", "available")}},
		// Pets 1 and 2 as an earlier line recorded them: in IDs alone.
		{Kind: history.Walk, Invoke: 70, Complete: 80, Outcome: history.OK, Limit: 2, IDs: []int64{1, 2, 3, 4}, Requests: 3, Answered: 3,
			Pages: []history.Page{page(0, 2, apitest.Path("/pets?after=2&limit=2")), page(2, 2, apitest.Path("/pets?after=4&limit=2")), page(4, 0, "")},
			Pets:  []history.Pet{pet(3, "d", "pending"), pet(4, "e", "pending")}},
		{Kind: history.Walk, Invoke: 70, Complete: 80, Outcome: history.OK, Filter: "pending", Limit: 2, IDs: []int64{3, 4}, Requests: 2, Answered: 2,
			Pages: []history.Page{page(0, 2, apitest.Path("/pets?after=4&limit=2&status=pending")), page(4, 0, "")}},
		// A walk that failed is audited up to where it ended.
		{Kind: history.Walk, Invoke: 70, Complete: 80, Outcome: history.Failed, Limit: 2, IDs: []int64{1, 2}, Requests: 2, Answered: 1,
			Pages: []history.Page{page(0, 2, apitest.Path("/pets?limit=2&after=2")), {After: 2, Replica: "r2", Status: 503, Code: "unavailable"}}},
		// A get invoked before the acknowledgement completed may miss.
		{Kind: history.Get, Invoke: 33, Complete: 34, ID: 3, Outcome: history.OK, Status: 404, Code: "not_found", Requests: 1, Answered: 1},
		{Kind: history.Get, Invoke: 40, Complete: 41, ID: 3, Outcome: history.OK, Status: 200, Pet: ptr(pet(3, "d", "pending")), Requests: 1, Answered: 1},
		{Kind: history.Get, Invoke: 42, Complete: 43, ID: 1, Outcome: history.Failed, Status: 503, Code: "unavailable", Requests: 1},
		// A retry while the first attempt is still being processed.
		{Kind: history.Create, Invoke: 44, Complete: 45, Key: "k4", Body: body("h", "sold"), Attempt: 1, Outcome: history.Indeterminate, Requests: 1},
		{Kind: history.Create, Invoke: 46, Complete: 47, Key: "k4", Body: body("h", "sold"), Attempt: 2, Outcome: history.Failed, Status: 409, Code: "idempotency_key_in_flight", Requests: 1, Answered: 1},
	}
	state := []history.Pet{pet(1, "a", "sold"), pet(2, "b", "available"), pet(3, "d", "pending"), pet(4, "e", "pending")}
	return ops, state
}

func TestClean(t *testing.T) {
	ops, state := clean()
	r := Check(ops, state, Options{MinAcked: 2, MinFaults: 1})
	var out bytes.Buffer
	r.Print(&out)
	if !r.OK() {
		t.Fatalf("a clean history fails:\n%s", out.String())
	}
	if r.Acked != 2 || r.Stored != 4 || r.KeylessUnknown != 2 || r.KeylessUnknownStored != 1 || r.Walks != 3 {
		t.Errorf("counts: %+v", r)
	}
	if r.Ops[RowKeyed][history.OK] != 1 || r.Ops[RowKeyed][history.Failed] != 3 || r.Ops[RowKeyed][history.Indeterminate] != 3 {
		t.Errorf("keyed creates by outcome: %v", r.Ops[RowKeyed])
	}
	if r.Requests != 23 || r.Answered != 13 {
		t.Errorf("availability: %d of %d, want 13 of 23", r.Answered, r.Requests)
	}
	if r.Reads != 11 {
		t.Errorf("pets returned by reads: %d, want 11", r.Reads)
	}
	for _, want := range []string{
		"faults                     1, 1 kinds (kill 1)", "lost                       0", "aborted reads              0",
		"create, keyed    201: 1, 409 idempotency_key_in_flight: 1, 503 outcome_unknown: 1, 503 unavailable: 2, no answer: 2",
		"walk             200: 8, 503 unavailable: 1",
		"get              200: 1, 404 not_found: 1, 503 unavailable: 1",
		"result: PASS",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, out.String())
		}
	}
}

// TestAnomalies feeds clean histories with one anomaly planted each, and
// checks that the checker reports it, and nothing of another kind.
func TestAnomalies(t *testing.T) {
	type ops = []history.Op
	type pets = []history.Pet
	for _, tc := range []struct {
		name  string
		plant func(ops, pets) (ops, pets)
		kind  string
		want  string
	}{
		{"acknowledged pet not stored", func(o ops, s pets) (ops, pets) {
			o[10].IDs, o[10].Pages, o[10].Pets = []int64{2}, []history.Page{page(0, 1, "")}, s[1:2] // no read of it either
			o[11].IDs, o[11].Pages = []int64{2, 3, 4}, []history.Page{page(0, 2, apitest.Path("/pets?after=3&limit=2")), page(3, 1, "")}
			o[13].IDs, o[13].Pages = o[13].IDs[1:], []history.Page{page(0, 1, "")}
			return o, s[1:]
		}, KindLost, "pet 1 acknowledged"},
		{"acknowledged pet stored otherwise", func(o ops, s pets) (ops, pets) {
			s[0].Status = "available"
			o[10].Pets[0].Status = "available" // as the walk saw it too
			return o, s
		}, KindLost, "stored as"},
		{"acknowledged with another body than sent", func(o ops, s pets) (ops, pets) {
			o[3].Body = body("a", "pending")
			o[1].Body, o[2].Body = o[3].Body, o[3].Body
			return o, s
		}, KindLost, "but the request was"},
		{"a key stored twice", func(o ops, s pets) (ops, pets) {
			return o, append(s, pet(5, "a", "sold"))
		}, KindDoubled, "2 pets stored [1 5]"},
		{"a key acknowledged as two pets", func(o ops, s pets) (ops, pets) {
			retry := o[3]
			retry.Attempt, retry.Pet, retry.Invoke, retry.Complete = 4, ptr(pet(5, "a", "sold")), 85, 90
			return append(o, retry), append(s, pet(5, "a", "sold"))
		}, KindDoubled, "acknowledged as 2 different pets"},
		{"a refused keyless create stored", func(o ops, s pets) (ops, pets) {
			return o, append(s, pet(5, "g", "pending"))
		}, KindPhantom, `keyless create "g": pet 5 stored, but every attempt was refused`},
		{"a refused key stored", func(o ops, s pets) (ops, pets) {
			return o, append(s, pet(5, "c", "available"))
		}, KindPhantom, "key k3: pet 5 stored"},
		{"a replay after attempts that all said nothing was written", func(o ops, s pets) (ops, pets) {
			o[1].Outcome, o[1].Status, o[1].Code = history.Failed, 503, "unavailable"
			return o, s
		}, KindPhantom, "key k1: attempt 3 replays pet 1, but every earlier attempt said nothing was written: 503 failed; 503 failed"},
		{"a pet no create sent", func(o ops, s pets) (ops, pets) {
			return o, append(s, pet(5, "zz", "sold"))
		}, KindPhantom, "no create sent this name"},
		{"an unknown create stored otherwise than sent", func(o ops, s pets) (ops, pets) {
			s[3].CategoryID = 2
			o[11].Pets[1].CategoryID = 2
			return o, s
		}, KindPhantom, `keyless create "e": pet 4 stored as`},
		{"a walk shows a pet not stored (a rolled-back create)", func(o ops, s pets) (ops, pets) {
			o[11].IDs = []int64{1, 2, 3, 4, 5}
			o[11].Pages[2] = page(4, 1, "")
			o[11].Pets = append(o[11].Pets, pet(5, "g", "pending"))
			return o, s
		}, KindAbortedReads, `pet 5 {ID:5 Name:g CategoryID:1 Status:pending} returned by 1 reads (first: walk (process 0`},
		{"walks show it again as an earlier line recorded it", func(o ops, s pets) (ops, pets) {
			o[11].IDs = []int64{1, 2, 3, 4, 5}
			o[11].Pages[2] = page(4, 1, "")
			o[11].Pets = append(o[11].Pets, pet(5, "g", "pending"))
			o[12].IDs = []int64{3, 4, 5}
			o[12].Pages = []history.Page{page(0, 2, apitest.Path("/pets?after=4&limit=2&status=pending")), page(4, 1, "")}
			return o, s
		}, KindAbortedReads, "returned by 2 reads"},
		{"a get answers a pet not stored", func(o ops, s pets) (ops, pets) {
			return append(o, history.Op{Kind: history.Get, Invoke: 90, Complete: 91, ID: 5, Outcome: history.OK, Status: 200, Pet: ptr(pet(5, "c", "available"))}), s
		}, KindAbortedReads, "(first: get 5 from  at 0 ms) is not stored"},
		{"a walk shows a pet otherwise than stored", func(o ops, s pets) (ops, pets) {
			o[10].Pets[1].Status = "sold"
			return o, s
		}, KindWrongReads, "pet 2 returned as {ID:2 Name:b CategoryID:1 Status:sold} by 1 reads"},
		{"a get answers a pet otherwise than stored", func(o ops, s pets) (ops, pets) {
			o[15].Pet = ptr(pet(3, "d", "sold"))
			return o, s
		}, KindWrongReads, "stored as {ID:3 Name:d CategoryID:1 Status:pending}"},
		{"a get answers another pet", func(o ops, s pets) (ops, pets) {
			o[15].Pet = ptr(pet(4, "e", "pending"))
			return o, s
		}, KindWrongReads, "get 3 from  at 0 ms: answered pet 4"},
		{"walk ends before an acknowledged pet", func(o ops, s pets) (ops, pets) {
			o[11].IDs, o[11].Pages = []int64{1, 2}, o[11].Pages[:1]
			o[11].Pages[0].Next = ""
			return o, s
		}, KindWalkAnomalies, "missed pet 3, acknowledged"},
		{"walk misses a stored pet below its last id, created after it began", func(o ops, s pets) (ops, pets) {
			o[10].IDs, o[10].Pages = []int64{1, 3}, []history.Page{page(0, 2, apitest.Path("/pets?after=3&limit=2")), page(3, 0, "")}
			return o, s
		}, KindWalkAnomalies, "missed pet 2, stored, below the last id"},
		{"a walk that failed misses a pet below its last id", func(o ops, s pets) (ops, pets) {
			o[13].IDs, o[13].Pages[0] = []int64{2}, page(0, 1, apitest.Path("/pets?after=2&limit=2"))
			return o, s
		}, KindWalkAnomalies, "missed pet 1, stored"},
		{"filtered walk misses a stored pet below its last id", func(o ops, s pets) (ops, pets) {
			o[12].IDs, o[12].Pages[0] = []int64{4}, page(0, 1, apitest.Path("/pets?after=4&limit=2&status=pending"))
			o[12].Invoke = 34 // before pet 3 was acknowledged
			return o, s
		}, KindWalkAnomalies, "missed pet 3, stored"},
		{"filtered walk misses an acknowledged pet", func(o ops, s pets) (ops, pets) {
			o[12].IDs, o[12].Pages[0] = []int64{4}, page(0, 1, apitest.Path("/pets?after=4&limit=2&status=pending"))
			return o, s
		}, KindWalkAnomalies, "status=pending, limit 2, 1 pets, at 0 ms): missed pet 3"},
		{"walk visits a pet twice", func(o ops, s pets) (ops, pets) {
			o[11].IDs = []int64{1, 2, 2, 3, 4}
			o[11].Pages = []history.Page{page(0, 2, apitest.Path("/pets?after=2&limit=2")), page(2, 2, apitest.Path("/pets?after=3&limit=2")), page(3, 1, apitest.Path("/pets?after=4&limit=2")), page(4, 0, "")}
			return o, s
		}, KindWalkAnomalies, "id 2 after 2, not ascending"},
		{"walk goes back", func(o ops, s pets) (ops, pets) {
			o[11].IDs = []int64{1, 3, 2, 4}
			o[11].Pages = []history.Page{page(0, 2, apitest.Path("/pets?after=3&limit=2")), page(3, 2, apitest.Path("/pets?after=4&limit=2")), page(4, 0, "")}
			return o, s
		}, KindWalkAnomalies, "id 2 after 3"},
		{"filtered walk visits another status", func(o ops, s pets) (ops, pets) {
			o[12].IDs = []int64{2, 3, 4}
			o[12].Pages = []history.Page{page(0, 2, apitest.Path("/pets?after=3&limit=2&status=pending")), page(3, 1, apitest.Path("/pets?after=4&limit=2&status=pending")), page(4, 0, "")}
			return o, s
		}, KindWalkAnomalies, "visited pet 2 of status available"},
		{"a next link that loops", func(o ops, s pets) (ops, pets) {
			// The walker stops where the cursor does not move on.
			o[11].Pages = o[11].Pages[:2]
			o[11].Pages[1].Next = apitest.Path("/pets?after=2&limit=2")
			o[11].Outcome = history.Failed
			return o, s
		}, KindWalkAnomalies, "next link " + apitest.Base() + "/pets?after=2&limit=2 loops: after=2 goes back from the page's last id 4"},
		{"a next link past the page's last id", func(o ops, s pets) (ops, pets) {
			o[10].Pages[0].Next = apitest.Path("/pets?after=3&limit=2")
			o[10].Pages[1].After = 3
			return o, s
		}, KindWalkAnomalies, "moves the cursor to after=3, not to the page's last id 2"},
		{"a next link that changes the query", func(o ops, s pets) (ops, pets) {
			o[12].Pages[0].Next = apitest.Path("/pets?after=4&limit=2")
			return o, s
		}, KindWalkAnomalies, "changes the query (want after=4&limit=2&status=pending)"},
		{"an empty page with a next link", func(o ops, s pets) (ops, pets) {
			o[11].Pages[2].Next = apitest.Path("/pets?after=4&limit=2")
			o[11].Outcome = history.Failed
			return o, s
		}, KindWalkAnomalies, "an empty page links to " + apitest.Base() + "/pets?after=4&limit=2"},
		{"a page over the limit", func(o ops, s pets) (ops, pets) {
			o[11].Pages = []history.Page{page(0, 3, apitest.Path("/pets?after=3&limit=2")), page(3, 1, apitest.Path("/pets?after=4&limit=2")), page(4, 0, "")}
			return o, s
		}, KindWalkAnomalies, "3 pets, over the limit"},
		{"a page at or below its cursor", func(o ops, s pets) (ops, pets) {
			o[11].IDs = []int64{1, 2, 2, 3, 4}
			o[11].Pages = []history.Page{page(0, 2, apitest.Path("/pets?after=2&limit=2")), page(2, 2, apitest.Path("/pets?after=3&limit=2")), page(3, 1, apitest.Path("/pets?after=4&limit=2")), page(4, 0, "")}
			return o, s
		}, KindWalkAnomalies, "page after=2 from r1: pet 2, not above the cursor"},
		{"a cursor refused", func(o ops, s pets) (ops, pets) {
			o[11].IDs, o[11].Outcome = []int64{1, 2}, history.Failed
			o[11].Pages = []history.Page{o[11].Pages[0], {After: 2, Replica: "r2", Status: 400, Code: "invalid_request", Error: "after: no such cursor"}}
			return o, s
		}, KindWalkAnomalies, "page after=2 from r2: cursor refused: 400 invalid_request"},
		{"a 500", func(o ops, s pets) (ops, pets) {
			o[9].Status, o[9].Code, o[9].Outcome = 500, "internal", history.Indeterminate
			return o, s
		}, KindUnexpected, `keyless create "g" to  at 0 ms: 500 internal`},
		{"a 422 on an identical retry", func(o ops, s pets) (ops, pets) {
			o[2].Status, o[2].Code = 422, "idempotency_key_reused"
			return o, s
		}, KindUnexpected, "key k1 attempt 2 to  at 0 ms: 422 idempotency_key_reused"},
		{"a 409 on a key's first attempt", func(o ops, s pets) (ops, pets) {
			o[5].Status, o[5].Code = 409, "idempotency_key_in_flight"
			return o, s
		}, KindUnexpected, "key k3 attempt 1"},
		{"a 429 with no rate limit", func(o ops, s pets) (ops, pets) {
			o[16].Status, o[16].Code = 429, "rate_limited"
			return o, s
		}, KindUnexpected, "get 1 from  at 0 ms: 429 rate_limited"},
		{"outcome_unknown on a get", func(o ops, s pets) (ops, pets) {
			o[16].Code = "outcome_unknown"
			return o, s
		}, KindUnexpected, "503 outcome_unknown"},
		{"an unreadable 201", func(o ops, s pets) (ops, pets) {
			o[6].Outcome, o[6].Pet = history.Indeterminate, nil
			o[6].Violations = []string{"response_schema_conformance: the body is not JSON"}
			return o, s
		}, KindUnexpected, `keyless create "d" to  at 0 ms: breaks openapi.yaml: response_schema_conformance`},
		{"a first page refused", func(o ops, s pets) (ops, pets) {
			o[12].IDs, o[12].Outcome = nil, history.Failed
			o[12].Pages = []history.Page{{Replica: "r1", Status: 400, Code: "invalid_request", Error: "status: bad"}}
			return o, s
		}, KindUnexpected, "page after=0 from r1: 400 invalid_request"},
		{"a 503 of another code on a page", func(o ops, s pets) (ops, pets) {
			o[13].Pages[1].Code = "internal"
			return o, s
		}, KindUnexpected, "503 internal"},
		{"get 404 after the acknowledgement", func(o ops, s pets) (ops, pets) {
			o[15].Status, o[15].Code, o[15].Pet = 404, "not_found", nil
			return o, s
		}, KindGetAfterAck, "get 3 from : 404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, s := clean()
			o, s = tc.plant(o, s)
			r := Check(o, s, Options{})
			var out bytes.Buffer
			r.Print(&out)
			got := r.Of(tc.kind)
			if r.OK() || r.Anomalies() != len(got) || !slices.ContainsFunc(got, func(l string) bool { return strings.Contains(l, tc.want) }) || len(r.Short) > 0 {
				t.Fatalf("want %s only, one of them %q; got:\n%s", tc.kind, tc.want, out.String())
			}
			if !strings.Contains(out.String(), "result: FAIL") {
				t.Errorf("the table does not say FAIL:\n%s", out.String())
			}
		})
	}
}

// TestShort: a run with too few acknowledged creates or faults fails,
// though it has no anomaly.
func TestShort(t *testing.T) {
	ops, state := clean()
	r := Check(ops, state, Options{MinAcked: 3, MinFaults: 2})
	if r.OK() || len(r.Short) != 2 || r.Anomalies() != 0 {
		t.Fatalf("got OK %v, short %q, %d anomalies; want two shortfalls", r.OK(), r.Short, r.Anomalies())
	}
}

// TestNamesOnce: the audit needs a name per create; a history that reuses
// one fails it, whatever else it shows.
func TestNamesOnce(t *testing.T) {
	o, s := clean()
	o[8].Body = body("e", "pending")
	r := Check(o, s, Options{})
	if r.OK() || len(r.Short) != 1 || !strings.Contains(r.Short[0], `name "e" sent by 2 creates`) {
		t.Fatalf("got short %q", r.Short)
	}
}

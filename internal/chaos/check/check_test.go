package check

import (
	"bytes"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/chaos/history"
)

func pet(id int64, name, status string) history.Pet {
	return history.Pet{ID: id, Name: name, CategoryID: 1, Status: status}
}

func body(name, status string) *history.Body {
	return &history.Body{Name: name, CategoryID: 1, Status: status}
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
		{Kind: history.Create, Invoke: 21, Complete: 25, Key: "k1", Body: body("a", "sold"), Attempt: 2, Outcome: history.Failed, Status: 503, Requests: 1},
		{Kind: history.Create, Invoke: 26, Complete: 30, Key: "k1", Body: body("a", "sold"), Attempt: 3, Outcome: history.OK, Status: 201, Pet: ptr(pet(1, "a", "sold")), Requests: 1, Answered: 1},
		{Kind: history.Create, Invoke: 11, Complete: 40, Key: "k2", Body: body("b", "available"), Attempt: 1, Outcome: history.Indeterminate, Status: 503, Requests: 1},
		{Kind: history.Create, Invoke: 12, Complete: 13, Key: "k3", Body: body("c", "available"), Attempt: 1, Outcome: history.Failed, Status: 503, Requests: 1},
		{Kind: history.Create, Invoke: 14, Complete: 35, Body: body("d", "pending"), Outcome: history.OK, Status: 201, Pet: ptr(pet(3, "d", "pending")), Requests: 1, Answered: 1},
		{Kind: history.Create, Invoke: 15, Complete: 36, Body: body("e", "pending"), Outcome: history.Indeterminate, Requests: 1},
		{Kind: history.Create, Invoke: 16, Complete: 37, Body: body("f", "pending"), Outcome: history.Indeterminate, Requests: 1},
		{Kind: history.Create, Invoke: 17, Complete: 18, Body: body("g", "pending"), Outcome: history.Failed, Status: 503, Requests: 1},
		// A walk that began before pet 3 was acknowledged may miss it.
		{Kind: history.Walk, Invoke: 32, Complete: 60, Outcome: history.OK, Limit: 2, IDs: []int64{1, 2}, Requests: 2, Answered: 2},
		{Kind: history.Walk, Invoke: 70, Complete: 80, Outcome: history.OK, Limit: 2, IDs: []int64{1, 2, 3, 4}, Requests: 3, Answered: 3},
		{Kind: history.Walk, Invoke: 70, Complete: 80, Outcome: history.OK, Filter: "pending", Limit: 2, IDs: []int64{3, 4}, Requests: 2, Answered: 2},
		// A failed walk proves nothing.
		{Kind: history.Walk, Invoke: 70, Complete: 80, Outcome: history.Failed, Limit: 2, IDs: []int64{2}, Requests: 2, Answered: 1},
		// A get invoked before the acknowledgement completed may miss.
		{Kind: history.Get, Invoke: 33, Complete: 34, ID: 3, Outcome: history.OK, Status: 404, Requests: 1, Answered: 1},
		{Kind: history.Get, Invoke: 40, Complete: 41, ID: 3, Outcome: history.OK, Status: 200, Pet: ptr(pet(3, "d", "pending")), Requests: 1, Answered: 1},
		{Kind: history.Get, Invoke: 42, Complete: 43, ID: 1, Outcome: history.Failed, Status: 503, Requests: 1},
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
	if r.Ops[rowKeyed][history.OK] != 1 || r.Ops[rowKeyed][history.Failed] != 2 || r.Ops[rowKeyed][history.Indeterminate] != 2 {
		t.Errorf("keyed creates by outcome: %v", r.Ops[rowKeyed])
	}
	if r.Requests != 21 || r.Answered != 12 {
		t.Errorf("availability: %d of %d, want 12 of 21", r.Answered, r.Requests)
	}
	for _, want := range []string{"faults                     1 (kill 1)", "lost                       0", "result: PASS"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, out.String())
		}
	}
}

// TestAnomalies feeds clean histories with one anomaly planted each, and
// checks that the checker reports exactly it.
func TestAnomalies(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(ops []history.Op, state []history.Pet) ([]history.Op, []history.Pet)
		kind  func(r *Result) []string
		want  string
	}{
		{"acknowledged pet not stored", func(ops []history.Op, state []history.Pet) ([]history.Op, []history.Pet) {
			return ops, state[1:]
		}, lost, "pet 1 acknowledged"},
		{"acknowledged pet stored otherwise", func(ops []history.Op, state []history.Pet) ([]history.Op, []history.Pet) {
			state[0].Status = "available"
			return ops, state
		}, lost, "stored as"},
		{"acknowledged with another body than sent", func(ops []history.Op, state []history.Pet) ([]history.Op, []history.Pet) {
			ops[3].Body = body("a", "pending")
			ops[1].Body, ops[2].Body = ops[3].Body, ops[3].Body
			return ops, state
		}, lost, "but the request was"},
		{"a key stored twice", func(ops []history.Op, state []history.Pet) ([]history.Op, []history.Pet) {
			return ops, append(state, pet(5, "a", "sold"))
		}, doubled, "2 pets stored [1 5]"},
		{"a key acknowledged as two pets", func(ops []history.Op, state []history.Pet) ([]history.Op, []history.Pet) {
			retry := ops[3]
			retry.Attempt, retry.Pet, retry.Invoke, retry.Complete = 4, ptr(pet(5, "a", "sold")), 85, 90
			return append(ops, retry), append(state, pet(5, "a", "sold"))
		}, doubled, "acknowledged as 2 different pets"},
		{"a refused keyless create stored", func(ops []history.Op, state []history.Pet) ([]history.Op, []history.Pet) {
			return ops, append(state, pet(5, "g", "pending"))
		}, phantom, `keyless create "g": pet 5 stored, but every attempt was refused`},
		{"a refused key stored", func(ops []history.Op, state []history.Pet) ([]history.Op, []history.Pet) {
			return ops, append(state, pet(5, "c", "available"))
		}, phantom, "key k3: pet 5 stored"},
		{"a pet no create sent", func(ops []history.Op, state []history.Pet) ([]history.Op, []history.Pet) {
			return ops, append(state, pet(5, "zz", "sold"))
		}, phantom, "no create sent this name"},
		{"walk ends before an acknowledged pet", func(ops []history.Op, state []history.Pet) ([]history.Op, []history.Pet) {
			ops[11].IDs = []int64{1, 2}
			return ops, state
		}, walks, "missed pet 3, acknowledged"},
		{"walk misses a stored pet below its last id, created after it began", func(ops []history.Op, state []history.Pet) ([]history.Op, []history.Pet) {
			ops[10].IDs = []int64{1, 3}
			return ops, state
		}, walks, "missed pet 2, stored, below the last id"},
		{"filtered walk misses a stored pet below its last id", func(ops []history.Op, state []history.Pet) ([]history.Op, []history.Pet) {
			ops[12].IDs = []int64{4}
			ops[12].Invoke = 34 // before pet 3 was acknowledged
			return ops, state
		}, walks, "missed pet 3, stored"},
		{"filtered walk misses an acknowledged pet", func(ops []history.Op, state []history.Pet) ([]history.Op, []history.Pet) {
			ops[12].IDs = []int64{4}
			return ops, state
		}, walks, "status=pending, limit 2, 1 pets): missed pet 3"},
		{"walk visits a pet twice", func(ops []history.Op, state []history.Pet) ([]history.Op, []history.Pet) {
			ops[11].IDs = []int64{1, 2, 2, 3, 4}
			return ops, state
		}, walks, "id 2 after 2, not ascending"},
		{"walk goes back", func(ops []history.Op, state []history.Pet) ([]history.Op, []history.Pet) {
			ops[11].IDs = []int64{1, 3, 2, 4}
			return ops, state
		}, walks, "id 2 after 3"},
		{"filtered walk visits another status", func(ops []history.Op, state []history.Pet) ([]history.Op, []history.Pet) {
			ops[12].IDs = []int64{2, 3, 4}
			return ops, state
		}, walks, "visited pet 2 of status available"},
		{"get 404 after the acknowledgement", func(ops []history.Op, state []history.Pet) ([]history.Op, []history.Pet) {
			ops[15].Status, ops[15].Pet = 404, nil
			return ops, state
		}, gets, "get 3 from : 404"},
		{"get answers another pet", func(ops []history.Op, state []history.Pet) ([]history.Op, []history.Pet) {
			ops[15].Pet = ptr(pet(3, "d", "sold"))
			return ops, state
		}, gets, "acknowledged as"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ops, state := clean()
			ops, state = tc.plant(ops, state)
			r := Check(ops, state, Options{})
			var out bytes.Buffer
			r.Print(&out)
			got := tc.kind(r)
			if r.OK() || r.Anomalies() != len(got) || len(got) == 0 || !strings.Contains(got[0], tc.want) {
				t.Fatalf("want one kind of anomaly, %q; got:\n%s", tc.want, out.String())
			}
			if !strings.Contains(out.String(), "result: FAIL") {
				t.Errorf("the table does not say FAIL:\n%s", out.String())
			}
		})
	}
}

func lost(r *Result) []string    { return r.Lost }
func doubled(r *Result) []string { return r.Doubled }
func phantom(r *Result) []string { return r.Phantom }
func walks(r *Result) []string   { return r.WalkAnomalies }
func gets(r *Result) []string    { return r.GetAfterAck }

// TestShort: a run with too few acknowledged creates or faults fails,
// though it has no anomaly.
func TestShort(t *testing.T) {
	ops, state := clean()
	r := Check(ops, state, Options{MinAcked: 3, MinFaults: 2})
	if r.OK() || len(r.Short) != 2 || r.Anomalies() != 0 {
		t.Fatalf("got OK %v, short %q, %d anomalies; want two shortfalls", r.OK(), r.Short, r.Anomalies())
	}
}

package check

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/history"
)

// TestOnePageRule: a page that breaks one of its own promises is found by
// the one rule (pageFaults) whichever history shows it: the kit's model
// fails pagination with the fault, the chaos audit reports it as a walk
// anomaly, in the same words.
func TestOnePageRule(t *testing.T) {
	link := func(q string) string { return apitest.Base() + "/pets?" + q }
	for _, tc := range []struct {
		name  string
		after int64
		limit int
		ids   []int64
		next  string // the query of the next link; "" for none
		fault string
	}{
		{"over the limit", 0, 2, []int64{1, 2, 3}, "", "3 pets, over the limit 2"},
		{"not above the cursor", 2, 2, []int64{2, 3}, "", "pet 2, not above the cursor"},
		{"an empty page with a next link", 4, 2, nil, "after=4&limit=2", "an empty page links to "},
		{"a next link that loops", 0, 2, []int64{1, 2}, "after=1&limit=2", "loops: after=1 goes back from the page's last id 2"},
		{"a next link that drops the limit", 0, 2, []int64{1, 2}, "after=2", "changes the query (want after=2&limit=2)"},
	} {
		// The kit's history: a list op.
		m := testModel()
		op := &history.Op{Kind: history.List, Limit: tc.limit, IDs: tc.ids, Invoke: 1, Complete: 2}
		op.After = tc.after
		for range tc.ids {
			op.Answers = append(op.Answers, mpet("other", "available"))
		}
		if tc.next != "" {
			q, _ := url.ParseQuery(tc.next)
			op.Next, op.NextQuery = true, map[string]string{}
			for k := range q {
				op.NextQuery[k] = q.Get(k)
			}
		}
		kit := m.Complete(op)
		if !slices.ContainsFunc(kit, func(a Anomaly) bool { return a.Check == "pagination" && strings.Contains(a.Got, tc.fault) }) {
			t.Errorf("%s: the model found %+v, want pagination with %q", tc.name, kit, tc.fault)
		}
		// The chaos run's history: a walk of that one page.
		var state []history.Pet
		for _, id := range tc.ids {
			state = append(state, pet(id, "w"+string(rune('a'+id)), "available"))
		}
		pg := page(tc.after, len(tc.ids), "")
		if tc.next != "" {
			pg.Next = link(tc.next)
		}
		walk := history.Op{Kind: history.Walk, Invoke: 1, Complete: 2, Outcome: history.OK, Limit: tc.limit, IDs: tc.ids, Pets: state, Pages: []history.Page{pg}}
		r := Check([]history.Op{walk}, state, Options{})
		if !slices.ContainsFunc(r.WalkAnomalies, func(s string) bool { return strings.Contains(s, tc.fault) }) {
			t.Errorf("%s: the audit found %q, want %q", tc.name, r.WalkAnomalies, tc.fault)
		}
	}
}

// TestOneGetRule: a get answered with another pet, and a 404 for a pet
// acknowledged before the get, are found by the one rule (getFault) in
// both histories.
func TestOneGetRule(t *testing.T) {
	m := testModel()
	a := mpet("run-a", "available")
	create(m, a, 1, 2)
	if vs := get(m, getObs{id: 1, status: 200, gotID: 2, answer: a, sentAt: 3}); len(vs) != 1 || vs[0].Kind != KindWrongReads || !strings.Contains(vs[0].Got, "answered pet 2, not pet 1") {
		t.Errorf("the model, another pet: %+v", vs)
	}
	if vs := get(m, getObs{id: 1, status: 404, sentAt: 5}); len(vs) != 1 || vs[0].Kind != KindGetAfterAck || !strings.Contains(vs[0].Got, "404 for pet 1, acknowledged before") {
		t.Errorf("the model, 404 after ack: %+v", vs)
	}
	stored := pet(1, "a", "sold")
	ops := []history.Op{
		{Kind: history.Create, Invoke: 1, Complete: 2, Key: "k", Body: body("a", "sold"), Attempt: 1, Outcome: history.OK, Status: 201, Pet: &stored},
		{Kind: history.Get, Invoke: 3, Complete: 4, ID: 1, Outcome: history.OK, Status: 200, Pet: &stored},
		{Kind: history.Get, Invoke: 5, Complete: 6, ID: 2, Outcome: history.OK, Status: 200, Pet: &stored},
		{Kind: history.Get, Invoke: 7, Complete: 8, ID: 1, Outcome: history.OK, Status: 404, Code: "not_found"},
	}
	r := Check(ops, []history.Pet{stored}, Options{})
	if len(r.WrongReads) != 1 || !strings.Contains(r.WrongReads[0], "answered pet 1, not pet 2") {
		t.Errorf("the audit, another pet: %q", r.WrongReads)
	}
	if len(r.GetAfterAck) != 1 || !strings.Contains(r.GetAfterAck[0], "404 for pet 1, acknowledged before") {
		t.Errorf("the audit, 404 after ack: %q", r.GetAfterAck)
	}
}

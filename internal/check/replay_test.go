package check

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/history"
)

// kitHistory is a kit's history as JSON lines: its begin, the names its
// model tracks, then the ops, each a line.
func kitHistory(t *testing.T, lines ...string) []history.Op {
	t.Helper()
	head := `{"kind":"begin","invoke":1,"complete":1,"contract":{"name":"name","filter":"status","defaults":{"status":"\"available\""},"request":["name","categoryId","status"]}}
{"kind":"scope","invoke":2,"complete":2,"names":"run-"}
`
	ops, err := history.Read(strings.NewReader(head + strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

const (
	createA = `{"kind":"create","invoke":3,"complete":4,"outcome":"ok","status":201,"tenant":1,"sent":{"name":"\"run-a\"","categoryId":"1","status":"\"available\""},"got":{"name":"\"run-a\"","categoryId":"1","status":"\"available\""},"gotId":7}`
	// A page asked for while the create of run-b was in flight shows it.
	createB = `{"kind":"create","invoke":5,"complete":9,"outcome":"ok","status":201,"tenant":1,"sent":{"name":"\"run-b\"","categoryId":"1","status":"\"available\""},"got":{"name":"\"run-b\"","categoryId":"1","status":"\"available\""},"gotId":8}`
	pageAB  = `{"kind":"list","invoke":6,"complete":7,"outcome":"ok","status":200,"limit":20,"ids":[7,8],"answers":[{"name":"\"run-a\"","categoryId":"1","status":"\"available\""},{"name":"\"run-b\"","categoryId":"1","status":"\"available\""}]}`
	get404  = `{"kind":"get","invoke":10,"complete":11,"outcome":"ok","status":404,"code":"not_found","id":7}`
)

// TestReplay: a kit's history is judged in the order of its ticks, not of
// its lines (a line is written when its op completes); a 404 for a pet
// acknowledged before is a get 404 after ack, found at its line.
func TestReplay(t *testing.T) {
	j := Replay(kitHistory(t, createA, pageAB, createB))
	if j.Verdict != Valid {
		t.Fatalf("a page showing a create in flight: %s %+v", j.Verdict, j.Anomalies)
	}
	j = Replay(kitHistory(t, createA, pageAB, createB, get404))
	if j.Verdict != Invalid || len(j.Anomalies) != 1 || j.Anomalies[0].Kind != KindGetAfterAck || j.Anomalies[0].Check != "durability" || j.Ops[0] != 5 {
		t.Fatalf("a 404 after the ack: %s %+v at %v", j.Verdict, j.Anomalies, j.Ops)
	}
	var out bytes.Buffer
	j.Print(&out)
	if !strings.Contains(out.String(), "get 404 after ack (durability) at line 6") || !strings.Contains(out.String(), "result: invalid (1 anomalies)") {
		t.Errorf("Print:\n%s", out.String())
	}
	// Had the create of run-b been refused before the page, its pet is
	// one no create accounts for.
	refused := `{"kind":"create","invoke":5,"complete":6,"outcome":"failed","status":400,"code":"invalid_request","tenant":1,"sent":{"name":"\"run-b\"","categoryId":"1"}}`
	later := strings.Replace(strings.Replace(pageAB, `"invoke":6`, `"invoke":7`, 1), `"complete":7`, `"complete":8`, 1)
	j = Replay(kitHistory(t, createA, refused, later))
	if j.Verdict != Invalid || j.Anomalies[0].Kind != KindPhantom {
		t.Fatalf("a pet before its create: %s %+v", j.Verdict, j.Anomalies)
	}
	if j := Replay(nil); j.Verdict != Unknown {
		t.Errorf("an empty history: %s, want unknown", j.Verdict)
	}
	if ops := kitHistory(t, createA); IsKit(ops[1:]) || !IsKit(ops) {
		t.Errorf("IsKit: a kit's history begins with its begin line")
	}
}

// TestOneVocabulary: every kind of anomaly says what it means, and every
// kind the model reports is one of Kinds.
func TestOneVocabulary(t *testing.T) {
	for _, k := range Kinds {
		if Meaning[k].Says == "" {
			t.Errorf("kind %q: no meaning", k)
		}
	}
	if len(Meaning) != len(Kinds) {
		t.Errorf("%d meanings for %d kinds", len(Meaning), len(Kinds))
	}
	m := testModel()
	a := mpet("run-a", "available")
	create(m, a, 1, 1)
	var found []Anomaly
	found = append(found, create(m, a, 1, 2)...)
	found = append(found, get(m, getObs{id: 1, status: 404, sentAt: 9})...)
	found = append(found, lpage(m, pageObs{after: 0, limit: 1, ids: []int64{2, 1}, pets: []history.Members{a, a}, sentAt: 10, doneAt: 11})...)
	if len(found) < 3 {
		t.Fatalf("crafted anomalies: %+v", found)
	}
	for _, f := range found {
		if !slices.Contains(Kinds, f.Kind) || !slices.Contains(Meaning[f.Kind].Checks, f.Check) {
			t.Errorf("anomaly %+v: kind not in Kinds, or check not among its kind's", f)
		}
	}
}

package check

import (
	"testing"

	"github.com/petstore/petstore/internal/history"
)

// TestCheckersCompose: the verdict of composed checkers is invalid when
// one is, else unknown when one is, else valid; the anomalies are all of
// theirs.
func TestCheckersCompose(t *testing.T) {
	verdict := func(v string, n int) Checker {
		return Func(func([]history.Op) Judgement {
			j := Judgement{Verdict: v, Why: map[string]string{Unknown: "lacks " + v}[v]}
			for range n {
				j.Anomalies, j.Ops = append(j.Anomalies, Anomaly{Kind: KindLost}), append(j.Ops, 0)
			}
			return j
		})
	}
	for _, tc := range []struct {
		cs   []Checker
		want string
		n    int
	}{
		{nil, Valid, 0},
		{[]Checker{verdict(Valid, 0), verdict(Valid, 0)}, Valid, 0},
		{[]Checker{verdict(Valid, 0), verdict(Unknown, 0)}, Unknown, 0},
		{[]Checker{verdict(Unknown, 0), verdict(Invalid, 2), verdict(Invalid, 1)}, Invalid, 3},
		{[]Checker{verdict("", 0)}, Unknown, 0}, // no verdict: not judged
	} {
		j := Compose(tc.cs...).Check(nil)
		if j.Verdict != tc.want || len(j.Anomalies) != tc.n || len(j.Ops) != tc.n {
			t.Errorf("%d checkers: %s with %d anomalies, want %s with %d", len(tc.cs), j.Verdict, len(j.Anomalies), tc.want, tc.n)
		}
	}
}

// TestCheckersOfBothHistories: a kit's history and a chaos run's, each
// judged by its checker through the one interface, as the command does;
// the audit's planted anomaly is invalid, a run short of its options
// unknown.
func TestCheckersOfBothHistories(t *testing.T) {
	kit := kitHistory(t, createA, get404)
	if j := Kit().Check(kit); j.Verdict != Invalid || len(j.Anomalies) != 1 || j.Anomalies[0].Kind != KindGetAfterAck {
		t.Errorf("the kit's history: %+v", j)
	}
	ops, state := clean()
	if j := Audit(state, Options{MinAcked: 2, MinFaults: 1}).Check(ops); j.Verdict != Valid {
		t.Errorf("a clean chaos history: %+v", j)
	}
	if j := Audit(state, Options{MinAcked: 99}).Check(ops); j.Verdict != Unknown || j.Why == "" {
		t.Errorf("a chaos history short of its options: %+v", j)
	}
	if j := Audit(append(state, pet(9, "zz", "sold")), Options{}).Check(ops); j.Verdict != Invalid || j.Anomalies[0].Kind != KindPhantom {
		t.Errorf("a stored pet no create sent: %+v", j)
	}
}

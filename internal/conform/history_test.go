package conform_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/check"
	"github.com/petstore/petstore/internal/conform"
	"github.com/petstore/petstore/internal/history"
)

// TestHistoryJudgedAgain: a run with Config.History writes its history;
// the checker over the saved file (check.Replay, what `petstore-chaos
// check` runs) finds exactly what the run's model found, both ways: the
// planted defect's anomaly and every other (the store that forgets pets
// shows pagination's walk anomalies too), each with the check, kind and
// want the run reported, as often; and a conforming target's history is
// valid.
func TestHistoryJudgedAgain(t *testing.T) {
	t.Parallel()
	byName := func(name string) func(http.Handler) http.Handler {
		i := slices.IndexFunc(mutants, func(m mutant) bool { return m.name == name })
		if i < 0 {
			t.Fatalf("no mutant %q", name)
		}
		return mutants[i].wrap
	}
	for _, tc := range []struct {
		name, check, kind string
		wrap              func(http.Handler) http.Handler
	}{
		{"conforming", "", "", func(h http.Handler) http.Handler { return h }},
		{"names stored trimmed", "stored_as_sent", check.KindWrongReads, byName("names stored trimmed, the 201 echoing them as sent")},
		{"refused create stored anyway", "refused_write", check.KindPhantom, byName("refused create stored anyway")},
		{"store forgets all but the newest 40 pets", "durability", check.KindGetAfterAck, byName("store forgets all but the newest 40 pets")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "history.jsonl")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			cfg := kitConfig(serveMutant(t, tc.wrap))
			cfg.History = f
			rep, err := conform.Run(context.Background(), cfg)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
			ops, err := history.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			j := check.Replay(ops)
			t.Logf("%d ops, %d requests: %s, %d anomalies", len(ops), rep.Requests, j.Verdict, len(j.Anomalies))
			if tc.check == "" {
				if j.Verdict != check.Valid || rep.Verdict() != conform.Pass {
					t.Fatalf("a conforming target: replay %s %+v, the run %s\n%s", j.Verdict, j.Anomalies, rep.Verdict(), report(rep))
				}
				return
			}
			if j.Verdict != check.Invalid || !slices.ContainsFunc(j.Anomalies, func(a check.Anomaly) bool { return a.Check == tc.check && a.Kind == tc.kind }) {
				t.Fatalf("replay %s, want an anomaly %s (%s): %+v", j.Verdict, tc.kind, tc.check, j.Anomalies)
			}
			for _, d := range findingsDiffer(j, rep) {
				t.Error(d)
			}
		})
	}
}

// findingsDiffer compares the anomalies of j, the checker's over a saved
// history, with the failures the run's checker found (those with a Kind),
// both ways: each finding (check, kind, want) as many times in each. It
// returns a line for each that differs.
func findingsDiffer(j check.Judgement, rep *conform.Report) []string {
	type finding struct{ check, kind, want string }
	replayed, run := map[finding]int{}, map[finding]int{}
	for _, a := range j.Anomalies {
		replayed[finding{a.Check, a.Kind, a.Want}]++
	}
	for _, f := range rep.Failures {
		if f.Kind != "" {
			run[finding{f.Check, f.Kind, f.Want}]++
		}
	}
	var out []string
	for f := range maps.Keys(replayed) {
		if run[f] != replayed[f] {
			out = append(out, fmt.Sprintf("%s (%s) %q: found %d times replaying the history, %d times by the run", f.check, f.kind, f.want, replayed[f], run[f]))
		}
	}
	for f := range maps.Keys(run) {
		if _, ok := replayed[f]; !ok {
			out = append(out, fmt.Sprintf("%s (%s) %q: found %d times by the run, never replaying the history", f.check, f.kind, f.want, run[f]))
		}
	}
	slices.Sort(out)
	return out
}

// The comparison sees findings lost either way: a replay that drops every
// pagination anomaly, or a run that reports one the replay did not find,
// differs; the same findings do not.
func TestFindingsDiffer(t *testing.T) {
	walk := check.Anomaly{Kind: check.KindWalkAnomalies, Check: "pagination", Want: "every pet on the page"}
	lost := check.Anomaly{Kind: check.KindLost, Check: "durability", Want: "pet 3 found"}
	run := &conform.Report{Failures: []conform.Failure{
		{Check: "pagination", Kind: walk.Kind, Want: walk.Want},
		{Check: "durability", Kind: lost.Kind, Want: lost.Want},
		{Check: "error_body", Want: "an Error"}, // a case's: not the checker's
	}}
	if d := findingsDiffer(check.Judgement{Anomalies: []check.Anomaly{walk, lost}}, run); len(d) != 0 {
		t.Errorf("the same findings differ: %q", d)
	}
	if d := findingsDiffer(check.Judgement{Anomalies: []check.Anomaly{lost}}, run); len(d) != 1 || !strings.Contains(d[0], "pagination") {
		t.Errorf("a replay without the pagination anomaly: %q, want it named", d)
	}
	if d := findingsDiffer(check.Judgement{Anomalies: []check.Anomaly{walk, walk, lost}}, run); len(d) != 1 {
		t.Errorf("a replay that finds one more: %q, want it named", d)
	}
}

package conform_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/petstore/petstore/internal/check"
	"github.com/petstore/petstore/internal/conform"
	"github.com/petstore/petstore/internal/history"
)

// TestHistoryJudgedAgain: a run with Config.History writes its history;
// the checker over the saved file (check.Replay, what `petstore-chaos
// check` runs) finds exactly what the run's model found: the planted
// defect's anomaly, each with the check and the want the run reported,
// as often; and a conforming target's history is valid.
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
			sameFindings(t, j, rep)
		})
	}
}

// sameFindings fails unless every anomaly of j is a failure of rep with
// the same check and want, each as many times.
func sameFindings(t *testing.T, j check.Judgement, rep *conform.Report) {
	t.Helper()
	type finding struct{ check, want string }
	replayed, run := map[finding]int{}, map[finding]int{}
	for _, a := range j.Anomalies {
		replayed[finding{a.Check, a.Want}]++
	}
	for _, f := range rep.Failures {
		run[finding{f.Check, f.Want}]++
	}
	for f, n := range replayed {
		if run[f] != n {
			t.Errorf("%s %q: found %d times replaying the history, %d times by the run", f.check, f.want, n, run[f])
		}
	}
}

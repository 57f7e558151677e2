package conform_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/conform"
)

// Verdicts that fail closed (issue 59): a run passes only what it judged.

// hasGap reports whether rep is incomplete for check, the reason holding
// words.
func hasGap(rep *conform.Report, check, words string) bool {
	return slices.ContainsFunc(rep.Incomplete, func(g conform.Gap) bool { return g.Check == check && strings.Contains(g.Reason, words) })
}

// A check named by -checks that cannot run (idempotency_scope without a
// second key) was asked for and not judged: the run is incomplete, never
// "All checks passed". In a default run the same check is skipped for its
// stated reason, and the run passes (TestRealAppPassesWhole).
func TestNamedCheckNotRunIsIncomplete(t *testing.T) {
	t.Parallel()
	rep, err := conform.Run(context.Background(), conform.Config{BaseURL: serve(t, nil), Key: testKey, Seed: 3, Checks: []string{"idempotency_scope"}})
	if err != nil {
		t.Fatal(err)
	}
	text := report(rep)
	if rep.Verdict() != conform.Incomplete || !hasGap(rep, "idempotency_scope", "second key") || strings.Contains(text, "All checks passed") {
		t.Fatalf("-checks idempotency_scope without -key2: verdict %s; want incomplete, the second key named:\n%s", rep.Verdict(), text)
	}
	if slices.ContainsFunc(rep.Skipped, func(s conform.Skip) bool { return s.What == "idempotency_scope" }) {
		t.Errorf("idempotency_scope is listed skipped and incomplete at once:\n%s", text)
	}
}

// A check the spec gives nothing to judge (deprecation, on a spec that
// deprecates no operation) is skipped for that reason when the run was not
// asked for it by name, and leaves the run incomplete when it was.
func TestNothingToJudgeSkipped(t *testing.T) {
	t.Parallel()
	spec := specFile(t)
	for _, item := range spec.Paths.Map() {
		for _, op := range item.Operations() {
			op.Deprecated = false
		}
	}
	var others []string
	for _, c := range conform.Checks {
		if c.Name != "deprecation" && c.Name != "unknown_path" {
			others = append(others, c.Name)
		}
	}
	for _, tc := range []struct {
		name            string
		checks, exclude []string
		verdict         string
	}{
		{"not named", nil, others, conform.Pass},
		{"named", []string{"deprecation", "unknown_path"}, nil, conform.Incomplete},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := conform.Run(context.Background(), conform.Config{BaseURL: serve(t, nil), Key: testKey, Seed: 3, Spec: spec, Checks: tc.checks, Exclude: tc.exclude})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict() != tc.verdict || tc.verdict == conform.Pass && !containsRow(report(rep), "deprecation", "skipped") {
				t.Fatalf("deprecation on a spec that deprecates nothing, %s: verdict %s, want %s:\n%s", tc.name, rep.Verdict(), tc.verdict, report(rep))
			}
		})
	}
}

// refusesCreates answers every create 503 unavailable, which the contract
// allows (nothing was written): the kit has no pet to read back.
func refusesCreates(app http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == opPath("createPet") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"code":"unavailable","message":"the store cannot be reached","status":503}`))
			return
		}
		app.ServeHTTP(w, r)
	})
}

// A check that ran and judged no case, with no reason stated, has not
// passed: -checks durability against a target that creates nothing reads
// nothing back.
func TestNothingJudgedIsIncomplete(t *testing.T) {
	t.Parallel()
	rep, err := conform.Run(context.Background(), conform.Config{BaseURL: serve(t, refusesCreates), Key: testKey, Seed: 3, Checks: []string{"durability"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict() != conform.Incomplete || !hasGap(rep, "durability", "none of the requests") {
		t.Fatalf("-checks durability, no pet created: verdict %s; want incomplete for durability:\n%s", rep.Verdict(), report(rep))
	}
}

// Every check the run judges beyond the answers themselves, asked for
// alone, judges at least one case against the real app and passes: none
// passes by judging nothing (durability alone read nothing back before:
// the run created no pet).
func TestEachCheckAloneJudges(t *testing.T) {
	t.Parallel()
	for _, c := range conform.Checks {
		if slices.Contains(conform.EveryResponse(), c.Name) {
			continue // judged on every answer: any run judges them
		}
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			cfg := kitConfig(serveMutant(t, func(h http.Handler) http.Handler { return h }))
			cfg.Checks = []string{c.Name}
			rep, err := conform.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			cases := 0
			for _, res := range rep.Results {
				cases += res.Cases
			}
			if rep.Verdict() != conform.Pass || cases == 0 {
				t.Fatalf("-checks %s: verdict %s, %d cases; want pass, with cases:\n%s", c.Name, rep.Verdict(), cases, report(rep))
			}
		})
	}
}

// hangsAfter is a target that answers its first n requests, then holds
// every other without an answer until the test ends.
func hangsAfter(t *testing.T, n int64) string {
	var seen atomic.Int64
	release := make(chan struct{})
	base := serve(t, func(app http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if seen.Add(1) <= n {
				app.ServeHTTP(w, r)
				return
			}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		})
	})
	t.Cleanup(func() { close(release) }) // before the server's Close, which waits for its handlers
	return base
}

// A target that stops answering ends the run within a few timeouts, and
// the run says so: three requests in a row without an answer, and the kit
// sends no more. (Before, each of the run's 960 requests waited its
// timeout in turn: hours at the default 10 s.)
func TestSilentTargetEndsTheRun(t *testing.T) {
	t.Parallel()
	const timeout = 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	rep, err := conform.Run(ctx, conform.Config{BaseURL: hangsAfter(t, 5), Key: testKey, Seed: 3, Timeout: timeout})
	if err != nil {
		t.Fatalf("after %s: %v", time.Since(start).Round(time.Millisecond), err)
	}
	took := time.Since(start)
	t.Logf("%d requests in %s", rep.Requests, took.Round(time.Millisecond))
	text := report(rep)
	if rep.Verdict() != conform.Fail || !slices.ContainsFunc(rep.Incomplete, func(g conform.Gap) bool { return strings.Contains(g.Reason, "stopped answering") }) {
		t.Fatalf("a target that hangs after 5 answers: verdict %s; want fail (its requests without an answer) and the target named as not answering:\n%s", rep.Verdict(), text)
	}
	// Five answers, then three requests in a row without one, and those
	// already on their way (the slow head, sent in parallel). The time
	// allows for a loaded machine (0.9 s quiet, 5 s at load 25 under
	// -race); a run that waited each request's timeout would take 190 s.
	if rep.Requests > 12 || took > 50*timeout {
		t.Errorf("%d requests in %s; want the run stopped after a few timeouts of %s", rep.Requests, took, timeout)
	}
}

// A silent target, when no check failed (ordering judges pages alone,
// never a request left unanswered), leaves the run incomplete (exit 3),
// never a pass.
func TestSilentTargetIsNoPass(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := conform.Run(ctx, conform.Config{BaseURL: hangsAfter(t, 5), Key: testKey, Seed: 3, Timeout: 200 * time.Millisecond,
		Checks: []string{"ordering"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict() != conform.Incomplete {
		t.Fatalf("-checks ordering against a target that hangs: verdict %s, want incomplete:\n%s", rep.Verdict(), report(rep))
	}
}

// countingUnknown counts the answers wrap gives that are 503 outcome_unknown.
func countingUnknown(n *atomic.Int64, wrap func(http.Handler) http.Handler) func(http.Handler) http.Handler {
	return func(app http.Handler) http.Handler {
		inner := wrap(app)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			inner.ServeHTTP(rec, r)
			if rec.Code == http.StatusServiceUnavailable && strings.Contains(rec.Body.String(), `"outcome_unknown"`) {
				n.Add(1)
			}
			copyResponse(w, rec)
		})
	}
}

// A 503 outcome_unknown is an answer the contract allows a create: a
// target that stores each keyed create, answers it 503 outcome_unknown,
// and replays the pet when the create is retried with its key, passes
// whole: the kit retries each with its key and judges the retry (the
// model holds the key to one pet). The same target that creates the pet
// again on the retry fails idempotent_replay (mutants59).
func TestOutcomeUnknownSettled(t *testing.T) {
	t.Parallel()
	var unknown atomic.Int64
	rep, err := conform.Run(context.Background(), kitConfig(serveMutant(t, countingUnknown(&unknown, outcomeUnknownFirst(true)))))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d creates answered 503 outcome_unknown, in %d requests", unknown.Load(), rep.Requests)
	if rep.Verdict() != conform.Pass || unknown.Load() < 10 {
		t.Fatalf("a target that answers each keyed create 503 outcome_unknown, then replays it (%d such answers): verdict %s, want pass:\n%s", unknown.Load(), rep.Verdict(), report(rep))
	}
}

// unknownAlways answers the nth create without a key (when keyless) or
// with one, and every retry of that one, 503 outcome_unknown once the app
// has stored it: the kit cannot learn its outcome.
func unknownAlways(n int64, keyless bool) func(http.Handler) http.Handler {
	return func(app http.Handler) http.Handler {
		var seen atomic.Int64
		var mu sync.Mutex
		stuck := ""
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			key := r.Header.Get("Idempotency-Key")
			if r.Method != http.MethodPost || r.URL.Path != opPath("createPet") || (key == "") != keyless {
				app.ServeHTTP(w, r)
				return
			}
			mu.Lock()
			again := key != "" && key == stuck
			mu.Unlock()
			rec := httptest.NewRecorder()
			app.ServeHTTP(rec, r)
			if again || rec.Code == http.StatusCreated && rec.Header().Get("Idempotent-Replayed") == "" && seen.Add(1) == n {
				mu.Lock()
				stuck = key
				mu.Unlock()
				writeOutcomeUnknown(w, rec.Header())
				return
			}
			copyResponse(w, rec)
		})
	}
}

// A create whose outcome the kit cannot learn leaves the run incomplete,
// never failed nor passed: one without a key (a retry would create
// another pet), or one with a key still answered 503 outcome_unknown after
// the kit's last retry.
func TestOutcomeUnknownUnsettled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		keyless bool
		words   string
	}{
		{"without a key", true, "without an Idempotency-Key"},
		{"with a key, never settled", false, "and so were its"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := kitConfig(serveMutant(t, unknownAlways(3, tc.keyless)))
			cfg.Checks = []string{"idempotent_replay"} // its phases send creates with a key and without
			rep, err := conform.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict() != conform.Incomplete || !hasGap(rep, "", tc.words) {
				t.Fatalf("verdict %s; want incomplete, the create's outcome named (%q):\n%s", rep.Verdict(), tc.words, report(rep))
			}
		})
	}
}

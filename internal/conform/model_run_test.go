package conform_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/conform"
)

// Bounds come from the spec being checked: a new major that lowers the
// listing's limit to 50 passes against a server of that spec, and the
// spec of 100 fails it (it sends limit=100, which that server refuses).
func TestBoundsFromTheSpec(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(specPath(t))
	if err != nil {
		t.Fatal(err)
	}
	const before, after = "maximum: 100\n        default: 20", "maximum: 50\n        default: 20"
	if !bytes.Contains(raw, []byte(before)) {
		t.Fatalf("openapi.yaml has no %q to change", before)
	}
	spec50, err := loadSpecData(bytes.Replace(raw, []byte(before), []byte(after), 1))
	if err != nil {
		t.Fatal(err)
	}
	// The server of the new major: a limit above 50 is refused as the app
	// refuses one above its maximum (after authentication, as 400).
	max50 := rewriteQuery(func(q url.Values) {
		if n, err := strconv.Atoi(q.Get("limit")); err == nil && n > 50 && n <= 100 && strconv.Itoa(n) == q.Get("limit") {
			q.Set("limit", "101")
		}
	})
	for _, tc := range []struct {
		name string
		cfg  func(base string) conform.Config
		ok   bool
	}{
		{"the spec of the server", func(base string) conform.Config {
			return conform.Config{BaseURL: base, Key: testKey, Key2: testKey2, Spec: spec50, Seed: 1, Examples: 10}
		}, true},
		{"the spec before", func(base string) conform.Config {
			cfg := kitConfig(base)
			cfg.Checks = []string{"positive_data_acceptance"}
			return cfg
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := conform.Run(context.Background(), tc.cfg(serveMutant(t, max50)))
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			rep.WriteText(&b)
			if rep.OK() != tc.ok || tc.ok && len(unplanned(rep)) > 0 || !tc.ok && !rep.Failed("positive_data_acceptance") {
				t.Errorf("ok %v, want %v (and positive_data_acceptance failed when not):\n%s", rep.OK(), tc.ok, b.String())
			}
		})
	}
}

// Every sentence of the kit's table, and every rule on answers, is stated
// by openapi.yaml: a name that drifted from the spec would leave its cases
// unsent. With a sentence's name taken out of the spec, its cases are not
// sent and the run is incomplete: the kit cannot judge it.
func TestSentencesStated(t *testing.T) {
	t.Parallel()
	rep, err := conform.Run(context.Background(), kitConfig(serveMutant(t, func(h http.Handler) http.Handler { return h })))
	if err != nil {
		t.Fatal(err)
	}
	if s := unplanned(rep); len(s) > 0 {
		t.Errorf("skipped against openapi.yaml: %+v", s)
	}
	for _, name := range []string{"throttle", "store-bounds", "rate-limit-per-instance"} {
		if !slices.ContainsFunc(rep.Skipped, func(s conform.Skip) bool {
			return s.What == "sentence "+name && strings.HasPrefix(s.Reason, "not exercised: ")
		}) {
			t.Errorf("sentence %s: not named not exercised among the skipped %+v", name, rep.Skipped)
		}
	}
	raw, err := os.ReadFile(specPath(t))
	if err != nil {
		t.Fatal(err)
	}
	const sentence = "    body-size: {maxBytes: 1048576}\n" // its name in info's x-rules
	if !bytes.Contains(raw, []byte(sentence)) {
		t.Fatalf("openapi.yaml has no %q", sentence)
	}
	spec, err := loadSpecData(bytes.Replace(raw, []byte(sentence), nil, 1))
	if err != nil {
		t.Fatal(err)
	}
	var log requestLog
	cfg := kitConfig(serveMutant(t, log.wrap))
	cfg.Spec = spec
	cfg.Checks = []string{"negative_data_rejection", "positive_data_acceptance"} // the body-size cases' checks
	if rep, err = conform.Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if rep.Verdict() != conform.Incomplete || !slices.ContainsFunc(rep.Incomplete, func(g conform.Gap) bool {
		return g.What == "sentence body-size" && strings.Contains(g.Reason, "the kit cannot judge")
	}) {
		t.Errorf("the body-size sentence taken out of the spec: verdict %s, incomplete %+v; want incomplete, the sentence named", rep.Verdict(), rep.Incomplete)
	}
	for s := range log.got {
		if s.length > 1<<20 { // the app refuses such a body unread: its declared length tells
			t.Errorf("a body of %d bytes sent, though the spec states no size", s.length)
		}
	}
}

// -examples runs sequences against the model; against the real app they
// pass, and the report says how many ran.
func TestExamplesPass(t *testing.T) {
	t.Parallel()
	cfg := kitConfig(serveMutant(t, func(h http.Handler) http.Handler { return h }))
	cfg.Examples = 40
	rep, err := conform.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.WriteText(&b)
	if !rep.OK() || rep.Examples != 40 || !strings.Contains(b.String(), ", 40 examples") {
		t.Fatalf("the real app with -examples 40:\n%s", b.String())
	}
}

// A failing sequence is shrunk to the shortest that fails and reported as
// its curl lines, in order: a store that keeps only its newest 2 pets
// fails once a third is created and the first is read, four requests, the
// same on every run with the seed.
func TestExamplesShrink(t *testing.T) {
	t.Parallel()
	var runs []string
	for range 2 {
		base := serveMutant(t, forgetful(2))
		cfg := kitConfig(base)
		cfg.Checks, cfg.Examples = []string{"durability"}, 30
		rep, err := conform.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(rep.Failures, func(f conform.Failure) bool { return strings.Contains(f.Want, "shrunk to") })
		if i < 0 {
			t.Fatalf("no shrunk sequence among the failures: %+v", rep.Failures)
		}
		f := rep.Failures[i]
		if rep.Examples >= 30 || !strings.Contains(f.Want, fmt.Sprintf("in example %d of", rep.Examples-1)) {
			t.Errorf("report: %d examples, want the sequences up to the failing one (%s)", rep.Examples, f.Want)
		}
		lines := strings.Split(f.Curl, "\n")
		var methods []string
		for _, l := range lines {
			methods = append(methods, strings.Fields(l)[3])
		}
		if !slices.Equal(methods, []string{"POST", "POST", "POST", "GET"}) || !strings.Contains(lines[3], "/pets/") {
			t.Errorf("shrunk to %d requests %v, want three creates and the get of the first:\n%s", len(lines), methods, f.Curl)
		}
		runs = append(runs, strings.ReplaceAll(f.Curl, base, "BASE"))
		t.Logf("FAIL %s (%s)\n  want: %s\n  got:  %s\n  %s", f.Check, f.Operation, f.Want, f.Got, strings.ReplaceAll(f.Curl, "\n", "\n  "))
	}
	if runs[0] != runs[1] {
		t.Errorf("two runs with one seed shrink to different sequences:\n%s\n\n%s", runs[0], runs[1])
	}
}

// A run is deterministic for its seed against a deterministic target:
// against two fresh servers, the same requests (concurrent ones in any
// order) and the same verdicts.
func TestDeterministicUnderSeed(t *testing.T) {
	t.Parallel()
	var sent [2][]string
	var results [2]string
	for i := range sent {
		var mu sync.Mutex
		record := func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var body bytes.Buffer // what the app reads: a body the kit holds back is not waited for
				r = r.WithContext(r.Context())
				r.Body = readCloser{io.TeeReader(r.Body, &body), r.Body}
				h.ServeHTTP(w, r)
				mu.Lock()
				sent[i] = append(sent[i], fmt.Sprintf("%s %s %q %q %q", r.Method, r.URL.RequestURI(), r.Header.Values("Content-Type"), r.Header.Values("Idempotency-Key"), body.Bytes()))
				mu.Unlock()
			})
		}
		cfg := kitConfig(serveMutant(t, record))
		cfg.Seed, cfg.Examples = 7, 8
		rep, err := conform.Run(context.Background(), cfg)
		if err != nil || !rep.OK() {
			t.Fatalf("run %d: %v %+v", i, err, rep)
		}
		results[i] = fmt.Sprint(rep.Requests, rep.Results)
		slices.Sort(sent[i])
	}
	if results[0] != results[1] {
		t.Errorf("the runs' results differ:\n%s\n%s", results[0], results[1])
	}
	if !slices.Equal(sent[0], sent[1]) {
		for j := range min(len(sent[0]), len(sent[1])) {
			if sent[0][j] != sent[1][j] {
				t.Fatalf("the runs sent different requests (%d and %d); first difference:\n%.300s\n%.300s", len(sent[0]), len(sent[1]), sent[0][j], sent[1][j])
			}
		}
		t.Fatalf("the runs sent %d and %d requests", len(sent[0]), len(sent[1]))
	}
}

// unplanned are the skips of rep but the sentences the kit does not
// exercise by design, and the operations its model does not follow (an
// operation added to the spec, as the drill's variant e adds deletePet):
// those are judged on form only, and named so (TestAddedOperation);
// these tests are about the sentences.
func unplanned(rep *conform.Report) []conform.Skip {
	var out []conform.Skip
	for _, s := range rep.Skipped {
		if !strings.HasPrefix(s.Reason, "not exercised: ") && !strings.HasPrefix(s.Reason, "meaning not modelled: ") {
			out = append(out, s)
		}
	}
	return out
}

func specPath(t *testing.T) string {
	t.Helper()
	file, err := apitest.SpecFile()
	if err != nil {
		t.Fatal(err)
	}
	return file
}

func loadSpecData(b []byte) (*openapi3.T, error) {
	spec, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		return nil, err
	}
	return spec, spec.Validate(context.Background())
}

package conform_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/petstore/petstore/internal/conform"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// sampleReport is a report with every feature of the formats: passed,
// failed and unrun checks, a check with more failures than the text shows,
// a multi-line answer and a budget that ran out.
func sampleReport() *conform.Report {
	curl := `curl -i -X POST 'http://127.0.0.1:8080/v1/pets' -H "Authorization: Bearer $PETSTORE_KEY" -H 'Content-Type: application/json' --data-binary '{"name":""}'`
	rep := &conform.Report{
		Seed:      42,
		BaseURL:   "http://127.0.0.1:8080/v1",
		Requests:  137,
		Elapsed:   1234 * time.Millisecond,
		Truncated: true,
		Results: []conform.Result{
			{Check: "not_a_server_error", Operation: "createPet", Cases: 40, Failed: 1},
			{Check: "not_a_server_error", Operation: "listPets", Cases: 60},
			{Check: "negative_data_rejection", Operation: "createPet", Cases: 30, Failed: 5},
			{Check: "ignored_auth", Operation: "getPet", Cases: 5},
		},
		Failures: []conform.Failure{
			{Check: "not_a_server_error", Operation: "createPet", Want: "no 5xx for any request", Got: "500 {\n  \"code\": \"internal\"\n}", Curl: curl},
		},
	}
	for _, rule := range []string{"too short", "too long", "wrong type", "unknown member", "id in the body"} {
		rep.Failures = append(rep.Failures, conform.Failure{Check: "negative_data_rejection", Operation: "createPet", Want: "400 for body name: " + rule, Got: "201 {}", Curl: curl})
	}
	// A shrunk sequence of -examples: its curl lines, in order.
	rep.Results = append(rep.Results, conform.Result{Check: "durability", Operation: "getPet", Cases: 3, Failed: 1})
	rep.Failures = append(rep.Failures, conform.Failure{Check: "durability", Operation: "getPet", Want: "200 with pet 7, created before (in example 3 of seed 42, shrunk to 2 steps)", Got: "404 {}",
		Curl: curl + "\ncurl -i -X GET 'http://127.0.0.1:8080/v1/pets/7' -H \"Authorization: Bearer $PETSTORE_KEY\""})
	rep.Skipped = []conform.Skip{{What: "idempotency_scope", Reason: "needs a second key"}, {What: "sentence store-bounds", Reason: "not exercised: it takes filling the target's store"}}
	rep.Incomplete = []conform.Gap{
		{What: "budget", Reason: "the request budget (-max-requests 137) ran out after 137 requests, the target answering: the cases after it were not sent"},
		{Check: "pagination", What: `the walk "after=7&limit=2"`, Reason: "the request budget ran out before the walk passed the pets it looks for"},
	}
	rep.Promises = []conform.Promise{
		{Name: "retention", Stated: 86400, Reached: 1.52, How: "a keyed create replayed"},
		{Name: "head-timeout", Stated: 5, Reached: 1.5, How: "a request head sent a byte at a time, answered"},
	}
	return rep
}

// TestReportGolden pins the three formats of a report. Run with -update
// after a deliberate change (a new check changes every one).
func TestReportGolden(t *testing.T) {
	rep := sampleReport()
	for _, tc := range []struct {
		file  string
		write func(*conform.Report, *bytes.Buffer) error
	}{
		{"report.txt", func(r *conform.Report, b *bytes.Buffer) error { return r.WriteText(b) }},
		{"report.junit.xml", func(r *conform.Report, b *bytes.Buffer) error { return r.WriteJUnit(b) }},
		{"report.json", func(r *conform.Report, b *bytes.Buffer) error { return r.WriteJSON(b) }},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var got bytes.Buffer
			if err := tc.write(rep, &got); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", tc.file)
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to write it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s differs from the golden file (go test -update rewrites it after a deliberate change):\ngot:\n%s\nwant:\n%s", tc.file, got.Bytes(), want)
			}
		})
	}
}

// TestReportFormats checks what the golden files only show: the text
// verdicts, JUnit's shape for CI, and JSON that reads back as the report.
func TestReportFormats(t *testing.T) {
	rep := sampleReport()

	var text strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, c := range conform.Checks {
		want := "PASS"
		switch c.Name {
		case "not_a_server_error", "negative_data_rejection", "durability":
			want = "FAIL"
		case "ignored_auth":
		case "pagination":
			want = "INCOMPLETE"
		case "idempotency_scope":
			want = "skipped"
		default:
			want = "not run"
		}
		if !containsRow(text.String(), c.Name, want) {
			t.Errorf("text: no %q row for %s", want, c.Name)
		}
	}
	for _, want := range []string{"137 requests in 1.23s, seed 42", "-max-requests", "got:  500 { \"code\": \"internal\" }", "(negative_data_rejection: 2 more failures", "3 checks failed",
		"Skipped:\n  idempotency_scope: needs a second key\n  sentence store-bounds: not exercised",
		"Incomplete: the kit could not judge all it should:\n  budget: the request budget (-max-requests 137) ran out", `the walk "after=7&limit=2" (pagination): the request budget ran out`,
		"The run is incomplete too", "retention: a keyed create replayed over 1.52 s of the 24 h the contract states",
		"--data-binary '{\"name\":\"\"}'\n  curl -i -X GET 'http://127.0.0.1:8080/v1/pets/7'"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if n := strings.Count(text.String(), "FAIL negative_data_rejection"); n != 3 {
		t.Errorf("text spells out %d failures of negative_data_rejection, want 3", n)
	}

	var x bytes.Buffer
	if err := rep.WriteJUnit(&x); err != nil {
		t.Fatal(err)
	}
	var suites junit.Testsuites
	if err := xml.Unmarshal(x.Bytes(), &suites); err != nil {
		t.Fatalf("JUnit: %v\n%s", err, x.Bytes())
	}
	if len(suites.Suites) != 1 {
		t.Fatalf("JUnit: %d suites, want 1", len(suites.Suites))
	}
	s := suites.Suites[0]
	if n := len(rep.Results) + len(rep.Incomplete) + len(rep.Skipped); s.Tests != n || s.Failures != 3 || s.Errors != 2 || s.Skipped != 2 || len(s.Testcases) != n {
		t.Errorf("JUnit: %d tests, %d failures, %d errors, %d skipped; want %d tests (one per check and operation, one per gap, one per skip), 3 failures, 2 errors (the gaps), 2 skipped", s.Tests, s.Failures, s.Errors, s.Skipped, n)
	}
	for i, tc := range s.Testcases[:len(rep.Results)] {
		res := rep.Results[i]
		if tc.Name != res.Check+"/"+res.Operation || tc.Classname != res.Check || (tc.Failure != nil) != (res.Failed > 0) {
			t.Errorf("JUnit testcase %d: %s (%s), failed %v; want %s/%s, failed %v", i, tc.Name, tc.Classname, tc.Failure != nil, res.Check, res.Operation, res.Failed > 0)
		}
		if tc.Failure != nil && strings.Count(tc.Failure.Data, "\n\n") != res.Failed {
			t.Errorf("JUnit testcase %s: want each of its %d failures with a curl line:\n%s", tc.Name, res.Failed, tc.Failure.Data)
		}
	}

	var j bytes.Buffer
	if err := rep.WriteJSON(&j); err != nil {
		t.Fatal(err)
	}
	var back struct {
		conform.Report
		OK      bool                `json:"ok"`
		Verdict string              `json:"verdict"`
		Checks  []conform.CheckInfo `json:"checks"`
	}
	if err := json.Unmarshal(j.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.OK || back.Verdict != conform.Fail || len(back.Incomplete) != 2 || len(back.Promises) != 2 || back.Seed != rep.Seed || back.Requests != rep.Requests || back.Elapsed != rep.Elapsed || len(back.Failures) != len(rep.Failures) || len(back.Checks) != len(conform.Checks) {
		t.Errorf("JSON reads back as %+v, want the report", back)
	}
}

// TestProgress checks the progress line: it names the phase and the count
// as the run goes, and is cleared at the end.
func TestProgress(t *testing.T) {
	t.Parallel()
	var progress bytes.Buffer
	rep, err := conform.Run(context.Background(), conform.Config{BaseURL: serve(t, nil), Key: testKey, Seed: 3, Progress: &progress, Checks: []string{"unknown_path", "pagination"}})
	if err != nil {
		t.Fatal(err)
	}
	p := progress.String()
	if !strings.Contains(p, "\r\033[Kconform: ") || !strings.Contains(p, " requests, 0 failures") || !strings.HasSuffix(p, "\r\033[K") {
		t.Errorf("progress: got %q, want lines that name the count and a clear at the end", p)
	}
	if strings.Contains(p, "\n") {
		t.Errorf("progress spans lines: %q", p)
	}
	if !rep.OK() {
		t.Errorf("the real app fails the kit")
	}
}

// containsRow reports whether the report's table has a row for check
// ending in verdict.
func containsRow(report, check, verdict string) bool {
	for _, line := range strings.Split(report, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == check {
			return strings.HasSuffix(strings.TrimSpace(line), verdict)
		}
	}
	return false
}

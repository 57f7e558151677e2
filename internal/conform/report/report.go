// Package report is the conformance kit's report: what a run found (its
// checks' cases and failures, what it could not judge, what it skipped),
// its verdict, and the text, JSON and JUnit forms of it. The table of
// checks (Checks) is here too: the report, -checks and the JUnit names
// come from it.
package report

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/jstemmer/go-junit-report/v2/junit"
)

// failuresShown is how many failures of one check WriteText spells out.
const failuresShown = 3

// WriteText writes the table of checks (cases, failures, verdict), then
// each failure: what the contract wants, what came back, and a curl
// command that sends the request again.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "conform %s: %d requests in %.2fs, seed %d", r.BaseURL, r.Requests, r.Elapsed.Seconds(), r.Seed)
	if r.Examples > 0 {
		fmt.Fprintf(&b, ", %d examples", r.Examples)
	}
	b.WriteString("\n\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tCASES\tFAILED\t")
	for _, c := range Checks {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", c.Name, r.cases(c.Name), r.failed(c.Name), r.verdict(c.Name))
	}
	tw.Flush()
	r.incompleteText(&b)
	r.promisesText(&b)
	if r.Throttled > 0 {
		fmt.Fprintf(&b, "\nThe target answered %d %s 429 rate_limited: the kit waited Retry-After and sent %s again.\n", r.Throttled, Plural(r.Throttled, "request", "requests"), Plural(r.Throttled, "it", "them"))
	}
	for i, s := range r.Skipped {
		if i == 0 {
			b.WriteString("\nSkipped:\n")
		}
		fmt.Fprintf(&b, "  %s: %s\n", s.What, s.Reason)
	}
	shown := map[string]int{}
	for _, f := range r.Failures {
		shown[f.Check]++
		switch n := shown[f.Check]; {
		case n == failuresShown+1:
			_, total := r.count(f.Check)
			fmt.Fprintf(&b, "\n(%s: %d more failures in the -json and -junit reports)\n", f.Check, total-failuresShown)
			continue
		case n > failuresShown:
			continue
		}
		fmt.Fprintf(&b, "\nFAIL %s (%s)\n  want: %s\n  got:  %s\n  %s\n", f.Check, f.Operation, f.Want, oneLine(f.Got), strings.ReplaceAll(f.Curl, "\n", "\n  "))
	}
	failed := 0
	for _, c := range Checks {
		if _, n := r.count(c.Name); n > 0 {
			failed++
		}
	}
	switch r.Verdict() {
	case Pass:
		fmt.Fprintf(&b, "\nAll checks passed.\n")
	case Incomplete:
		n := len(r.Incomplete)
		fmt.Fprintf(&b, "\nIncomplete: no check failed, but the kit could not judge %d %s it should (above), so the target has not passed.\n", n, Plural(n, "thing", "things"))
	default:
		fmt.Fprintf(&b, "\n%d %s failed. Replay a failure with its curl lines, in order, after export PETSTORE_KEY=<your key> (and PETSTORE_KEY2=<the second key> for its requests).\n", failed, Plural(failed, "check", "checks"))
		if len(r.Incomplete) > 0 {
			fmt.Fprintf(&b, "The run is incomplete too (above): what it could not judge may hide more.\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func (r *Report) cases(check string) int  { n, _ := r.count(check); return n }
func (r *Report) failed(check string) int { _, n := r.count(check); return n }

// verdict is a check's word in the table: PASS, FAIL, INCOMPLETE (no
// failure, but a gap of the run leaves it unjudged in part), skipped (the
// run does not set out to judge it, and says why) or not run.
func (r *Report) verdict(check string) string {
	cases, failed := r.count(check)
	switch {
	case failed > 0:
		return "FAIL"
	case r.hasGap(check):
		return "INCOMPLETE"
	case cases > 0:
		return "PASS"
	}
	for _, s := range r.Skipped {
		if s.What == check {
			return "skipped"
		}
	}
	return "not run"
}

// count returns the cases and failures of check over all operations.
func (r *Report) count(check string) (cases, failed int) {
	for _, res := range r.Results {
		if res.Check == check {
			cases += res.Cases
			failed += res.Failed
		}
	}
	return cases, failed
}

// gapText lists the gaps that leave check unjudged in part.
func (r *Report) gapText(check string) string {
	var b strings.Builder
	for _, g := range r.Incomplete {
		if g.Check == check {
			fmt.Fprintf(&b, "%s: %s\n", g.What, g.Reason)
		}
	}
	return b.String()
}

// CleanText is s with each invalid UTF-8 byte and each character XML 1.0
// forbids (C0 controls but tab, LF and CR; surrogates; U+FFFE, U+FFFF)
// replaced by U+FFFD. encoding/xml escapes attributes and text so, but not
// CDATA, where go-junit-report puts a failure's text; a target's answer can
// hold anything.
func CleanText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r',
			r >= 0x20 && r <= 0xd7ff,
			r >= 0xe000 && r <= 0xfffd,
			r >= 0x10000 && r <= utf8.MaxRune:
			return r // strings.Map gives an invalid byte as U+FFFD
		}
		return utf8.RuneError
	}, s)
}

// WriteJUnit writes the report as JUnit XML: one testsuite, one testcase per
// (check, operation), its failures in the failure's text. Every text is
// cleaned (cleanText): the report is well-formed whatever the target sent.
func (r *Report) WriteJUnit(w io.Writer) error {
	suite := junit.Testsuite{Name: "conform", Time: fmt.Sprintf("%.3f", r.Elapsed.Seconds())}
	suite.AddProperty("base_url", CleanText(r.BaseURL))
	suite.AddProperty("seed", fmt.Sprint(r.Seed))
	suite.AddProperty("requests", fmt.Sprint(r.Requests))
	suite.AddProperty("verdict", r.Verdict())
	for _, res := range r.Results {
		tc := junit.Testcase{Name: CleanText(res.Check + "/" + res.Operation), Classname: CleanText(res.Check)}
		if res.Failed > 0 {
			var data strings.Builder
			for _, f := range r.Failures {
				if f.Check == res.Check && f.Operation == res.Operation {
					fmt.Fprintf(&data, "want: %s\ngot:  %s\n%s\n\n", f.Want, f.Got, f.Curl)
				}
			}
			tc.Failure = &junit.Result{Message: fmt.Sprintf("%d of %d cases failed", res.Failed, res.Cases), Type: CleanText(res.Check), Data: CleanText(data.String())}
		}
		if tc.Failure == nil && r.hasGap(res.Check) {
			tc.Error = &junit.Result{Message: "incomplete: the run could not judge all of this check", Type: "incomplete", Data: CleanText(r.gapText(res.Check))}
		}
		suite.AddTestcase(tc)
	}
	for _, g := range r.Incomplete {
		name := "incomplete/" + g.What
		if g.Check != "" {
			name += " (" + g.Check + ")"
		}
		suite.AddTestcase(junit.Testcase{Name: CleanText(name), Classname: "incomplete", Error: &junit.Result{Message: CleanText(g.Reason), Type: "incomplete"}})
	}
	for _, s := range r.Skipped {
		suite.AddTestcase(junit.Testcase{Name: CleanText(s.What), Classname: "skipped", Skipped: &junit.Result{Message: CleanText(s.Reason)}})
	}
	var suites junit.Testsuites
	suites.AddSuite(suite)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	return suites.WriteXML(w)
}

// WriteJSON writes the report, with the check table, as JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		*Report
		OK      bool        `json:"ok"`
		Verdict string      `json:"verdict"`
		Checks  []CheckInfo `json:"checks"`
	}{r, r.OK(), r.Verdict(), Checks})
}

// Report is what a run found.
type Report struct {
	Seed      uint64        `json:"seed"`
	BaseURL   string        `json:"baseUrl"`
	Requests  int           `json:"requests"`
	Raw       int           `json:"rawRequests"` // of Requests, those written byte for byte past HTTPClient (raw.go)
	Elapsed   time.Duration `json:"elapsedNs"`
	Examples  int           `json:"examples"`  // sequences of -examples run (shrinking's re-runs aside): fewer than Config.Examples when one failed or the budget ran out
	Truncated bool          `json:"truncated"` // MaxRequests stopped it before every case was sent (a Gap of Incomplete says so too)
	Throttled int           `json:"throttled"` // answers 429 rate_limited waited out and sent again
	Results   []Result      `json:"results"`   // one per (check, operation) that ran, in check-table order
	Failures  []Failure     `json:"failures"`
	// Incomplete is what the run should have judged and could not: with
	// any, the run does not pass (Verdict).
	Incomplete []Gap     `json:"incomplete"`
	Promises   []Promise `json:"promises"` // the promises over time the run exercised, and how far
	Skipped    []Skip    `json:"skipped"`  // what the run does not set out to judge (by design, or for want of a second key), and why
}

// Skip is a check, or a sentence of the contract, the run could not judge.
type Skip struct {
	What   string `json:"what"`
	Reason string `json:"reason"`
}

// Result counts the cases of one check on one operation.
type Result struct {
	Check     string `json:"check"`
	Operation string `json:"operation"`
	Cases     int    `json:"cases"`
	Failed    int    `json:"failed"`
}

// Failure is one case a check failed: what the contract wants, what came
// back, and a curl command that sends the same request (for a sequence of
// -examples, one curl line a request, in order).
type Failure struct {
	Check     string `json:"check"`
	Operation string `json:"operation"`
	Want      string `json:"want"`
	Got       string `json:"got"`
	Curl      string `json:"curl"`
	// Kind is the kind of the checker's anomaly (internal/check: lost,
	// doubled, …) when the checker found it; "" for a failure of a case
	// or of a rule on every answer.
	Kind string `json:"kind,omitempty"`
}

// Failed reports whether check failed at least once.
func (r *Report) Failed(check string) bool {
	for _, f := range r.Failures {
		if f.Check == check {
			return true
		}
	}
	return false
}

// OK reports whether every check that ran passed: no failure. A run may
// be OK and still not pass (Verdict): incomplete.
func (r *Report) OK() bool { return len(r.Failures) == 0 }

// Verdict is the run's verdict: Fail when a check failed, Incomplete when
// the run could not judge all it should (Incomplete says what), else Pass.
func (r *Report) Verdict() string { return r.verdictOf() }

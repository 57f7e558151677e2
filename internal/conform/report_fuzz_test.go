package conform

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/conform/judge"
	"github.com/petstore/petstore/internal/conform/report"
	"github.com/petstore/petstore/internal/conform/wire"
)

// FuzzReportWellFormed feeds the report writers any text a target can send
// (a body the kit cuts to describe it, and free text in every other field)
// and parses every output: the JUnit report must be well-formed XML, the
// JSON report valid JSON, both valid UTF-8, and the failure's text must
// survive in them, cleaned.
func FuzzReportWellFormed(f *testing.F) {
	f.Add([]byte(`{"code":"invalid_request"}`), "createPet")
	f.Add([]byte(strings.Repeat("a", 299)+"é"), "cut inside a two-byte character")
	f.Add([]byte(strings.Repeat("a", 298)+"🐈"), "cut inside a four-byte character")
	f.Add([]byte("bad \xff\xfe UTF-8"), "\xc3")
	f.Add([]byte("NUL \x00, ESC \x1b[31m, FFFE \uFFFE"), "form feed \f, vertical tab \v")
	f.Add([]byte("]]> ends CDATA <![CDATA[ x ]]>"), "<&'\">")
	f.Add([]byte("\ud7ff\ue000\U0010FFFF"), "\u0085\u202e")
	f.Fuzz(func(t *testing.T, body []byte, text string) {
		got := judge.Describe(&judge.Exchange{Exchange: &wire.Exchange{Status: 400, Body: body}})
		if !utf8.ValidString(got) {
			t.Fatalf("describe: invalid UTF-8 %q", got)
		}
		rep := &Report{
			Seed: 1, BaseURL: "http://127.0.0.1" + apitest.Base() + "?" + text, Requests: 1,
			Results: []Result{{Check: "negative_data_rejection", Operation: text, Cases: 1, Failed: 1}},
			Failures: []Failure{{
				Check: "negative_data_rejection", Operation: text,
				Want: "400 for " + text, Got: got, Curl: "curl " + text + "\ncurl " + text,
			}},
			Skipped: []Skip{{What: "sentence " + text, Reason: "not stated: " + text}},
		}

		var x bytes.Buffer
		if err := rep.WriteJUnit(&x); err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(x.Bytes()) {
			t.Fatalf("JUnit: invalid UTF-8:\n%q", x.String())
		}
		dec := xml.NewDecoder(bytes.NewReader(x.Bytes()))
		for {
			_, err := dec.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("JUnit: not well-formed: %v\n%q", err, x.String())
			}
		}
		var suites junit.Testsuites
		if err := xml.Unmarshal(x.Bytes(), &suites); err != nil {
			t.Fatalf("JUnit: %v", err)
		}
		if len(suites.Suites) != 1 || len(suites.Suites[0].Testcases) != 2 || suites.Suites[0].Testcases[0].Failure == nil || suites.Suites[0].Testcases[1].Skipped == nil {
			t.Fatalf("JUnit: want one suite with one failed case and one skipped:\n%s", x.String())
		}
		// XML reads CR and CR LF as LF; the rest of the text is kept.
		wantData := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(report.CleanText(got))
		if data := suites.Suites[0].Testcases[0].Failure.Data; !strings.Contains(data, wantData) {
			t.Fatalf("JUnit: failure text %q does not hold the answer %q", data, wantData)
		}

		var j bytes.Buffer
		if err := rep.WriteJSON(&j); err != nil {
			t.Fatal(err)
		}
		var back struct {
			Failures []Failure `json:"failures"`
		}
		if !utf8.Valid(j.Bytes()) || json.Unmarshal(j.Bytes(), &back) != nil {
			t.Fatalf("JSON: not valid:\n%q", j.String())
		}
		if len(back.Failures) != 1 || back.Failures[0].Got != got {
			t.Fatalf("JSON: failures %q, want the answer %q", back.Failures, got)
		}
	})
}

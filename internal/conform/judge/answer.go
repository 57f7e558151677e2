package judge

import (
	"slices"
	"strings"

	"github.com/petstore/petstore/internal/conform/report"
	"github.com/petstore/petstore/internal/contract"
)

// Answer holds x to the checks that hold for every response: the kinds of
// internal/contract, not_a_server_error, deprecation and rules, the
// answer rules the spec states.
func Answer(f Facts, rules []Rule, x *Exchange) {
	byKind := map[string][]string{}
	for _, v := range f.Contract().Check(x.Req, x.Status, x.Header, x.Body) {
		byKind[v.Kind] = append(byKind[v.Kind], v.Message)
	}
	for _, kind := range []string{contract.StatusCode, contract.ContentType, contract.ResponseHeaders, contract.ResponseSchema, contract.ErrorBody} {
		if msgs := byKind[kind]; len(msgs) > 0 {
			x.In.Record(kind, x.Op, f.Fail(x, "a response that keeps openapi.yaml", strings.Join(msgs, "; ")))
		} else {
			x.In.Record(kind, x.Op, nil)
		}
	}
	var fl *report.Failure
	if x.Status >= 500 && !Unimplemented(x) {
		fl = f.Fail(x, "no 5xx for any request (but 501 and 505 where RFC 9112 asks)", "")
	}
	x.In.Record("not_a_server_error", x.Op, fl)
	judgeDeprecation(f, x)
	for _, rule := range rules {
		if applies, want := rule.Judge(f, x); applies {
			var fl *report.Failure
			if want != "" {
				fl = f.Fail(x, want, "")
			}
			x.In.Record(rule.Check, x.Op, fl)
		}
	}
}

// judgeDeprecation holds every answer of an operation the spec marks
// deprecated to RFC 9745: a Deprecation header, and each other deprecation
// header (Sunset, Link) the spec declares for that answer.
func judgeDeprecation(f Facts, x *Exchange) {
	op := f.Operation(x.Op)
	if op == nil || !op.Deprecated {
		return
	}
	var want []string
	if x.Status/100 == 2 {
		want = append(want, "Deprecation")
	}
	if ref := op.Responses.Status(x.Status); ref != nil && ref.Value != nil {
		for _, h := range []string{"Deprecation", "Sunset", "Link"} {
			if ref.Value.Headers[h] != nil && !slices.Contains(want, h) {
				want = append(want, h)
			}
		}
	}
	if len(want) == 0 {
		return
	}
	var missing []string
	for _, h := range want {
		if x.Header.Get(h) == "" {
			missing = append(missing, h)
		}
	}
	var fl *report.Failure
	if len(missing) > 0 {
		fl = f.Fail(x, "the deprecated operation's answer carries "+strings.Join(want, ", "), "no "+strings.Join(missing, ", "))
	}
	x.In.Record("deprecation", x.Op, fl)
}

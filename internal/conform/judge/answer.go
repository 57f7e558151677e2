package judge

import (
	"net/http"
	"slices"
	"strings"

	"github.com/petstore/petstore/internal/conform/report"
	"github.com/petstore/petstore/internal/conform/wire"
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
	if x.Status >= 500 && !Unimplemented(x) && !OutcomeUnknown(f, x) {
		fl = f.Fail(x, "no 5xx for any request (but 501 and 505 where RFC 9112 asks, and 503 outcome_unknown where the contract gives it)", "")
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

// CodeOutcomeUnknown is the Error code of an answer that says a create
// may or may not have been stored.
const CodeOutcomeUnknown = "outcome_unknown"

// OutcomeUnknown reports whether x is a 503 outcome_unknown where the
// contract gives one (createPet's, for a create whose outcome the server
// could not learn): an answer it allows, never a server error; the kit
// retries the create with its key to learn the outcome (the runner).
func OutcomeUnknown(f Facts, x *Exchange) bool {
	if x.Status != http.StatusServiceUnavailable {
		return false
	}
	code, _ := wire.ErrorCode(x.Body)
	return code == CodeOutcomeUnknown && slices.Contains(f.ErrorCodes(x), code)
}

// ReplayedOther reports whether x is marked a replay (Idempotent-Replayed)
// of another request's answer: not the replay of its own earlier attempt,
// answered 503 outcome_unknown, that the kit retried (Exchange.Retried).
func ReplayedOther(x *Exchange) bool {
	return x.Header.Get("Idempotent-Replayed") != "" && x.Retried == 0
}

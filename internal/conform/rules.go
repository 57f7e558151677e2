package conform

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/contract"
)

// An answerRule is a sentence of the contract that holds for every answer
// of a kind: it is judged on every exchange of the run, whatever case sent
// it. judge returns whether the rule applies to x, and what it wants when
// x breaks it ("" when x keeps it).
type answerRule struct {
	name  string
	where string
	quote string
	check string
	judge func(r *run, x *exchange) (applies bool, want string)
}

var answerRules = []answerRule{
	{"challenge", "header WWW-Authenticate", `with , error="invalid_token" when a key was sent but is not valid`, "header_values", judgeChallenge},
	{"replayed-absent", "header Idempotent-Replayed", "Absent otherwise.", "header_values", judgeReplayedAbsent},
	{"location", "operation createPet", "The service assigns the id", "header_values", judgeLocation},
	{"rate-limit-fields", "info.description", "every authenticated answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset", "header_values", judgeRateLimit},
	{"rate-limit-remaining", "header RateLimit-Remaining", "never more than RateLimit-Limit", "header_values", judgeRemaining},
	{"rate-limit-reset", "header RateLimit-Reset", "0 exactly when it is full, that is when RateLimit-Remaining equals RateLimit-Limit", "header_values", judgeReset},
	{"answer-charset", "info.description", "an answer's Content-Type names no charset but utf-8", contract.ContentType, judgeCharset},
	{"origin", "info.description", "an answer to a request with an Origin header carries Access-Control-Allow-Origin: *", "cors", judgeOrigin},
	{"error-codes", "info.description", "whose code is one of a fixed set", "error_body", judgeErrorCode},
	{"storage-retry-after", "operation createPet", "Retry-After gives the seconds until the first kept outcome expires", "header_values", judgeStorageRetryAfter},
}

// judgeAnswer judges x by every answer rule the spec states.
func (r *run) judgeAnswer(x *exchange) {
	for _, rule := range r.rules {
		if applies, want := rule.judge(r, x); applies {
			r.expect(rule.check, x, want == "", want)
		}
	}
}

// statedRules are the answer rules the spec states.
func (r *run) statedRules() []answerRule {
	var out []answerRule
	for _, rule := range answerRules {
		if r.stated(rule.name) {
			out = append(out, rule)
		}
	}
	return out
}

// judgeChallenge: a 401 to a request without Authorization challenges
// without an error; one to a bearer key the target does not take says
// error="invalid_token". Every value of the header is held to it.
func judgeChallenge(_ *run, x *exchange) (bool, string) {
	if x.Status != http.StatusUnauthorized {
		return false, ""
	}
	auth := x.Req.Header.Values("Authorization")
	values := x.Header.Values("WWW-Authenticate")
	scheme, token, _ := strings.Cut(strings.Join(auth, ""), " ")
	switch {
	case len(auth) == 0:
		for _, v := range values {
			if strings.Contains(v, "error=") {
				return true, "WWW-Authenticate without an error (no key was sent)"
			}
		}
	case len(auth) == 1 && strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(token) != "":
		for _, v := range values {
			if !strings.Contains(v, `error="invalid_token"`) {
				return true, `WWW-Authenticate with error="invalid_token" (a key was sent)`
			}
		}
	default:
		return false, ""
	}
	return true, ""
}

// judgeReplayedAbsent: an answer to a create without an Idempotency-Key
// replays nothing.
func judgeReplayedAbsent(r *run, x *exchange) (bool, string) {
	if r.roles.create == nil || x.Op != r.roles.create.id || x.Status == 0 || len(x.Req.Header.Values("Idempotency-Key")) > 0 {
		return false, ""
	}
	if len(x.Header.Values("Idempotent-Replayed")) > 0 {
		return true, "no Idempotent-Replayed: the create carried no Idempotency-Key"
	}
	return true, ""
}

// judgeLocation: the Location of a 201 is the path of the pet in its body.
func judgeLocation(r *run, x *exchange) (bool, string) {
	if r.roles.create == nil || x.Op != r.roles.create.id || x.Status != http.StatusCreated || r.roles.get == nil {
		return false, ""
	}
	id, ok := petID(x.Body)
	if !ok {
		return false, ""
	}
	want := r.base.Path + r.getTarget(id)
	for _, v := range x.Header.Values("Location") {
		if target, err := r.resolve(v); err != nil || !strings.HasSuffix(target, "://"+r.base.Host+want) {
			return true, fmt.Sprintf("Location %s, the created pet's path", want)
		}
	}
	return true, ""
}

var rateLimitFields = []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"}

// judgeRateLimit: the RateLimit fields come together, or not at all.
func judgeRateLimit(_ *run, x *exchange) (bool, string) {
	n := 0
	for _, h := range rateLimitFields {
		if len(x.Header.Values(h)) > 0 {
			n++
		}
	}
	if n == 0 {
		return false, ""
	}
	if n != len(rateLimitFields) {
		return true, "RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset together"
	}
	return true, ""
}

// judgeOrigin: an answer to a request with Origin carries
// Access-Control-Allow-Origin: *.
func judgeOrigin(_ *run, x *exchange) (bool, string) {
	if x.Req.Header.Get("Origin") == "" || x.Status == 0 {
		return false, ""
	}
	return true, allowsOrigin(x)
}

// judgeStorageRetryAfter: a 507 says when to retry (Retry-After) exactly
// when its code is idempotency_keys_full, a bound that time lifts; no time
// lifts store_full.
func judgeStorageRetryAfter(_ *run, x *exchange) (bool, string) {
	if x.Status != http.StatusInsufficientStorage {
		return false, ""
	}
	code, ok := errorCode(x.Body)
	if !ok {
		return false, "" // error_body speaks for it
	}
	switch n := len(x.Header.Values("Retry-After")); {
	case code == "idempotency_keys_full" && n != 1:
		return true, "one Retry-After with idempotency_keys_full"
	case code == "store_full" && n != 0:
		return true, "no Retry-After with store_full: retrying does not help"
	}
	return true, ""
}

// judgeErrorCode: an Error's code is the one the contract gives its answer:
// the code its schema states (a one-value enum of the response's Error
// schema, say), or, for an answer off the operations (no such path or
// method, or before any operation), the one info's x-error-codes gives its
// status. Codes come from the schema, never from the descriptions' words.
func judgeErrorCode(r *run, x *exchange) (bool, string) {
	if x.Status < 400 || x.Req.Method == http.MethodHead {
		return false, ""
	}
	codes := r.errorCodes(x)
	code, ok := errorCode(x.Body)
	if len(codes) == 0 || !ok {
		return false, ""
	}
	if !slices.Contains(codes, code) {
		return true, fmt.Sprintf("an Error with code %s, the one the contract gives a %d", strings.Join(codes, " or "), x.Status)
	}
	return true, ""
}

// errorCodes are the Error codes the contract gives the answer of x.
func (r *run) errorCodes(x *exchange) []string {
	op := r.operation(x.Op)
	if op == nil {
		byStatus, _ := r.spec.Info.Extensions["x-error-codes"].(map[string]any)
		list, _ := byStatus[strconv.Itoa(x.Status)].([]any)
		var codes []string
		for _, c := range list {
			if s, ok := c.(string); ok {
				codes = append(codes, s)
			}
		}
		return codes
	}
	ref := op.op.Responses.Status(x.Status)
	if ref == nil || ref.Value == nil {
		return nil
	}
	mt := ref.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil {
		return nil
	}
	return codesOf(mt.Schema.Value, 0)
}

// codesOf is the set of values schema s allows for its code member: the
// enum of its code property, narrowed by each schema of its allOf; nil
// when s says nothing of a code.
func codesOf(s *openapi3.Schema, depth int) []string {
	if s == nil || depth > 8 {
		return nil
	}
	var codes []string
	if p := s.Properties["code"]; p != nil && p.Value != nil && len(p.Value.Enum) > 0 {
		for _, v := range p.Value.Enum {
			if c, ok := v.(string); ok {
				codes = append(codes, c)
			}
		}
	}
	for _, sub := range s.AllOf {
		more := codesOf(sub.Value, depth+1)
		switch {
		case more == nil:
		case codes == nil:
			codes = more
		default:
			codes = slices.DeleteFunc(codes, func(c string) bool { return !slices.Contains(more, c) })
		}
	}
	return codes
}

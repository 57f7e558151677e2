package judge

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/petstore/petstore/internal/conform/report"
	"github.com/petstore/petstore/internal/conform/wire"
	"github.com/petstore/petstore/internal/contract"
)

// Facts is what the judge needs to know of the spec and of the run to
// hold every answer to the contract; the runner answers it.
type Facts interface {
	// Contract is the contract every answer is checked against.
	Contract() *contract.Contract
	// Operation is the operation of the spec with id, or nil.
	Operation(id string) *openapi3.Operation
	// CreateOp and GetOp are the operation ids of the create and the get
	// the model follows; "" when the spec has none.
	CreateOp() string
	GetOp() string
	// GetPath is the get's path of pet id, under the base path.
	GetPath(id int64) string
	// Base is BASE_URL, without a trailing slash.
	Base() *url.URL
	// Resolve turns a Location or Link target into an absolute URL on
	// the target's host (wire.Client.Resolve).
	Resolve(ref string) (string, error)
	// ErrorCodes are the Error codes the contract gives the answer of x.
	ErrorCodes(x *Exchange) []string
	// RuleStrings are the strings the spec's x-rules give rule under key.
	RuleStrings(rule, key string) []string
	// Fail makes the Failure of x: what was wanted, what came back
	// ("": x's answer, described) and the curl line.
	Fail(x *Exchange, want, got string) *report.Failure
}

// A Rule is a sentence of the contract that holds for every answer
// of a kind: it is judged on every exchange of the run, whatever case sent
// it. judge returns whether the rule applies to x, and what it wants when
// x breaks it ("" when x keeps it).
type Rule struct {
	Name  string
	Where string
	Quote string
	Check string
	Judge func(f Facts, x *Exchange) (applies bool, want string)
}

// Rules are the rules on every answer; a spec states some of them.
var Rules = []Rule{
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

// judgeChallenge: a 401 to a request without Authorization challenges
// without an error; one to a bearer key the target does not take says
// error="invalid_token". Every value of the header is held to it.
func judgeChallenge(_ Facts, x *Exchange) (bool, string) {
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
func judgeReplayedAbsent(f Facts, x *Exchange) (bool, string) {
	if f.CreateOp() == "" || x.Op != f.CreateOp() || x.Status == 0 || len(x.Req.Header.Values("Idempotency-Key")) > 0 {
		return false, ""
	}
	if len(x.Header.Values("Idempotent-Replayed")) > 0 {
		return true, "no Idempotent-Replayed: the create carried no Idempotency-Key"
	}
	return true, ""
}

// judgeLocation: the Location of a 201 is the path of the pet in its body.
func judgeLocation(f Facts, x *Exchange) (bool, string) {
	if f.CreateOp() == "" || x.Op != f.CreateOp() || x.Status != http.StatusCreated || f.GetOp() == "" {
		return false, ""
	}
	id, ok := PetID(x.Body)
	if !ok {
		return false, ""
	}
	want := f.Base().Path + f.GetPath(id)
	for _, v := range x.Header.Values("Location") {
		if target, err := f.Resolve(v); err != nil || !strings.HasSuffix(target, "://"+f.Base().Host+want) {
			return true, fmt.Sprintf("Location %s, the created pet's path", want)
		}
	}
	return true, ""
}

var rateLimitFields = []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"}

// judgeRateLimit: the RateLimit fields come together, or not at all.
func judgeRateLimit(_ Facts, x *Exchange) (bool, string) {
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
func judgeOrigin(_ Facts, x *Exchange) (bool, string) {
	if x.Req.Header.Get("Origin") == "" || x.Status == 0 {
		return false, ""
	}
	return true, AllowsOrigin(x)
}

// judgeStorageRetryAfter: a 507 says when to retry (Retry-After) exactly
// when its code is idempotency_keys_full, a bound that time lifts; no time
// lifts store_full.
func judgeStorageRetryAfter(_ Facts, x *Exchange) (bool, string) {
	if x.Status != http.StatusInsufficientStorage {
		return false, ""
	}
	code, ok := wire.ErrorCode(x.Body)
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
func judgeErrorCode(f Facts, x *Exchange) (bool, string) {
	if x.Status < 400 || x.Req.Method == http.MethodHead {
		return false, ""
	}
	codes := f.ErrorCodes(x)
	code, ok := wire.ErrorCode(x.Body)
	if len(codes) == 0 || !ok {
		return false, ""
	}
	if !slices.Contains(codes, code) {
		return true, fmt.Sprintf("an Error with code %s, the one the contract gives a %d", strings.Join(codes, " or "), x.Status)
	}
	return true, ""
}

package conform

import (
	"context"
	"errors"
	"fmt"
	"github.com/petstore/petstore/internal/history"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/petstore/petstore/internal/contract"
)

// CheckInfo names a check, says in one sentence what it catches, and the
// families of defect it stands for.
type CheckInfo struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Families    []string `json:"families"`
}

// The families of defect, as issue 42 sorts them: answers of the wrong
// form; well-formed answers that are wrong; legal forms refused; illegal
// forms accepted; the promises across tenants and under concurrency; the
// values of repeated or case-bound headers.
const (
	famForm    = "form"
	famMeaning = "meaning"
	famLegal   = "legal"
	famIllegal = "illegal"
	famTenancy = "tenancy"
	famHeaders = "headers"
)

// Families lists the families of defect in the order the docs explain them.
var Families = []string{famForm, famMeaning, famLegal, famIllegal, famTenancy, famHeaders}

func fam(f ...string) []string { return f }

// Checks is the one table of checks: -checks, the report and the JUnit
// names come from it. The first ten keep Schemathesis's names, for the same
// meaning; the rest are this contract's own.
var Checks = []CheckInfo{
	{"not_a_server_error", "No request, however malformed, is answered 5xx, but the two RFC 9112 asks for: 501 to a Transfer-Encoding other than chunked, 505 to a protocol version other than HTTP/1.x.", fam(famForm)},
	{contract.StatusCode, "Every status is one the contract documents for the operation (404/405 off the operations).", fam(famForm)},
	{contract.ContentType, "Every response's Content-Type is one the contract documents for its status.", fam(famForm)},
	{contract.ResponseHeaders, "Every value of every response header the contract declares is valid against its schema, and present when required.", fam(famForm, famHeaders)},
	{contract.ResponseSchema, "Every response body is valid against the contract's schema for its status.", fam(famForm)},
	{"negative_data_rejection", "A request that breaks exactly one rule of the contract is refused with the status the contract gives it (400, 406, 413).", fam(famIllegal)},
	{"positive_data_acceptance", "A valid request, with values at every bound and in every legal form, is accepted.", fam(famLegal)},
	{"ignored_auth", "No key, another scheme or an unknown key is answered 401; a valid key, the scheme in any case, is accepted.", fam(famLegal, famIllegal)},
	{"use_after_create", "A created pet is readable at its Location and by its id, and listed under its status.", fam(famMeaning)},
	{"unsupported_method", "A known path with a method it does not support (HEAD and OPTIONS included) is answered 405 with an Allow header listing those it does, with a key or without.", fam(famIllegal)},
	{"unknown_path", "A path that names no resource is answered 404, with a key or without.", fam(famIllegal)},
	{contract.ErrorBody, "Every 4xx and 5xx body is an Error whose status equals the HTTP status and whose code is the one the contract gives that answer.", fam(famForm, famMeaning)},
	{"auth_before_validation", "An unauthenticated request is answered 401 even when it is also invalid.", fam(famIllegal)},
	{"default_status", "A member left out of a create takes the default the contract declares.", fam(famMeaning)},
	{"pagination", "Every page holds only ids above its after, at most limit pets, only pets that match its filter, and every pet the kit created that belongs there; its next link continues where it ended.", fam(famMeaning)},
	{"ordering", "Listings are in ascending id order, across pages.", fam(famMeaning)},
	{"deprecation", "A deprecated operation's answers carry Deprecation and the Sunset and Link the contract declares.", fam(famForm)},
	{"refused_write", "A refused create (invalid, unauthenticated, 503 unavailable) stores nothing.", fam(famMeaning)},
	{"unique_ids", "Creates, concurrent ones too, get distinct ids.", fam(famMeaning, famTenancy)},
	{"idempotent_replay", "A create retried with its Idempotency-Key, in any equivalent form, gets the first answer again and stores nothing; the key with another pet is 422; a refused create keeps no outcome; without a key every create creates.", fam(famMeaning)},
	{"stored_as_sent", "Every answer that shows a pet the kit created (the 201, getPet, every page) shows it as sent, defaults applied; getPet answers the pet asked for.", fam(famMeaning, famLegal)},
	{"durability", "At the end, every pet the kit created is still there: read by its id, and found once in a walk of the listing.", fam(famMeaning)},
	{"header_values", "A header value the contract ties to a case goes with that case: error=\"invalid_token\" exactly when a key was sent, Idempotent-Replayed only on a replay, a Location that names the created pet, the RateLimit fields together.", fam(famHeaders)},
	{"cors", "An answer to a request with Origin carries Access-Control-Allow-Origin: *; a preflight is answered 204, no body, allowing the method and headers asked for.", fam(famLegal, famIllegal, famHeaders)},
	{"refusal_at_once", "A request refused before its body is read (no key, no such path, a declared length over the limit) is answered at once, without the body, with Connection: close, and with Expect: 100-continue instead of 100 Continue; a valid create with Expect: 100-continue is created.", fam(famIllegal, famLegal, famHeaders)},
	{"http_framing", "A request that is not HTTP/1.1 as the contract reads it (a head over 64 KiB, a raw space, %zz in the path, no Host, a bad header line, Content-Length twice, Expect 200-ok) is answered 431 or 400, and Transfer-Encoding gzip 501, before any operation, with an Error, X-Request-Id and Connection: close; a head of exactly 64 KiB, HTTP/1.0 and a chunked body are served.", fam(famIllegal, famLegal, famForm)},
	{"idempotency_scope", "Another API key sending the same Idempotency-Key gets a pet of its own, never the first key's answer nor its 422 (needs -key2).", fam(famTenancy)},
	{"concurrent_retries", "A create retried concurrently with one Idempotency-Key creates one pet: each answer is that pet or 409 idempotency_key_in_flight.", fam(famTenancy)},
}

// A phase sends one group of cases; checks names those it judges beyond
// the ones that judge every response. A phase with skip set does not run,
// and the report says why.
type phase struct {
	name   string
	checks []string
	run    func(context.Context) error
	skip   string
}

func (r *run) phases() []phase {
	ps := []phase{
		{name: "sentences", checks: sentenceChecks, run: r.sentenceCases},
		{name: "near misses", checks: nearMissChecks, run: func(ctx context.Context) error { return r.nearMissCases(ctx, false) }},
		{name: "forms", checks: []string{"negative_data_rejection", "idempotent_replay", "cors"}, run: r.formCases},
		{name: "state", checks: []string{"use_after_create", "default_status", "pagination", "ordering", "stored_as_sent"}, run: r.stateCases},
		{name: "idempotency", checks: []string{"idempotent_replay", "stored_as_sent"}, run: r.idempotencyCases},
		{name: "tenants", checks: []string{"idempotency_scope"}, run: r.tenantCases},
		{name: "concurrency", checks: []string{"unique_ids", "concurrent_retries"}, run: r.concurrencyCases},
		{name: "examples", checks: modelChecks, run: r.examples},
		{name: "read back", checks: []string{"durability", "pagination", "stored_as_sent", "refused_write"}, run: r.readBack},
		{name: "promises", checks: []string{"idempotent_replay", "http_framing"}, run: r.endPromises},
		{name: "malformed", checks: []string{"negative_data_rejection", "positive_data_acceptance", "http_framing", "stored_as_sent"}, run: r.lastCases},
		{name: "unmodelled", checks: sentenceChecks, run: r.sendDeferred},
	}
	for i := range ps {
		switch {
		case ps[i].name == "tenants" && r.cfg.Key2 == "":
			ps[i].skip = "needs a second key the target accepts (-key2 or PETSTORE_CONFORM_KEY2)"
		case ps[i].name == "examples" && r.cfg.Examples == 0:
			ps[i].checks = nil // nothing to say: not asked for
		}
	}
	return ps
}

// sentenceChecks are the checks the sentences' cases judge.
var sentenceChecks = []string{"ignored_auth", "auth_before_validation", "negative_data_rejection", "positive_data_acceptance",
	"default_status", "unsupported_method", "unknown_path", "cors", "stored_as_sent", "refused_write", "header_values", "refusal_at_once", "http_framing"}

// nearMissChecks are the checks the near misses' cases judge.
var nearMissChecks = []string{"ignored_auth", "negative_data_rejection", "positive_data_acceptance", "idempotent_replay", "stored_as_sent", "pagination"}

// modelChecks are the checks the model judges.
var modelChecks = []string{"stored_as_sent", "pagination", "ordering", "refused_write", "unique_ids", "idempotent_replay", "durability"}

// everyResponse are the checks that judge every response, whatever sent it.
var everyResponse = []string{"not_a_server_error", contract.StatusCode, contract.ContentType, contract.ResponseHeaders, contract.ResponseSchema, contract.ErrorBody, "deprecation", "header_values", "cors"}

// wants reports whether p judges a check the run has: with -checks naming
// only some, the phases of others send nothing.
func (r *run) wants(p phase) bool {
	if p.checks == nil {
		return false
	}
	for _, c := range append(slices.Clone(p.checks), everyResponse...) {
		if r.enabled[c] {
			return true
		}
	}
	return false
}

// preflight makes sure the target answers and takes the key (and the
// second key), with the first operation that needs no parameter; then,
// when the run will create pets, creates the first, whose id tags the
// run's names.
func (r *run) preflight(ctx context.Context) error {
	for _, op := range r.ops {
		if op.method != http.MethodGet || len(op.inPath) > 0 {
			continue
		}
		if err := r.reach(ctx, op, 1, "key"); err != nil {
			return err
		}
		if r.cfg.Key2 != "" {
			if err := r.reach(ctx, op, 2, "second key"); err != nil {
				return err
			}
		}
		break
	}
	return r.start(ctx)
}

// reach sends op with a tenant's key: it must be answered, and not 401.
func (r *run) reach(ctx context.Context, op *operation, tenant int, which string) error {
	x, err := r.send(ctx, request{method: op.method, target: op.path, tenant: tenant})
	if errors.Is(err, errBudget) {
		return err // the budget stopped it, not the target
	}
	if err != nil {
		return fmt.Errorf("target unreachable: %v", err)
	}
	if x.status == 0 { // send turned the transport's error into a case
		return fmt.Errorf("target unreachable: %s", strings.TrimPrefix(string(x.body), "no answer: "))
	}
	if x.status == http.StatusUnauthorized || x.status == http.StatusForbidden {
		return fmt.Errorf("the target refused the %s (%s %s answered %d)", which, op.method, op.path, x.status)
	}
	if x.status == http.StatusNotFound { // the likeliest cause: BASE_URL lacks the base path
		return fmt.Errorf("%s %s answered 404: is %s the API's base address%s?", op.method, x.req.URL.Path, r.base, r.baseHint())
	}
	return nil
}

// start creates the run's first pet: its id, which no other run was given,
// tags every name and key the run makes, so that its pets are told from any
// other writer's and a run never meets an earlier one's keys.
func (r *run) start(ctx context.Context) error {
	if r.roles.create == nil || r.roles.list == nil {
		return nil
	}
	creates := false
	for _, p := range r.phases() {
		creates = creates || p.name != "read back" && r.wants(p)
	}
	if !creates {
		return nil
	}
	x, err := r.send(ctx, r.createReq(mustJSON(r.newPet("conform-start", nil)), nil))
	if errors.Is(err, errBudget) {
		return nil // the budget's gap says it
	}
	if err != nil {
		return err
	}
	id, ok := petID(x.body)
	if x.status != http.StatusCreated || !ok {
		// The cases judge a target that does not create; what the run
		// cannot see without its tag, it says.
		reason := fmt.Sprintf("the run's first create was answered %s, not 201 with an id: its names carry no tag (the first pet's id), so a pet that a refused create leaves behind, or a second pet of one keyed create, cannot be told from another writer's", describe(x))
		for _, check := range []string{"refused_write", "idempotent_replay"} {
			r.incomplete(check, "the run's tag", reason)
		}
		return nil
	}
	r.mu.Lock()
	r.tag = "t" + strconv.FormatInt(id, 36)
	r.mu.Unlock()
	r.note(&history.Op{Kind: history.Scope, Kit: history.Kit{Names: "-" + r.tag + "."}})
	if err := r.makeSpare(ctx); !errors.Is(err, errBudget) {
		return err
	}
	return nil
}

// expect records a case of check: x, the answer, must satisfy ok.
func (r *run) expect(check string, x *exchange, ok bool, want string) {
	var f *Failure
	if !ok {
		f = r.fail(x, want, "")
	}
	x.in.record(check, x.op, f)
}

// kase is one request the kit sends to hold the target to a sentence of
// the contract, and what the contract wants of its answer.
type kase struct {
	label string
	check string
	req   request
	want  outcome
}

// outcome is what the contract wants of an answer.
type outcome struct {
	status []int                  // the answer's status is one of these; none: any 2xx
	code   string                 // and its Error code this one, when set
	also   func(*exchange) string // and this holds: "" when it does, what it wants otherwise
}

func accepted() outcome                       { return outcome{} }
func created() outcome                        { return outcome{status: []int{http.StatusCreated}} }
func refused(status int, code string) outcome { return outcome{status: []int{status}, code: code} }

// found is a valid get: 2xx, or 404 for an id that names no pet.
func found() outcome { return outcome{status: []int{http.StatusOK, http.StatusNotFound}} }

// and adds a rule on the answer.
func (o outcome) and(f func(*exchange) string) outcome {
	prev := o.also
	o.also = func(x *exchange) string {
		if prev != nil {
			if w := prev(x); w != "" {
				return w
			}
		}
		return f(x)
	}
	return o
}

// judge says whether x keeps o, and what o wants.
func (o outcome) judge(x *exchange, label string) (bool, string) {
	var want string
	ok := slices.Contains(o.status, x.status)
	switch {
	case len(o.status) == 0:
		want, ok = "2xx", x.status/100 == 2
	case len(o.status) == 1:
		want = strconv.Itoa(o.status[0])
	default:
		want = strings.Trim(strings.ReplaceAll(fmt.Sprint(o.status), " ", " or "), "[]")
	}
	if o.code != "" {
		want += " " + o.code
		code, isError := errorCode(x.body)
		ok = ok && isError && code == o.code
	}
	want += " for " + label
	if ok && o.also != nil {
		if w := o.also(x); w != "" {
			return false, want + ", " + w
		}
	}
	return ok, want
}

// sendCases sends each case and judges its answer.
func (r *run) sendCases(ctx context.Context, ks []kase) error {
	ks = r.deferUnsafe(ks) // unmodelled.go: cases that may change pets go last
	for _, k := range ks {
		if !r.enabled[k.check] && !r.judgesEvery() {
			continue
		}
		x, err := r.send(ctx, k.req)
		if err != nil {
			return err
		}
		ok, want := k.want.judge(x, k.label)
		r.expect(k.check, x, ok, want)
	}
	return nil
}

// judgesEvery reports whether a check that judges every response runs:
// then every case is worth sending.
func (r *run) judgesEvery() bool {
	for _, c := range everyResponse {
		if r.enabled[c] {
			return true
		}
	}
	return false
}

// baseHint names the base path the spec's servers give, for a BASE_URL
// that reaches no operation: " (the spec's servers end in /vN)", or "".
func (r *run) baseHint() string {
	if b, err := contract.BasePath(r.spec); err == nil && b != "" {
		return " (the spec's servers end in " + b + ")"
	}
	return ""
}

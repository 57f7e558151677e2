package conform

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/petstore/petstore/internal/conform/cases"
	"github.com/petstore/petstore/internal/conform/judge"
	"github.com/petstore/petstore/internal/conform/wire"
	"github.com/petstore/petstore/internal/contract"
	"github.com/petstore/petstore/internal/history"
)

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
		{name: "sentences", checks: sentenceChecks, run: r.step(cases.SentenceCases)},
		{name: "near misses", checks: nearMissChecks, run: func(ctx context.Context) error { return cases.NearMissCases(ctx, r, false) }},
		{name: "forms", checks: []string{"negative_data_rejection", "idempotent_replay", "cors"}, run: r.step(cases.FormCases)},
		{name: "state", checks: []string{"use_after_create", "default_status", "pagination", "ordering", "stored_as_sent"}, run: r.stateCases},
		{name: "idempotency", checks: []string{"idempotent_replay", "stored_as_sent"}, run: r.idempotencyCases},
		{name: "tenants", checks: []string{"idempotency_scope"}, run: r.step(cases.Tenants)},
		{name: "concurrency", checks: []string{"unique_ids", "concurrent_retries"}, run: r.step(cases.Concurrency)},
		{name: "examples", checks: modelChecks, run: r.examples},
		{name: "read back", checks: []string{"durability", "pagination", "stored_as_sent", "refused_write"}, run: r.readBack},
		{name: "promises", checks: []string{"idempotent_replay", "http_framing"}, run: r.endPromises},
		{name: "malformed", checks: []string{"negative_data_rejection", "positive_data_acceptance", "http_framing", "stored_as_sent"}, run: r.step(cases.LastCases)},
		{name: "method semantics", checks: []string{"method_semantics"}, run: r.methodSemantics},
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
		if op.Method != http.MethodGet || len(op.InPath) > 0 {
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
func (r *run) reach(ctx context.Context, op *cases.Operation, tenant int, which string) error {
	x, err := r.Send(ctx, wire.Request{Method: op.Method, Target: op.Path, Tenant: tenant})
	if errors.Is(err, wire.ErrBudget) {
		return err // the budget stopped it, not the target
	}
	if err != nil {
		return fmt.Errorf("target unreachable: %v", err)
	}
	if x.Status == 0 { // send turned the transport's error into a case
		return fmt.Errorf("target unreachable: %s", strings.TrimPrefix(string(x.Body), "no answer: "))
	}
	if x.Status == http.StatusUnauthorized || x.Status == http.StatusForbidden {
		return fmt.Errorf("the target refused the %s (%s %s answered %d)", which, op.Method, op.Path, x.Status)
	}
	if x.Status == http.StatusNotFound { // the likeliest cause: BASE_URL lacks the base path
		return fmt.Errorf("%s %s answered 404: is %s the API's base address%s?", op.Method, x.Req.URL.Path, r.base, r.baseHint())
	}
	return nil
}

// start creates the run's first pet: its id, which no other run was given,
// tags every name and key the run makes, so that its pets are told from any
// other writer's and a run never meets an earlier one's keys.
func (r *run) start(ctx context.Context) error {
	if r.roles.Create == nil || r.roles.List == nil {
		return nil
	}
	creates := false // the read-back too: it reads the run's first pet
	for _, p := range r.phases() {
		creates = creates || r.wants(p)
	}
	if !creates {
		return nil
	}
	x, err := r.Send(ctx, r.reqs.CreateReq(cases.MustJSON(r.reqs.NewPet("conform-start", nil)), nil))
	if errors.Is(err, wire.ErrBudget) {
		return nil // the budget's gap says it
	}
	if err != nil {
		return err
	}
	id, ok := x.CreatedID()
	if !ok {
		// The cases judge a target that does not create; what the run
		// cannot see without its tag, it says.
		reason := fmt.Sprintf("the run's first create was answered %s, not 201 with an id: its names carry no tag (the first pet's id), so a pet that a refused create leaves behind, or a second pet of one keyed create, cannot be told from another writer's", judge.Describe(x))
		for _, check := range []string{"refused_write", "idempotent_replay"} {
			r.Incomplete(check, "the run's tag", reason)
		}
		return nil
	}
	r.mu.Lock()
	r.tag = "t" + strconv.FormatInt(id, 36)
	r.mu.Unlock()
	r.hist.Note(&history.Op{Kind: history.Scope, Kit: history.Kit{Names: "-" + r.tag + "."}})
	if err := r.makeSpare(ctx); !errors.Is(err, wire.ErrBudget) {
		return err
	}
	return nil
}

// Expect records a case of check: x, the answer, must satisfy ok. A
// create whose outcome stayed unknown (settle) is judged neither way:
// the run is incomplete for it.
func (r *run) Expect(check string, x *judge.Exchange, ok bool, want string) {
	var f *Failure
	if !ok {
		if x.Op == r.CreateOp() && judge.OutcomeUnknown(r, x) {
			return
		}
		f = r.Fail(x, want, "")
	}
	x.In.Record(check, x.Op, f)
}

// JudgesEvery reports whether a check that judges every response runs:
// then every case is worth sending.
func (r *run) JudgesEvery() bool {
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

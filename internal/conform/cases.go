package conform

import (
	"context"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/conform/cases"
	"github.com/petstore/petstore/internal/schemagen"
)

// operation is one operation of the spec (cases.Operation).
type operation = cases.Operation

// operation returns the spec's operation with id, or nil.
func (r *run) operation(id string) *operation {
	for _, op := range r.ops {
		if op.ID == id {
			return op
		}
	}
	return nil
}

// value is one value of a parameter or body member (cases.Value).
type value = cases.Value

// valid returns values the schema accepts (cases.Values.Valid), drawn from
// the run's seed.
func (r *run) valid(s *openapi3.Schema) []value { return cases.Values{Rng: r.rng}.Valid(s) }

// gen is a generator of values that takes its choices from the run's seed.
func (r *run) gen() *schemagen.Generator { return schemagen.New(r.rng) }

// The run as cases.T sees it, beyond sending and judging.

// Stated reports whether the spec states the sentence named name (stated).
func (r *run) Stated(name string) bool { return r.stated(name) }

// Requests builds the requests of the cases.
func (r *run) Requests() cases.Requests { return r.reqs }

// Key is the API key the run authenticates with.
func (r *run) Key() string { return r.cfg.Key }

// Bounds are the limits the spec being checked sets.
func (r *run) Bounds() cases.Bounds { return r.bounds }

// Operations are the spec's operations.
func (r *run) Operations() []*operation { return r.ops }

// Scheme is the scheme of the target's base URL.
func (r *run) Scheme() string { return r.base.Scheme }

// FirstID is the id of the run's first pet, or 0 (firstID).
func (r *run) FirstID() int64 { return r.firstID() }

// Valid are values s accepts, drawn from the run's seed (valid).
func (r *run) Valid(s *openapi3.Schema) []value { return r.valid(s) }

// Post creates body as tenant (post).
func (r *run) Post(ctx context.Context, body []byte, header http.Header, tenant int) (*exchange, int64, bool, error) {
	return r.post(ctx, body, header, tenant)
}

// Defaults are the defaults of the created resource's members (defaults).
func (r *run) Defaults() map[string]string { return r.defaults() }

// NameMember is the member of the created resource the kit names
// (nameMember).
func (r *run) NameMember() string { return r.nameMember() }

// Gen is a generator of values from the run's seed (gen).
func (r *run) Gen() *schemagen.Generator { return r.gen() }

// AcceptedBy is the outcome of a valid request to op (acceptedBy).
func (r *run) AcceptedBy(op *operation) outcome { return r.acceptedBy(op) }

// NearKey notes a near miss of the run's key for the curl lines.
func (r *run) NearKey(key, shell string) { r.wire.NearKey(key, shell) }

// Routed reports whether target (relative to BASE_URL) names an operation
// of the spec.
func (r *run) Routed(method, target string) bool {
	req, err := http.NewRequest(method, r.base.String()+target, nil)
	if err != nil {
		return false
	}
	_, _, err = r.contract.Route(req)
	return err == nil
}

// IntN is a number in [0, n) drawn from the run's seed.
func (r *run) IntN(n int) int { return r.rng.IntN(n) }

// step is a generator of cases in the package cases as a step of a phase.
func (r *run) step(gen func(context.Context, cases.T) error) func(context.Context) error {
	return func(ctx context.Context) error { return gen(ctx, r) }
}

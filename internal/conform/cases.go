package conform

import (
	"context"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/conform/cases"
	"github.com/petstore/petstore/internal/schemagen"
)

// operation returns the spec's operation with id, or nil.
func (r *run) operation(id string) *cases.Operation {
	for _, op := range r.ops {
		if op.ID == id {
			return op
		}
	}
	return nil
}

// The run as cases.T sees it, beyond sending and judging.

// Stated reports whether the spec states the sentence or answer rule named
// name (cases.Rules).
func (r *run) Stated(name string) bool { return r.xrules.Stated(name) }

// RuleStrings is the list of strings the spec gives the rule name under key
// (cases.Rules).
func (r *run) RuleStrings(name, key string) []string { return r.xrules.Strings(name, key) }

// Requests builds the requests of the cases.
func (r *run) Requests() cases.Requests { return r.reqs }

// Key is the API key the run authenticates with.
func (r *run) Key() string { return r.cfg.Key }

// Bounds are the limits the spec being checked sets.
func (r *run) Bounds() cases.Bounds { return r.bounds }

// Operations are the spec's operations.
func (r *run) Operations() []*cases.Operation { return r.ops }

// Scheme is the scheme of the target's base URL.
func (r *run) Scheme() string { return r.base.Scheme }

// Valid are values s accepts, drawn from the run's seed.
func (r *run) Valid(s *openapi3.Schema) []cases.Value { return cases.Values{Rng: r.rng}.Valid(s) }

// Gen is a generator of values from the run's seed.
func (r *run) Gen() *schemagen.Generator { return schemagen.New(r.rng) }

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

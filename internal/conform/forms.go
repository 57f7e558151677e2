package conform

import (
	"context"

	"github.com/petstore/petstore/internal/conform/cases"
)

// Every form on every path that reads it: the cases are cases.FormCases;
// the illegal forms they send again are the runner's (IllegalForms).

// IllegalForms are the negative cases of the stated sentences sent before
// the last phase, and of each operation's schemas: each a request the
// contract refuses for its form.
func (r *run) IllegalForms() []kase {
	var forms []kase
	keep := func(ks []kase) {
		for _, k := range ks {
			if k.Check == "negative_data_rejection" && k.Req.Raw == nil {
				forms = append(forms, k)
			}
		}
	}
	for _, s := range sentences {
		if s.cases != nil && !s.last && s.skip == "" && r.stated(s.name) {
			keep(s.cases(r))
		}
	}
	for _, op := range r.ops {
		keep(cases.SchemaNegatives(r, op))
	}
	return forms
}

// formCases sends every illegal form again in each variant that applies
// (cases.FormCases).
func (r *run) formCases(ctx context.Context) error { return cases.FormCases(ctx, r) }

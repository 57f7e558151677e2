package conform

import (
	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/conform/judge"
	"github.com/petstore/petstore/internal/schemagen"
)

// The members of a create's body and of a pet in an answer, each as
// canonical JSON text, as the checker's model compares them
// (internal/check: model_members.go).

// createSchema is the create's body schema, or nil.
func (r *run) createSchema() *openapi3.Schema {
	if r.roles.Create == nil {
		return nil
	}
	return r.roles.Create.Body
}

// SentMembers decodes a create's body, a JSON object, into its members as
// canonical JSON text, the defaults of the members it leaves out applied at
// every depth (schemagen.WithDefaults).
func (r *run) SentMembers(b []byte) (map[string]string, bool) {
	m, ok := judge.DecodeObject(b)
	if !ok {
		return nil, false
	}
	if s := r.createSchema(); s != nil {
		m, _ = schemagen.WithDefaults(m, s).(map[string]any)
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = judge.Canonical(v)
	}
	return out, true
}

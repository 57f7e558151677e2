package conform

import (
	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/conform/judge"
	"github.com/petstore/petstore/internal/value"
)

// The members of a create's body and of a pet in an answer, each as
// canonical JSON text in the form the contract's value rules give it
// (package value), as the checker's model compares them (internal/check:
// model_members.go): a member sent and the same member answered are the
// same value exactly when their texts are equal.

// createSchema is the create's body schema, or nil.
func (r *run) createSchema() *openapi3.Schema {
	if r.roles.Create == nil {
		return nil
	}
	return r.roles.Create.Body
}

// SentMembers decodes a create's body, a JSON object, into its members as
// canonical JSON text, normalised by the create's schema: the defaults of
// the members it leaves out applied at every depth, each value in its
// schema's form (value.Normalize). A body the schema's rules refuse keeps
// its members as sent.
func (r *run) SentMembers(b []byte) (map[string]string, bool) {
	m, ok := judge.DecodeObject(b)
	if !ok {
		return nil, false
	}
	if n, err := value.Normalize(value.Copy(m), r.createSchema()); err == nil {
		m = n.(map[string]any)
	}
	return texts(m), true
}

// AnswerMembers decodes an answer's pet, a JSON object, into its members
// as canonical JSON text, each value in the form its member of the
// create's schema gives it (value.Answered): a float as its float32, a
// date-time in UTC.
func (r *run) AnswerMembers(b []byte) (map[string]string, bool) {
	m, ok := judge.DecodeObject(b)
	if !ok {
		return nil, false
	}
	return texts(value.Answered(m, r.createSchema()).(map[string]any)), true
}

// texts are the members of m, normalised, as canonical JSON text.
func texts(m map[string]any) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = value.NormalText(v)
	}
	return out
}

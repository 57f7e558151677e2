package conform

import (
	"slices"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/petstore/petstore/internal/conform/judge"
)

// statedRules are the answer rules the spec states.
func (r *run) statedRules() []judge.Rule {
	var out []judge.Rule
	for _, rule := range judge.Rules {
		if r.Stated(rule.Name) {
			out = append(out, rule)
		}
	}
	return out
}

// ErrorCodes are the Error codes the contract gives the answer of x.
func (r *run) ErrorCodes(x *judge.Exchange) []string {
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
	ref := op.Op.Responses.Status(x.Status)
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

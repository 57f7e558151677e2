package conform

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// roles are the operations the model follows, found in the spec by what
// they are to one another, never by their names nor by the order of the
// paths: a create (a POST of a JSON body to a collection, answered 201
// with the created resource), the listing of the same collection (a GET of
// its path, answered 200 with an array of that resource) and the get of one
// member (a GET of the collection's path and one parameter, answered 200
// with the resource). Every other operation is one the kit has no model
// for (unmodelled.go).
type roles struct {
	create *operation
	list   *operation
	get    *operation
	filter string // the listing's query parameter that is a member of the resource ("status")
}

func findRoles(ops []*operation) roles {
	var rs roles
	for _, op := range ops {
		if op.method != http.MethodPost || op.body == nil || op.created == nil {
			continue
		}
		c := roles{create: op}
		for _, other := range ops {
			switch {
			case other.method != http.MethodGet:
			case other.path == op.path && len(other.inPath) == 0 && isType(okSchema(other), "array") &&
				okSchema(other).Items != nil && sameSchema(okSchema(other).Items.Value, op.created):
				c.list = other
			case len(other.inPath) == 1 && other.path == op.path+"/{"+other.inPath[0].Name+"}" && sameSchema(okSchema(other), op.created):
				c.get = other
			}
		}
		// The first collection that has a listing; else the first create.
		if rs.create == nil || rs.list == nil && c.list != nil {
			rs = c
		}
	}
	if rs.list != nil {
		for _, p := range rs.list.query {
			if _, ok := rs.create.created.Properties[p.Name]; ok {
				rs.filter = p.Name
			}
		}
	}
	return rs
}

// okSchema is the schema of an operation's 200 JSON body, or an empty one.
func okSchema(op *operation) *openapi3.Schema {
	if ref := op.op.Responses.Status(http.StatusOK); ref != nil && ref.Value != nil {
		if mt := ref.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil && mt.Schema.Value != nil {
			return mt.Schema.Value
		}
	}
	return &openapi3.Schema{}
}

// sameSchema reports whether a and b are one schema: the same component
// (the loader resolves every $ref to it), or equal written out.
func sameSchema(a, b *openapi3.Schema) bool {
	if a == nil || b == nil {
		return false
	}
	if a == b {
		return true
	}
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb) && !strings.HasPrefix(string(ja), "{}")
}

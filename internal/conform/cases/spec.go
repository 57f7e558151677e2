package cases

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// The spec as the cases derive from it: its operations, and the roles of
// those the model follows.

// Operation is one operation of the spec, as the kit derives cases for it.
type Operation struct {
	ID     string
	Method string
	Path   string // the spec's path template: /pets/{petId}
	Op     *openapi3.Operation
	Query  []*openapi3.Parameter
	InPath []*openapi3.Parameter
	Header []*openapi3.Parameter // but Accept, Content-Type and Authorization, which OpenAPI ignores
	Body   *openapi3.Schema      // the JSON request body, or nil
	// BodyType is Body's media type: application/json where the operation
	// takes it, else its first JSON one (application/merge-patch+json).
	BodyType string
	// Created is the schema of the 201 body, for members a client must not
	// send (the service assigns them).
	Created *openapi3.Schema
}

// Operations are the operations of spec, in the order of their paths and
// methods.
func Operations(spec *openapi3.T) []*Operation {
	var ops []*Operation
	paths := spec.Paths.InMatchingOrder()
	slices.Sort(paths)
	for _, path := range paths {
		item := spec.Paths.Value(path)
		methods := item.Operations()
		names := make([]string, 0, len(methods))
		for m := range methods {
			names = append(names, m)
		}
		slices.Sort(names)
		for _, m := range names {
			o := methods[m]
			op := &Operation{ID: o.OperationID, Method: m, Path: path, Op: o}
			if op.ID == "" {
				op.ID = m + " " + path
			}
			for _, params := range []openapi3.Parameters{item.Parameters, o.Parameters} {
				for _, p := range params {
					switch {
					case p.Value == nil:
					case p.Value.In == openapi3.ParameterInQuery:
						op.Query = append(op.Query, p.Value)
					case p.Value.In == openapi3.ParameterInPath:
						op.InPath = append(op.InPath, p.Value)
					case p.Value.In == openapi3.ParameterInHeader && !ignoredHeader(p.Value.Name):
						op.Header = append(op.Header, p.Value)
					}
				}
			}
			if rb := o.RequestBody; rb != nil && rb.Value != nil {
				op.BodyType, op.Body = jsonBody(rb.Value.Content)
			}
			if ref := o.Responses.Status(http.StatusCreated); ref != nil && ref.Value != nil {
				if mt := ref.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
					op.Created = mt.Schema.Value
				}
			}
			ops = append(ops, op)
		}
	}
	return ops
}

// ignoredHeader reports whether OpenAPI ignores a header parameter of this
// name (3.0.3, Parameter Object: the request's media types and security).
func ignoredHeader(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Accept", "Content-Type", "Authorization":
		return true
	}
	return false
}

// Target fills the path template of op with values.
func (op *Operation) Target(values map[string]string, query string) string {
	path := op.Path
	for name, v := range values {
		path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(v))
	}
	if query != "" {
		path += "?" + query
	}
	return path
}

// Roles are the operations the model follows, found in the spec by what
// they are to one another, never by their names nor by the order of the
// paths: a create (a POST of a JSON body to a collection, answered 201
// with the created resource), the listing of the same collection (a GET of
// its path, answered 200 with an array of that resource) and the get of one
// member (a GET of the collection's path and one parameter, answered 200
// with the resource). Every other operation is one the kit has no model
// for (internal/conform: unmodelled.go).
type Roles struct {
	Create *Operation
	List   *Operation
	Get    *Operation
	Filter string // the listing's query parameter that is a member of the resource ("status")
}

// FindRoles finds the roles among ops.
func FindRoles(ops []*Operation) Roles {
	var rs Roles
	for _, op := range ops {
		if op.Method != http.MethodPost || op.Body == nil || op.Created == nil {
			continue
		}
		c := Roles{Create: op}
		for _, other := range ops {
			switch {
			case other.Method != http.MethodGet:
			case other.Path == op.Path && len(other.InPath) == 0 && isArray(okSchema(other)) &&
				okSchema(other).Items != nil && sameSchema(okSchema(other).Items.Value, op.Created):
				c.List = other
			case len(other.InPath) == 1 && other.Path == op.Path+"/{"+other.InPath[0].Name+"}" && sameSchema(okSchema(other), op.Created):
				c.Get = other
			}
		}
		// The first collection that has a listing; else the first create.
		if rs.Create == nil || rs.List == nil && c.List != nil {
			rs = c
		}
	}
	if rs.List != nil {
		for _, p := range rs.List.Query {
			if _, ok := rs.Create.Created.Properties[p.Name]; ok {
				rs.Filter = p.Name
			}
		}
	}
	return rs
}

// okSchema is the schema of an operation's 200 JSON body, or an empty one.
func okSchema(op *Operation) *openapi3.Schema {
	if ref := op.Op.Responses.Status(http.StatusOK); ref != nil && ref.Value != nil {
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

func isArray(s *openapi3.Schema) bool { return s.Type != nil && s.Type.Is("array") }

// jsonBody is the JSON media type of content a client sends and its
// schema: application/json where it is one, else the first (by name) whose
// type ends in +json; "" and nil when content has none.
func jsonBody(content openapi3.Content) (string, *openapi3.Schema) {
	if mt := content.Get("application/json"); mt != nil && mt.Schema != nil {
		return "application/json", mt.Schema.Value
	}
	for _, name := range slices.Sorted(maps.Keys(content)) {
		if mt := content[name]; strings.HasSuffix(name, "+json") && mt != nil && mt.Schema != nil {
			return name, mt.Schema.Value
		}
	}
	return "", nil
}

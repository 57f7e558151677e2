package cases

import (
	"maps"
	"net/http"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/conform/wire"
)

// Names is what the request builders need of the run: names no other
// request uses, and the pet the operations the kit has no model for name.
type Names interface {
	// Name is a pet name (or an Idempotency-Key) unique to the run.
	Name(prefix string) string
	// SpareFor is the id of the pet op names when the kit has no model
	// for it ("" for the operations the model follows).
	SpareFor(op *Operation) string
}

// Requests builds the requests of the cases: the valid request of each
// operation, and creates, gets and pages of the collection the model
// follows.
type Requests struct {
	Roles  Roles
	Values Values
	Names  Names
}

// JSONHeader is a JSON Content-Type.
var JSONHeader = http.Header{"Content-Type": {"application/json"}}

// BodyHeader is the Content-Type of op's body (BodyType).
func (op *Operation) BodyHeader() http.Header {
	if op.BodyType == "" {
		return JSONHeader.Clone()
	}
	return http.Header{"Content-Type": {op.BodyType}}
}

// ValidRequest is a request op accepts: path parameters from id (a pet
// that exists where one does), a body with every required member.
func (q Requests) ValidRequest(op *Operation, id string) wire.Request {
	req := wire.Request{Method: op.Method, Target: op.Target(q.PathValues(op, id), "")}
	if op.Body != nil {
		req.Header = op.BodyHeader()
		req.Body = MustJSON(q.BaseBody(op.Body))
	}
	return req
}

// PathValues are the values of op's path parameters: id, or the pet an
// operation the kit has no model for names.
func (q Requests) PathValues(op *Operation, id string) map[string]string {
	if spare := q.Names.SpareFor(op); spare != "" {
		id = spare // never a fixed id to an operation the kit has no model for
	}
	values := map[string]string{}
	for _, p := range op.InPath {
		values[p.Name] = id
	}
	return values
}

// BaseBody is a valid body of schema s with its required members only; a
// string member without an enum takes a name unique to this run.
func (q Requests) BaseBody(s *openapi3.Schema) map[string]any {
	return q.BaseBodyNamed(s, "")
}

// BaseBodyNamed is BaseBody with name, when not empty, for its string
// members, and the first valid value for the others: the same body for the
// same name.
func (q Requests) BaseBodyNamed(s *openapi3.Schema, name string) map[string]any {
	body := map[string]any{}
	for _, member := range s.Required {
		ref := s.Properties[member]
		if ref == nil || ref.Value == nil {
			continue
		}
		ps := Flat(ref.Value)
		if IsType(ps, "string") && len(ps.Enum) == 0 && StringOK(ps, "conform") {
			if name != "" && StringOK(ps, name) {
				body[member] = name
			} else {
				body[member] = q.Names.Name("conform")
			}
			continue
		}
		if vs := q.Values.Valid(ps); len(vs) > 0 {
			if name != "" {
				body[member] = vs[0].JSON // the same body for the same name
			} else {
				body[member] = vs[len(vs)-1].JSON
			}
		}
	}
	return body
}

// NewPet is a valid create body named prefix-…, unique to this run, with
// the members of extra on top.
func (q Requests) NewPet(prefix string, extra map[string]any) map[string]any {
	body := q.BaseBodyNamed(q.Roles.Create.Body, q.Names.Name(prefix))
	maps.Copy(body, extra)
	return body
}

// CreateReq is a create of body, as JSON, with header's fields on top of
// a JSON Content-Type.
func (q Requests) CreateReq(body []byte, header http.Header) wire.Request {
	h := JSONHeader.Clone()
	for k, v := range header {
		h[k] = v
	}
	return wire.Request{Method: q.Roles.Create.Method, Target: q.Roles.Create.Path, Header: h, Body: body}
}

// ListTarget is the listing with query.
func (q Requests) ListTarget(query string) string { return q.Roles.List.Target(nil, query) }

// GetTarget is the get of the pet id.
func (q Requests) GetTarget(id int64) string {
	return q.Roles.Get.Target(q.PathValues(q.Roles.Get, strconv.FormatInt(id, 10)), "")
}

// Package contract answers one question: does this HTTP response keep
// openapi.yaml? Its answer is a list of violations, each of a named kind, so
// that the tests (internal/apitest) and the conformance kit (internal/conform)
// judge responses with the same code.
package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// The kinds of violation. They are the names of the conformance kit's
// checks that judge every response (Schemathesis's names where they mean the
// same).
const (
	StatusCode      = "status_code_conformance"
	ContentType     = "content_type_conformance"
	ResponseHeaders = "response_headers_conformance"
	ResponseSchema  = "response_schema_conformance"
	ErrorBody       = "error_body"
)

// Violation is one way a response breaks the contract.
type Violation struct {
	Kind    string // one of the constants above
	Message string
}

func (v Violation) String() string { return v.Kind + ": " + v.Message }

// Contract is an OpenAPI document routed under one base path.
type Contract struct {
	spec     *openapi3.T
	router   routers.Router
	basePath string
	strict   bool
}

// Strict returns c holding every JSON body to exactly the members the
// contract documents. The contract's response objects are open (a later
// minor version may add members, and a client must ignore those it does not
// know), so another implementation may send more; the reference's own
// tests (internal/apitest) hold it to none but the documented ones.
func (c *Contract) Strict() *Contract {
	s := *c
	s.strict = true
	return &s
}

// New routes spec under basePath ("/v1", or "" for an API served at the
// root) on any host. spec is not modified.
func New(spec *openapi3.T, basePath string) (*Contract, error) {
	basePath = strings.TrimRight(basePath, "/")
	routed := *spec
	server := basePath
	if server == "" {
		server = "/"
	}
	routed.Servers = openapi3.Servers{{URL: server}}
	router, err := gorillamux.NewRouter(&routed)
	if err != nil {
		return nil, fmt.Errorf("contract: route the spec: %w", err)
	}
	return &Contract{spec: &routed, router: router, basePath: basePath}, nil
}

// FromServers routes spec under the base path its servers name (BasePath).
func FromServers(spec *openapi3.T) (*Contract, error) {
	base, err := BasePath(spec)
	if err != nil {
		return nil, err
	}
	return New(spec, base)
}

// Spec returns the routed document.
func (c *Contract) Spec() *openapi3.T { return c.spec }

// BasePath returns the base path operations are routed under.
func (c *Contract) BasePath() string { return c.basePath }

// Route finds the operation of req (its URL path, base path included).
func (c *Contract) Route(req *http.Request) (*routers.Route, map[string]string, error) {
	return c.router.FindRoute(req)
}

// Check returns the ways a response with status, header and body to req
// breaks the contract; none when it keeps it. req's URL path includes the
// base path; its host is ignored.
//
// For an operation it runs openapi3filter.ValidateResponse with
// IncludeResponseStatus, once for the status and headers and once for the
// content type and body, so that one wrong header does not hide a wrong
// body. A path under the base path that names no operation must be
// answered 404, or 405 with Allow for a known path. Every 4xx and 5xx, on
// any path, must be an Error whose status is the HTTP status. A CORS
// preflight answered 204 is outside the contract.
func (c *Contract) Check(req *http.Request, status int, header http.Header, body []byte) []Violation {
	var vs []Violation
	if status >= 400 && req.Method != http.MethodHead {
		vs = append(vs, c.checkErrorBody(req, status, header, body)...)
	}
	if !strings.HasPrefix(req.URL.Path, c.basePath+"/") {
		return vs // operational endpoints are outside the contract
	}
	if req.Method == http.MethodOptions && req.Header.Get("Access-Control-Request-Method") != "" && status == http.StatusNoContent {
		if header.Get("Access-Control-Allow-Origin") != "*" || len(body) != 0 {
			vs = append(vs, Violation{ResponseHeaders, fmt.Sprintf("CORS preflight %s -> 204 without Access-Control-Allow-Origin: * or with a body", req.URL.Path)})
		}
		return vs
	}
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		if status != http.StatusNotFound && status != http.StatusMethodNotAllowed {
			vs = append(vs, Violation{StatusCode, fmt.Sprintf("%s %s matches no operation, yet got status %d (want 404 or 405)", req.Method, req.URL.Path, status)})
		}
		if status == http.StatusMethodNotAllowed && header.Get("Allow") == "" {
			vs = append(vs, Violation{ResponseHeaders, fmt.Sprintf("405 for %s %s without an Allow header", req.Method, req.URL.Path)})
		}
		return vs
	}
	return append(vs, c.checkOperation(req, route, params, status, header, body)...)
}

func (c *Contract) checkOperation(req *http.Request, route *routers.Route, params map[string]string, status int, header http.Header, body []byte) []Violation {
	what := fmt.Sprintf("%s %s -> %d", req.Method, req.URL.Path, status)
	responses := route.Operation.Responses
	ref := responses.Status(status)
	if ref == nil {
		ref = responses.Default()
	}
	if ref == nil || ref.Value == nil {
		return []Violation{{StatusCode, fmt.Sprintf("%s: status %d is not documented for %s (documented: %s)", what, status, route.Operation.OperationID, strings.Join(documented(responses), ", "))}}
	}
	var vs []Violation
	validate := func(r *routers.Route, header http.Header, excludeBody bool) error {
		in := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: r},
			Status:                 status,
			Header:                 header,
			Options:                &openapi3filter.Options{IncludeResponseStatus: true, ExcludeResponseBody: excludeBody},
		}
		in.SetBodyBytes(body)
		return openapi3filter.ValidateResponse(context.Background(), in)
	}
	if err := validate(route, header, true); err != nil {
		vs = append(vs, Violation{ResponseHeaders, fmt.Sprintf("%s: %v", what, err)})
	}
	// narrowed is route with the response of status declaring only the
	// headers h: kin-openapi judges those alone.
	narrowed := func(h openapi3.Headers) *routers.Route {
		resp := *ref.Value
		resp.Headers = h
		op := *route.Operation
		op.Responses = openapi3.NewResponses(openapi3.WithStatus(status, &openapi3.ResponseRef{Value: &resp}))
		r := *route
		r.Operation = &op
		return &r
	}
	// kin-openapi judges a header's first value only: a header the contract
	// declares with one value must come once, and each other value is
	// judged on its own, against that header alone (the others are judged
	// above, and a bad one would be blamed on this one's value).
	for _, name := range slices.Sorted(maps.Keys(ref.Value.Headers)) {
		values := header.Values(name)
		if len(values) < 2 {
			continue
		}
		vs = append(vs, Violation{ResponseHeaders, fmt.Sprintf("%s: %s given %d times (%q); the contract declares one value", what, name, len(values), values)})
		only := narrowed(openapi3.Headers{name: ref.Value.Headers[name]})
		for i, v := range values[1:] {
			one := header.Clone()
			one[http.CanonicalHeaderKey(name)] = []string{v}
			if err := validate(only, one, true); err != nil {
				vs = append(vs, Violation{ResponseHeaders, fmt.Sprintf("%s: %s, value %d: %v", what, name, i+2, err)})
			}
		}
	}
	// The same response without its headers, for the content type and body.
	if err := validate(narrowed(nil), header, false); err != nil {
		kind := ResponseSchema
		if re, ok := err.(*openapi3filter.ResponseError); ok && strings.Contains(re.Reason, "Content-Type") {
			kind = ContentType
		}
		vs = append(vs, Violation{kind, fmt.Sprintf("%s: %v; body: %.300s", what, err, body)})
	}
	if mt := ref.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
		vs = append(vs, c.checkJSON(what, status, mt.Schema.Value, body)...)
	}
	if len(ref.Value.Content) == 0 && len(body) > 0 {
		vs = append(vs, Violation{ContentType, fmt.Sprintf("%s: the contract documents no body, got %d bytes", what, len(body))})
	}
	return vs
}

// checkJSON holds a JSON body to schema s where kin-openapi does not: its
// integers written exactly, and for a strict contract, every member
// documented (an error body's members: checkErrorBody).
func (c *Contract) checkJSON(what string, status int, s *openapi3.Schema, body []byte) []Violation {
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil
	}
	ms := exactIntegers(s, v, "")
	if c.strict && status < 400 {
		ms = append(ms, undocumented(s, v, "")...)
	}
	vs := make([]Violation, len(ms))
	for i, m := range ms {
		vs[i] = Violation{ResponseSchema, fmt.Sprintf("%s: %s", what, m)}
	}
	return vs
}

func documented(r *openapi3.Responses) []string {
	var codes []string
	for code := range r.Map() {
		codes = append(codes, code)
	}
	slices.Sort(codes)
	return codes
}

// checkErrorBody holds a 4xx or 5xx to the spec's Error schema (a JSON
// object, decoded strictly) and its status member to the HTTP status.
func (c *Contract) checkErrorBody(req *http.Request, status int, header http.Header, body []byte) []Violation {
	what := fmt.Sprintf("%s %s -> %d", req.Method, req.URL.Path, status)
	var vs []Violation
	if mt, _, _ := mime.ParseMediaType(header.Get("Content-Type")); mt != "application/json" {
		vs = append(vs, Violation{ErrorBody, fmt.Sprintf("%s has Content-Type %q, want application/json", what, header.Get("Content-Type"))})
	}
	var e struct {
		Status json.Number `json:"status"`
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || json.Unmarshal(body, &e) != nil {
		return append(vs, Violation{ErrorBody, fmt.Sprintf("%s body is not an Error: %.300q", what, body)})
	}
	if ref := c.spec.Components.Schemas["Error"]; ref != nil && ref.Value != nil {
		if err := ref.Value.VisitJSON(v); err != nil {
			vs = append(vs, Violation{ErrorBody, fmt.Sprintf("%s body is not an Error: %v: %.300s", what, err, body)})
		}
		if c.strict {
			for _, m := range undocumented(ref.Value, v, "") {
				vs = append(vs, Violation{ErrorBody, fmt.Sprintf("%s: %s", what, m)})
			}
		}
	}
	if e.Status.String() != fmt.Sprint(status) {
		vs = append(vs, Violation{ErrorBody, fmt.Sprintf("%s Error body has status %q, want %d", what, e.Status, status)})
	}
	return vs
}

// exactIntegers returns where v, a JSON value decoded with UseNumber, has a
// number that schema s types integer but that is not one in the letter of
// the contract: a base-10 integer without fraction or exponent, within its
// format. kin-openapi compares float64s, in which 9223372036854775808 keeps
// maximum 9223372036854775807 and 1.0 is an integer.
func exactIntegers(s *openapi3.Schema, v any, at string) []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, sub := range s.AllOf {
		out = append(out, exactIntegers(sub.Value, v, at)...)
	}
	switch v := v.(type) {
	case map[string]any:
		for name, member := range v {
			if p := s.Properties[name]; p != nil {
				out = append(out, exactIntegers(p.Value, member, at+"/"+name)...)
			}
		}
	case []any:
		if s.Items != nil {
			for i, item := range v {
				out = append(out, exactIntegers(s.Items.Value, item, fmt.Sprintf("%s/%d", at, i))...)
			}
		}
	case json.Number:
		if s.Type == nil || !s.Type.Is("integer") {
			break
		}
		bits := 64
		if s.Format == "int32" {
			bits = 32
		}
		if _, err := strconv.ParseInt(string(v), 10, bits); err != nil {
			out = append(out, fmt.Sprintf("%s: %.40s is not an integer of %d bits written without fraction or exponent", at, v, bits))
		}
	}
	return out
}

// undocumented returns where v, a JSON value, has an object member that
// schema s does not name: not among the properties of s or of its allOf,
// anyOf and oneOf parts, none of which takes additional members by a
// schema (or additionalProperties: true).
func undocumented(s *openapi3.Schema, v any, at string) []string {
	parts := schemaParts(s, nil)
	var out []string
	switch v := v.(type) {
	case map[string]any:
		open := false
		for _, p := range parts {
			ap := p.AdditionalProperties
			open = open || ap.Schema != nil || ap.Has != nil && *ap.Has
		}
		for _, name := range slices.Sorted(maps.Keys(v)) {
			named := false
			for _, p := range parts {
				if m := p.Properties[name]; m != nil {
					named = true
					out = append(out, undocumented(m.Value, v[name], at+"/"+name)...)
				}
			}
			if !named && !open {
				out = append(out, fmt.Sprintf("%s/%s: a member the contract does not document", at, name))
			}
		}
	case []any:
		for _, p := range parts {
			if p.Items == nil {
				continue
			}
			for i, item := range v {
				out = append(out, undocumented(p.Items.Value, item, fmt.Sprintf("%s/%d", at, i))...)
			}
		}
	}
	return out
}

// schemaParts is s and the schemas of its allOf, anyOf and oneOf, and
// theirs, appended to parts.
func schemaParts(s *openapi3.Schema, parts []*openapi3.Schema) []*openapi3.Schema {
	if s == nil || slices.Contains(parts, s) {
		return parts
	}
	parts = append(parts, s)
	for _, subs := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
		for _, sub := range subs {
			parts = schemaParts(sub.Value, parts)
		}
	}
	return parts
}

// BasePath returns the base path the contract's servers name: the path of
// every servers URL ("/v1" for https://petstore.example.com/v1), without a
// trailing slash. The servers must agree on it, and name no variable in it,
// so that the spec alone decides where the operations are served.
func BasePath(spec *openapi3.T) (string, error) {
	if len(spec.Servers) == 0 {
		return "", errors.New("contract: servers: none; the base path comes from the servers URL")
	}
	var base string
	for i, s := range spec.Servers {
		u, err := url.Parse(s.URL)
		if err != nil {
			return "", fmt.Errorf("contract: servers[%d]: %w", i, err)
		}
		if strings.ContainsAny(u.Path, "{}") {
			return "", fmt.Errorf("contract: servers[%d] %s: a variable in the base path", i, s.URL)
		}
		p := strings.TrimRight(u.Path, "/")
		if i > 0 && p != base {
			return "", fmt.Errorf("contract: servers disagree on the base path: %q and %q", base, p)
		}
		base = p
	}
	return base, nil
}

package conform

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/contract"
)

// CheckInfo names a check and says in one sentence what it catches.
type CheckInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Checks is the one table of checks: -checks, the report and the JUnit
// names come from it. The first ten keep Schemathesis's names, for the same
// meaning; the rest are this contract's own.
var Checks = []CheckInfo{
	{"not_a_server_error", "No request, however malformed, is answered 5xx."},
	{contract.StatusCode, "Every status is one the contract documents for the operation (404/405 off the operations)."},
	{contract.ContentType, "Every response's Content-Type is one the contract documents for its status."},
	{contract.ResponseHeaders, "Every response header the contract declares is present when required and valid against its schema."},
	{contract.ResponseSchema, "Every response body is valid against the contract's schema for its status."},
	{"negative_data_rejection", "A request that breaks exactly one rule of the contract is answered 400."},
	{"positive_data_acceptance", "A valid request, with values at every bound, is accepted, and a created pet is stored as sent."},
	{"ignored_auth", "No key, another scheme or an unknown key is answered 401; a valid key (scheme in any case) is accepted."},
	{"use_after_create", "A created pet is readable at its Location and by its id, equal to the 201 body, and listed under its status."},
	{"unsupported_method", "A known path with a method it does not support is answered 405 with an Allow header listing those it does."},
	{"unknown_path", "A path that names no resource is answered 404."},
	{contract.ErrorBody, "Every 4xx and 5xx body is an Error whose status equals the HTTP status."},
	{"auth_before_validation", "An unauthenticated request is answered 401 even when it is also invalid."},
	{"default_status", "A member left out of a create takes the default the contract declares."},
	{"pagination", "Following Link rel=\"next\" visits every pet once, with pages no longer than limit, filtered and not."},
	{"ordering", "Listings are in ascending id order, across pages."},
	{"deprecation", "A deprecated operation's answers carry Deprecation and the Sunset and Link the contract declares."},
	{"refused_write", "A refused create (invalid or unauthenticated) stores nothing."},
	{"unique_ids", "Concurrent creates get distinct ids."},
	{"idempotent_replay", "A create retried with its Idempotency-Key gets the first answer again (201, same body and Location, Idempotent-Replayed: true) and stores nothing; the key with another pet is 422."},
}

// A phase sends one group of cases; checks names those it judges beyond
// the ones that judge every response.
type phase struct {
	name   string
	checks []string
	run    func(context.Context) error
}

func (r *run) phases() []phase {
	return []phase{
		{"auth", []string{"ignored_auth", "auth_before_validation", "negative_data_rejection", "refused_write"}, r.bracket(r.authCases, r.negativeCases)},
		{"positive", []string{"positive_data_acceptance", "default_status"}, r.positiveCases},
		{"state", []string{"use_after_create", "default_status", "pagination", "ordering", "unique_ids", "idempotent_replay"}, r.stateCases},
		{"protocol", []string{"unsupported_method", "unknown_path"}, r.protocolCases},
	}
}

// everyResponse are the checks that judge every response, whatever sent it.
var everyResponse = []string{"not_a_server_error", contract.StatusCode, contract.ContentType, contract.ResponseHeaders, contract.ResponseSchema, contract.ErrorBody, "deprecation"}

// wants reports whether p judges a check the run has: with -checks naming
// only some, the phases of others send nothing.
func (r *run) wants(p phase) bool {
	for _, c := range append(p.checks, everyResponse...) {
		if r.enabled[c] {
			return true
		}
	}
	return false
}

// preflight makes sure the target answers and takes the key, with the first
// operation that needs no parameter.
func (r *run) preflight(ctx context.Context) error {
	for _, op := range r.ops {
		if op.method != http.MethodGet || len(op.inPath) > 0 {
			continue
		}
		x, err := r.send(ctx, request{method: op.method, target: op.path})
		if err != nil {
			return fmt.Errorf("target unreachable: %v", err)
		}
		if x.status == 0 { // send turned the transport's error into a case
			return fmt.Errorf("target unreachable: %s", strings.TrimPrefix(string(x.body), "no answer: "))
		}
		if x.status == http.StatusUnauthorized || x.status == http.StatusForbidden {
			return fmt.Errorf("the target refused the key (%s %s answered %d)", op.method, op.path, x.status)
		}
		if x.status == http.StatusNotFound { // the likeliest cause: BASE_URL lacks the base path
			return fmt.Errorf("%s %s answered 404: is %s the API's base address (e.g. ending in /v1)?", op.method, x.req.URL.Path, r.base)
		}
		return nil
	}
	return nil
}

// expect records a case of check: x, the answer, must satisfy ok.
func (r *run) expect(check string, x *exchange, ok bool, want string) {
	var f *Failure
	if !ok {
		f = r.fail(x, want, "")
	}
	r.record(check, x.op, f)
}

// ---- requests derived from the spec

// target fills the path template of op with values.
func (op *operation) target(values map[string]string, query string) string {
	path := op.path
	for name, v := range values {
		path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(v))
	}
	if query != "" {
		path += "?" + query
	}
	return path
}

var jsonHeader = http.Header{"Content-Type": {"application/json"}}

// validRequest is a request op accepts: path parameters from ids (a pet
// that exists where one does), a body with every required member.
func (r *run) validRequest(op *operation, id string) request {
	req := request{method: op.method, target: op.target(r.pathValues(op, id), "")}
	if op.body != nil {
		req.header = jsonHeader.Clone()
		req.body = mustJSON(r.baseBody(op.body))
	}
	return req
}

func (r *run) pathValues(op *operation, id string) map[string]string {
	values := map[string]string{}
	for _, p := range op.inPath {
		values[p.Name] = id
	}
	return values
}

// baseBody is a valid body of schema s with its required members only; a
// string member without an enum takes a name unique to this run.
func (r *run) baseBody(s *openapi3.Schema) map[string]any {
	return r.baseBodyNamed(s, "")
}

// baseBodyNamed is baseBody with name, when not empty, for its string
// members, and the first valid value for the others: the same body for the
// same name.
func (r *run) baseBodyNamed(s *openapi3.Schema, name string) map[string]any {
	body := map[string]any{}
	for _, member := range s.Required {
		ref := s.Properties[member]
		if ref == nil || ref.Value == nil {
			continue
		}
		ps := flat(ref.Value)
		if isType(ps, "string") && len(ps.Enum) == 0 && stringOK(ps, "conform") {
			if name != "" && stringOK(ps, name) {
				body[member] = name
			} else {
				body[member] = r.name("conform")
			}
			continue
		}
		if vs := r.valid(ps); len(vs) > 0 {
			if name != "" {
				body[member] = vs[0].json // the same body for the same name
			} else {
				body[member] = vs[len(vs)-1].json
			}
		}
	}
	return body
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// with returns a copy of body with member name set to v (absent when v is
// the absent marker).
func with(body map[string]any, name string, v any) map[string]any {
	c := maps.Clone(body)
	if v == absent {
		delete(c, name)
	} else {
		c[name] = v
	}
	return c
}

var absent = &struct{}{}

// kase is one derived request and what it is meant to show.
type kase struct {
	label string
	req   request
}

// negatives derives the requests that break exactly one rule of op each.
func (r *run) negatives(op *operation, id string) []kase {
	var ks []kase
	base := r.validRequest(op, id)
	pathValues := r.pathValues(op, id)
	for _, p := range op.inPath {
		for _, v := range invalid(p.Schema.Value, false) {
			vals := maps.Clone(pathValues)
			vals[p.Name] = v.text
			ks = append(ks, kase{fmt.Sprintf("path %s: %s", p.Name, v.label), request{method: op.method, target: op.target(vals, ""), header: base.header, body: base.body}})
		}
	}
	withQuery := func(label, query string) {
		ks = append(ks, kase{label, request{method: op.method, target: op.target(pathValues, query), header: base.header, body: base.body}})
	}
	for _, p := range op.query {
		for _, v := range invalid(p.Schema.Value, false) {
			withQuery(fmt.Sprintf("query %s: %s", p.Name, v.label), url.QueryEscape(p.Name)+"="+url.QueryEscape(v.text))
		}
		if vs := r.valid(p.Schema.Value); len(vs) > 0 {
			q := url.QueryEscape(p.Name) + "=" + url.QueryEscape(vs[0].text)
			withQuery(fmt.Sprintf("query %s: given twice", p.Name), q+"&"+q)
			withQuery(fmt.Sprintf("query %s: not valid percent-encoding", p.Name), url.QueryEscape(p.Name)+"=%zz")
			if ps := flat(p.Schema.Value); !isType(ps, "string") || !stringOK(ps, "") || len(ps.Enum) > 0 && !slices.Contains(ps.Enum, any("")) {
				withQuery(fmt.Sprintf("query %s: empty", p.Name), url.QueryEscape(p.Name)+"=")
			}
		}
	}
	withQuery("query: unknown parameter", "conformUnknown=1")
	for _, p := range op.header {
		withHeader := func(label string, values ...string) {
			h := cloneWith(base.header, p.Name, "")
			h[http.CanonicalHeaderKey(p.Name)] = values
			ks = append(ks, kase{fmt.Sprintf("header %s: %s", p.Name, label), request{method: op.method, target: base.target, header: h, body: base.body}})
		}
		ps := flat(p.Schema.Value)
		for _, v := range invalid(p.Schema.Value, false) {
			if v.text != "" && headerSendable(v.text) { // "" is the empty case below
				withHeader(v.label, v.text)
			}
		}
		if vs := r.valid(p.Schema.Value); len(vs) > 0 {
			withHeader("given twice", vs[0].text, vs[0].text)
		}
		if !isType(ps, "string") || !stringOK(ps, "") || len(ps.Enum) > 0 && !slices.Contains(ps.Enum, any("")) {
			withHeader("empty", "")
		}
	}

	if op.body == nil {
		ks = append(ks, kase{"a body where none is taken", request{method: op.method, target: base.target, header: jsonHeader, body: []byte("{}")}})
		return ks
	}
	body := r.baseBody(op.body)
	withBody := func(label string, b []byte, header http.Header) {
		ks = append(ks, kase{label, request{method: op.method, target: base.target, header: header, body: b}})
	}
	for _, name := range sortedKeys(op.body.Properties) {
		ref := op.body.Properties[name]
		if ref.Value == nil {
			continue
		}
		for _, v := range invalid(ref.Value, true) {
			withBody(fmt.Sprintf("body %s: %s", name, v.label), mustJSON(with(body, name, v.json)), jsonHeader)
		}
	}
	for _, name := range op.body.Required {
		withBody(fmt.Sprintf("body %s: required, missing", name), mustJSON(with(body, name, absent)), jsonHeader)
	}
	if ap := op.body.AdditionalProperties.Has; ap != nil && !*ap {
		withBody("body: unknown member", mustJSON(with(body, "conformUnknown", 1)), jsonHeader)
		if op.created != nil {
			for _, name := range sortedKeys(op.created.Properties) {
				if _, ok := op.body.Properties[name]; !ok {
					if vs := r.valid(op.created.Properties[name].Value); len(vs) > 0 {
						withBody(fmt.Sprintf("body: %s, which the service assigns", name), mustJSON(with(body, name, vs[0].json)), jsonHeader)
					}
				}
			}
		}
	}
	valid := mustJSON(body)
	for _, raw := range []struct{ label, body string }{
		{"body: not an object (array)", "[]"},
		{"body: not an object (string)", `"pet"`},
		{"body: not an object (null)", "null"},
		{"body: malformed JSON", string(valid[:len(valid)-1])},
		{"body: trailing data", string(valid) + " {}"},
		{"body: duplicate member", `{"` + op.body.Required[0] + `":1,` + string(valid[1:])},
		{"body: empty", ""},
	} {
		withBody(raw.label, []byte(raw.body), jsonHeader)
	}
	withBody("Content-Type: text/plain", valid, http.Header{"Content-Type": {"text/plain"}})
	withBody("Content-Type: charset latin1", valid, http.Header{"Content-Type": {"application/json; charset=latin1"}})
	withBody("Content-Type: unknown parameter", valid, http.Header{"Content-Type": {"application/json; conform=1"}})
	withBody("Content-Type: given twice", valid, http.Header{"Content-Type": {"application/json", "application/json"}})
	withBody("Content-Type: a list", valid, http.Header{"Content-Type": {"application/json, text/plain"}})
	withBody("Content-Type: missing", valid, http.Header{})
	return ks
}

func sortedKeys[V any](m map[string]V) []string {
	keys := slices.Collect(maps.Keys(m))
	slices.Sort(keys)
	return keys
}

// ---- the phases

// refused collects the names sent in creates that must be refused, for
// refused_write.
type refused struct{ names map[string]bool }

func (f *refused) note(req request) {
	var m map[string]any
	if json.Unmarshal(req.body, &m) == nil {
		for _, v := range m {
			if s, ok := v.(string); ok {
				f.names[s] = true
			}
		}
	}
}

// bracket runs the phases that send refused creates between two creates of
// its own, then walks the pets between the two: none may be one of the
// refused (refused_write).
func (r *run) bracket(phases ...func(context.Context, *refused) error) func(context.Context) error {
	return func(ctx context.Context) error {
		create := r.createOp()
		if create == nil {
			for _, p := range phases {
				if err := p(ctx, &refused{names: map[string]bool{}}); err != nil {
					return err
				}
			}
			return nil
		}
		first, err := r.createRaw(ctx, create, nil)
		if err != nil {
			return err
		}
		f := &refused{names: map[string]bool{}}
		for _, p := range phases {
			if err := p(ctx, f); err != nil {
				return err
			}
		}
		last, err := r.createRaw(ctx, create, nil)
		if err != nil {
			return err
		}
		if first == nil || last == nil {
			return nil
		}
		return r.checkNoTrace(ctx, first, last, f)
	}
}

// createOp is the operation that creates (answers 201), if any.
func (r *run) createOp() *operation {
	for _, op := range r.ops {
		if op.created != nil && op.body != nil {
			return op
		}
	}
	return nil
}

// listOp is the listing operation: a GET without path parameters whose 200
// is an array.
func (r *run) listOp() *operation {
	for _, op := range r.ops {
		if op.method != http.MethodGet || len(op.inPath) > 0 {
			continue
		}
		if ref := op.op.Responses.Status(http.StatusOK); ref != nil && ref.Value != nil {
			if mt := ref.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil && mt.Schema.Value != nil && isType(mt.Schema.Value, "array") {
				return op
			}
		}
	}
	return nil
}

// createRaw creates a pet with a valid body (members from extra added) and
// returns it decoded, or nil when the target did not create it (a failure
// of positive_data_acceptance).
func (r *run) createRaw(ctx context.Context, op *operation, extra map[string]any) (map[string]any, error) {
	body := r.baseBody(op.body)
	maps.Copy(body, extra)
	x, err := r.send(ctx, request{method: op.method, target: op.path, header: jsonHeader, body: mustJSON(body)})
	if err != nil {
		return nil, err
	}
	pet, ok := decodeObject(x.body)
	ok = ok && x.status == http.StatusCreated
	r.expect("positive_data_acceptance", x, ok, "201 and the created pet")
	if !ok {
		return nil, nil
	}
	return pet, nil
}

func decodeObject(b []byte) (map[string]any, bool) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

func idOf(pet map[string]any) (int64, bool) {
	n, ok := pet["id"].(json.Number)
	if !ok {
		return 0, false
	}
	id, err := n.Int64()
	return id, err == nil
}

// checkNoTrace walks the pets created after first up to last: none may be
// one the target refused.
func (r *run) checkNoTrace(ctx context.Context, first, last map[string]any, f *refused) error {
	list := r.listOp()
	from, ok1 := idOf(first)
	to, ok2 := idOf(last)
	if list == nil || !ok1 || !ok2 {
		return nil
	}
	for after := from; after < to; {
		x, err := r.send(ctx, request{method: http.MethodGet, target: list.target(nil, fmt.Sprintf("after=%d&limit=100", after))})
		if err != nil {
			return err
		}
		var page []map[string]any
		if x.status != http.StatusOK || json.Unmarshal(x.body, &page) != nil || len(page) == 0 {
			return nil // judged by the other checks
		}
		var stored []string
		for _, p := range page {
			id, _ := idOf(numbered(p))
			if id >= to {
				break
			}
			if name, _ := p["name"].(string); f.names[name] {
				stored = append(stored, fmt.Sprintf("pet %d %q", id, name))
			}
		}
		r.expect("refused_write", x, len(stored) == 0, "no pet from a refused create between the pets before and after them")
		next, _ := idOf(numbered(page[len(page)-1]))
		if next <= after {
			return nil
		}
		after = next
	}
	return nil
}

// numbered re-decodes a pet with its numbers exact.
func numbered(p map[string]any) map[string]any {
	m, _ := decodeObject(mustJSON(p))
	return m
}

func (r *run) authCases(ctx context.Context, f *refused) error {
	bogus := "psk_" + strings.Repeat("A", 43)
	for _, op := range r.ops {
		for _, variant := range []struct {
			label, header string
			want          bool // accepted
		}{
			{"no Authorization", "", false},
			{"Basic scheme", "Basic Y29uZm9ybTpjb25mb3Jt", false},
			{"unknown key", "Bearer " + bogus, false},
			{"empty bearer", "Bearer ", false},
			{"scheme in lower case", "bearer " + r.cfg.Key, true},
		} {
			req := r.validRequest(op, "1")
			req.noKey = variant.header == ""
			if variant.header != "" {
				req.header = cloneWith(req.header, "Authorization", variant.header)
			}
			if !variant.want && op.body != nil {
				f.note(req)
			}
			x, err := r.send(ctx, req)
			if err != nil {
				return err
			}
			if variant.want {
				r.expect("ignored_auth", x, x.status != http.StatusUnauthorized && x.status < 500, variant.label+": accepted (not 401)")
			} else {
				r.expect("ignored_auth", x, x.status == http.StatusUnauthorized, variant.label+": 401")
			}
		}
		// Invalid and unauthenticated: 401 wins.
		for _, k := range r.negatives(op, "1")[:1] {
			k.req.noKey = true
			if op.body != nil {
				f.note(k.req)
			}
			x, err := r.send(ctx, k.req)
			if err != nil {
				return err
			}
			r.expect("auth_before_validation", x, x.status == http.StatusUnauthorized, "401 for an unauthenticated request that is also invalid ("+k.label+")")
		}
	}
	return nil
}

func cloneWith(h http.Header, name, value string) http.Header {
	c := h.Clone()
	if c == nil {
		c = http.Header{}
	}
	c.Set(name, value)
	return c
}

func (r *run) negativeCases(ctx context.Context, f *refused) error {
	for _, op := range r.ops {
		for _, k := range r.negatives(op, "1") {
			if op.body != nil {
				f.note(k.req)
			}
			x, err := r.send(ctx, k.req)
			if err != nil {
				return err
			}
			r.expect("negative_data_rejection", x, x.status == http.StatusBadRequest, "400 for "+k.label)
		}
	}
	return nil
}

func (r *run) positiveCases(ctx context.Context) error {
	for _, op := range r.ops {
		if err := r.positiveHeaders(ctx, op); err != nil {
			return err
		}
		if op.body != nil {
			if err := r.positiveBodies(ctx, op); err != nil {
				return err
			}
			continue
		}
		var cases []kase
		for _, p := range op.query {
			for _, v := range r.valid(p.Schema.Value) {
				cases = append(cases, kase{fmt.Sprintf("query %s: %s", p.Name, v.label), request{method: op.method, target: op.target(nil, url.QueryEscape(p.Name)+"="+url.QueryEscape(v.text))}})
			}
		}
		for _, p := range op.inPath {
			for _, v := range r.valid(p.Schema.Value) {
				cases = append(cases, kase{fmt.Sprintf("path %s: %s", p.Name, v.label), request{method: op.method, target: op.target(map[string]string{p.Name: v.text}, "")}})
			}
		}
		if len(op.inPath) == 0 {
			cases = append(cases, kase{"no parameters", request{method: op.method, target: op.path}})
		}
		for _, k := range cases {
			x, err := r.send(ctx, k.req)
			if err != nil {
				return err
			}
			// A valid id may name no pet: 404 is an answer, 400 is not.
			ok := x.status/100 == 2 || (len(op.inPath) > 0 && x.status == http.StatusNotFound)
			r.expect("positive_data_acceptance", x, ok, "2xx for "+k.label)
		}
	}
	return nil
}

// positiveHeaders sends a valid request with each valid value of each header
// parameter. The body of a create is the same for the same header value
// (its names derived from the value), so that a value met again, in another
// run against the same target, is a retry of the same request, not another
// request under a key already used (Idempotency-Key).
func (r *run) positiveHeaders(ctx context.Context, op *operation) error {
	for _, p := range op.header {
		for _, v := range r.valid(p.Schema.Value) {
			if !headerSendable(v.text) {
				continue
			}
			req := r.validRequest(op, "1")
			if op.body != nil {
				sum := sha256.Sum256([]byte(p.Name + "\x00" + v.text))
				req.body = mustJSON(r.baseBodyNamed(op.body, "conform-"+hex.EncodeToString(sum[:6])))
			}
			req.header = cloneWith(req.header, p.Name, v.text)
			x, err := r.send(ctx, req)
			if err != nil {
				return err
			}
			// A valid id may name no pet: 404 is an answer, 400 is not.
			ok := x.status/100 == 2 || (len(op.inPath) > 0 && x.status == http.StatusNotFound)
			r.expect("positive_data_acceptance", x, ok, fmt.Sprintf("2xx for header %s: %s", p.Name, v.label))
		}
	}
	return nil
}

// positiveBodies creates a pet for each valid value of each member, and
// checks that the pet is stored as sent, with defaults for what was left
// out.
func (r *run) positiveBodies(ctx context.Context, op *operation) error {
	base := r.baseBody(op.body)
	bodies := []map[string]any{base}
	for _, name := range sortedKeys(op.body.Properties) {
		for _, v := range r.valid(op.body.Properties[name].Value) {
			bodies = append(bodies, with(base, name, v.json))
		}
	}
	for _, body := range bodies {
		x, err := r.send(ctx, request{method: op.method, target: op.path, header: jsonHeader, body: mustJSON(body)})
		if err != nil {
			return err
		}
		pet, ok := decodeObject(x.body)
		if !ok || x.status != http.StatusCreated {
			r.expect("positive_data_acceptance", x, false, "201 for a valid body")
			continue
		}
		r.expect("positive_data_acceptance", x, sameMembers(body, pet), "201 with the members sent, as sent")
		for _, name := range sortedKeys(op.body.Properties) {
			s := flat(op.body.Properties[name].Value)
			if _, sent := body[name]; sent || s == nil || s.Default == nil {
				continue
			}
			r.expect("default_status", x, fmt.Sprint(pet[name]) == fmt.Sprint(s.Default), fmt.Sprintf("%s left out: %v, the contract's default", name, s.Default))
		}
	}
	return nil
}

// sameMembers reports whether every member of sent is in got, equal.
func sameMembers(sent, got map[string]any) bool {
	s, _ := decodeObject(mustJSON(sent))
	for k, v := range s {
		if !reflect.DeepEqual(v, got[k]) {
			return false
		}
	}
	return true
}

var nextRE = regexp.MustCompile(`<([^>]*)>\s*;\s*rel="?next"?`)

// nextLink returns the target of a Link rel="next", or "".
func nextLink(h http.Header) string {
	for _, v := range h.Values("Link") {
		if m := nextRE.FindStringSubmatch(v); m != nil {
			return m[1]
		}
	}
	return ""
}

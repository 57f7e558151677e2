package cases

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/conform/wire"
)

// The cases each schema, parameter and header of the spec gives: a value
// that breaks one rule of its schema is refused 400; every bound, enum
// value and form its schema allows is taken.

// SchemaCases sends the derived cases of every operation.
func SchemaCases(ctx context.Context, t T) error {
	for _, op := range t.Operations() {
		if err := Send(ctx, t, SchemaNegatives(t, op)); err != nil {
			return err
		}
		if err := Send(ctx, t, schemaPositives(t, op)); err != nil {
			return err
		}
		if op.Body != nil {
			if err := positiveBodies(ctx, t, op); err != nil {
				return err
			}
		}
	}
	return nil
}

// SchemaNegatives are the requests that break exactly one rule of a
// schema of op each.
func SchemaNegatives(t T, op *Operation) []Case {
	base := t.Requests().ValidRequest(op, "1")
	ks := pathNegatives(t, op, base)
	ks = append(ks, queryNegatives(t, op, base)...)
	ks = append(ks, headerNegatives(t, op, base)...)
	return append(ks, bodyNegatives(t, op)...)
}

func pathNegatives(t T, op *Operation, base wire.Request) []Case {
	var ks []Case
	for _, p := range op.InPath {
		for _, v := range Invalid(p.Schema.Value, false) {
			vals := t.Requests().PathValues(op, "1")
			vals[p.Name] = v.Text
			req := base
			req.Target = op.Target(vals, "")
			ks = append(ks, Negative(fmt.Sprintf("path %s: %s", p.Name, v.Label), req))
		}
	}
	return ks
}

func queryNegatives(t T, op *Operation, base wire.Request) []Case {
	var ks []Case
	withQuery := func(label, query string) {
		req := base
		req.Target = op.Target(t.Requests().PathValues(op, "1"), query)
		ks = append(ks, Negative(label, req))
	}
	for _, p := range op.Query {
		for _, v := range Invalid(p.Schema.Value, false) {
			withQuery(fmt.Sprintf("query %s: %s", p.Name, v.Label), url.QueryEscape(p.Name)+"="+url.QueryEscape(v.Text))
		}
		if ps := Flat(p.Schema.Value); !emptyOK(ps) {
			withQuery(fmt.Sprintf("query %s: empty", p.Name), url.QueryEscape(p.Name)+"=")
		}
	}
	return ks
}

// emptyOK reports whether s accepts the empty string.
func emptyOK(s *openapi3.Schema) bool {
	return IsType(s, "string") && StringOK(s, "") && (len(s.Enum) == 0 || slices.Contains(s.Enum, any("")))
}

func headerNegatives(t T, op *Operation, base wire.Request) []Case {
	var ks []Case
	for _, p := range op.Header {
		headerCase := func(label string, values ...string) {
			req := WithHeader(base, p.Name, values...)
			if op.Body != nil {
				req.Body = MustJSON(t.Requests().BaseBody(op.Body))
			}
			ks = append(ks, Negative(fmt.Sprintf("header %s: %s", p.Name, label), req))
		}
		for _, v := range Invalid(p.Schema.Value, false) {
			if v.Text != "" && HeaderSendable(v.Text) { // "" is the empty case below
				headerCase(v.Label, v.Text)
			}
		}
		if vs := t.Valid(p.Schema.Value); len(vs) > 0 {
			headerCase("given twice", vs[0].Text, vs[0].Text)
		}
		if !emptyOK(Flat(p.Schema.Value)) {
			headerCase("empty", "")
		}
	}
	return ks
}

func bodyNegatives(t T, op *Operation) []Case {
	if op.Body == nil {
		return nil
	}
	var ks []Case
	body := t.Requests().BaseBody(op.Body)
	target := t.Requests().ValidRequest(op, "1").Target // a pet where op names one, never the path's template
	create := func(label string, b map[string]any) {
		ks = append(ks, Negative(label, wire.Request{Method: op.Method, Target: target, Header: op.BodyHeader(), Body: MustJSON(b)}))
	}
	for _, name := range sortedKeys(op.Body.Properties) {
		if ref := op.Body.Properties[name]; ref.Value != nil {
			for _, v := range Invalid(ref.Value, true) {
				create(fmt.Sprintf("body %s: %s", name, v.Label), With(body, name, v.JSON))
			}
		}
	}
	for _, name := range op.Body.Required {
		create(fmt.Sprintf("body %s: required, missing", name), With(body, name, Absent))
	}
	return ks
}

// schemaPositives are valid requests to op, one a valid value of each
// parameter.
func schemaPositives(t T, op *Operation) []Case {
	var ks []Case
	want := t.AcceptedBy(op)
	for _, p := range op.Query {
		for _, v := range t.Valid(p.Schema.Value) {
			req := t.Requests().ValidRequest(op, "1")
			req.Target = op.Target(t.Requests().PathValues(op, "1"), url.QueryEscape(p.Name)+"="+url.QueryEscape(v.Text))
			ks = append(ks, Positive(fmt.Sprintf("query %s: %s", p.Name, v.Label), req, want))
		}
	}
	for _, p := range op.InPath {
		for _, v := range t.Valid(p.Schema.Value) {
			req := t.Requests().ValidRequest(op, "1")
			req.Target = op.Target(map[string]string{p.Name: v.Text}, "")
			ks = append(ks, Positive(fmt.Sprintf("path %s: %s", p.Name, v.Label), req, want))
		}
	}
	if len(op.InPath) == 0 && op.Body == nil {
		ks = append(ks, Positive("no parameters", wire.Request{Method: op.Method, Target: op.Path}, want))
	}
	return append(ks, headerPositives(t, op)...)
}

// headerPositives sends a valid request with each valid value of each
// header parameter. The body of a create is the same for the same header
// value (its names derived from the value), so that a value met again, in
// another run against the same target, is a retry of the same request, not
// another request under a key already used (Idempotency-Key).
func headerPositives(t T, op *Operation) []Case {
	var ks []Case
	for _, p := range op.Header {
		for _, v := range t.Valid(p.Schema.Value) {
			if !HeaderSendable(v.Text) {
				continue
			}
			req := t.Requests().ValidRequest(op, "1")
			if op.Body != nil {
				sum := sha256.Sum256([]byte(p.Name + "\x00" + v.Text))
				req.Body = MustJSON(t.Requests().BaseBodyNamed(op.Body, "conform-"+hex.EncodeToString(sum[:6])))
			}
			req.Header = CloneWith(req.Header, p.Name, v.Text)
			ks = append(ks, Positive(fmt.Sprintf("header %s: %s", p.Name, v.Label), req, t.AcceptedBy(op)))
		}
	}
	return ks
}

// bodyPositives are positiveBodies' bodies for op, an operation other
// than the create (a PUT, say): each sent to its valid target (the spare
// where it names a pet), wanting what the spec documents for it.
func bodyPositives(t T, op *Operation) []Case {
	var ks []Case
	base := t.Requests().BaseBody(op.Body)
	for _, name := range sortedKeys(op.Body.Properties) {
		for _, v := range t.Valid(op.Body.Properties[name].Value) {
			b := With(base, name, v.JSON)
			if _, named := op.Body.Properties[t.NameMember()]; named && name != t.NameMember() {
				b[t.NameMember()] = t.Name("conform")
			}
			req := t.Requests().ValidRequest(op, "1")
			req.Body = MustJSON(b)
			ks = append(ks, Positive(fmt.Sprintf("body %s: %s", name, v.Label), req, t.AcceptedBy(op)))
		}
	}
	return ks
}

// positiveBodies creates a pet for each valid value of each member: each
// 201; the checker judges that the pet is stored as sent and takes the
// defaults of what was left out (default_status).
func positiveBodies(ctx context.Context, t T, op *Operation) error {
	if !t.JudgesEvery() && !t.Enabled("positive_data_acceptance") && !t.Enabled("default_status") && !t.Enabled("stored_as_sent") {
		return nil // no check of the run judges them
	}
	if op != t.Requests().Roles.Create {
		return Send(ctx, t, bodyPositives(t, op)) // not a create: no 201 to want
	}
	base := t.Requests().BaseBody(op.Body)
	bodies := []map[string]any{base}
	for _, name := range sortedKeys(op.Body.Properties) {
		for _, v := range t.Valid(op.Body.Properties[name].Value) {
			b := With(base, name, v.JSON)
			if name != t.NameMember() {
				b[t.NameMember()] = t.Name("conform")
			}
			bodies = append(bodies, b)
		}
	}
	for _, body := range bodies {
		x, err := t.Send(ctx, wire.Request{Method: op.Method, Target: op.Path, Header: op.BodyHeader(), Body: MustJSON(body)})
		if err != nil {
			return err
		}
		// The checker judges what the 201 shows: every member sent, and
		// the default of each left out (default_status).
		t.Expect("positive_data_acceptance", x, x.Status == http.StatusCreated, "201 for a valid body")
	}
	return nil
}

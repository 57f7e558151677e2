package conform

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/conform/cases"
)

// The cases each schema, parameter and header of the spec gives: a value
// that breaks one rule of its schema is refused 400; every bound, enum
// value and form its schema allows is taken.

// schemaCases sends the derived cases of every operation.
func (r *run) schemaCases(ctx context.Context) error {
	for _, op := range r.ops {
		if err := r.sendCases(ctx, r.schemaNegatives(op)); err != nil {
			return err
		}
		if err := r.sendCases(ctx, r.schemaPositives(op)); err != nil {
			return err
		}
		if op.Body != nil {
			if err := r.positiveBodies(ctx, op); err != nil {
				return err
			}
		}
	}
	return nil
}

// schemaNegatives are the requests that break exactly one rule of a
// schema of op each.
func (r *run) schemaNegatives(op *operation) []kase {
	base := r.reqs.ValidRequest(op, "1")
	ks := r.pathNegatives(op, base)
	ks = append(ks, r.queryNegatives(op, base)...)
	ks = append(ks, r.headerNegatives(op, base)...)
	return append(ks, r.bodyNegatives(op)...)
}

func (r *run) pathNegatives(op *operation, base request) []kase {
	var ks []kase
	for _, p := range op.InPath {
		for _, v := range cases.Invalid(p.Schema.Value, false) {
			vals := r.reqs.PathValues(op, "1")
			vals[p.Name] = v.Text
			req := base
			req.Target = op.Target(vals, "")
			ks = append(ks, negCase(fmt.Sprintf("path %s: %s", p.Name, v.Label), req))
		}
	}
	return ks
}

func (r *run) queryNegatives(op *operation, base request) []kase {
	var ks []kase
	withQuery := func(label, query string) {
		req := base
		req.Target = op.Target(r.reqs.PathValues(op, "1"), query)
		ks = append(ks, negCase(label, req))
	}
	for _, p := range op.Query {
		for _, v := range cases.Invalid(p.Schema.Value, false) {
			withQuery(fmt.Sprintf("query %s: %s", p.Name, v.Label), url.QueryEscape(p.Name)+"="+url.QueryEscape(v.Text))
		}
		if ps := cases.Flat(p.Schema.Value); !emptyOK(ps) {
			withQuery(fmt.Sprintf("query %s: empty", p.Name), url.QueryEscape(p.Name)+"=")
		}
	}
	return ks
}

// emptyOK reports whether s accepts the empty string.
func emptyOK(s *openapi3.Schema) bool {
	return cases.IsType(s, "string") && cases.StringOK(s, "") && (len(s.Enum) == 0 || slices.Contains(s.Enum, any("")))
}

func (r *run) headerNegatives(op *operation, base request) []kase {
	var ks []kase
	for _, p := range op.Header {
		headerCase := func(label string, values ...string) {
			req := withHeader(base, p.Name, values...)
			if op.Body != nil {
				req.Body = mustJSON(r.reqs.BaseBody(op.Body))
			}
			ks = append(ks, negCase(fmt.Sprintf("header %s: %s", p.Name, label), req))
		}
		for _, v := range cases.Invalid(p.Schema.Value, false) {
			if v.Text != "" && cases.HeaderSendable(v.Text) { // "" is the empty case below
				headerCase(v.Label, v.Text)
			}
		}
		if vs := r.valid(p.Schema.Value); len(vs) > 0 {
			headerCase("given twice", vs[0].Text, vs[0].Text)
		}
		if !emptyOK(cases.Flat(p.Schema.Value)) {
			headerCase("empty", "")
		}
	}
	return ks
}

func (r *run) bodyNegatives(op *operation) []kase {
	if op.Body == nil {
		return nil
	}
	var ks []kase
	body := r.reqs.BaseBody(op.Body)
	create := func(label string, b map[string]any) {
		ks = append(ks, negCase(label, request{Method: op.Method, Target: op.Path, Header: jsonHeader, Body: mustJSON(b)}))
	}
	for _, name := range sortedKeys(op.Body.Properties) {
		if ref := op.Body.Properties[name]; ref.Value != nil {
			for _, v := range cases.Invalid(ref.Value, true) {
				create(fmt.Sprintf("body %s: %s", name, v.Label), with(body, name, v.JSON))
			}
		}
	}
	for _, name := range op.Body.Required {
		create(fmt.Sprintf("body %s: required, missing", name), with(body, name, absent))
	}
	return ks
}

// schemaPositives are valid requests to op, one a valid value of each
// parameter.
func (r *run) schemaPositives(op *operation) []kase {
	var ks []kase
	want := r.acceptedBy(op)
	for _, p := range op.Query {
		for _, v := range r.valid(p.Schema.Value) {
			req := r.reqs.ValidRequest(op, "1")
			req.Target = op.Target(r.reqs.PathValues(op, "1"), url.QueryEscape(p.Name)+"="+url.QueryEscape(v.Text))
			ks = append(ks, posCase(fmt.Sprintf("query %s: %s", p.Name, v.Label), req, want))
		}
	}
	for _, p := range op.InPath {
		for _, v := range r.valid(p.Schema.Value) {
			req := r.reqs.ValidRequest(op, "1")
			req.Target = op.Target(map[string]string{p.Name: v.Text}, "")
			ks = append(ks, posCase(fmt.Sprintf("path %s: %s", p.Name, v.Label), req, want))
		}
	}
	if len(op.InPath) == 0 && op.Body == nil {
		ks = append(ks, posCase("no parameters", request{Method: op.Method, Target: op.Path}, want))
	}
	return append(ks, r.headerPositives(op)...)
}

// headerPositives sends a valid request with each valid value of each
// header parameter. The body of a create is the same for the same header
// value (its names derived from the value), so that a value met again, in
// another run against the same target, is a retry of the same request, not
// another request under a key already used (Idempotency-Key).
func (r *run) headerPositives(op *operation) []kase {
	var ks []kase
	for _, p := range op.Header {
		for _, v := range r.valid(p.Schema.Value) {
			if !cases.HeaderSendable(v.Text) {
				continue
			}
			req := r.reqs.ValidRequest(op, "1")
			if op.Body != nil {
				sum := sha256.Sum256([]byte(p.Name + "\x00" + v.Text))
				req.Body = mustJSON(r.reqs.BaseBodyNamed(op.Body, "conform-"+hex.EncodeToString(sum[:6])))
			}
			req.Header = cloneWith(req.Header, p.Name, v.Text)
			ks = append(ks, posCase(fmt.Sprintf("header %s: %s", p.Name, v.Label), req, r.acceptedBy(op)))
		}
	}
	return ks
}

// positiveBodies creates a pet for each valid value of each member, and
// checks that the pet takes the defaults for what was left out (the model
// checks it is stored as sent).
func (r *run) positiveBodies(ctx context.Context, op *operation) error {
	if !r.JudgesEvery() && !r.enabled["positive_data_acceptance"] && !r.enabled["default_status"] && !r.enabled["stored_as_sent"] {
		return nil // no check of the run judges them
	}
	base := r.reqs.BaseBody(op.Body)
	bodies := []map[string]any{base}
	for _, name := range sortedKeys(op.Body.Properties) {
		for _, v := range r.valid(op.Body.Properties[name].Value) {
			b := with(base, name, v.JSON)
			if name != r.nameMember() {
				b[r.nameMember()] = r.Name("conform")
			}
			bodies = append(bodies, b)
		}
	}
	for _, body := range bodies {
		x, err := r.Send(ctx, request{Method: op.Method, Target: op.Path, Header: jsonHeader, Body: mustJSON(body)})
		if err != nil {
			return err
		}
		pet, ok := decodeObject(x.Body)
		r.Expect("positive_data_acceptance", x, ok && x.Status == http.StatusCreated, "201 for a valid body")
		if !ok || x.Status != http.StatusCreated {
			continue
		}
		for _, name := range sortedKeys(op.Body.Properties) {
			s := cases.Flat(op.Body.Properties[name].Value)
			if _, sent := body[name]; sent || s == nil || s.Default == nil {
				continue
			}
			r.Expect("default_status", x, fmt.Sprint(pet[name]) == fmt.Sprint(s.Default), fmt.Sprintf("%s left out: %v, the contract's default", name, s.Default))
		}
	}
	return nil
}

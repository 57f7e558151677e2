package conform

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/petstore/petstore/internal/conform/wire"
)

// The cases of the sentences on what travels around the operations: a
// body's content coding, Accept, refusals answered before the body, and
// the forms of HTTP/1.1 itself.

// contentEncodingCases: a create whose body is not content-coded
// (identity) is taken; gzip, br and a list are refused, whether the body is
// plain (a server that ignores the header) or compressed (one that decodes
// it).
func contentEncodingCases(r *run) []kase {
	if r.roles.Create == nil {
		return nil
	}
	coded := func(enc string, body []byte) request {
		return r.reqs.CreateReq(body, http.Header{"Content-Encoding": {enc}})
	}
	pet := func() []byte { return mustJSON(r.reqs.NewPet("conform-ce", nil)) }
	ks := []kase{posCase("Content-Encoding: identity", coded("identity", pet()), created())}
	for _, enc := range []string{"gzip", "br", "identity, gzip"} {
		ks = append(ks, negCase("Content-Encoding: "+enc+", the body plain", coded(enc, pet())))
	}
	ks = append(ks, negCase("Content-Encoding: gzip, the body compressed", coded("gzip", gzipped(pet()))))
	return append(ks, authFirst("Content-Encoding: gzip", coded("gzip", gzipped(pet()))))
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

// notAcceptable is the answer to an Accept that admits no application/json.
func notAcceptable(label string, req request) kase {
	return kase{Label: label, Check: "negative_data_rejection", Req: req, Want: refused(http.StatusNotAcceptable, "not_acceptable")}
}

func acceptLabel(values []string) string {
	if len(values) == 1 && values[0] == "" {
		return "Accept: (empty)"
	}
	return "Accept: " + strings.Join(values, " | ")
}

// acceptCases: every Accept that admits application/json (the most
// specific matching range decides, and admits it unless q=0) is served;
// one that admits none is answered 406, on every operation and after
// authentication.
func acceptCases(r *run) []kase {
	var ks []kase
	if op := r.roles.List; op != nil {
		list := request{Method: op.Method, Target: op.Path}
		for _, v := range [][]string{
			{"*/*"}, {"application/*"}, {"application/json;q=0.5"}, {"application/json; charset=utf-8"},
			{`application/json; charset="UTF-8"`}, {"Application/JSON"}, {"text/html, application/json;q=0.001"},
			{"text/html;q=1, */*;q=0.1"}, {"text/html", "application/json"}, {""},
		} {
			ks = append(ks, posCase(acceptLabel(v), withHeader(list, "Accept", v...), accepted()))
		}
		for _, v := range []string{"application/xml", "application/json;q=0", "application/json;q=0, */*", "application/*;q=0, */*",
			"*/*;q=0", "application/json; charset=latin1", "application/json; version=2"} {
			ks = append(ks, notAcceptable(acceptLabel([]string{v}), withHeader(list, "Accept", v)))
		}
		ks = append(ks, authFirst("Accept: application/xml", withHeader(list, "Accept", "application/xml")))
	}
	if op := r.roles.Create; op != nil {
		ks = append(ks,
			posCase("Accept: application/*;q=0.2", withHeader(r.reqs.CreateReq(mustJSON(r.reqs.NewPet("conform-accept", nil)), nil), "Accept", "application/*;q=0.2"), created()),
			notAcceptable("Accept: application/xml", withHeader(r.reqs.CreateReq(mustJSON(r.reqs.NewPet("conform-accept", nil)), nil), "Accept", "application/xml")))
	}
	if op, id := r.roles.Get, r.firstID(); op != nil && id > 0 { // a pet that exists: 406, not 404
		ks = append(ks, notAcceptable("Accept: text/html", withHeader(request{Method: op.Method, Target: r.reqs.GetTarget(id)}, "Accept", "text/html")))
	}
	return ks
}

// acceptSyntaxCases: an Accept that does not parse is answered 400.
func acceptSyntaxCases(r *run) []kase {
	op := r.roles.List
	if op == nil {
		return nil
	}
	var ks []kase
	for _, v := range []string{"json", "*/json", "application/json;q=2"} {
		ks = append(ks, negCase(acceptLabel([]string{v})+", which does not parse", withHeader(request{Method: op.Method, Target: op.Path}, "Accept", v)))
	}
	return ks
}

// closes wants Connection: close: the server leaves the body unread, or
// answers before any operation.
func closes(x *exchange) string {
	if !x.Close {
		return "with Connection: close"
	}
	return ""
}

// heldDeclared is the length a request declares and never sends: under
// the 256 KiB net/http discards after an answer, so that a server that
// reads the body first waits for it.
const heldDeclared = 64 << 10

// atOnceCases: a create refused before its body is read (no key, no such
// path, a declared length over the limit) is answered at once, with
// Connection: close, without a byte of its body: with Expect: 100-continue
// instead of 100 Continue. A valid create with Expect: 100-continue, its
// body sent without waiting, is created.
func atOnceCases(r *run) []kase {
	op := r.roles.Create
	if op == nil {
		return nil
	}
	held := func(label string, req request, declared int64, expect bool, want outcome) kase {
		req.Body, req.Raw = nil, &wire.Raw{Hold: true}
		req.Header = cloneWith(req.Header, "Content-Length", strconv.FormatInt(declared, 10))
		if expect {
			req.Header.Set("Expect", "100-continue")
			label += ", Expect: 100-continue"
		}
		return kase{Label: label + ", the body held back", Check: "refusal_at_once", Req: req, Want: want.And(closes)}
	}
	noKey := r.reqs.CreateReq(nil, nil)
	noKey.NoKey = true
	unauthorized := refused(http.StatusUnauthorized, "unauthorized")
	ks := []kase{
		held("no key", noKey, heldDeclared, true, unauthorized),
		held("no key", noKey, heldDeclared, false, unauthorized),
		held("no such path", request{Method: op.Method, Target: "/conform-no-such-collection", Header: jsonHeader}, heldDeclared, true, refused(http.StatusNotFound, "not_found")),
	}
	if n := r.bounds.BodyMax; n > 0 {
		ks = append(ks, held(fmt.Sprintf("a declared length of %d bytes", n+1), r.reqs.CreateReq(nil, nil), n+1, true, refused(http.StatusRequestEntityTooLarge, "payload_too_large")))
	}
	valid := r.reqs.CreateReq(mustJSON(r.reqs.NewPet("conform-expect", nil)), http.Header{"Expect": {"100-continue"}})
	valid.Raw = &wire.Raw{}
	return append(ks, kase{Label: "a valid create, Expect: 100-continue, the body sent at once", Check: "refusal_at_once", Req: valid, Want: created()})
}

// beforeOperations is an answer given before any operation: status, an
// Error of code invalid_request, X-Request-Id and Connection: close.
func beforeOperations(status int) outcome { return beforeOperationsAs(status, "invalid_request") }

// beforeOperationsAs is beforeOperations with an Error of code code.
func beforeOperationsAs(status int, code string) outcome {
	return refused(status, code).And(func(x *exchange) string {
		if x.Header.Get("X-Request-Id") == "" {
			return "with X-Request-Id"
		}
		return closes(x)
	})
}

func framed(label string, req request, w wire.Raw, want outcome) kase {
	req.Raw = &w
	return kase{Label: label, Check: "http_framing", Req: req, Want: want}
}

// headSizeCases: a request whose line and headers are exactly the most the
// contract allows is served; one byte more, in a header or in the URL, is
// answered 431.
func headSizeCases(r *run) []kase {
	n, op := r.bounds.HeadMax, r.roles.List
	if n == 0 || op == nil {
		return nil
	}
	list := request{Method: op.Method, Target: op.Path}
	long := list
	long.Target += "?conform-pad=" + strings.Repeat("a", n)
	return []kase{
		framed(fmt.Sprintf("request line and headers of %d bytes, the most allowed", n), list, wire.Raw{Head: n}, accepted()),
		framed(fmt.Sprintf("request line and headers of %d bytes", n+1), list, wire.Raw{Head: n + 1}, beforeOperations(http.StatusRequestHeaderFieldsTooLarge)),
		framed(fmt.Sprintf("a request line of over %d bytes (a long query)", n), long, wire.Raw{}, beforeOperations(http.StatusRequestHeaderFieldsTooLarge)),
	}
}

// malformedCases: a request that is not HTTP/1.1 as the contract reads it
// is answered 400 before any operation, but a Transfer-Encoding other than
// chunked, 501 not_implemented (RFC 9112); HTTP/1.0 and a chunked body are
// HTTP/1.1 and served. (A repeated Host and a protocol version other than
// HTTP/1.x, 505, are not sent: curl cannot replay them.)
func malformedCases(r *run) []kase {
	var ks []kase
	bad := func(label string, req request, w wire.Raw) {
		ks = append(ks, framed(label, req, w, beforeOperations(http.StatusBadRequest)))
	}
	if op := r.roles.List; op != nil {
		list := request{Method: op.Method, Target: op.Path}
		query := "conform"
		if len(op.Query) > 0 {
			if vs := r.valid(op.Query[0].Schema.Value); len(vs) > 0 {
				query = url.QueryEscape(op.Query[0].Name) + "=" + url.QueryEscape(vs[0].Text)
			}
		}
		bad("a raw space in the query", list, wire.Raw{Target: op.Path + "?" + query + " " + query})
		bad("a header name with a space", list, wire.Raw{Fields: []string{"Conform Field: 1"}})
		bad("no Host", list, wire.Raw{NoHost: true})
		bad("Expect: 200-ok", withHeader(list, "Expect", "200-ok"), wire.Raw{})
		ks = append(ks, framed("HTTP/1.0", list, wire.Raw{Proto: "HTTP/1.0"}, accepted()))
	}
	if op, id := r.roles.Get, r.firstID(); op != nil && id > 0 {
		target := r.reqs.GetTarget(id)
		bad("%zz in the path", request{Method: op.Method, Target: target}, wire.Raw{Target: target[:strings.LastIndex(target, "/")+1] + "%zz"})
	}
	if op := r.roles.Create; op != nil {
		body := mustJSON(r.reqs.NewPet("conform-framing", nil))
		bad("Content-Length twice, differing", r.reqs.CreateReq(body, nil), wire.Raw{Fields: []string{
			"Content-Length: " + strconv.Itoa(len(body)), "Content-Length: " + strconv.Itoa(len(body)+1)}})
		ks = append(ks, framed("Transfer-Encoding: gzip", r.reqs.CreateReq(mustJSON(r.reqs.NewPet("conform-framing", nil)), http.Header{"Transfer-Encoding": {"gzip"}}), wire.Raw{},
			beforeOperationsAs(http.StatusNotImplemented, "not_implemented")))
		chunks := r.reqs.CreateReq(mustJSON(r.reqs.NewPet("conform-chunked", nil)), http.Header{"Transfer-Encoding": {"chunked"}})
		ks = append(ks, framed("a chunked body", chunks, wire.Raw{}, created()))
	}
	return ks
}

// withHeader is req with header name given values, and no others.
func withHeader(req request, name string, values ...string) request {
	req.Header = cloneWith(req.Header, name, values...)
	return req
}

package cases

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/petstore/petstore/internal/conform/judge"
	"github.com/petstore/petstore/internal/conform/wire"
)

// The cases of the sentences on what travels around the operations: a
// body's content coding, Accept, refusals answered before the body, and
// the forms of HTTP/1.1 itself.

// ContentEncoding: a create whose body is not content-coded
// (identity) is taken; gzip, br and a list are refused, whether the body is
// plain (a server that ignores the header) or compressed (one that decodes
// it).
func ContentEncoding(t T) []Case {
	reqs := t.Requests()
	if reqs.Roles.Create == nil {
		return nil
	}
	coded := func(enc string, body []byte) wire.Request {
		return reqs.CreateReq(body, http.Header{"Content-Encoding": {enc}})
	}
	pet := func() []byte { return MustJSON(reqs.NewPet("conform-ce", nil)) }
	ks := []Case{Positive("Content-Encoding: identity", coded("identity", pet()), Created())}
	for _, enc := range []string{"gzip", "br", "identity, gzip"} {
		ks = append(ks, Negative("Content-Encoding: "+enc+", the body plain", coded(enc, pet())))
	}
	ks = append(ks, Negative("Content-Encoding: gzip, the body compressed", coded("gzip", gzipped(pet()))))
	return append(ks, AuthFirst("Content-Encoding: gzip", coded("gzip", gzipped(pet()))))
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

// NotAcceptable is the answer to an Accept that admits no application/json.
func NotAcceptable(label string, req wire.Request) Case {
	return Case{Label: label, Check: "negative_data_rejection", Req: req, Want: Refused(http.StatusNotAcceptable, "not_acceptable")}
}

func acceptLabel(values []string) string {
	if len(values) == 1 && values[0] == "" {
		return "Accept: (empty)"
	}
	return "Accept: " + strings.Join(values, " | ")
}

// Accept: every Accept that admits application/json (the most
// specific matching range decides, and admits it unless q=0) is served;
// one that admits none is answered 406, on every operation and after
// authentication.
func Accept(t T) []Case {
	reqs := t.Requests()
	var ks []Case
	if op := reqs.Roles.List; op != nil {
		list := wire.Request{Method: op.Method, Target: op.Path}
		for _, v := range [][]string{
			{"*/*"}, {"application/*"}, {"application/json;q=0.5"}, {"application/json; charset=utf-8"},
			{`application/json; charset="UTF-8"`}, {"Application/JSON"}, {"text/html, application/json;q=0.001"},
			{"text/html;q=1, */*;q=0.1"}, {"text/html", "application/json"}, {""},
		} {
			ks = append(ks, Positive(acceptLabel(v), WithHeader(list, "Accept", v...), Accepted()))
		}
		for _, v := range []string{"application/xml", "application/json;q=0", "application/json;q=0, */*", "application/*;q=0, */*",
			"*/*;q=0", "application/json; charset=latin1", "application/json; version=2"} {
			ks = append(ks, NotAcceptable(acceptLabel([]string{v}), WithHeader(list, "Accept", v)))
		}
		ks = append(ks, AuthFirst("Accept: application/xml", WithHeader(list, "Accept", "application/xml")))
	}
	if op := reqs.Roles.Create; op != nil {
		ks = append(ks,
			Positive("Accept: application/*;q=0.2", WithHeader(reqs.CreateReq(MustJSON(reqs.NewPet("conform-accept", nil)), nil), "Accept", "application/*;q=0.2"), Created()),
			NotAcceptable("Accept: application/xml", WithHeader(reqs.CreateReq(MustJSON(reqs.NewPet("conform-accept", nil)), nil), "Accept", "application/xml")))
	}
	if op, id := reqs.Roles.Get, t.FirstID(); op != nil && id > 0 { // a pet that exists: 406, not 404
		ks = append(ks, NotAcceptable("Accept: text/html", WithHeader(wire.Request{Method: op.Method, Target: reqs.GetTarget(id)}, "Accept", "text/html")))
	}
	return ks
}

// AcceptSyntax: an Accept that does not parse is answered 400.
func AcceptSyntax(t T) []Case {
	reqs := t.Requests()
	op := reqs.Roles.List
	if op == nil {
		return nil
	}
	var ks []Case
	for _, v := range []string{"json", "*/json", "application/json;q=2"} {
		ks = append(ks, Negative(acceptLabel([]string{v})+", which does not parse", WithHeader(wire.Request{Method: op.Method, Target: op.Path}, "Accept", v)))
	}
	return ks
}

// closes wants Connection: close: the server leaves the body unread, or
// answers before any operation.
func closes(x *judge.Exchange) string {
	if !x.Close {
		return "with Connection: close"
	}
	return ""
}

// heldDeclared is the length a request declares and never sends: under
// the 256 KiB net/http discards after an answer, so that a server that
// reads the body first waits for it.
const heldDeclared = 64 << 10

// AtOnce: a create refused before its body is read (no key, no such
// path, a declared length over the limit) is answered at once, with
// Connection: close, without a byte of its body: with Expect: 100-continue
// instead of 100 Continue. A valid create with Expect: 100-continue, its
// body sent without waiting, is created.
func AtOnce(t T) []Case {
	reqs := t.Requests()
	op := reqs.Roles.Create
	if op == nil {
		return nil
	}
	held := func(label string, req wire.Request, declared int64, expect bool, want judge.Outcome) Case {
		req.Body, req.Raw = nil, &wire.Raw{Hold: true}
		req.Header = CloneWith(req.Header, "Content-Length", strconv.FormatInt(declared, 10))
		if expect {
			req.Header.Set("Expect", "100-continue")
			label += ", Expect: 100-continue"
		}
		return Case{Label: label + ", the body held back", Check: "refusal_at_once", Req: req, Want: want.And(closes)}
	}
	noKey := reqs.CreateReq(nil, nil)
	noKey.NoKey = true
	unauthorized := Refused(http.StatusUnauthorized, "unauthorized")
	ks := []Case{
		held("no key", noKey, heldDeclared, true, unauthorized),
		held("no key", noKey, heldDeclared, false, unauthorized),
		held("no such path", wire.Request{Method: op.Method, Target: "/conform-no-such-collection", Header: JSONHeader}, heldDeclared, true, Refused(http.StatusNotFound, "not_found")),
	}
	if n := t.Bounds().BodyMax; n > 0 {
		ks = append(ks, held(fmt.Sprintf("a declared length of %d bytes", n+1), reqs.CreateReq(nil, nil), n+1, true, Refused(http.StatusRequestEntityTooLarge, "payload_too_large")))
	}
	valid := reqs.CreateReq(MustJSON(reqs.NewPet("conform-expect", nil)), http.Header{"Expect": {"100-continue"}})
	valid.Raw = &wire.Raw{}
	return append(ks, Case{Label: "a valid create, Expect: 100-continue, the body sent at once", Check: "refusal_at_once", Req: valid, Want: Created()})
}

// beforeOperations is an answer given before any operation: status, an
// Error of code invalid_request, X-Request-Id and Connection: close.
func beforeOperations(status int) judge.Outcome { return beforeOperationsAs(status, "invalid_request") }

// beforeOperationsAs is beforeOperations with an Error of code code.
func beforeOperationsAs(status int, code string) judge.Outcome {
	return Refused(status, code).And(func(x *judge.Exchange) string {
		if x.Header.Get("X-Request-Id") == "" {
			return "with X-Request-Id"
		}
		return closes(x)
	})
}

func framed(label string, req wire.Request, w wire.Raw, want judge.Outcome) Case {
	req.Raw = &w
	return Case{Label: label, Check: "http_framing", Req: req, Want: want}
}

// HeadSize: a request whose line and headers are exactly the most the
// contract allows is served; one byte more, in a header or in the URL, is
// answered 431.
func HeadSize(t T) []Case {
	reqs := t.Requests()
	n, op := t.Bounds().HeadMax, reqs.Roles.List
	if n == 0 || op == nil {
		return nil
	}
	list := wire.Request{Method: op.Method, Target: op.Path}
	long := list
	long.Target += "?conform-pad=" + strings.Repeat("a", n)
	return []Case{
		framed(fmt.Sprintf("request line and headers of %d bytes, the most allowed", n), list, wire.Raw{Head: n}, Accepted()),
		framed(fmt.Sprintf("request line and headers of %d bytes", n+1), list, wire.Raw{Head: n + 1}, beforeOperations(http.StatusRequestHeaderFieldsTooLarge)),
		framed(fmt.Sprintf("a request line of over %d bytes (a long query)", n), long, wire.Raw{}, beforeOperations(http.StatusRequestHeaderFieldsTooLarge)),
	}
}

// Malformed: a request that is not HTTP/1.1 as the contract reads it
// is answered 400 before any operation, but a Transfer-Encoding other than
// chunked, 501 not_implemented (RFC 9112); HTTP/1.0 and a chunked body are
// HTTP/1.1 and served. (A repeated Host and a protocol version other than
// HTTP/1.x, 505, are not sent: curl cannot replay them.)
func Malformed(t T) []Case {
	reqs := t.Requests()
	var ks []Case
	bad := func(label string, req wire.Request, w wire.Raw) {
		ks = append(ks, framed(label, req, w, beforeOperations(http.StatusBadRequest)))
	}
	if op := reqs.Roles.List; op != nil {
		list := wire.Request{Method: op.Method, Target: op.Path}
		query := "conform"
		if len(op.Query) > 0 {
			if vs := t.Valid(op.Query[0].Schema.Value); len(vs) > 0 {
				query = url.QueryEscape(op.Query[0].Name) + "=" + url.QueryEscape(vs[0].Text)
			}
		}
		bad("a raw space in the query", list, wire.Raw{Target: op.Path + "?" + query + " " + query})
		bad("a header name with a space", list, wire.Raw{Fields: []string{"Conform Field: 1"}})
		bad("no Host", list, wire.Raw{NoHost: true})
		bad("Expect: 200-ok", WithHeader(list, "Expect", "200-ok"), wire.Raw{})
		ks = append(ks, framed("HTTP/1.0", list, wire.Raw{Proto: "HTTP/1.0"}, Accepted()))
	}
	if op, id := reqs.Roles.Get, t.FirstID(); op != nil && id > 0 {
		target := reqs.GetTarget(id)
		bad("%zz in the path", wire.Request{Method: op.Method, Target: target}, wire.Raw{Target: target[:strings.LastIndex(target, "/")+1] + "%zz"})
	}
	if op := reqs.Roles.Create; op != nil {
		body := MustJSON(reqs.NewPet("conform-framing", nil))
		bad("Content-Length twice, differing", reqs.CreateReq(body, nil), wire.Raw{Fields: []string{
			"Content-Length: " + strconv.Itoa(len(body)), "Content-Length: " + strconv.Itoa(len(body)+1)}})
		ks = append(ks, framed("Transfer-Encoding: gzip", reqs.CreateReq(MustJSON(reqs.NewPet("conform-framing", nil)), http.Header{"Transfer-Encoding": {"gzip"}}), wire.Raw{},
			beforeOperationsAs(http.StatusNotImplemented, "not_implemented")))
		chunks := reqs.CreateReq(MustJSON(reqs.NewPet("conform-chunked", nil)), http.Header{"Transfer-Encoding": {"chunked"}})
		ks = append(ks, framed("a chunked body", chunks, wire.Raw{}, Created()))
	}
	return ks
}

// WithHeader is req with header name given values, and no others.
func WithHeader(req wire.Request, name string, values ...string) wire.Request {
	req.Header = CloneWith(req.Header, name, values...)
	return req
}

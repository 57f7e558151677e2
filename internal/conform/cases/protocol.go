package cases

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/petstore/petstore/internal/conform/judge"
	"github.com/petstore/petstore/internal/conform/wire"
)

// The cases of the sentences on authentication, methods, paths, queries
// and CORS.

func Bearer(t T) []Case {
	var ks []Case
	mixed := []byte("bearer")
	for i := range mixed {
		if t.IntN(2) == 0 || i == 1 {
			mixed[i] -= 'a' - 'A'
		}
	}
	for _, op := range t.Operations() {
		for _, scheme := range []string{"bearer", "BEARER", string(mixed)} {
			req := t.Requests().ValidRequest(op, "1")
			req.Header = CloneWith(req.Header, "Authorization", scheme+" "+t.Key())
			ks = append(ks, Case{Label: "scheme " + scheme, Check: "ignored_auth", Req: req, Want: t.AcceptedBy(op)})
		}
		for _, v := range []struct{ label, header string }{
			{"no Authorization", ""},
			{"Basic scheme", "Basic Y29uZm9ybTpjb25mb3Jt"},
			{"unknown key", "Bearer psk_" + strings.Repeat("A", 43)},
			{"empty bearer", "Bearer "},
		} {
			req := t.Requests().ValidRequest(op, "1")
			req.NoKey = v.header == ""
			if v.header != "" {
				req.Header = CloneWith(req.Header, "Authorization", v.header)
			}
			ks = append(ks, Case{Label: v.label, Check: "ignored_auth", Req: req, Want: Refused(http.StatusUnauthorized, "unauthorized")})
		}
	}
	return ks
}

// authFirst is req, invalid as label says, sent without a key: answered
// 401, authentication first.

// AuthFirstCases: requests that are invalid and unauthenticated are
// answered 401.
func AuthFirstCases(t T) []Case {
	var ks []Case
	for _, op := range t.Operations() {
		for _, k := range SchemaNegatives(t, op)[:min(2, len(SchemaNegatives(t, op)))] {
			ks = append(ks, AuthFirst(k.Label, k.Req))
		}
	}
	if op := t.Requests().Roles.Create; op != nil {
		valid := MustJSON(t.Requests().NewPet("conform-noauth", nil))
		ks = append(ks, AuthFirst("Content-Type: text/plain", t.Requests().CreateReq(valid, http.Header{"Content-Type": {"text/plain"}})))
		if n := t.Bounds().BodyMax; n > 0 {
			ks = append(ks, AuthFirst(fmt.Sprintf("a body of %d bytes", n+1), t.Requests().CreateReq(Padded(valid, n+1), nil)))
		}
	}
	return ks
}

// paths are the paths of the spec, in order, each with its methods.
func paths(t T) (order []string, methods map[string][]string) {
	methods = map[string][]string{}
	for _, op := range t.Operations() {
		if methods[op.Path] == nil {
			order = append(order, op.Path)
		}
		methods[op.Path] = append(methods[op.Path], op.Method)
	}
	return order, methods
}

// concrete is a path of the spec with its parameters filled.
func concrete(t T, path string) string {
	op := operationWith(t, opAt(t, path))
	return op.Target(t.Requests().PathValues(op, "1"), "")
}

// routed reports whether target (relative to BASE_URL) names an operation
// of the spec.
func routed(t T, method, target string) bool {
	return t.Routed(method, target)
}

func notFound(label string, req wire.Request) Case {
	return Case{Label: label, Check: "unknown_path", Req: req, Want: Refused(http.StatusNotFound, "not_found")}
}

// NotFound: paths that name no resource, near the ones that do: a
// segment more, a trailing slash, an empty segment, another case.
func NotFound(t T) []Case {
	ks := []Case{notFound("an unknown collection", wire.Request{Method: http.MethodGet, Target: "/conform-no-such-collection"})}
	order, _ := paths(t)
	for _, path := range order {
		target := concrete(t, path)
		for _, v := range []struct{ label, target string }{
			{"a segment more", unrouted(t, target)},
			{"a trailing slash", target + "/"},
			{"an empty segment", "/" + target},
			{"in upper case", strings.ToUpper(target)},
		} {
			if !routed(t, http.MethodGet, v.target) {
				ks = append(ks, notFound(v.label+": "+v.target, wire.Request{Method: http.MethodGet, Target: v.target}))
			}
		}
	}
	return ks
}

// unrouted extends target until it names no operation of the spec.
func unrouted(t T, target string) string {
	for range 3 {
		target += "/conform-no-such-resource"
		if !routed(t, http.MethodGet, target) {
			break
		}
	}
	return target
}

func opAt(t T, path string) string {
	for _, op := range t.Operations() {
		if op.Path == path {
			return op.ID
		}
	}
	return ""
}

// allows wants an Allow header listing methods, and not method.
func allows(methods []string, method string) func(*judge.Exchange) string {
	return func(x *judge.Exchange) string {
		allow := splitList(x.Header.Values("Allow"))
		ok := !slices.ContainsFunc(allow, func(m string) bool { return strings.EqualFold(m, method) })
		for _, m := range methods {
			ok = ok && slices.ContainsFunc(allow, func(a string) bool { return strings.EqualFold(a, m) })
		}
		if !ok {
			return fmt.Sprintf("with Allow listing %v and not %s", methods, method)
		}
		return ""
	}
}

func notAllowed(label string, req wire.Request, methods []string) Case {
	want := Refused(http.StatusMethodNotAllowed, "method_not_allowed")
	if req.Method == http.MethodHead {
		want.Code = "" // no body
	}
	return Case{Label: label, Check: "unsupported_method", Req: req, Want: want.And(allows(methods, req.Method))}
}

// Methods: every method a path does not support is answered 405 with
// Allow.
func Methods(t T) []Case {
	var ks []Case
	order, methods := paths(t)
	for _, path := range order {
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			if !slices.Contains(methods[path], m) {
				ks = append(ks, notAllowed(m+" "+path, wire.Request{Method: m, Target: concrete(t, path)}, methods[path]))
			}
		}
	}
	return ks
}

func Head(t T) []Case {
	var ks []Case
	order, methods := paths(t)
	for _, path := range order {
		ks = append(ks, notAllowed("HEAD "+path, wire.Request{Method: http.MethodHead, Target: concrete(t, path)}, methods[path]))
	}
	return ks
}

// Options: an OPTIONS that is not a preflight is answered 405.
func Options(t T) []Case {
	var ks []Case
	order, methods := paths(t)
	for _, path := range order {
		ks = append(ks,
			notAllowed("OPTIONS "+path, wire.Request{Method: http.MethodOptions, Target: concrete(t, path)}, methods[path]),
			notAllowed("OPTIONS "+path+" with Origin, not a preflight", wire.Request{Method: http.MethodOptions, Target: concrete(t, path), Header: http.Header{"Origin": {CORSOrigin}}}, methods[path]))
	}
	return ks
}

// UnauthenticatedProtocol: 404 and 405 need no key.
func UnauthenticatedProtocol(t T) []Case {
	var ks []Case
	order, methods := paths(t)
	for _, path := range order {
		for _, m := range []string{http.MethodDelete, http.MethodPut} {
			if !slices.Contains(methods[path], m) {
				ks = append(ks, notAllowed(m+" "+path+" without a key", wire.Request{Method: m, Target: concrete(t, path), NoKey: true}, methods[path]))
				break
			}
		}
		target := unrouted(t, concrete(t, path))
		ks = append(ks, notFound("without a key: "+target, wire.Request{Method: http.MethodGet, Target: target, NoKey: true}))
	}
	return ks
}

// Query: an unknown query parameter, and each parameter given twice.
func Query(t T) []Case {
	var ks []Case
	for _, op := range t.Operations() {
		base := t.Requests().ValidRequest(op, "1")
		withQuery := func(label, query string) {
			req := base
			req.Target = op.Target(t.Requests().PathValues(op, "1"), query)
			ks = append(ks, Negative(label, req))
		}
		withQuery("query: unknown parameter", "conformUnknown=1")
		for _, p := range op.Query {
			if vs := t.Valid(p.Schema.Value); len(vs) > 0 {
				q := url.QueryEscape(p.Name) + "=" + url.QueryEscape(vs[0].Text)
				withQuery(fmt.Sprintf("query %s: given twice", p.Name), q+"&"+q)
			}
		}
	}
	return ks
}

func Percent(t T) []Case {
	var ks []Case
	for _, op := range t.Operations() {
		for _, p := range op.Query {
			req := t.Requests().ValidRequest(op, "1")
			req.Target = op.Target(t.Requests().PathValues(op, "1"), url.QueryEscape(p.Name)+"=%zz")
			ks = append(ks, Negative(fmt.Sprintf("query %s: not valid percent-encoding", p.Name), req))
		}
	}
	return ks
}

// Origin: answers of every kind, to requests with an Origin, carry
// Access-Control-Allow-Origin: * (the answer rule origin judges that on
// every answer; these cases make sure every kind is asked).
func Origin(t T) []Case {
	cors := func(label string, req wire.Request, want judge.Outcome) Case {
		return Case{Label: label + ", with Origin", Check: "cors", Req: WithHeader(req, "Origin", CORSOrigin), Want: want}
	}
	var ks []Case
	for _, op := range t.Operations() {
		ks = append(ks, cors(op.ID, t.Requests().ValidRequest(op, "1"), t.AcceptedBy(op)))
		noKey := t.Requests().ValidRequest(op, "1")
		noKey.NoKey = true
		ks = append(ks, cors(op.ID+" without a key", noKey, Refused(http.StatusUnauthorized, "unauthorized")))
	}
	ks = append(ks, cors("an unknown path", wire.Request{Method: http.MethodGet, Target: "/conform-no-such-collection"}, Refused(http.StatusNotFound, "not_found")))
	if op := t.Requests().Roles.List; op != nil {
		ks = append(ks, cors("an unknown query parameter", wire.Request{Method: http.MethodGet, Target: op.Target(nil, "conformUnknown=1")}, Refused(http.StatusBadRequest, "invalid_request")))
		if _, methods := paths(t); !slices.Contains(methods[op.Path], http.MethodDelete) {
			ks = append(ks, cors("DELETE "+op.Path, wire.Request{Method: http.MethodDelete, Target: op.Path}, Refused(http.StatusMethodNotAllowed, "method_not_allowed")))
		}
	}
	return ks
}

// Preflight: a preflight for each operation is answered 204, without
// a body, allowing its method and the headers asked for.
func Preflight(t T) []Case {
	var ks []Case
	for _, op := range t.Operations() {
		asked := []string{"authorization"}
		if op.Body != nil {
			asked = append(asked, "content-type")
		}
		for _, h := range op.Header {
			asked = append(asked, strings.ToLower(h.Name))
		}
		req := wire.Request{Method: http.MethodOptions, Target: concrete(t, op.Path), NoKey: true, Header: http.Header{
			"Origin": {CORSOrigin}, "Access-Control-Request-Method": {op.Method}, "Access-Control-Request-Headers": {strings.Join(asked, ", ")},
		}}
		want := judge.Outcome{Status: []int{http.StatusNoContent}}.And(preflightAllows(op.Method, asked)) // Allow-Origin: the rule origin
		ks = append(ks, Case{Label: "a preflight for " + op.ID, Check: "cors", Req: req, Want: want})
	}
	return ks
}

func preflightAllows(method string, headers []string) func(*judge.Exchange) string {
	return func(x *judge.Exchange) string {
		methods := splitList(x.Header.Values("Access-Control-Allow-Methods"))
		allowed := splitList(x.Header.Values("Access-Control-Allow-Headers"))
		ok := len(x.Body) == 0 && slices.ContainsFunc(methods, func(m string) bool { return strings.EqualFold(m, method) })
		for _, h := range headers {
			// A wildcard never covers Authorization (Fetch).
			ok = ok && slices.ContainsFunc(allowed, func(a string) bool { return strings.EqualFold(a, h) || a == "*" && h != "authorization" })
		}
		if !ok {
			return fmt.Sprintf("no body, Access-Control-Allow-Methods with %s, Access-Control-Allow-Headers with %v", method, headers)
		}
		return ""
	}
}

// operationWith is the spec's operation with id, or nil.
func operationWith(t T, id string) *Operation {
	for _, op := range t.Operations() {
		if op.ID == id {
			return op
		}
	}
	return nil
}

// splitList is the members of a header's comma-separated values.
func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, m := range strings.Split(v, ",") {
			out = append(out, strings.TrimSpace(m))
		}
	}
	return out
}

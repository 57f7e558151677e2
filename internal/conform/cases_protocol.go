package conform

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/petstore/petstore/internal/conform/cases"
)

// The cases of the sentences on authentication, methods, paths, queries
// and CORS.

func bearerCases(r *run) []kase {
	var ks []kase
	mixed := []byte("bearer")
	for i := range mixed {
		if r.rng.IntN(2) == 0 || i == 1 {
			mixed[i] -= 'a' - 'A'
		}
	}
	for _, op := range r.ops {
		for _, scheme := range []string{"bearer", "BEARER", string(mixed)} {
			req := r.reqs.ValidRequest(op, "1")
			req.Header = cloneWith(req.Header, "Authorization", scheme+" "+r.cfg.Key)
			ks = append(ks, kase{Label: "scheme " + scheme, Check: "ignored_auth", Req: req, Want: r.acceptedBy(op)})
		}
		for _, v := range []struct{ label, header string }{
			{"no Authorization", ""},
			{"Basic scheme", "Basic Y29uZm9ybTpjb25mb3Jt"},
			{"unknown key", "Bearer psk_" + strings.Repeat("A", 43)},
			{"empty bearer", "Bearer "},
		} {
			req := r.reqs.ValidRequest(op, "1")
			req.NoKey = v.header == ""
			if v.header != "" {
				req.Header = cloneWith(req.Header, "Authorization", v.header)
			}
			ks = append(ks, kase{Label: v.label, Check: "ignored_auth", Req: req, Want: refused(http.StatusUnauthorized, "unauthorized")})
		}
	}
	return ks
}

// authFirst is req, invalid as label says, sent without a key: answered
// 401, authentication first.
func authFirst(label string, req request) kase { return cases.AuthFirst(label, req) }

// authFirstCases: requests that are invalid and unauthenticated are
// answered 401.
func authFirstCases(r *run) []kase {
	var ks []kase
	for _, op := range r.ops {
		for _, k := range cases.SchemaNegatives(r, op)[:min(2, len(cases.SchemaNegatives(r, op)))] {
			ks = append(ks, authFirst(k.Label, k.Req))
		}
	}
	if op := r.roles.Create; op != nil {
		valid := mustJSON(r.reqs.NewPet("conform-noauth", nil))
		ks = append(ks, authFirst("Content-Type: text/plain", r.reqs.CreateReq(valid, http.Header{"Content-Type": {"text/plain"}})))
		if n := r.bounds.BodyMax; n > 0 {
			ks = append(ks, authFirst(fmt.Sprintf("a body of %d bytes", n+1), r.reqs.CreateReq(cases.Padded(valid, n+1), nil)))
		}
	}
	return ks
}

// paths are the paths of the spec, in order, each with its methods.
func (r *run) paths() (order []string, methods map[string][]string) {
	methods = map[string][]string{}
	for _, op := range r.ops {
		if methods[op.Path] == nil {
			order = append(order, op.Path)
		}
		methods[op.Path] = append(methods[op.Path], op.Method)
	}
	return order, methods
}

// concrete is a path of the spec with its parameters filled.
func (r *run) concrete(path string) string {
	op := r.operation(r.opAt(path))
	return op.Target(r.reqs.PathValues(op, "1"), "")
}

// routed reports whether target (relative to BASE_URL) names an operation
// of the spec.
func (r *run) routed(method, target string) bool {
	req, err := http.NewRequest(method, r.base.String()+target, nil)
	if err != nil {
		return false
	}
	_, _, err = r.contract.Route(req)
	return err == nil
}

func notFound(label string, req request) kase {
	return kase{Label: label, Check: "unknown_path", Req: req, Want: refused(http.StatusNotFound, "not_found")}
}

// notFoundCases: paths that name no resource, near the ones that do: a
// segment more, a trailing slash, an empty segment, another case.
func notFoundCases(r *run) []kase {
	ks := []kase{notFound("an unknown collection", request{Method: http.MethodGet, Target: "/conform-no-such-collection"})}
	order, _ := r.paths()
	for _, path := range order {
		target := r.concrete(path)
		for _, v := range []struct{ label, target string }{
			{"a segment more", r.unrouted(target)},
			{"a trailing slash", target + "/"},
			{"an empty segment", "/" + target},
			{"in upper case", strings.ToUpper(target)},
		} {
			if !r.routed(http.MethodGet, v.target) {
				ks = append(ks, notFound(v.label+": "+v.target, request{Method: http.MethodGet, Target: v.target}))
			}
		}
	}
	return ks
}

// unrouted extends target until it names no operation of the spec.
func (r *run) unrouted(target string) string {
	for range 3 {
		target += "/conform-no-such-resource"
		if !r.routed(http.MethodGet, target) {
			break
		}
	}
	return target
}

func (r *run) opAt(path string) string {
	for _, op := range r.ops {
		if op.Path == path {
			return op.ID
		}
	}
	return ""
}

// allows wants an Allow header listing methods, and not method.
func allows(methods []string, method string) func(*exchange) string {
	return func(x *exchange) string {
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

func notAllowed(label string, req request, methods []string) kase {
	want := refused(http.StatusMethodNotAllowed, "method_not_allowed")
	if req.Method == http.MethodHead {
		want.Code = "" // no body
	}
	return kase{Label: label, Check: "unsupported_method", Req: req, Want: want.And(allows(methods, req.Method))}
}

// methodCases: every method a path does not support is answered 405 with
// Allow.
func methodCases(r *run) []kase {
	var ks []kase
	order, methods := r.paths()
	for _, path := range order {
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			if !slices.Contains(methods[path], m) {
				ks = append(ks, notAllowed(m+" "+path, request{Method: m, Target: r.concrete(path)}, methods[path]))
			}
		}
	}
	return ks
}

func headCases(r *run) []kase {
	var ks []kase
	order, methods := r.paths()
	for _, path := range order {
		ks = append(ks, notAllowed("HEAD "+path, request{Method: http.MethodHead, Target: r.concrete(path)}, methods[path]))
	}
	return ks
}

// optionsCases: an OPTIONS that is not a preflight is answered 405.
func optionsCases(r *run) []kase {
	var ks []kase
	order, methods := r.paths()
	for _, path := range order {
		ks = append(ks,
			notAllowed("OPTIONS "+path, request{Method: http.MethodOptions, Target: r.concrete(path)}, methods[path]),
			notAllowed("OPTIONS "+path+" with Origin, not a preflight", request{Method: http.MethodOptions, Target: r.concrete(path), Header: http.Header{"Origin": {corsOrigin}}}, methods[path]))
	}
	return ks
}

// unauthenticatedProtocolCases: 404 and 405 need no key.
func unauthenticatedProtocolCases(r *run) []kase {
	var ks []kase
	order, methods := r.paths()
	for _, path := range order {
		for _, m := range []string{http.MethodDelete, http.MethodPut} {
			if !slices.Contains(methods[path], m) {
				ks = append(ks, notAllowed(m+" "+path+" without a key", request{Method: m, Target: r.concrete(path), NoKey: true}, methods[path]))
				break
			}
		}
		target := r.unrouted(r.concrete(path))
		ks = append(ks, notFound("without a key: "+target, request{Method: http.MethodGet, Target: target, NoKey: true}))
	}
	return ks
}

// queryCases: an unknown query parameter, and each parameter given twice.
func queryCases(r *run) []kase {
	var ks []kase
	for _, op := range r.ops {
		base := r.reqs.ValidRequest(op, "1")
		withQuery := func(label, query string) {
			req := base
			req.Target = op.Target(r.reqs.PathValues(op, "1"), query)
			ks = append(ks, negCase(label, req))
		}
		withQuery("query: unknown parameter", "conformUnknown=1")
		for _, p := range op.Query {
			if vs := r.valid(p.Schema.Value); len(vs) > 0 {
				q := url.QueryEscape(p.Name) + "=" + url.QueryEscape(vs[0].Text)
				withQuery(fmt.Sprintf("query %s: given twice", p.Name), q+"&"+q)
			}
		}
	}
	return ks
}

func percentCases(r *run) []kase {
	var ks []kase
	for _, op := range r.ops {
		for _, p := range op.Query {
			req := r.reqs.ValidRequest(op, "1")
			req.Target = op.Target(r.reqs.PathValues(op, "1"), url.QueryEscape(p.Name)+"=%zz")
			ks = append(ks, negCase(fmt.Sprintf("query %s: not valid percent-encoding", p.Name), req))
		}
	}
	return ks
}

// corsOrigin is the Origin of the kit's CORS cases.
const corsOrigin = cases.CORSOrigin

// originCases: answers of every kind, to requests with an Origin, carry
// Access-Control-Allow-Origin: * (the answer rule origin judges that on
// every answer; these cases make sure every kind is asked).
func originCases(r *run) []kase {
	cors := func(label string, req request, want outcome) kase {
		return kase{Label: label + ", with Origin", Check: "cors", Req: withHeader(req, "Origin", corsOrigin), Want: want}
	}
	var ks []kase
	for _, op := range r.ops {
		ks = append(ks, cors(op.ID, r.reqs.ValidRequest(op, "1"), r.acceptedBy(op)))
		noKey := r.reqs.ValidRequest(op, "1")
		noKey.NoKey = true
		ks = append(ks, cors(op.ID+" without a key", noKey, refused(http.StatusUnauthorized, "unauthorized")))
	}
	ks = append(ks, cors("an unknown path", request{Method: http.MethodGet, Target: "/conform-no-such-collection"}, refused(http.StatusNotFound, "not_found")))
	if op := r.roles.List; op != nil {
		ks = append(ks, cors("an unknown query parameter", request{Method: http.MethodGet, Target: op.Target(nil, "conformUnknown=1")}, refused(http.StatusBadRequest, "invalid_request")))
		if _, methods := r.paths(); !slices.Contains(methods[op.Path], http.MethodDelete) {
			ks = append(ks, cors("DELETE "+op.Path, request{Method: http.MethodDelete, Target: op.Path}, refused(http.StatusMethodNotAllowed, "method_not_allowed")))
		}
	}
	return ks
}

// preflightCases: a preflight for each operation is answered 204, without
// a body, allowing its method and the headers asked for.
func preflightCases(r *run) []kase {
	var ks []kase
	for _, op := range r.ops {
		asked := []string{"authorization"}
		if op.Body != nil {
			asked = append(asked, "content-type")
		}
		for _, h := range op.Header {
			asked = append(asked, strings.ToLower(h.Name))
		}
		req := request{Method: http.MethodOptions, Target: r.concrete(op.Path), NoKey: true, Header: http.Header{
			"Origin": {corsOrigin}, "Access-Control-Request-Method": {op.Method}, "Access-Control-Request-Headers": {strings.Join(asked, ", ")},
		}}
		want := outcome{Status: []int{http.StatusNoContent}}.And(preflightAllows(op.Method, asked)) // Allow-Origin: the rule origin
		ks = append(ks, kase{Label: "a preflight for " + op.ID, Check: "cors", Req: req, Want: want})
	}
	return ks
}

func preflightAllows(method string, headers []string) func(*exchange) string {
	return func(x *exchange) string {
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

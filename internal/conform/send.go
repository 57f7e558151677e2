package conform

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/petstore/petstore/internal/conform/wire"
	"github.com/petstore/petstore/internal/contract"
	"github.com/petstore/petstore/internal/history"
)

// errBudget stops a run that has sent MaxRequests requests.
var errBudget = wire.ErrBudget

// exchange is one request the kit sent and what came back, and what the
// judge knows of it.
type exchange struct {
	*wire.Exchange
	Op     string      // the operation the contract routes the request to, or noOperation
	Tenant int         // 1 for -key, 2 for -key2, 0 for no key of the kit's
	In     *scope      // where its judgments go
	Hop    *history.Op // its op in the history (history.go)
}

const noOperation = "(no operation)"

// request is a request the kit sends: a malformed one is the point of
// most of them.
type request = wire.Request

// observer is the run as the wire's Observer: it judges every exchange.
type observer struct{ r *run }

// Begin makes the exchange of x, an admitted request about to be sent:
// the operation the contract routes it to, its tenant and scope; and
// notes it as sent.
func (o observer) Begin(w *wire.Exchange) *exchange {
	r := o.r
	x := &exchange{Exchange: w, Op: noOperation, Tenant: r.tenant(w.Req.Header), In: scopeOf(w.Req.Context(), r)}
	if route, _, err := r.contract.Route(w.Req); err == nil {
		x.Op = route.Operation.OperationID
	}
	r.sending(x)
	return x
}

// End judges an answer to x, and teaches the model either way.
func (o observer) End(x *exchange) {
	if x.Status != 0 {
		o.r.judge(x)
	}
	o.r.observe(x)
}

// NoAnswer marks x, a request that got no answer, as a failure of
// not_a_server_error with status 0, so that the run goes on.
func (o observer) NoAnswer(x *exchange) {
	x.In.Record("not_a_server_error", x.Op, o.r.fail(x, "an answer", string(x.Body)))
}

// judge runs the checks that hold for every response.
func (r *run) judge(x *exchange) {
	byKind := map[string][]string{}
	for _, v := range r.contract.Check(x.Req, x.Status, x.Header, x.Body) {
		byKind[v.Kind] = append(byKind[v.Kind], v.Message)
	}
	for _, kind := range []string{contract.StatusCode, contract.ContentType, contract.ResponseHeaders, contract.ResponseSchema, contract.ErrorBody} {
		if msgs := byKind[kind]; len(msgs) > 0 {
			x.In.Record(kind, x.Op, r.fail(x, "a response that keeps openapi.yaml", strings.Join(msgs, "; ")))
		} else {
			x.In.Record(kind, x.Op, nil)
		}
	}
	var f *Failure
	if x.Status >= 500 && !unimplemented(x) {
		f = r.fail(x, "no 5xx for any request (but 501 and 505 where RFC 9112 asks)", "")
	}
	x.In.Record("not_a_server_error", x.Op, f)
	r.judgeDeprecation(x)
	r.judgeAnswer(x)
}

// unimplemented reports whether x is one of the two 5xx the contract
// gives, as RFC 9112 asks, for what the server does not implement: 501 to
// a Transfer-Encoding other than chunked, 505 to a protocol version other
// than HTTP/1.x.
func unimplemented(x *exchange) bool {
	switch x.Status {
	case http.StatusNotImplemented:
		te := x.Req.Header.Values("Transfer-Encoding")
		return len(te) > 0 && !slices.Equal(te, []string{"chunked"})
	case http.StatusHTTPVersionNotSupported:
		return x.Raw != nil && x.Raw.Proto != "" && !strings.HasPrefix(x.Raw.Proto, "HTTP/1.")
	}
	return false
}

// judgeDeprecation holds every answer of an operation the spec marks
// deprecated to RFC 9745: a Deprecation header, and each other deprecation
// header (Sunset, Link) the spec declares for that answer.
func (r *run) judgeDeprecation(x *exchange) {
	op := r.operation(x.Op)
	if op == nil || !op.op.Deprecated {
		return
	}
	var want []string
	if x.Status/100 == 2 {
		want = append(want, "Deprecation")
	}
	if ref := op.op.Responses.Status(x.Status); ref != nil && ref.Value != nil {
		for _, h := range []string{"Deprecation", "Sunset", "Link"} {
			if ref.Value.Headers[h] != nil && !slices.Contains(want, h) {
				want = append(want, h)
			}
		}
	}
	if len(want) == 0 {
		return
	}
	var missing []string
	for _, h := range want {
		if x.Header.Get(h) == "" {
			missing = append(missing, h)
		}
	}
	var f *Failure
	if len(missing) > 0 {
		f = r.fail(x, "the deprecated operation's answer carries "+strings.Join(want, ", "), "no "+strings.Join(missing, ", "))
	}
	x.In.Record("deprecation", x.Op, f)
}

// fail makes the Failure of a case whose request and response are x.
func (r *run) fail(x *exchange, want, got string) *Failure {
	if got == "" {
		got = describe(x)
	}
	return &Failure{Want: want, Got: got, Curl: r.curl(x)}
}

// describe says what came back, briefly: at most 300 bytes of the body, cut
// on a character boundary, invalid UTF-8 replaced by U+FFFD.
func describe(x *exchange) string {
	body := strings.ToValidUTF8(string(x.Body), "\uFFFD")
	if len(body) > 300 {
		cut := 300
		for !utf8.RuneStart(body[cut]) {
			cut--
		}
		body = body[:cut] + "…"
	}
	return fmt.Sprintf("%d %s", x.Status, body)
}

// send sends req and returns what came back, already judged (wire.Send:
// a 429 rate_limited waited out).
func (r *run) send(ctx context.Context, req request) (*exchange, error) {
	return r.wire.Send(ctx, req)
}

// resolve turns a Location or Link target into an absolute URL on the
// target's host; a reference to another host is an error, not a request.
func (r *run) resolve(ref string) (string, error) { return r.wire.Resolve(ref) }

// curl is a command that sends the request of x again, the keys shown as
// $PETSTORE_KEY and $PETSTORE_KEY2.
func (r *run) curl(x *exchange) string { return r.wire.Curl(x.Exchange) }

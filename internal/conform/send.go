package conform

import (
	"context"

	"github.com/petstore/petstore/internal/conform/judge"
	"github.com/petstore/petstore/internal/conform/wire"
)

// observer is the run as the wire's Observer: it judges every exchange.
type observer struct{ r *run }

// Begin makes the exchange of x, an admitted request about to be sent:
// the operation the contract routes it to, its tenant and scope; and
// notes it as sent.
func (o observer) Begin(w *wire.Exchange) *judge.Exchange {
	r := o.r
	x := &judge.Exchange{Exchange: w, Op: judge.NoOperation, Tenant: r.tenant(w.Req.Header), In: judge.ScopeOf(w.Req.Context(), r.main)}
	if route, _, err := r.contract.Route(w.Req); err == nil {
		x.Op = route.Operation.OperationID
	}
	r.hist.Sending(x)
	return x
}

// End judges an answer to x, and teaches the model either way.
func (o observer) End(x *judge.Exchange) {
	if x.Status != 0 {
		o.r.judge(x)
	}
	o.r.hist.Observe(x)
}

// NoAnswer marks x, a request that got no answer, as a failure of
// not_a_server_error with status 0, so that the run goes on.
func (o observer) NoAnswer(x *judge.Exchange) {
	x.In.Record("not_a_server_error", x.Op, o.r.Fail(x, "an answer", string(x.Body)))
}

// judge runs the checks that hold for every response (judge.Answer).
func (r *run) judge(x *judge.Exchange) { judge.Answer(r, r.rules, x) }

// Fail makes the Failure of a case whose request and response are x.
func (r *run) Fail(x *judge.Exchange, want, got string) *Failure {
	if got == "" {
		got = judge.Describe(x)
	}
	return &Failure{Want: want, Got: got, Curl: r.Curl(x)}
}

// Send sends req and returns what came back, already judged (wire.Send:
// a 429 rate_limited waited out).
func (r *run) Send(ctx context.Context, req wire.Request) (*judge.Exchange, error) {
	return r.wire.Send(ctx, req)
}

// Curl is a command that sends the request of x again, the keys shown as
// $PETSTORE_KEY and $PETSTORE_KEY2.
func (r *run) Curl(x *judge.Exchange) string { return r.wire.Curl(x.Exchange) }

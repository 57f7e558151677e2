package conform

import (
	"context"
	"fmt"
	"time"

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
// a 429 rate_limited waited out; settle: a create answered 503
// outcome_unknown retried until its outcome is known).
func (r *run) Send(ctx context.Context, req wire.Request) (*judge.Exchange, error) {
	x, err := r.wire.Send(ctx, req)
	if err != nil || x.Op != r.CreateOp() || !judge.OutcomeUnknown(r, x) {
		return x, err
	}
	return r.settle(ctx, req, x)
}

// settleWaits are the waits before each retry of a create answered 503
// outcome_unknown: a few, short, the first almost at once.
var settleWaits = []time.Duration{10 * time.Millisecond, 100 * time.Millisecond, time.Second}

// settle learns the outcome of x, req's create answered 503
// outcome_unknown, as the contract says a client does: it sends req
// again, with the same Idempotency-Key, until the answer is another
// (the pet replayed if the first attempt stored it, created if not: the
// model holds the key to one pet either way), a few times at most. Each
// retry is judged as any answer; the last is the one returned, the case's
// to judge. A create without a key, or one still unknown after the last
// retry, leaves the run incomplete: whether it created a pet is not known.
func (r *run) settle(ctx context.Context, req wire.Request, x *judge.Exchange) (*judge.Exchange, error) {
	key := judge.IdempotencyKey(x.Req.Header)
	if key == "" {
		r.Incomplete("", "a create's outcome", fmt.Sprintf("a create without an Idempotency-Key was answered 503 outcome_unknown: it may have created a pet, and a retry would create another; the kit cannot learn which (%s)", r.Curl(x)))
		return x, nil
	}
	for i, wait := range settleWaits {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return x, ctx.Err()
		case <-t.C:
		}
		y, err := r.wire.Send(ctx, req)
		if err != nil {
			return x, err
		}
		y.Retried = i + 1
		if x = y; !judge.OutcomeUnknown(r, x) {
			return x, nil
		}
	}
	r.Incomplete("", "a create's outcome", fmt.Sprintf("a create with Idempotency-Key %q was answered 503 outcome_unknown, and so were its %d retries with the key: the kit could not learn whether it created the pet (%s)", key, len(settleWaits), r.Curl(x)))
	return x, nil
}

// Curl is a command that sends the request of x again, the keys shown as
// $PETSTORE_KEY and $PETSTORE_KEY2.
func (r *run) Curl(x *judge.Exchange) string { return r.wire.Curl(x.Exchange) }

package conform

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/petstore/petstore/internal/conform/cases"
	"github.com/petstore/petstore/internal/conform/wire"
)

// Promises over time, within the run's time: a keyed create from the run's
// start is retried at its end, the longest span the run affords (the
// contract keeps an outcome for hours: the report names how far the run
// got); and a request head is delivered slowly, over a share of the time
// the contract gives a head to arrive, in parallel with the rest of the
// run, and must be answered. A promise the run could not exercise at all
// (its create refused, the budget spent) leaves the run incomplete.

// headShare is the share of the head's stated time over which the slow
// head is sent: about a third, so that a default run (a few tenths of a
// second besides) stays under 2 s; a server that gives heads less than a
// third of the time the contract states is caught.
const headShare = 0.3

// promises is the state of the run's promises over time.
type promises struct {
	head     chan struct{} // closed once the slow head is answered, or given up
	key      string        // the retention's Idempotency-Key
	body     []byte
	pet      int64 // its pet; 0 when its create failed
	keptAt   time.Time
	stated   time.Duration // the retention the contract states
	headSpan time.Duration
}

// startPromises creates the retention's pet and sends the slow head, in
// parallel with what follows; endPromises waits for the head and retries
// the create.
func (r *run) startPromises(ctx context.Context) error {
	p := &r.time
	p.head = make(chan struct{})
	if op := r.roles.List; op != nil && r.bounds.HeadTimeout > 0 && r.Stated("head-timeout") && r.wantsAny("http_framing") {
		p.headSpan = time.Duration(headShare * float64(r.bounds.HeadTimeout))
		go r.slowHead(ctx, op)
	} else {
		close(p.head)
	}
	if r.roles.Create == nil || !r.Stated("retention") || !r.wantsAny("idempotent_replay") {
		return nil
	}
	if r.bounds.Retention == 0 {
		r.Incomplete("idempotent_replay", "the retention", "the spec states the sentence retention but the kit reads no figure from it (x-rules: retention: {hours: N})")
		return nil
	}
	p.stated = r.bounds.Retention
	p.key, p.body = r.Name("conform-retention"), cases.MustJSON(r.reqs.NewPet("conform-retention", nil))
	x, id, ok, err := r.Post(ctx, p.body, cases.KeyHeader(p.key), 1)
	if err != nil {
		return err
	}
	r.Expect("idempotent_replay", x, ok, "201 for a create with an Idempotency-Key (retried at the run's end)")
	if ok {
		p.pet, p.keptAt = id, time.Now()
	}
	return nil
}

// wantsAny reports whether the run judges a check that judges every
// response, or check.
func (r *run) wantsAny(check string) bool { return r.enabled[check] || r.JudgesEvery() }

// slowHead sends a listing whose request line and headers arrive over
// headSpan, a piece at a time: the contract answers a head that arrives
// whole within its time.
func (r *run) slowHead(ctx context.Context, op *cases.Operation) {
	defer close(r.time.head)
	req := wire.Request{Method: op.Method, Target: op.Path, Raw: &wire.Raw{Slow: r.time.headSpan}}
	label := fmt.Sprintf("a request head sent over %s, a piece at a time (the contract gives a head %s)", r.time.headSpan, r.bounds.HeadTimeout)
	err := cases.Send(ctx, r, []cases.Case{{Label: label, Check: "http_framing", Req: req, Want: cases.Accepted()}})
	promise := Promise{Name: "head-timeout", Stated: r.bounds.HeadTimeout.Seconds(), How: "a request head sent a piece at a time, answered"}
	if err == nil {
		promise.Reached = r.time.headSpan.Seconds()
	} else if errors.Is(err, wire.ErrBudget) && !r.halted() {
		r.Incomplete("http_framing", "the head's time", r.cutShort()+" before the slow head was sent")
	}
	r.promise(promise)
}

// endPromises waits for the slow head, then retries the retention's
// create: its first answer, replayed.
func (r *run) endPromises(ctx context.Context) error {
	p := &r.time
	select {
	case <-p.head:
	case <-ctx.Done():
		return ctx.Err()
	}
	if p.stated == 0 {
		return nil
	}
	promise := Promise{Name: "retention", Stated: p.stated.Seconds(), How: "a keyed create from the run's start, retried at its end, replayed"}
	defer func() { r.promise(promise) }()
	if p.pet == 0 {
		r.Incomplete("idempotent_replay", "the retention", "the keyed create to retry at the run's end was not created")
		return nil
	}
	span := time.Since(p.keptAt)
	err := cases.Send(ctx, r, []cases.Case{{Label: fmt.Sprintf("the keyed create of the run's start, retried %s later", span.Round(time.Millisecond)), Check: "idempotent_replay", Req: r.reqs.CreateReq(p.body, cases.KeyHeader(p.key)), Want: cases.ReplayOf(p.pet)}})
	if errors.Is(err, wire.ErrBudget) {
		r.Incomplete("idempotent_replay", "the retention", r.cutShort()+" before the keyed create of the run's start was retried")
		return err
	}
	promise.Reached = span.Seconds()
	return err
}

// promise notes a promise over time the run exercised.
func (r *run) promise(p Promise) {
	r.mu.Lock()
	r.promises = append(r.promises, p)
	r.mu.Unlock()
}

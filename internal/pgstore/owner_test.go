package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/pgstore"
	"github.com/petstore/petstore/internal/pgtest"
)

// hooks is a pgx tracer that runs its functions, when set, at the start
// and at the end of each batch a store sends, numbered from 1.
type hooks struct {
	batches    atomic.Int32
	batchStart func(ctx context.Context, n int32)
	batchEnd   func(ctx context.Context)
}

func (h *hooks) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (h *hooks) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (h *hooks) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	n := h.batches.Add(1)
	if h.batchStart != nil {
		h.batchStart(ctx, n)
	}
	return ctx
}
func (h *hooks) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (h *hooks) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchEndData) {
	if h.batchEnd != nil {
		h.batchEnd(ctx)
	}
}

// openTraced opens a store on dbURL whose connections h traces.
func openTraced(t *testing.T, dbURL string, h *hooks) *pgstore.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := pgstore.Open(ctx, dbURL, pgstore.WithTracer(h))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// answer is what a create came back with: a pet, an error, or a panic.
type answer struct {
	p        pets.Pet
	err      error
	panicked any
}

// createNow runs a create of name on s as a handler would (a panic is
// recovered, as Echo does), and returns where its answer will be.
func createNow(ctx context.Context, s pets.Store, name string) <-chan answer {
	out := make(chan answer, 1)
	go func() {
		var a answer
		defer func() {
			a.panicked = recover()
			out <- a
		}()
		a.p, a.err = s.Create(ctx, pets.NewPet{Name: name, CategoryID: 1})
	}()
	return out
}

func (a answer) String() string {
	return fmt.Sprintf("pet %+v, error %v, panic %v", a.p, a.err, a.panicked)
}

// unknownByPanic reports whether a is the answer to a member of a batch
// that panicked: an error, the create's outcome unknown, and no panic.
func unknownByPanic(a answer) bool {
	return a.panicked == nil && errors.Is(a.err, pets.ErrOutcomeUnknown) && errors.Is(a.err, pets.ErrPanic)
}

// within returns the answer from c, or fails after d.
func within(t *testing.T, c <-chan answer, d time.Duration, what string) answer {
	t.Helper()
	select {
	case a := <-c:
		return a
	case <-time.After(d):
		t.Fatalf("%s: no answer within %v", what, d)
		return answer{}
	}
}

// TestPostgresPanicWhileCommitting: a panic while a batch commits (a
// tracer's code runs there) answers every member of the batch, as a create
// whose outcome is unknown, and wedges nothing: later creates commit, and
// Close returns. First on the request goroutine of the create that leads
// its batch, then on the committer's, with several members.
func TestPostgresPanicWhileCommitting(t *testing.T) {
	var panicAt atomic.Int32
	panicAt.Store(1)
	h := &hooks{batchStart: func(_ context.Context, n int32) {
		if n == panicAt.Load() {
			panic("tracer fault")
		}
	}}
	g, dbURL := newGate(t, pgtest.Schema(t))
	g.release()
	s := openTraced(t, dbURL, h)
	pgstore.SetTimeout(s, 3*time.Second)
	ctx := context.Background()
	a := within(t, createNow(ctx, s, "first"), 10*time.Second, "the create whose batch panicked")
	if !unknownByPanic(a) {
		t.Errorf("the create whose batch panicked: %v; want an error saying the outcome is unknown, for a panic, no panic", a)
	}
	if b := within(t, createNow(ctx, s, "next"), 10*time.Second, "the create after"); b.err != nil || b.panicked != nil {
		t.Errorf("the create after the panic: %v; want it created", b)
	}

	// The committer's batch: three creates queued behind one at the gate.
	g.hold(t)
	pgstore.SetTimeout(s, time.Minute)
	panicAt.Store(h.batches.Load() + 2) // the batch after the gated one
	head := createNow(ctx, s, "gated")
	apitest.Eventually(t, "the first batch to wait for the lock", func() bool { return g.waiting(t) == 1 })
	var tail []<-chan answer
	for i := range 3 {
		tail = append(tail, createNow(ctx, s, fmt.Sprint("queued ", i)))
		apitest.Eventually(t, "the creates to queue", func() bool { return pgstore.Waiting(s) == i+1 })
	}
	g.release()
	if a := within(t, head, 10*time.Second, "the gated create"); a.err != nil || a.panicked != nil {
		t.Errorf("the gated create: %v; want it created", a)
	}
	for i, c := range tail {
		if a := within(t, c, 10*time.Second, "a member of the committer's batch"); !unknownByPanic(a) {
			t.Errorf("member %d of the committer's batch that panicked: %v; want the outcome unknown, for a panic", i, a)
		}
	}
	if b := within(t, createNow(ctx, s, "last"), 10*time.Second, "the create after"); b.err != nil || b.panicked != nil {
		t.Errorf("the create after the committer's panic: %v; want it created", b)
	}
	closed := make(chan struct{})
	go func() {
		s.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
}

// cancelKey holds a create's cancel function, for the tracer.
type cancelKey struct{}

// TestPostgresAnswerBeatsCancel: a caller that gives up once its batch
// has committed, before it looks for its answer, gets the answer, not "the
// outcome is unknown". Here the caller's context ends at the end of the
// batch, before its leader hands the answers out.
func TestPostgresAnswerBeatsCancel(t *testing.T) {
	h := &hooks{batchEnd: func(ctx context.Context) {
		if cancel, ok := ctx.Value(cancelKey{}).(context.CancelFunc); ok {
			cancel()
		}
	}}
	s := openTraced(t, pgtest.Schema(t), h)
	t.Cleanup(s.Close)
	const creates = 20
	unknown := 0
	for i := range creates {
		ctx, cancel := context.WithCancel(context.Background())
		ctx = context.WithValue(ctx, cancelKey{}, cancel)
		_, err := s.Create(ctx, pets.NewPet{Name: fmt.Sprint("pet ", i), CategoryID: 1})
		cancel()
		switch {
		case errors.Is(err, pets.ErrOutcomeUnknown):
			unknown++
		case err != nil:
			t.Fatalf("create %d: %v", i, err)
		}
	}
	if unknown > 0 {
		t.Fatalf("%d of %d creates committed, their answers ready, were told the outcome is unknown", unknown, creates)
	}
}

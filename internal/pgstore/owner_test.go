package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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

package broken

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/petstore/petstore/internal/pgstore"
)

// batch is a batch of the shape pgstore sends: the lock, the insert (whose
// rows are read), the count.
func batch(lock any) *pgx.Batch {
	b := &pgx.Batch{}
	b.Queue("lock", lock)
	b.Queue("insert", []string{"a", "b"}).Query(func(pgx.Rows) error { return nil })
	b.Queue("count")
	return b
}

// TestNoLockTracer: the lock's key is replaced and a pause follows the
// insert, and the plant says it took effect; on a batch without the create
// lock it changes nothing and says nothing.
func TestNoLockTracer(t *testing.T) {
	p, err := New(NoLock, "")
	if err != nil {
		t.Fatal(err)
	}
	tr := &tracer{p: p}
	b := batch(pgstore.CreateLock)
	tr.TraceBatchStart(context.Background(), nil, pgx.TraceBatchStartData{Batch: b})
	if got := b.QueuedQueries[0].Arguments[0]; got == pgstore.CreateLock || len(b.QueuedQueries) != 4 || b.QueuedQueries[2].SQL != pause || p.Fired() != 1 {
		t.Fatalf("lock key %v, %d statements (the third %q), fired %d; want another key, the pause after the insert, fired once", got, len(b.QueuedQueries), b.QueuedQueries[2].SQL, p.Fired())
	}
	again := batch(pgstore.CreateLock)
	tr.TraceBatchStart(context.Background(), nil, pgx.TraceBatchStartData{Batch: again})
	if again.QueuedQueries[2] == b.QueuedQueries[2] || again.QueuedQueries[0].Arguments[0] == b.QueuedQueries[0].Arguments[0] {
		t.Fatal("two batches share a pause or a lock key: pgx keeps a statement's description, made on one connection, in its QueuedQuery")
	}
	other := batch(int64(7))
	before := slices.Clone(other.QueuedQueries)
	tr.TraceBatchStart(context.Background(), nil, pgx.TraceBatchStartData{Batch: other})
	if !slices.Equal(other.QueuedQueries, before) || other.QueuedQueries[0].Arguments[0] != int64(7) || p.Fired() != 2 {
		t.Fatalf("a batch without the create lock was changed, or the plant fired (%d)", p.Fired())
	}
}

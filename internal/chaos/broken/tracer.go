package broken

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/petstore/petstore/internal/pgstore"
)

// tracer plants NoLock and Reorder in the batches the store sends, and
// watches for AsyncCommit, through pgx's tracing hooks (pgstore.WithTracer).
// It knows a batch by what any reader of pgstore's package documentation
// knows: its create lock takes pgstore.CreateLock as its one argument, and
// the insert is the statement whose rows the store reads (the one with a
// result function). It never reads or edits a statement's text.
type tracer struct{ p *Plant }

// lockKeys are the keys NoLock gives batches' locks: from a random start,
// one a batch, so that no two batches (of this process, nor likely of
// another) share one.
var lockKeys = func() *atomic.Int64 {
	var k atomic.Int64
	k.Store(rand.Int64())
	return &k
}()

// pause widens the race NoLock opens: between the insert (ids taken) and
// the count. A batch gets a QueuedQuery of its own: pgx keeps the
// statement's description (prepared on one connection) in it.
const pause = "select pg_sleep(random() * 0.02)"

func (t *tracer) TraceBatchStart(ctx context.Context, conn *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	switch t.p.kind {
	case NoLock:
		t.unlock(d.Batch)
	case Reorder:
		t.reverse(d.Batch)
	case AsyncCommit:
		if conn.Config().RuntimeParams["synchronous_commit"] == "off" {
			t.p.took()
		}
	}
	return ctx
}

// unlock gives the batch's create lock a key no other batch takes, and
// pauses after the insert.
func (t *tracer) unlock(b *pgx.Batch) {
	locked := false
	for _, q := range b.QueuedQueries {
		if len(q.Arguments) == 1 && q.Arguments[0] == pgstore.CreateLock {
			q.Arguments[0] = lockKeys.Add(1)
			locked = true
		}
	}
	i := slices.IndexFunc(b.QueuedQueries, func(q *pgx.QueuedQuery) bool { return q.Fn != nil })
	if !locked || i < 0 {
		return
	}
	b.QueuedQueries = slices.Insert(b.QueuedQueries, i+1, &pgx.QueuedQuery{SQL: pause})
	t.p.took()
}

// reverse makes the insert's rows reach the store last first.
func (t *tracer) reverse(b *pgx.Batch) {
	for _, q := range b.QueuedQueries {
		if q.Fn == nil {
			continue
		}
		read := q.Fn
		q.Fn = func(br pgx.BatchResults) error { return read(reversing{br, t.p}) }
	}
}

// reversing is a batch's results whose rows come last first.
type reversing struct {
	pgx.BatchResults
	p *Plant
}

func (r reversing) Query() (pgx.Rows, error) {
	rows, err := r.BatchResults.Query()
	if err != nil {
		return rows, err
	}
	rev := &reversed{fields: slices.Clone(rows.FieldDescriptions()), types: rows.TypeMap(), conn: rows.Conn()}
	for rows.Next() {
		raw := make([][]byte, len(rows.RawValues()))
		for i, v := range rows.RawValues() {
			raw[i] = slices.Clone(v)
		}
		rev.rows = append(rev.rows, raw)
	}
	rows.Close()
	rev.err, rev.tag = rows.Err(), rows.CommandTag()
	slices.Reverse(rev.rows)
	if len(rev.rows) > 1 {
		r.p.took()
	}
	return rev, rev.err
}

// reversed is rows read whole, served in reverse.
type reversed struct {
	fields []pgconn.FieldDescription
	types  *pgtype.Map
	conn   *pgx.Conn
	rows   [][][]byte
	at     int // 1 + the row served
	err    error
	tag    pgconn.CommandTag
}

func (r *reversed) Close()                                       {}
func (r *reversed) Err() error                                   { return r.err }
func (r *reversed) CommandTag() pgconn.CommandTag                { return r.tag }
func (r *reversed) FieldDescriptions() []pgconn.FieldDescription { return r.fields }
func (r *reversed) Conn() *pgx.Conn                              { return r.conn }
func (r *reversed) TypeMap() *pgtype.Map                         { return r.types }
func (r *reversed) RawValues() [][]byte                          { return r.rows[r.at-1] }

func (r *reversed) Next() bool {
	if r.err != nil || r.at >= len(r.rows) {
		return false
	}
	r.at++
	return true
}

func (r *reversed) Scan(dest ...any) error {
	return pgx.ScanRow(r.types, r.fields, r.RawValues(), dest...)
}

func (r *reversed) Values() ([]any, error) {
	values := make([]any, len(r.fields))
	for i, f := range r.fields {
		raw := r.RawValues()[i]
		if raw == nil {
			continue
		}
		typ, ok := r.types.TypeForOID(f.DataTypeOID)
		if !ok {
			values[i] = string(raw)
			continue
		}
		v, err := typ.Codec.DecodeValue(r.types, f.DataTypeOID, f.Format, raw)
		if err != nil {
			return nil, err
		}
		values[i] = v
	}
	return values, nil
}

func (t *tracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (t *tracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (t *tracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (t *tracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

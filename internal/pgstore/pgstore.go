// Package pgstore is a pets.Store on PostgreSQL, through pgx's connection
// pools. Its schema migrations are embedded in the binary and applied by Open.
//
// Several servers may share one database: Open serialises migrations with
// an advisory lock (tern's), and creates commit in id order (see Create),
// so that every replica lists the same pets in the same order and a client
// following the `after` cursor from any replica to any other visits every
// pet exactly once, even while pets are being created.
//
// Creates commit in batches (write.go): whatever creates are waiting, in
// one transaction on the store's one write connection; reads use a pool
// that creates never hold, so they never queue behind them.
//
// Every query runs under QueryTimeout. An error that means the database
// cannot be reached or cannot answer now wraps pets.ErrUnavailable; the pools
// drop broken connections and dial new ones, so the store recovers by
// itself when the database comes back.
package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/tern/v2/migrate"

	"github.com/petstore/petstore/internal/pets"
)

// QueryTimeout bounds every call to the database, connecting included. It is
// well under the HTTP server's 15 s write timeout, so a client gets a 503
// Error rather than a dropped connection when the database hangs. A create
// may wait QueryTimeout for its batch to be sent, and its batch QueryTimeout
// to commit.
const QueryTimeout = 5 * time.Second

// versionTable is tern's record of the applied migrations, in the first
// schema of the connection's search_path, beside the pets table.
const versionTable = "petstore_schema_version"

//go:embed migrations/*.sql
var migrations embed.FS

// Store is a pets.Store on PostgreSQL. Close it when done.
type Store struct {
	// pool serves reads; its size is pgx's default or the URL's
	// pool_max_conns.
	pool *pgxpool.Pool
	// writes is the one connection batches commit on.
	writes *pgxpool.Pool
	// steps are the statements of a batch's transaction: batchSteps
	// unless an Option changed them (WithSteps).
	steps []Step
	// timeout is QueryTimeout outside tests.
	timeout time.Duration

	mu      sync.Mutex
	waiting []*member // creates not yet taken into a batch, in order
	// busy is set while a leader or the committer owns the queue (see
	// submit); only the owner takes batches. Never false while creates wait.
	busy    bool
	idle    sync.Cond     // on mu: busy became false
	closed  bool          // Close began: creates are refused
	wake    chan struct{} // a leader hands the queue to the committer
	quit    chan struct{} // Close stops the committer
	stopped chan struct{} // closed when the committer has returned
	once    sync.Once
}

var _ pets.Store = (*Store)(nil)

// Open connects to the database at url (a PostgreSQL URL or key=value
// string, as pgx reads it), applies the migrations it lacks, starts the
// committer and returns the store. It fails when the database cannot be
// reached before ctx ends.
func Open(ctx context.Context, url string, opts ...Option) (*Store, error) {
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err // pgx redacts the password
	}
	pcfg.PrepareConn = prepareConn
	cfg := &config{pool: pcfg, steps: batchSteps}
	for _, o := range opts {
		o(cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, err
	}
	if err := migrateUp(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	wcfg := pcfg.Copy() // the one write connection
	wcfg.MaxConns, wcfg.MinConns, wcfg.MinIdleConns = 1, min(wcfg.MinConns, 1), min(wcfg.MinIdleConns, 1)
	writes, err := pgxpool.NewWithConfig(ctx, wcfg)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s := &Store{
		pool: pool, writes: writes, steps: cfg.steps, timeout: QueryTimeout,
		wake: make(chan struct{}, 1), quit: make(chan struct{}), stopped: make(chan struct{}),
	}
	s.idle.L = &s.mu
	go s.commitLoop()
	return s, nil
}

// Option adjusts the store before Open connects.
type Option func(*config)

// config is what Options adjust.
type config struct {
	pool  *pgxpool.Config // both pools are made from it
	steps []Step
}

// WithTracer traces every query of the store's connections with t (issue
// 34: the otelpgx tracer, when tracing is on).
func WithTracer(t pgx.QueryTracer) Option {
	return func(c *config) { c.pool.ConnConfig.Tracer = t }
}

// migrateUp applies the embedded migrations with tern. tern takes a
// session-level advisory lock around its work, so replicas that start
// together apply each migration once, one after the other.
func migrateUp(ctx context.Context, pool *pgxpool.Pool) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return classify("migrate", err)
	}
	defer conn.Release()
	var encoding string
	if err := conn.QueryRow(ctx, "show server_encoding").Scan(&encoding); err != nil {
		return classify("migrate", err)
	}
	if encoding != "UTF8" {
		// Names are checked in characters, which PostgreSQL counts as
		// the application does only in UTF8.
		return fmt.Errorf("pgstore: database encoding is %s; want UTF8", encoding)
	}
	m, err := migrate.NewMigrator(ctx, conn.Conn(), versionTable)
	if err != nil {
		return classify("migrate", err)
	}
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	if err := m.LoadMigrations(sub); err != nil {
		return fmt.Errorf("pgstore: load migrations: %w", err)
	}
	if err := m.Migrate(ctx); err != nil {
		return classify("migrate", err)
	}
	return nil
}

// Close stops the store. It flushes: every create queued before Close
// began is committed (or fails on its own) before Close returns, and one
// that arrives after Close began is refused with pets.ErrUnavailable,
// nothing written. Then it closes the connections.
func (s *Store) Close() {
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		for s.busy {
			s.idle.Wait()
		}
		s.mu.Unlock()
		close(s.quit)
		<-s.stopped
		s.writes.Close()
		s.pool.Close()
	})
}

// Count returns the number of pets: one row read, kept by Create.
func (s *Store) Count(ctx context.Context) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var n int64
	if err := s.pool.QueryRow(ctx, `select n from pet_count`).Scan(&n); err != nil {
		return 0, classify("count", err)
	}
	return n, nil
}

// Ping reports whether the database answers, within QueryTimeout.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return classify("ping", s.pool.Ping(ctx))
}

// Get returns the pet with the given ID.
func (s *Store) Get(ctx context.Context, id int64) (pets.Pet, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	p := pets.Pet{ID: id}
	err := s.pool.QueryRow(ctx, getOne, id).Scan(petDest(&p)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return pets.Pet{}, fmt.Errorf("pet %d: %w", id, pets.ErrNotFound)
	}
	if err != nil {
		return pets.Pet{}, classify("get", err)
	}
	return p, nil
}

// List returns the page of pets that q selects. It asks for one pet more
// than the limit: whether that one exists sets Page.More. Both queries are
// range scans from the cursor, of the primary key or of (status, id).
func (s *Store) List(ctx context.Context, q pets.Query) (pets.Page, error) {
	if err := q.Check(); err != nil {
		return pets.Page{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var (
		rows pgx.Rows
		err  error
	)
	if q.Status == "" {
		rows, err = s.pool.Query(ctx, listAll, q.After, q.Limit+1)
	} else {
		rows, err = s.pool.Query(ctx, listByStatus, string(q.Status), q.After, q.Limit+1)
	}
	if err != nil {
		return pets.Page{}, classify("list", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (pets.Pet, error) {
		var p pets.Pet
		err := row.Scan(append([]any{&p.ID}, petDest(&p)...)...)
		return p, err
	})
	if err != nil {
		return pets.Page{}, classify("list", err)
	}
	page := pets.Page{Pets: list}
	if page.Pets == nil {
		page.Pets = []pets.Pet{}
	}
	if len(page.Pets) > q.Limit {
		page.Pets, page.More = page.Pets[:q.Limit], true
	}
	return page, nil
}

// The reading queries, over petColumns. The listings' plans are checked by
// TestPostgresListPlans.
var (
	getOne       = expand(`select {cols} from pets where id = $1`)
	listAll      = expand(`select id, {cols} from pets where id > $1 order by id limit $2`)
	listByStatus = expand(`select id, {cols} from pets where status = $1 and id > $2 order by id limit $3`)
)

// classify wraps err with the operation's name, and with pets.ErrUnavailable
// when it means the database cannot answer now: a failure to connect, a
// broken or timed-out connection, the pool closed, or one of the SQLSTATEs
// of a server that is shutting down, starting, overloaded or read-only
// (unavailableState). Any other error from the server is a bug and stays a
// plain error, which the HTTP layer answers with 500. A call the caller
// canceled (a client that hung up) is neither: it stays context.Canceled, so
// that a client's timeout is never counted, logged or answered as an outage.
func classify(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("pgstore: %s: %w", op, err)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && !unavailableState(pe.Code) {
		return fmt.Errorf("pgstore: %s: %w", op, err)
	}
	return fmt.Errorf("pgstore: %s: %w: %w", op, pets.ErrUnavailable, err)
}

// classifySent is classify for the error of a request that commits: unless
// the server refused it (refusal: the transaction rolled back) or nothing
// was sent (pgconn.SafeToRetry), the connection failed after the commit was
// sent, and whether it happened is unknown: the error wraps
// pets.ErrOutcomeUnknown as well as pets.ErrUnavailable. pgx reports a read
// that fails after the send as pgconn.ErrConnClosed, which claims
// SafeToRetry: that one is unknown too. So is a send on a pooled connection
// that died while idle: the write succeeds and the read fails, as it would
// had the server committed and died.
func classifySent(op string, err error) error {
	if refusal(err) != nil || pgconn.SafeToRetry(err) && !errors.Is(err, pgconn.ErrConnClosed) {
		return classify(op, err)
	}
	return fmt.Errorf("pgstore: %s: %w: %w: %w", op, pets.ErrUnavailable, pets.ErrOutcomeUnknown, err)
}

// refusal returns the server's error in err when it is a refusal of the
// transaction (severity ERROR: the transaction rolled back, and the server
// skipped the rest of the batch, COMMIT included), else nil. A FATAL or
// PANIC error ends the session, and may come after the COMMIT ran (a
// backend terminated, or a shutdown, between COMMIT and the batch's end):
// that one is no refusal, and the outcome is unknown.
func refusal(err error) *pgconn.PgError {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return nil
	}
	severity := pe.SeverityUnlocalized // PostgreSQL 9.6 and later
	if severity == "" {
		severity = pe.Severity
	}
	if severity != "ERROR" {
		return nil
	}
	return pe
}

// unavailableState reports whether a SQLSTATE means "not now" rather than
// "never": connection exceptions (08), insufficient resources (53), operator
// intervention such as shutdown or a statement timeout (57), system errors
// (58), serialisation failures and deadlocks (40001, 40P01), and writes to
// a standby (25006).
func unavailableState(code string) bool {
	switch {
	case strings.HasPrefix(code, "08"), strings.HasPrefix(code, "53"),
		strings.HasPrefix(code, "57"), strings.HasPrefix(code, "58"):
		return true
	}
	return code == "40001" || code == "40P01" || code == "25006"
}

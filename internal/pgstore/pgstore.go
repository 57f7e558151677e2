// Package pgstore is a pets.Store on PostgreSQL, through pgx's connection
// pool. Its schema migrations are embedded in the binary and applied by Open.
//
// Several servers may share one database: Open serialises migrations with
// an advisory lock (tern's), and Create serialises id assignment with commit
// (see Create), so that every replica lists the same pets in the same order
// and a client following the `after` cursor from any replica to any other
// visits every pet exactly once, even while pets are being created.
//
// Every query runs under QueryTimeout. An error that means the database
// cannot be reached or cannot answer now wraps pets.ErrUnavailable; the pool
// drops broken connections and dials new ones, so the store recovers by
// itself when the database comes back.
package pgstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/tern/v2/migrate"

	"github.com/petstore/petstore/internal/pets"
)

// QueryTimeout bounds every call to the database, connecting included. It is
// well under the HTTP server's 15 s write timeout, so a client gets a 503
// Error rather than a dropped connection when the database hangs.
const QueryTimeout = 5 * time.Second

// versionTable is tern's record of the applied migrations, in the first
// schema of the connection's search_path, beside the pets table.
const versionTable = "petstore_schema_version"

// createLock is the key of the transaction-scoped advisory lock that Create
// holds from taking an id until its commit. Any value unique to this
// application does; this one is "petstore" in ASCII.
const createLock int64 = 0x70657473746f7265

//go:embed migrations/*.sql
var migrations embed.FS

// Store is a pets.Store on PostgreSQL. Close it when done.
type Store struct {
	pool *pgxpool.Pool
	// serialise is true outside tests: see Create.
	serialise bool
	// timeout is QueryTimeout outside tests.
	timeout time.Duration
}

var _ pets.Store = (*Store)(nil)

// Open connects to the database at url (a PostgreSQL URL or key=value
// string, as pgx reads it), applies the migrations it lacks, and returns the
// store. It fails when the database cannot be reached before ctx ends.
func Open(ctx context.Context, url string, opts ...Option) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err // pgx redacts the password
	}
	for _, o := range opts {
		o(cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := migrateUp(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return &Store{pool: pool, serialise: true, timeout: QueryTimeout}, nil
}

// Option adjusts the pool's configuration before Open connects.
type Option func(*pgxpool.Config)

// WithTracer traces every query of the pool's connections with t (issue 34:
// the otelpgx tracer, when tracing is on).
func WithTracer(t pgx.QueryTracer) Option {
	return func(c *pgxpool.Config) { c.ConnConfig.Tracer = t }
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
		// char_length, and so the name length check, counts characters
		// only in UTF8; pets.MaxNameLength is in characters.
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

// Close closes the connections of the pool.
func (s *Store) Close() { s.pool.Close() }

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

// insertPet adds one pet; the id comes from the identity column.
const insertPet = `insert into pets (name, category_id, status) values ($1, $2, $3) returning id`

// countPet counts a created pet, in the transaction that inserts it.
const countPet = `update pet_count set n = n + 1`

// Create stores n and returns it with its new ID.
//
// Ids come from an identity column, and an identity (a sequence) hands out
// numbers in the order transactions ask, not the order they commit: a
// create that took id 5 may commit after one that took id 6. A client that
// listed after=6 in between would never see pet 5. To rule that out, Create
// takes a transaction-scoped advisory lock before the insert, in the same
// implicit transaction (one round trip: both statements are pipelined before
// one Sync), and PostgreSQL releases it only after the commit is visible.
// So id order is commit order, cluster-wide: once a pet is visible, every
// pet with a smaller id is visible too or was never written, and listing
// stays a plain index range scan with no lock at all.
//
// The price is that creates across all replicas commit one at a time; the
// lock is held for the insert and the commit's WAL flush, not for any
// network round trip. BENCHMARKS.md (PostgreSQL) measures it.
func (s *Store) Create(ctx context.Context, n pets.NewPet) (pets.Pet, error) {
	n, err := n.Normalize()
	if err != nil {
		return pets.Pet{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	// One round trip: the batch runs as one implicit transaction, so the
	// lock, the insert and the count commit (or roll back) together.
	var id int64
	b := &pgx.Batch{}
	s.queueSerialise(b)
	b.Queue(insertPet, n.Name, n.CategoryID, string(n.Status)).QueryRow(func(row pgx.Row) error {
		return row.Scan(&id)
	})
	queueBrokenPause(b)
	b.Queue(countPet)
	// Acquired apart from the send, so that a failure to connect is known
	// to have written nothing.
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return pets.Pet{}, classify("create", err)
	}
	defer conn.Release()
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		return pets.Pet{}, classifySent("create", err)
	}
	return pets.Pet{ID: id, Name: n.Name, CategoryID: n.CategoryID, Status: n.Status}, nil
}

// queueSerialise queues the lock that orders ids by commit (see Create).
func (s *Store) queueSerialise(b *pgx.Batch) {
	if s.serialise && broken != "nolock" {
		b.Queue("select pg_advisory_xact_lock($1)", createLock)
	}
}

// queueBrokenPause, in a build broken with nolock (broken.go), widens the
// race the lock prevents: between taking an id and counting the pet (whose
// row lock would otherwise order most commits anyway), a pause of up to
// 20 ms.
func queueBrokenPause(b *pgx.Batch) {
	if broken == "nolock" {
		b.Queue("select pg_sleep(random() * 0.02)")
	}
}

// keyLock is the advisory lock key of an idempotency key: the first 8 bytes
// of the SHA-256 of its owner and key (a collision only costs a spurious
// in-flight answer, once in 2⁶⁴).
func keyLock(k pets.IdempotencyKey) int64 {
	h := sha256.Sum256([]byte(k.Owner + "\x00" + k.Key))
	return int64(binary.BigEndian.Uint64(h[:8]))
}

// sweepExpired is how many expired idempotency keys each CreateOnce removes,
// oldest first through the expiry index: more than one, so that removal
// outpaces expiry, and few, so that no create pays for a backlog.
const sweepExpired = 16

// The statements of CreateOnce.
const (
	findOutcome = `select k.fingerprint, p.id, p.name, p.category_id, p.status
		from idempotency_keys k join pets p on p.id = k.pet_id
		where k.owner = $1 and k.key = $2 and k.expires_at > now()`
	dropExpiredKey = `delete from idempotency_keys where owner = $1 and key = $2 and expires_at <= now()`
	sweepKeys      = `delete from idempotency_keys where (owner, key) in (
		select owner, key from idempotency_keys where expires_at <= now()
		order by expires_at limit $1 for update skip locked)`
	insertPetOnce = `with p as (insert into pets (name, category_id, status) values ($1, $2, $3) returning id)
		insert into idempotency_keys (owner, key, fingerprint, pet_id, expires_at)
		select $4, $5, $6, id, now() + make_interval(secs => $7) from p
		returning pet_id`
)

// CreateOnce stores n unless k was recorded, within its TTL, for an earlier
// create, in one transaction of two round trips:
//
//  1. BEGIN; take k's advisory lock without waiting (ErrKeyInFlight when
//     another transaction holds it); look for k's unexpired outcome, which
//     is replayed, or refused with ErrKeyReused for another request;
//  2. insert the pet, count it and record k, removing k's expired record
//     and a few other expired ones; COMMIT.
//
// The lock is held until the commit is visible, so a second call with k
// either finds the first one's outcome or is told it is in flight; the
// primary key on (owner, key) is the backstop. A failure in the first round
// trip, or the server's refusal in the second, wrote nothing; a connection
// failure in the second happened after COMMIT was sent, and the error wraps
// pets.ErrOutcomeUnknown.
func (s *Store) CreateOnce(ctx context.Context, n pets.NewPet, k pets.IdempotencyKey) (pets.Pet, bool, error) {
	n, err := n.Normalize()
	if err != nil {
		return pets.Pet{}, false, err
	}
	fp := n.Fingerprint()
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return pets.Pet{}, false, classify("create", err)
	}
	// The transaction is pgx's to know nothing of: each path below ends
	// it, and Release destroys a connection left in one.
	defer conn.Release()
	// A rollback that fails leaves the connection to be destroyed.
	rollback := func() { conn.Exec(ctx, "rollback") }

	var (
		locked bool
		found  bool
		seen   []byte
		p      pets.Pet
	)
	b := &pgx.Batch{}
	b.Queue("begin")
	b.Queue("select pg_try_advisory_xact_lock($1)", keyLock(k)).QueryRow(func(row pgx.Row) error {
		return row.Scan(&locked)
	})
	b.Queue(findOutcome, k.Owner, k.Key).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			found = true
			if err := rows.Scan(&seen, &p.ID, &p.Name, &p.CategoryID, &p.Status); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		rollback()
		return pets.Pet{}, false, classify("create", err)
	}
	if !locked || found {
		rollback()
		switch {
		case !locked:
			return pets.Pet{}, false, fmt.Errorf("pgstore: create: key %.64q: %w", k.Key, pets.ErrKeyInFlight)
		case !bytes.Equal(seen, fp[:]):
			return pets.Pet{}, false, fmt.Errorf("pgstore: create: key %.64q: %w", k.Key, pets.ErrKeyReused)
		}
		return p, true, nil
	}

	var id int64
	b = &pgx.Batch{}
	s.queueSerialise(b)
	b.Queue(dropExpiredKey, k.Owner, k.Key)
	b.Queue(sweepKeys, sweepExpired)
	b.Queue(insertPetOnce, n.Name, n.CategoryID, string(n.Status), k.Owner, k.Key, fp[:], k.TTL.Seconds()).
		QueryRow(func(row pgx.Row) error { return row.Scan(&id) })
	queueBrokenPause(b)
	b.Queue(countPet)
	b.Queue("commit")
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		pe := refusal(err)
		if pe == nil {
			return pets.Pet{}, false, classifySent("create", err)
		}
		rollback()              // the server skipped the rest, COMMIT included
		if pe.Code == "23505" { // unique_violation: a race the lock lost
			return pets.Pet{}, false, fmt.Errorf("pgstore: create: key %.64q: %w: %w", k.Key, pets.ErrKeyInFlight, err)
		}
		return pets.Pet{}, false, classify("create", err)
	}
	return pets.Pet{ID: id, Name: n.Name, CategoryID: n.CategoryID, Status: n.Status}, false, nil
}

// Get returns the pet with the given ID.
func (s *Store) Get(ctx context.Context, id int64) (pets.Pet, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	p := pets.Pet{ID: id}
	err := s.pool.QueryRow(ctx, `select name, category_id, status from pets where id = $1`, id).
		Scan(&p.Name, &p.CategoryID, &p.Status)
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
		err := row.Scan(&p.ID, &p.Name, &p.CategoryID, &p.Status)
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

// The listing queries. Their plans are checked by TestPostgresListPlans.
const (
	listAll      = `select id, name, category_id, status from pets where id > $1 order by id limit $2`
	listByStatus = `select id, name, category_id, status from pets where status = $1 and id > $2 order by id limit $3`
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
// had the server committed and died. CreateOnce learns that in its first
// round trip, which commits nothing.
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

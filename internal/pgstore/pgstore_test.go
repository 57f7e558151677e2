package pgstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/pgstore"
	"github.com/petstore/petstore/internal/pgtest"
	"github.com/petstore/petstore/internal/storetest"
)

func connect(t *testing.T, dbURL string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestPostgresStore(t *testing.T) {
	pgtest.URL(t) // skip once, not in every subtest
	storetest.Run(t, pgtest.NewStore)
}

// TestPostgresConstraints checks that the schema itself refuses what the
// domain refuses by rules of its own, and ids not assigned by the
// identity. A status and a name's length are the spec's facts, which the
// application checks (migration 005): the schema takes any.
func TestPostgresConstraints(t *testing.T) {
	dbURL := pgtest.Schema(t)
	pgtest.Open(t, dbURL)
	conn := connect(t, dbURL)
	for _, tc := range []struct {
		name, sql string
		args      []any
		state     string
	}{
		{"empty name", `insert into pets (name, category_id, status) values ($1, 1, 'sold')`, []any{""}, "23514"},
		{"control character", `insert into pets (name, category_id, status) values ($1, 1, 'sold')`, []any{"a\tb"}, "23514"},
		{"DEL", `insert into pets (name, category_id, status) values ($1, 1, 'sold')`, []any{"a\x7fb"}, "23514"},
		{"only spaces", `insert into pets (name, category_id, status) values ($1, 1, 'sold')`, []any{"   "}, "23514"},
		{"C1 control", `insert into pets (name, category_id, status) values ($1, 1, 'sold')`, []any{"Rex\u0085"}, "23514"},
		{"right-to-left override", `insert into pets (name, category_id, status) values ($1, 1, 'sold')`, []any{"evil\u202egnp.exe"}, "23514"},
		{"isolate", `insert into pets (name, category_id, status) values ($1, 1, 'sold')`, []any{"a\u2069b"}, "23514"},
		{"only no-break space", `insert into pets (name, category_id, status) values ($1, 1, 'sold')`, []any{"\u00a0"}, "23514"},
		{"only ideographic spaces", `insert into pets (name, category_id, status) values ($1, 1, 'sold')`, []any{"\u3000\u3000"}, "23514"},
		{"category 0", `insert into pets (name, category_id, status) values ('Rex', 0, 'sold')`, nil, "23514"},
		{"extra not an object", `insert into pets (name, category_id, status, extra) values ('Rex', 1, 'sold', '[1]')`, nil, "23514"},
		{"null extra", `insert into pets (name, category_id, status, extra) values ('Rex', 1, 'sold', null)`, nil, "23502"},
		{"null status", `insert into pets (name, category_id, status) values ('Rex', 1, null)`, nil, "23502"},
		{"explicit id", `insert into pets (id, name, category_id, status) values (7, 'Rex', 1, 'sold')`, nil, "428C9"},
	} {
		_, err := conn.Exec(context.Background(), tc.sql, tc.args...)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != tc.state {
			t.Errorf("%s: got %v, want SQLSTATE %s", tc.name, err, tc.state)
		}
	}
	// The longest and oddest names the domain accepts fit, a status the
	// spec may add, and an Extra with a NUL character in a string.
	if _, err := conn.Exec(context.Background(), `insert into pets (name, category_id, status, extra) values ('Rex', 1, 'on-hold', $1)`, `{"note":"a\u0000b"}`); err != nil {
		t.Errorf("insert a new status and an escaped NUL: %v", err)
	}
	for _, name := range []string{strings.Repeat("é", pets.MaxNameLength), "🐕 Rex — ü", "x", "\u05e8\u05e7\u05e1\u200f", "🐈\u200d⬛", "Rex\u00a0II"} {
		if _, err := conn.Exec(context.Background(), `insert into pets (name, category_id, status) values ($1, 9223372036854775807, 'pending')`, name); err != nil {
			t.Errorf("insert %q: %v", name, err)
		}
	}
}

// TestPostgresListPlans checks with EXPLAIN ANALYZE that listing reads only
// the page it returns (plus the one lookahead row) from an index, for the
// custom and the generic plans of the prepared statements.
func TestPostgresListPlans(t *testing.T) {
	dbURL := pgtest.Schema(t)
	pgtest.Open(t, dbURL)
	conn := connect(t, dbURL)
	ctx := context.Background()
	// 50,000 pets; one in a hundred sold, so that a scan of the primary key
	// filtered by status would read a hundred rows for each one it keeps.
	if _, err := conn.Exec(ctx, `insert into pets (name, category_id, status)
		select 'pet ' || i, 1 + i % 7, case when i % 100 = 0 then 'sold' when i % 2 = 0 then 'pending' else 'available' end
		from generate_series(1, 50000) as i`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `analyze pets`); err != nil {
		t.Fatal(err)
	}
	const limit = 21 // 20 and the lookahead
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		if _, err := conn.Exec(ctx, "set plan_cache_mode = "+mode); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name, sql string
			args      []any
			index     string // any when empty
			maxRead   int
		}{
			{"all", pgstore.ListAll, []any{int64(25000), limit}, "pets_pkey", limit},
			{"all from start", pgstore.ListAll, []any{int64(0), limit}, "pets_pkey", limit},
			{"sold", pgstore.ListByStatus, []any{"sold", int64(25000), limit}, "pets_status_id", limit},
			// Half the pets are available: the planner may rightly walk the
			// primary key and skip the others, about two rows read per row kept.
			{"available", pgstore.ListByStatus, []any{"available", int64(40000), limit}, "", 3 * limit},
		} {
			var raw []byte
			if err := conn.QueryRow(ctx, "explain (analyze, format json) "+tc.sql, tc.args...).Scan(&raw); err != nil {
				t.Fatalf("%s %s: explain: %v", mode, tc.name, err)
			}
			var plans []struct{ Plan planNode }
			if err := json.Unmarshal(raw, &plans); err != nil || len(plans) != 1 {
				t.Fatalf("%s %s: plan %s: %v", mode, tc.name, raw, err)
			}
			var scan *planNode
			plans[0].Plan.walk(func(n *planNode) {
				switch {
				case n.NodeType == "Index Scan":
					scan = n
				case n.NodeType != "Limit":
					t.Errorf("%s %s: plan has a %s node; want only Limit over Index Scan:\n%s", mode, tc.name, n.NodeType, raw)
				}
			})
			switch {
			case scan == nil:
				t.Errorf("%s %s: no index scan:\n%s", mode, tc.name, raw)
			case tc.index != "" && scan.IndexName != tc.index:
				t.Errorf("%s %s: scans %s, want %s", mode, tc.name, scan.IndexName, tc.index)
			case scan.ActualRows > limit || scan.ActualRows+scan.RowsRemovedByFilter > tc.maxRead:
				t.Errorf("%s %s: index scan returned %d rows and filtered out %d; want at most %d returned, %d read", mode, tc.name, scan.ActualRows, scan.RowsRemovedByFilter, limit, tc.maxRead)
			}
		}
	}
}

// TestPostgresBatchPlans checks with EXPLAIN ANALYZE, under the generic
// plans the committer's session uses, that no statement of a batch scans
// a table: a batch's cost must not grow with the catalogue.
func TestPostgresBatchPlans(t *testing.T) {
	dbURL := pgtest.Schema(t)
	pgtest.Open(t, dbURL)
	conn := connect(t, dbURL)
	ctx := context.Background()
	pgtest.Seed(t, dbURL, 50000)
	if _, err := conn.Exec(ctx, `insert into idempotency_keys (owner, key, fingerprint, pet_id, expires_at)
		select 'bob', 'k' || i, sha256(i::text::bytea), i, now() + interval '1 day' from generate_series(1, 50000) as i;
		select setval('pets_id_seq', 50000); analyze idempotency_keys`); err != nil {
		t.Fatal(err)
	}
	tx := genericTx(t, conn)
	fp := make([]byte, 32)
	owner, key := "bob", "k7"
	a := pets.NewPet{Name: "a", CategoryID: 1, Status: pets.Sold}
	b := pets.NewPet{Name: "b", CategoryID: 2, Status: pets.Sold, Extra: `{"tags":["x"]}`}
	for _, tc := range []struct {
		name, sql string
		args      []any
	}{
		{"insert-one", pgstore.InsertOne, pgstore.ColumnArgs(a)},
		{"count after insert-one", pgstore.CountBatch, nil},
		{"insert", pgstore.InsertBatch, pgstore.ColumnArrays(a, b)},
		{"count", pgstore.CountBatch, nil},
		{"insert-keyed", pgstore.InsertKeyedBatch, append(pgstore.ColumnArrays(a, b),
			[]*string{nil, &owner}, []*string{nil, &key}, [][]byte{nil, fp}, []float64{0, 60})},
		{"count after insert-keyed", pgstore.CountBatch, nil},
	} {
		plan, raw := explain(t, tx, tc.sql, tc.args...)
		plan.walk(func(n *planNode) {
			if n.NodeType == "Seq Scan" && n.RelationName != "pet_count" {
				t.Errorf("%s scans %s:\n%s", tc.name, n.RelationName, raw)
			}
		})
	}
	var n int64
	if err := tx.QueryRow(ctx, "select n from pet_count").Scan(&n); err != nil || n != 4 {
		t.Errorf("pet_count after batches of 1, of 2 and of 2 with a live key: %d, %v; want 4", n, err)
	}
}

// genericTx begins a transaction on conn that plans generically, as every
// batch does (its lock step sets it), and rolls it back when t ends.
func genericTx(t *testing.T, conn *pgx.Conn) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(ctx) })
	if _, err := tx.Exec(ctx, "set local plan_cache_mode = force_generic_plan"); err != nil {
		t.Fatal(err)
	}
	return tx
}

// explain runs sql with EXPLAIN ANALYZE in tx and returns its plan, and the
// plan as PostgreSQL wrote it, for messages.
func explain(t *testing.T, tx pgx.Tx, sql string, args ...any) (*planNode, []byte) {
	t.Helper()
	var raw []byte
	if err := tx.QueryRow(context.Background(), "explain (analyze, format json) "+sql, args...).Scan(&raw); err != nil {
		t.Fatalf("explain %.40q: %v", sql, err)
	}
	var plans []struct{ Plan planNode }
	if err := json.Unmarshal(raw, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("plan %s: %v", raw, err)
	}
	return &plans[0].Plan, raw
}

type planNode struct {
	NodeType            string     `json:"Node Type"`
	RelationName        string     `json:"Relation Name"`
	IndexName           string     `json:"Index Name"`
	ActualRows          int        `json:"Actual Rows"`
	RowsRemovedByFilter int        `json:"Rows Removed by Filter"`
	Plans               []planNode `json:"Plans"`
}

func (n *planNode) walk(f func(*planNode)) {
	f(n)
	for i := range n.Plans {
		n.Plans[i].walk(f)
	}
}

// ternLock is the advisory lock key of github.com/jackc/tern/v2/migrate
// (lockNum in migrate.go); the test holds it to line migrators up.
const ternLock int64 = 9628173550095224

// TestPostgresConcurrentMigrations starts two stores on an empty schema at
// the same moment, as two replicas starting together do: both must wait for
// the migration lock, then both open, with the schema migrated once.
func TestPostgresConcurrentMigrations(t *testing.T) {
	dbURL := pgtest.Schema(t)
	holder := connect(t, dbURL)
	ctx := context.Background()
	if _, err := holder.Exec(ctx, "select pg_advisory_lock($1)", ternLock); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(dbURL)
	q := u.Query()
	app := fmt.Sprintf("migrator-%d", time.Now().UnixNano())
	q.Set("application_name", app)
	u.RawQuery = q.Encode()

	const replicas = 2
	type opened struct {
		s   *pgstore.Store
		err error
	}
	results := make(chan opened, replicas)
	for range replicas {
		go func() {
			octx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			s, err := pgstore.Open(octx, u.String())
			results <- opened{s, err}
		}()
	}
	apitest.Eventually(t, "both migrators to wait on the migration lock", func() bool {
		var waiting int
		err := holder.QueryRow(ctx, `select count(*) from pg_locks l join pg_stat_activity a using (pid)
			where l.locktype = 'advisory' and not l.granted and a.application_name = $1`, app).Scan(&waiting)
		return err == nil && waiting == replicas
	})
	if _, err := holder.Exec(ctx, "select pg_advisory_unlock($1)", ternLock); err != nil {
		t.Fatal(err)
	}
	var stores []*pgstore.Store
	for range replicas {
		r := <-results
		if r.err != nil {
			t.Fatalf("Open while another replica migrates: %v", r.err)
		}
		t.Cleanup(r.s.Close)
		stores = append(stores, r.s)
	}
	var version, rows int
	if err := holder.QueryRow(ctx, "select max(version), count(*) from petstore_schema_version").Scan(&version, &rows); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("migrations: %v, %d files", err, len(files))
	}
	if version != len(files) || rows != 1 {
		t.Fatalf("schema version table: got version %d in %d rows, want %d (one a migration file) in 1", version, rows, len(files))
	}
	for i, s := range stores {
		p, err := s.Create(ctx, pets.NewPet{Name: "Rex", CategoryID: 1})
		if err != nil {
			t.Fatalf("replica %d: Create: %v", i, err)
		}
		if got, err := stores[1-i].Get(ctx, p.ID); err != nil || got != p {
			t.Fatalf("replica %d: Get(%d): got %+v, %v; want %+v", 1-i, p.ID, got, err, p)
		}
	}
}

// TestPostgresUnavailable cuts the database off behind a proxy: every
// operation fails promptly with pets.ErrUnavailable and writes nothing, and
// the store serves again, by itself, once the database is back.
func TestPostgresUnavailable(t *testing.T) {
	proxy, dbURL := pgtest.NewProxy(t, pgtest.Schema(t))
	s := pgtest.Open(t, dbURL)
	ctx := context.Background()
	before, err := s.Create(ctx, pets.NewPet{Name: "before", CategoryID: 1})
	if err != nil {
		t.Fatal(err)
	}

	proxy.Cut()
	for _, tc := range []struct {
		name string
		call func() error
	}{
		// Create first: the batch of "before" left the committer's
		// connection in the pool, and the cut closed it. The store finds
		// that out before it sends anything (and dials a new one, which is
		// refused): the outcome is known.
		{"Create", func() error { _, err := s.Create(ctx, pets.NewPet{Name: "lost", CategoryID: 1}); return err }},
		{"CreateOnce", func() error {
			_, _, err := s.CreateOnce(ctx, pets.NewPet{Name: "lost", CategoryID: 1}, pets.IdempotencyKey{Owner: "o", Key: "k", TTL: time.Hour})
			return err
		}},
		{"Get", func() error { _, err := s.Get(ctx, before.ID); return err }},
		{"List", func() error { _, err := s.List(ctx, pets.Query{Limit: 10}); return err }},
		{"Ping", func() error { return s.Ping(ctx) }},
	} {
		start := time.Now()
		err := tc.call()
		if !errors.Is(err, pets.ErrUnavailable) {
			t.Errorf("%s with the database cut off: got %v, want ErrUnavailable", tc.name, err)
		}
		if errors.Is(err, pets.ErrOutcomeUnknown) {
			t.Errorf("%s with the database cut off: got %v; want it known that nothing was written", tc.name, err)
		}
		if d := time.Since(start); d > pgstore.QueryTimeout+time.Second {
			t.Errorf("%s with the database cut off: took %v, want at most QueryTimeout", tc.name, d)
		}
	}
	octx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := pgstore.Open(octx, dbURL); !errors.Is(err, pets.ErrUnavailable) {
		t.Errorf("Open with the database cut off: got %v, want ErrUnavailable", err)
	}

	proxy.Restore()
	apitest.Eventually(t, "the store to serve again", func() bool { return s.Ping(ctx) == nil })
	after, err := s.Create(ctx, pets.NewPet{Name: "after", CategoryID: 1})
	if err != nil {
		t.Fatalf("Create after the database came back: %v", err)
	}
	page, err := s.List(ctx, pets.Query{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if want := []pets.Pet{before, after}; !slices.Equal(page.Pets, want) {
		t.Fatalf("after the outage: got %+v, want %+v (nothing from the refused create)", page.Pets, want)
	}
}

// TestPostgresQueryTimeout blocks the table behind a lock: a query gives up
// at the store's timeout with pets.ErrUnavailable, and the store then serves.
func TestPostgresQueryTimeout(t *testing.T) {
	dbURL := pgtest.Schema(t)
	s := pgtest.Open(t, dbURL)
	pgstore.SetTimeout(s, 300*time.Millisecond)
	ctx := context.Background()
	blocker := connect(t, dbURL)
	tx, err := blocker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "lock table pets in access exclusive mode"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = s.List(ctx, pets.Query{Limit: 5})
	if !errors.Is(err, pets.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("List behind a lock: got %v, want ErrUnavailable from the deadline", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("List behind a lock: returned after %v, want about 300ms", d)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	pgstore.SetTimeout(s, pgstore.QueryTimeout) // a new connection under load can take over 300ms
	if _, err := s.Create(ctx, pets.NewPet{Name: "Rex", CategoryID: 1}); err != nil {
		t.Fatalf("Create once the lock is gone: %v", err)
	}
}

// TestPostgresFollowerSeesEveryPet is the cross-replica pagination
// guarantee under group commit: while writers create pets through two
// stores (two replicas) on one database, batched, a reader that follows the
// cursor to the end again and again, alternating replicas, sees every
// acknowledged pet exactly once (storetest.Follow). It fails when a pet with
// a smaller id can become visible after a larger one.
func TestPostgresFollowerSeesEveryPet(t *testing.T) {
	dbURL := pgtest.Schema(t)
	storetest.Follow(t, pgtest.Open(t, dbURL), pgtest.Open(t, dbURL))
	var pets, transactions int
	if err := connect(t, dbURL).QueryRow(context.Background(), "select count(*), count(distinct xmin::text) from pets").Scan(&pets, &transactions); err != nil {
		t.Fatal(err)
	}
	if transactions >= pets {
		t.Errorf("%d pets in %d transactions: no batch had more than one create", pets, transactions)
	}
	t.Logf("%d pets in %d transactions", pets, transactions)
}

// TestPostgresCanceled: a query behind a lock whose caller gives up (a
// client that hung up) fails at once with context.Canceled, not
// pets.ErrUnavailable: a client's timeout is not an outage.
func TestPostgresCanceled(t *testing.T) {
	dbURL := pgtest.Schema(t)
	s := pgtest.Open(t, dbURL)
	ctx := context.Background()
	waiting := pgtest.LockPets(t, dbURL)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	listed := make(chan error, 1)
	go func() {
		_, err := s.List(cctx, pets.Query{Limit: 5})
		listed <- err
	}()
	apitest.Eventually(t, "the list to wait for the lock", waiting)
	cancel()
	if err := <-listed; !errors.Is(err, context.Canceled) || errors.Is(err, pets.ErrUnavailable) {
		t.Errorf("List canceled behind a lock: got %v, want context.Canceled and not ErrUnavailable", err)
	}
}

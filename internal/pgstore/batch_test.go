package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/pgstore"
	"github.com/petstore/petstore/internal/pgtest"
)

// gate holds the create lock on a connection of its own, so that a
// store's batch waits for it and the creates after it queue: the batches
// the tests below make are the ones they mean.
type gate struct {
	conn *pgx.Conn
	app  string // the application_name of the stores it watches
	held bool
}

// newGate returns a schema's URL whose stores gate can watch, and the gate,
// holding the lock; it lets go when t ends.
func newGate(t *testing.T, dbURL string) (*gate, string) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{conn: connect(t, dbURL), app: fmt.Sprintf("gate-%d", time.Now().UnixNano())}
	q := u.Query()
	q.Set("application_name", g.app)
	u.RawQuery = q.Encode()
	g.hold(t)
	t.Cleanup(g.release)
	return g, u.String()
}

// hold takes the lock.
func (g *gate) hold(t *testing.T) {
	if _, err := g.conn.Exec(context.Background(), "select pg_advisory_lock($1)", pgstore.CreateLock); err != nil {
		t.Fatal(err)
	}
	g.held = true
}

// waiting is how many of the watched stores' batches wait for the lock.
func (g *gate) waiting(t *testing.T) int {
	var n int
	if err := g.conn.QueryRow(context.Background(), `select count(*) from pg_locks l join pg_stat_activity a using (pid)
		where l.locktype = 'advisory' and not l.granted and a.application_name = $1`, g.app).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (g *gate) release() {
	if g.held {
		g.held = false
		g.conn.Exec(context.Background(), "select pg_advisory_unlock($1)", pgstore.CreateLock)
	}
}

// openGated opens a store on dbURL with a long timeout: a batch may wait
// for a gate longer than QueryTimeout on a busy machine.
func openGated(t *testing.T, dbURL string) *pgstore.Store {
	s := pgtest.Open(t, dbURL)
	pgstore.SetTimeout(s, time.Minute)
	return s
}

// result is the outcome of one create run in the background.
type result struct {
	p        pets.Pet
	replayed bool
	err      error
}

// goCreate starts a create of name on s (with key k unless empty) and
// returns where its result will be.
func goCreate(ctx context.Context, s pets.Store, name string, k string) <-chan result {
	out := make(chan result, 1)
	go func() {
		n := pets.NewPet{Name: name, CategoryID: 1}
		var r result
		if k == "" {
			r.p, r.err = s.Create(ctx, n)
		} else {
			r.p, r.replayed, r.err = s.CreateOnce(ctx, n, idemKey(k))
		}
		out <- r
	}()
	return out
}

// creating returns a maker of goCreate's calls on s, for queueBehind.
func creating(ctx context.Context, s pets.Store) func(name, key string) func() <-chan result {
	return func(name, key string) func() <-chan result {
		return func() <-chan result { return goCreate(ctx, s, name, key) }
	}
}

// queueBehind starts first on s and waits until its batch waits at the
// gate, then starts each of rest and waits until all of them are queued
// behind it.
func queueBehind(t *testing.T, g *gate, s *pgstore.Store, first func() <-chan result, rest ...func() <-chan result) (<-chan result, []<-chan result) {
	t.Helper()
	head := first()
	apitest.Eventually(t, "the first batch to wait for the lock", func() bool { return g.waiting(t) == 1 })
	var tail []<-chan result
	for i, f := range rest {
		tail = append(tail, f())
		apitest.Eventually(t, fmt.Sprintf("%d creates to queue", i+1), func() bool { return pgstore.Waiting(s) == i+1 })
	}
	return head, tail
}

// xmins returns the transaction that wrote each of ids.
func xmins(t *testing.T, conn *pgx.Conn, ids ...int64) []string {
	t.Helper()
	var out []string
	for _, id := range ids {
		var x string
		if err := conn.QueryRow(context.Background(), "select xmin::text from pets where id = $1", id).Scan(&x); err != nil {
			t.Fatalf("pet %d: %v", id, err)
		}
		out = append(out, x)
	}
	return out
}

// storedPets returns the first ten pets of s and their names.
func storedPets(t *testing.T, s pets.Store) ([]pets.Pet, []string) {
	t.Helper()
	page, err := s.List(context.Background(), pets.Query{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range page.Pets {
		names = append(names, p.Name)
	}
	return page.Pets, names
}

// TestPostgresBatch: the creates that wait while a batch commits are
// committed together, in one transaction, with ids in the order they were
// queued, keyed and keyless alike; the count follows.
func TestPostgresBatch(t *testing.T) {
	g, dbURL := newGate(t, pgtest.Schema(t))
	s := openGated(t, dbURL)
	ctx := context.Background()
	create := creating(ctx, s)
	head, tail := queueBehind(t, g, s, create("first", ""), create("a", ""), create("b", "kb"), create("c", ""), create("d", "kd"))
	g.release()
	var got []pets.Pet
	for _, c := range append([]<-chan result{head}, tail...) {
		r := <-c
		if r.err != nil || r.replayed {
			t.Fatalf("create: %+v", r)
		}
		got = append(got, r.p)
	}
	ids := []int64{got[1].ID, got[2].ID, got[3].ID, got[4].ID}
	if !slices.IsSorted(ids) || got[0].ID >= ids[0] {
		t.Fatalf("ids %d then %v: want ascending in queue order", got[0].ID, ids)
	}
	conn := connect(t, dbURL)
	xs := xmins(t, conn, append([]int64{got[0].ID}, ids...)...)
	if xs[0] == xs[1] || len(slices.Compact(slices.Clone(xs[1:]))) != 1 {
		t.Fatalf("transactions %v: want the first create alone, the four queued behind it in one", xs)
	}
	if p, replayed, err := s.CreateOnce(ctx, pets.NewPet{Name: "b", CategoryID: 1}, idemKey("kb")); err != nil || !replayed || p != got[2] {
		t.Fatalf("retry of a batched keyed create: %+v replayed %v, %v; want %+v", p, replayed, err, got[2])
	}
	if n, err := s.Count(ctx); err != nil || n != 5 {
		t.Fatalf("Count: %d, %v; want 5", n, err)
	}
}

// TestPostgresBatchMemberFails: a batch the database refuses because of
// one member is committed again member by member: that member fails on its
// own, as a bug (not an outage), and the others are created once each.
func TestPostgresBatchMemberFails(t *testing.T) {
	schema := pgtest.Schema(t)
	pgtest.Open(t, schema) // migrate, to add a rule the domain does not have
	pgtest.Exec(t, schema, "alter table pets add constraint test_no_poison check (name <> 'poison')")
	g, dbURL := newGate(t, schema)
	s := openGated(t, dbURL)
	ctx := context.Background()
	create := creating(ctx, s)
	head, tail := queueBehind(t, g, s, create("first", ""), create("a", ""), create("poison", ""), create("b", "kb"), create("c", ""))
	g.release()
	if r := <-head; r.err != nil {
		t.Fatal(r.err)
	}
	var created []pets.Pet
	for i, c := range tail {
		r := <-c
		if i == 1 {
			if r.err == nil || errors.Is(r.err, pets.ErrUnavailable) {
				t.Errorf("the poison member: got %+v; want its own error, not an outage", r)
			}
			continue
		}
		if r.err != nil {
			t.Errorf("member %d: %v", i, r.err)
			continue
		}
		created = append(created, r.p)
	}
	stored, names := storedPets(t, s)
	if !slices.Equal(names, []string{"first", "a", "b", "c"}) || !slices.Equal(stored[1:], created) {
		t.Fatalf("stored %v (%+v); want first, a, b, c, as acknowledged (%+v)", names, stored, created)
	}
	if n, err := s.Count(ctx); err != nil || n != 4 {
		t.Fatalf("Count: %d, %v; want 4", n, err)
	}
}

// TestPostgresBatchRefusedByNoMember: a batch the database refuses for a
// reason no member's values cause (a trigger that fails every insert, as a
// missing privilege would) is not retried member by member: it costs one
// transaction, and every member gets the refusal, as a bug (not an
// outage), nothing written.
func TestPostgresBatchRefusedByNoMember(t *testing.T) {
	schema := pgtest.Schema(t)
	pgtest.Open(t, schema) // migrate, to add the trigger
	// test_tries counts the transactions that run the trigger: a
	// sequence's numbers are not given back when a transaction rolls back.
	pgtest.Exec(t, schema, `create sequence test_tries;
		create function test_refuse() returns trigger language plpgsql as $$
		begin
			perform nextval('test_tries');
			raise exception 'refused' using errcode = '42501';
		end $$;
		create trigger test_refuse before insert on pets for each statement execute function test_refuse()`)
	g, dbURL := newGate(t, schema)
	ctx := context.Background()
	s := openGated(t, dbURL)
	create := creating(ctx, s)
	head, tail := queueBehind(t, g, s, create("first", ""), create("a", ""), create("b", "kb"), create("c", ""))
	g.release()
	for i, c := range append([]<-chan result{head}, tail...) {
		r := <-c
		var pe *pgconn.PgError
		if !errors.As(r.err, &pe) || pe.Code != "42501" || errors.Is(r.err, pets.ErrUnavailable) {
			t.Errorf("create %d: got %+v; want the refusal (42501), not an outage", i, r)
		}
	}
	var tries int64
	if err := connect(t, dbURL).QueryRow(ctx, "select case when is_called then last_value else 0 end from test_tries").Scan(&tries); err != nil {
		t.Fatal(err)
	}
	if tries != 2 {
		t.Fatalf("%d transactions; want 2: the first create's, then the batch's, and no member alone", tries)
	}
	if n, err := s.Count(ctx); err != nil || n != 0 {
		t.Fatalf("Count: %d, %v; want 0", n, err)
	}
}

// TestPostgresBatchRetryEndsAtTimeout: the member-by-member retry of a
// refused batch does not try a member whose store timeout has passed (a
// create would wait a retry per member before it): that member is answered
// as unavailable, known to be unwritten, and is not written.
func TestPostgresBatchRetryEndsAtTimeout(t *testing.T) {
	const timeout = 4 * time.Second
	schema := pgtest.Schema(t)
	pgtest.Open(t, schema) // migrate, to add rules the domain does not have
	// A pet named slow takes 2.5 s to check, under the timeout: the
	// batch that holds it, and its retry, each finish in time, but the
	// members after it in the batch are past their timeout by their turn.
	pgtest.Exec(t, schema, `create function test_slow(name text) returns boolean language plpgsql as $$
		begin
			if name = 'slow' then
				perform pg_sleep(2.5);
			end if;
			return true;
		end $$;
		alter table pets add constraint test_no_poison check (name <> 'poison'),
			add constraint test_slow check (test_slow(name))`)
	g, dbURL := newGate(t, schema)
	s := pgtest.Open(t, dbURL)
	pgstore.SetTimeout(s, timeout)
	ctx := context.Background()
	create := creating(ctx, s)
	head, tail := queueBehind(t, g, s, create("first", ""), create("slow", ""), create("poison", ""), create("late", ""))
	g.release()
	if r := <-head; r.err != nil {
		t.Fatal(r.err)
	}
	slow, poison, late := <-tail[0], <-tail[1], <-tail[2]
	if slow.err != nil {
		t.Fatalf("slow, retried within its timeout: %v", slow.err)
	}
	if poison.err == nil {
		t.Errorf("poison: created %+v", poison.p)
	}
	if !errors.Is(late.err, pets.ErrUnavailable) || errors.Is(late.err, pets.ErrOutcomeUnknown) {
		t.Errorf("late, past its timeout at its turn: got %+v; want ErrUnavailable, known to be unwritten", late)
	}
	stored, names := storedPets(t, s)
	if !slices.Equal(names, []string{"first", "slow"}) || stored[1] != slow.p {
		t.Fatalf("stored %+v; want first and slow (%+v) only", stored, slow.p)
	}
}

// TestPostgresBatchCanceledWhileQueued: a create whose caller gives up
// while it is queued returns at once, is known to have written nothing, and
// is never written; the creates around it are.
func TestPostgresBatchCanceledWhileQueued(t *testing.T) {
	g, dbURL := newGate(t, pgtest.Schema(t))
	s := openGated(t, dbURL)
	ctx := context.Background()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	create := creating(ctx, s)
	head, tail := queueBehind(t, g, s, create("first", ""), creating(cctx, s)("gave up", ""), create("after", ""))
	cancel()
	if r := <-tail[0]; !errors.Is(r.err, context.Canceled) || errors.Is(r.err, pets.ErrOutcomeUnknown) {
		t.Fatalf("canceled while queued: got %+v; want context.Canceled, known to be unwritten", r)
	}
	g.release()
	first, after := <-head, <-tail[1]
	if first.err != nil || after.err != nil {
		t.Fatalf("the others: %v, %v", first.err, after.err)
	}
	page, err := s.List(ctx, pets.Query{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if want := []pets.Pet{first.p, after.p}; !slices.Equal(page.Pets, want) {
		t.Fatalf("stored %+v; want %+v (nothing of the create given up)", page.Pets, want)
	}
}

// TestPostgresCloseFlushes: Close commits what is queued before it
// returns, and refuses a create that comes after it began, known to have
// written nothing.
func TestPostgresCloseFlushes(t *testing.T) {
	g, dbURL := newGate(t, pgtest.Schema(t))
	s := openGated(t, dbURL)
	ctx := context.Background()
	create := creating(ctx, s)
	head, tail := queueBehind(t, g, s, create("first", ""), create("a", ""), create("b", ""))
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	apitest.Eventually(t, "Close to begin", func() bool { return pgstore.Closing(s) })
	if _, err := s.Create(ctx, pets.NewPet{Name: "late", CategoryID: 1}); !errors.Is(err, pets.ErrUnavailable) || errors.Is(err, pets.ErrOutcomeUnknown) {
		t.Fatalf("Create after Close began: %v; want ErrUnavailable, known to be unwritten", err)
	}
	select {
	case <-closed:
		t.Fatal("Close returned while creates were queued")
	default:
	}
	g.release()
	<-closed
	var want []string
	for _, c := range append([]<-chan result{head}, tail...) {
		r := <-c
		if r.err != nil {
			t.Fatalf("a create queued before Close: %v", r.err)
		}
		want = append(want, fmt.Sprint(r.p.ID, r.p.Name))
	}
	rows, err := connect(t, dbURL).Query(ctx, "select id, name from pets order by id")
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var (
			id   int64
			name string
		)
		err := r.Scan(&id, &name)
		return fmt.Sprint(id, name), err
	})
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("stored %v, %v; want %v", got, err, want)
	}
}

// TestPostgresReadsDoNotQueueBehindCreates: while creates wait, reads on
// the same store answer at once, from a read pool of one connection: creates
// never hold a read connection, not even the batch waiting for the lock.
func TestPostgresReadsDoNotQueueBehindCreates(t *testing.T) {
	g, dbURL := newGate(t, pgtest.Schema(t))
	dbURL += "&pool_max_conns=1"
	s := openGated(t, dbURL)
	ctx := context.Background()
	const waiting = 20
	creates := make([]func() <-chan result, waiting)
	for i := range creates {
		creates[i] = func() <-chan result { return goCreate(ctx, s, fmt.Sprint("pet ", i), "") }
	}
	head, tail := queueBehind(t, g, s, creates[0], creates[1:]...)
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if _, err := s.List(rctx, pets.Query{Limit: 5}); err != nil {
				t.Errorf("List while %d creates wait: %v", waiting, err)
			}
			if _, err := s.Get(rctx, 1); !errors.Is(err, pets.ErrNotFound) {
				t.Errorf("Get while %d creates wait: %v; want ErrNotFound at once", waiting, err)
			}
		})
	}
	wg.Wait()
	g.release()
	for _, c := range append([]<-chan result{head}, tail...) {
		if r := <-c; r.err != nil {
			t.Fatal(r.err)
		}
	}
}

// TestPostgresBatchLostCommit: the connection fails after a batch's COMMIT
// was sent: every member may have been created, and is told so; each was.
func TestPostgresBatchLostCommit(t *testing.T) {
	schema := pgtest.Schema(t)
	g, _ := newGate(t, schema)
	proxy, dbURL := pgtest.NewProxy(t, schema)
	u, _ := url.Parse(dbURL)
	q := u.Query()
	q.Set("application_name", g.app)
	u.RawQuery = q.Encode()
	s := openGated(t, u.String())
	ctx := context.Background()
	create := creating(ctx, s)
	head, tail := queueBehind(t, g, s, create("first", ""), create("lost answer", ""), create("b", "kb"), create("c", ""))
	proxy.LoseAnswerTo("lost answer")
	g.release()
	if r := <-head; r.err != nil {
		t.Fatal(r.err)
	}
	for _, c := range tail {
		if r := <-c; !errors.Is(r.err, pets.ErrOutcomeUnknown) {
			t.Errorf("a member of the batch whose answer was lost: got %+v; want ErrOutcomeUnknown", r)
		}
	}
	var (
		p        pets.Pet
		replayed bool
		err      error
	)
	apitest.Eventually(t, "the keyed member's retry to be answered", func() bool {
		p, replayed, err = s.CreateOnce(ctx, pets.NewPet{Name: "b", CategoryID: 1}, idemKey("kb"))
		return !errors.Is(err, pets.ErrUnavailable)
	})
	if err != nil || !replayed || p.Name != "b" {
		t.Fatalf("retry: %+v replayed %v, %v; want b, replayed", p, replayed, err)
	}
	if n, err := s.Count(ctx); err != nil || n != 4 {
		t.Fatalf("Count: %d, %v; want 4 (every member was committed)", n, err)
	}
}

// TestPostgresKeyWaitsItsTurn: creates with one key that meet, queued on
// one store or sent by two, make one pet: the first creates it, a later
// one with the same request replays it, one with another request is
// refused.
func TestPostgresKeyWaitsItsTurn(t *testing.T) {
	schema := pgtest.Schema(t)
	g, dbURL := newGate(t, schema)
	s, other := openGated(t, dbURL), openGated(t, dbURL)
	ctx := context.Background()
	head := goCreate(ctx, s, "Rex", "k")
	apitest.Eventually(t, "the first batch to wait for the lock", func() bool { return g.waiting(t) == 1 })
	// Another store's batch with k waits at the gate too, behind it.
	fromOther := goCreate(ctx, other, "Rex", "k")
	apitest.Eventually(t, "the other store's batch to wait for the lock", func() bool { return g.waiting(t) == 2 })
	tail := []<-chan result{fromOther, goCreate(ctx, s, "Rex", "k")}
	apitest.Eventually(t, "a create to queue", func() bool { return pgstore.Waiting(s) == 1 })
	tail = append(tail, goCreate(ctx, s, "Tom", "k"))
	apitest.Eventually(t, "two creates to queue", func() bool { return pgstore.Waiting(s) == 2 })
	g.release()
	first := <-head
	if first.err != nil || first.replayed {
		t.Fatalf("first: %+v; want created", first)
	}
	for i, c := range tail {
		r := <-c
		switch {
		case i < 2 && (r.err != nil || !r.replayed || r.p != first.p):
			t.Errorf("same request %d: %+v; want %+v replayed", i, r, first.p)
		case i == 2 && !errors.Is(r.err, pets.ErrKeyReused):
			t.Errorf("another request: %+v; want ErrKeyReused", r)
		}
	}
	if n, err := s.Count(ctx); err != nil || n != 1 {
		t.Fatalf("Count: %d, %v; want 1", n, err)
	}
}

// TestPostgresBatchMeetsRecords: in one batch, members whose keys are
// recorded each get their own record's answer, beside members that create:
// a replay of the recorded pet, a refusal for another request, and new
// pets for a new key and for no key.
func TestPostgresBatchMeetsRecords(t *testing.T) {
	schema := pgtest.Schema(t)
	ctx := context.Background()
	var recorded []pets.Pet
	for _, k := range []string{"ka", "kb"} {
		r := <-goCreate(ctx, pgtest.Open(t, schema), "recorded "+k, k)
		if r.err != nil {
			t.Fatal(r.err)
		}
		recorded = append(recorded, r.p)
	}
	g, dbURL := newGate(t, schema)
	s := openGated(t, dbURL)
	create := creating(ctx, s)
	head, tail := queueBehind(t, g, s, create("first", ""),
		create("recorded kb", "kb"), create("a", ""), create("recorded ka, changed", "ka"), create("c", "kc"))
	g.release()
	if r := <-head; r.err != nil {
		t.Fatal(r.err)
	}
	conn := connect(t, dbURL)
	var created []int64
	for i, c := range tail {
		r := <-c
		switch {
		case i == 0 && (r.err != nil || !r.replayed || r.p != recorded[1]):
			t.Errorf("replay in a batch: got %+v; want %+v replayed", r, recorded[1])
		case i == 2 && !errors.Is(r.err, pets.ErrKeyReused):
			t.Errorf("another request in a batch: got %+v; want ErrKeyReused", r)
		case (i == 1 || i == 3) && (r.err != nil || r.replayed):
			t.Errorf("create %d in a batch: got %+v; want created", i, r)
		case i == 1 || i == 3:
			if got, err := s.Get(ctx, r.p.ID); err != nil || got != r.p {
				t.Errorf("create %d: acknowledged %+v, stored %+v, %v", i, r.p, got, err)
			}
			created = append(created, r.p.ID)
		}
	}
	if xs := xmins(t, conn, created...); len(xs) != 2 || xs[0] != xs[1] {
		t.Errorf("transactions %v of the two creates: want one batch", xs)
	}
	if n, err := s.Count(ctx); err != nil || n != 5 {
		t.Fatalf("Count: %d, %v; want 5", n, err)
	}
}

// TestPostgresBatchesPlanOnce: the statements of batches are planned
// generically, once, whatever the batches' lengths: a custom plan costs more
// backend CPU than a lone create's whole transaction did before batches.
func TestPostgresBatchesPlanOnce(t *testing.T) {
	s := pgtest.Open(t, pgtest.Schema(t))
	ctx := context.Background()
	for i := range 12 {
		if _, err := s.Create(ctx, pets.NewPet{Name: "Rex", CategoryID: 1}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.CreateOnce(ctx, pets.NewPet{Name: "Rex", CategoryID: 1}, idemKey(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	custom, generic, err := pgstore.CommitterPlans(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	// Each plain create: insert-one and count; each keyed: sweep,
	// insert-keyed and count.
	if custom != 0 || generic < 12*2+12*3 {
		t.Fatalf("the committer's batch statements: %d custom plans, %d generic; want none custom, every one of 60 generic", custom, generic)
	}
}

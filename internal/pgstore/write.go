package pgstore

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/petstore/petstore/internal/pets"
)

// Creates commit in batches (group commit). A create that finds nobody
// committing commits its own batch, in its own goroutine: a lone create is
// sent at once, with no linger timer and no hand-off. Creates that arrive
// meanwhile queue, and the store's committer goroutine then takes every
// create waiting, batch after batch, until none waits. A batch commits in
// one transaction, one round trip, on the store's one write connection:
//
//	lock    take CreateLock, a transaction-scoped advisory lock
//	sweep   remove a few expired idempotency keys (keyed batches only)
//	insert  take an id for each member, insert the pets (and record the
//	        keys: insert-keyed, for a batch with a key; insert-one, for a
//	        lone create without one)
//	count   add the pets inserted to pet_count
//	        COMMIT (implicit, at the batch's Sync)
//
// Ids come from the identity's sequence, which hands out numbers in the
// order transactions ask, not the order they commit: without the lock, a
// batch that took id 5 could commit after one that took id 6, and a client
// that listed after=6 in between would never see pet 5. PostgreSQL
// releases the lock only once the commit is visible, so id order is commit
// order, cluster-wide: once a pet is visible, every pet with a smaller id is
// visible too or was never written, and listing stays a plain index range
// scan with no lock at all. The lock is held for the batch's statements and
// its commit's WAL flush, never for a network round trip; a batch of k
// creates costs one flush, not k, and while it commits the next batch
// gathers. BENCHMARKS.md (PostgreSQL) measures it.
//
// One member's values never fail another: a batch the server refuses for a
// value (memberFault) is retried member by member, and each caller gets its
// own outcome; a refusal no member's values cause fails every member, with
// no retry. A batch
// whose connection fails after it was sent may have committed: every member
// is told so (pets.ErrOutcomeUnknown).

// CreateLock is the key of the advisory lock that orders ids by commit
// (pg_locks shows the batches that wait for it). Any value unique to this
// application does; this one is "petstore" in ASCII.
const CreateLock int64 = 0x70657473746f7265

// maxBatch bounds the creates of one transaction.
const maxBatch = 1024

// sweepExpired is how many expired idempotency keys a batch removes for each
// keyed create in it, oldest first through the expiry index: more than one,
// so that removal outpaces expiry, and few, so that no batch pays for a
// backlog under the lock.
const sweepExpired = 4

// Step is one statement of the transaction that commits a batch, named
// for what it does (the Step* names).
type Step struct {
	Name string
	SQL  string
}

// The steps of a batch's transaction, and the statements Open gives them.
const (
	StepLock        = "lock"
	StepSweep       = "sweep"
	StepInsertOne   = "insert-one"
	StepInsert      = "insert"
	StepInsertKeyed = "insert-keyed"
	StepCount       = "count"
)

// batchSteps is the transaction of a batch, in order (see above): a batch
// runs one of the two inserts.
var batchSteps = []Step{
	{StepLock, lockBatch},
	{StepSweep, sweepKeys},
	{StepInsertOne, insertOne},
	{StepInsert, insertBatch},
	{StepInsertKeyed, insertKeyedBatch},
	{StepCount, countBatch},
}

// WithSteps replaces the statements of a batch's transaction with what edit
// makes of them. Only the chaos run's broken builds use it
// (internal/chaos/broken), to plant a defect in the write path and prove the
// audit catches it: the store keeps its promises with the steps Open sets,
// and with no others. A step of a name not above runs without parameters.
func WithSteps(edit func([]Step) []Step) Option {
	return func(c *config) { c.steps = edit(append([]Step(nil), c.steps...)) }
}

// The statements of a batch. insertBatch takes every member's id in m, in
// input order (nextval in a CTE materialized once: each member's row and
// id stay together, whatever order the insert and RETURNING take), inserts
// the pets, leaves their number in a setting local to the transaction, for
// countBatch, and answers each member's id, in input order. insertOne is
// the same for a batch of one create without a key, a plain insert: a lone
// create costs what it did before batches (the array statement takes some
// 30 µs more of the backend's CPU).
// insertKeyedBatch also records each keyed member's key, unless a live
// record of it exists (an expired one is replaced), inserts only the pets
// of the members without a key and of those whose key it recorded, and
// answers for each member whether its pet was inserted, and for one that
// was not, the live record it met: the record's fingerprint and pet (see
// CreateOnce). Both tests of liveness compare with now(), the
// transaction's start, so a member either is inserted or meets a record.
// No statement scans a table, whatever the plan (TestPostgresBatchPlans).
const (
	// lockBatch also makes the rest of the transaction plan generically:
	// the statements take arrays, whose length custom plans would plan
	// anew on every call (a quarter of a millisecond for the insert);
	// generic plans are made once, the same for every length. Local to
	// the transaction, not a setting of the session: a connection pooler
	// may refuse startup parameters, or share sessions.
	lockBatch = `select pg_advisory_xact_lock($1), set_config('plan_cache_mode', 'force_generic_plan', true)`
	sweepKeys = `delete from idempotency_keys where (owner, key) in (
		select owner, key from idempotency_keys where expires_at <= now()
		order by expires_at limit $1 for update skip locked)`
	countBatch = `update pet_count set n = n + current_setting('petstore.inserted')::bigint
		where current_setting('petstore.inserted')::bigint > 0`
)

// The inserts, over the columns of petColumns (expand).
var (
	insertOne = expand(`insert into pets ({cols}) values ({params})
		returning id, set_config('petstore.inserted', '1', true) is not null`)
	insertBatch = expand(`with m as materialized (
			select u.ord, nextval('pets_id_seq') as id, {cols}
			from unnest({arrays}) with ordinality as u({cols}, ord)
		), p as (
			insert into pets (id, {cols}) overriding system value
			select id, {cols} from m
		), n as (
			select set_config('petstore.inserted', (select count(*) from m)::text, true)
		)
		select m.id, true from m, n order by m.ord`)
	insertKeyedBatch = expand(`with m as materialized (
			select u.ord, nextval('pets_id_seq') as id, {cols},
				u.owner, u.key, u.fingerprint, u.ttl
			from unnest({arrays}, {keys})
				with ordinality as u({cols}, owner, key, fingerprint, ttl, ord)
		), k as (
			insert into idempotency_keys as old (owner, key, fingerprint, pet_id, expires_at)
			select owner, key, fingerprint, id, now() + make_interval(secs => ttl) from m where key is not null
			on conflict (owner, key) do update
				set fingerprint = excluded.fingerprint, pet_id = excluded.pet_id, expires_at = excluded.expires_at
				where old.expires_at <= now()
			returning pet_id
		), p as (
			insert into pets (id, {cols}) overriding system value
			select id, {cols} from m where key is null or id in (select pet_id from k)
			returning id
		), n as (
			select set_config('petstore.inserted', (select count(*) from p)::text, true)
		)
		select coalesce(o.pet_id, m.id), p.id is not null, o.fingerprint, {r.cols}
		from m cross join n
		left join p using (id)
		left join (idempotency_keys o join pets r on r.id = o.pet_id)
			on (o.owner, o.key) = (m.owner, m.key) and o.expires_at > now() and p.id is null
		order by m.ord`)
)

// Create stores n and returns it with its new ID, committed in a batch
// with whatever other creates are waiting (see above).
func (s *Store) Create(ctx context.Context, n pets.NewPet) (pets.Pet, error) {
	n, err := n.Normalize()
	if err != nil {
		return pets.Pet{}, err
	}
	o := s.submit(ctx, &member{pet: n})
	return o.pet, o.err
}

// CreateOnce stores n unless k was recorded, within its TTL, for an earlier
// create. The create joins a batch like any other: under the create lock,
// the key's record is written with the pet unless a live one exists, which
// every create that recorded it committed before the lock was taken. So no
// create with k is ever in flight at that point: a second call with k
// waits its turn, then meets the first one's record in the same statement
// (whose snapshot, taken after the lock, holds it), which is replayed, or
// refused with ErrKeyReused for another request. The primary key on
// (owner, key) decides between the members of one batch, where the
// queue's owner never puts k twice.
func (s *Store) CreateOnce(ctx context.Context, n pets.NewPet, k pets.IdempotencyKey) (pets.Pet, bool, error) {
	n, err := n.Normalize()
	if err != nil {
		return pets.Pet{}, false, err
	}
	fp := n.Fingerprint()
	o := s.submit(ctx, &member{pet: n, key: &k, fp: fp})
	switch {
	case o.err != nil || !o.exists:
		return o.pet, false, o.err
	case o.seen == nil:
		// A record the snapshot lacks was committed during the statement:
		// only by a create that did not take the lock.
		return pets.Pet{}, false, fmt.Errorf("pgstore: create: key %.64q: %w", k.Key, pets.ErrKeyInFlight)
	case !bytes.Equal(o.seen, fp[:]):
		return pets.Pet{}, false, fmt.Errorf("pgstore: create: key %.64q: %w", k.Key, pets.ErrKeyReused)
	}
	return o.pet, true, nil
}

// member is one create, waiting for a batch or in one.
type member struct {
	caller context.Context // the caller's
	ctx    context.Context // the caller's, bounded by the store's timeout
	pet    pets.NewPet     // normalized
	key    *pets.IdempotencyKey
	fp     [32]byte
	state  atomic.Int32 // queued, taken or dropped
	done   chan outcome // the answer to a taken member
}

// A member's states: the queue's owner takes a queued member into a batch, or
// drops it when its caller gave up; the caller drops it when it gives up
// first. A dropped member is never written.
const (
	queued int32 = iota
	taken
	dropped
)

// outcome is the answer to a member.
type outcome struct {
	pet    pets.Pet
	exists bool   // its key was recorded already: nothing inserted
	seen   []byte // when exists, the fingerprint of the key's record, if met
	err    error
}

// submit queues m and waits for its outcome. A caller that finds nobody
// owning the queue becomes its leader: it commits the batch its own create
// heads in its own goroutine, so that a lone create is sent at once with no
// hand-off, then hands whatever waits behind it to the committer goroutine,
// which commits batch after batch until the queue is empty. A caller that
// gives up while m is queued gets its context's error, and m is never
// written; one that gives up while m's batch is being sent is told the
// create may have been stored. Only the store's own timeout does not end
// the wait for a batch that was sent: that batch is bounded by its own.
func (s *Store) submit(ctx context.Context, m *member) outcome {
	qctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	m.caller, m.ctx, m.done = ctx, qctx, make(chan outcome, 1)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return outcome{err: fmt.Errorf("pgstore: create: %w: the store is closed", pets.ErrUnavailable)}
	}
	s.waiting = append(s.waiting, m)
	lead := !s.busy
	s.busy = true
	s.mu.Unlock()
	if lead {
		s.lead()
	}

	select {
	case o := <-m.done:
		return o
	case <-qctx.Done():
	}
	if m.state.CompareAndSwap(queued, dropped) || m.state.Load() == dropped {
		return outcome{err: classify("create", qctx.Err())}
	}
	if ctx.Err() != nil {
		return outcome{err: fmt.Errorf("pgstore: create: %w: %w: %w", pets.ErrUnavailable, pets.ErrOutcomeUnknown, ctx.Err())}
	}
	return <-m.done
}

// lead commits the next batch, then gives up the queue: to nobody when it
// is empty, else to the committer.
func (s *Store) lead() {
	if batch := s.take(); len(batch) > 0 {
		s.commit(batch)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.waiting) == 0 {
		s.busy = false
		s.idle.Broadcast()
		return
	}
	s.wake <- struct{}{} // never blocks: the committer owns nothing now
}

// commitLoop is the committer: handed the queue, it commits batch after
// batch until the queue is empty; it returns when the store is closed.
func (s *Store) commitLoop() {
	defer close(s.stopped)
	for {
		select {
		case <-s.quit:
			return
		case <-s.wake:
		}
		for s.owning() {
			if batch := s.take(); len(batch) > 0 {
				s.commit(batch)
			}
		}
	}
}

// owning reports whether creates wait; when none does, the committer gives
// up the queue.
func (s *Store) owning() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.waiting) > 0 {
		return true
	}
	s.busy = false
	s.idle.Broadcast()
	return false
}

// take removes from the queue the members of the next batch: up to
// maxBatch, in order, a key at most once (a second create with a key waits
// for the next batch, where it finds the first one's record). Only the
// queue's owner calls it.
func (s *Store) take() []*member {
	var batch []*member
	s.mu.Lock()
	var keys map[pets.IdempotencyKey]bool
	rest := s.waiting[:0]
	for _, m := range s.waiting {
		if len(batch) == maxBatch || m.key != nil && keys[idOf(m.key)] {
			rest = append(rest, m)
			continue
		}
		if m.key != nil {
			if keys == nil {
				keys = map[pets.IdempotencyKey]bool{}
			}
			keys[idOf(m.key)] = true
		}
		batch = append(batch, m)
	}
	clear(s.waiting[len(rest):])
	s.waiting = rest
	s.mu.Unlock()

	kept := batch[:0]
	for _, m := range batch {
		if m.ctx.Err() != nil {
			m.state.CompareAndSwap(queued, dropped)
			continue
		}
		if m.state.CompareAndSwap(queued, taken) {
			kept = append(kept, m)
		}
	}
	return kept
}

// idOf is what makes two keys the same key.
func idOf(k *pets.IdempotencyKey) pets.IdempotencyKey {
	return pets.IdempotencyKey{Owner: k.Owner, Key: k.Key}
}

// commit commits batch and answers each member. When the server refuses a
// batch of several for a member's value (memberFault), the members are
// committed again one by one, each in a batch of its own, so that one
// member's bad value fails only that member. A member whose wait is over
// (its caller gone, or the store's timeout passed) is not retried, so that
// no create waits more than a timeout to be sent: it is answered with its
// context's error, and nothing of it was written.
func (s *Store) commit(batch []*member) {
	outs, sent, err := s.send(batch)
	if err == nil {
		for i, m := range batch {
			m.done <- outs[i]
		}
		return
	}
	if pe := refusal(err); sent && len(batch) > 1 && pe != nil && memberFault(pe.Code) {
		for _, m := range batch {
			if err := m.ctx.Err(); err != nil {
				m.done <- outcome{err: classify("create", err)}
				continue
			}
			s.commit([]*member{m})
		}
		return
	}
	for _, m := range batch {
		m.done <- outcome{err: err}
	}
}

// memberFault reports whether a SQLSTATE is one a member's values can
// cause: a cardinality violation (21, such as one key twice in a statement),
// a data exception (22, such as a value out of range or badly encoded) or an
// integrity constraint violation (23, such as a check or a key). Any other
// refusal (a privilege, a missing table, a broken statement) is the batch's,
// and would refuse each member alone as well.
func memberFault(code string) bool {
	return strings.HasPrefix(code, "21") || strings.HasPrefix(code, "22") || strings.HasPrefix(code, "23")
}

// send runs batch's transaction in one round trip and returns each
// member's outcome, or the error classified for every member: nothing
// written, unless it wraps pets.ErrOutcomeUnknown; sent is false when it
// failed to connect. The transaction's context carries the first member's
// values (its trace), not its end.
func (s *Store) send(batch []*member) (outs []outcome, sent bool, err error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(batch[0].ctx), s.timeout)
	defer cancel()
	// Acquired apart from the send, so that a failure to connect is known
	// to have written nothing.
	conn, err := s.writes.Acquire(ctx)
	if err != nil {
		return nil, false, classify("create", err)
	}
	defer conn.Release()
	outs = make([]outcome, len(batch))
	if err := conn.SendBatch(ctx, s.queue(batch, outs)).Close(); err != nil {
		return nil, true, classifySent("create", err)
	}
	return outs, true, nil
}

// queue makes the pgx batch of the steps for batch; the insert's answer
// fills outs.
func (s *Store) queue(batch []*member, outs []outcome) *pgx.Batch {
	k, keyed := len(batch), 0
	for _, m := range batch {
		if m.key != nil {
			keyed++
		}
	}
	insert := StepInsert
	switch {
	case keyed > 0:
		insert = StepInsertKeyed
	case k == 1:
		insert = StepInsertOne
	}
	scan := func(rows pgx.Rows) error { return scanBatch(rows, batch, outs, insert == StepInsertKeyed) }
	b := &pgx.Batch{}
	for _, st := range s.steps {
		switch {
		case st.Name == StepLock:
			b.Queue(st.SQL, CreateLock)
		case st.Name == StepSweep:
			if keyed > 0 {
				b.Queue(st.SQL, sweepExpired*keyed)
			}
		case st.Name != insert && slices.Contains(inserts, st.Name):
		case st.Name == StepInsertOne:
			b.Queue(st.SQL, columnArgs(&batch[0].pet)...).Query(scan)
		case st.Name == StepInsert:
			b.Queue(st.SQL, columnArrays(batch)...).Query(scan)
		case st.Name == StepInsertKeyed:
			owners, keys, fingerprints, ttls := keyArgs(batch)
			b.Queue(st.SQL, append(columnArrays(batch), owners, keys, fingerprints, ttls)...).Query(scan)
		default: // count, or a step without parameters
			b.Queue(st.SQL)
		}
	}
	return b
}

// inserts are the steps of which a batch runs one.
var inserts = []string{StepInsertOne, StepInsert, StepInsertKeyed}

// keyArgs are the key columns of insertKeyedBatch: NULL for a member
// without a key.
func keyArgs(batch []*member) (owners, keys []*string, fingerprints [][]byte, ttls []float64) {
	owners, keys = make([]*string, len(batch)), make([]*string, len(batch))
	fingerprints, ttls = make([][]byte, len(batch)), make([]float64, len(batch))
	for i, m := range batch {
		if m.key != nil {
			owners[i], keys[i], fingerprints[i], ttls[i] = &m.key.Owner, &m.key.Key, m.fp[:], m.key.TTL.Seconds()
		}
	}
	return owners, keys, fingerprints, ttls
}

// scanBatch reads the insert's answer, a row a member in input order, into
// outs. The keyed insert's rows also carry the key's record a member met
// instead of being inserted (a NULL fingerprint and zero values when
// none): its pet's id in the id column, its fingerprint and its pet's
// columns.
func scanBatch(rows pgx.Rows, batch []*member, outs []outcome, keyed bool) error {
	// One set of destinations serves every row: Scan sets each of the
	// nullable ones, NULL to nil.
	var (
		id       int64
		inserted bool
		seen     []byte
		met      pets.Pet // the record's pet, zero where none was met
	)
	dest := []any{&id, &inserted}
	if keyed {
		dest = append(append(dest, &seen), petDest(&met)...)
	}
	i := 0
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		if i < len(batch) {
			p := batch[i].pet.WithID(id)
			if seen != nil {
				p, p.ID = met, id
			}
			outs[i] = outcome{pet: p, exists: !inserted, seen: seen}
		}
		i++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if i != len(batch) {
		return fmt.Errorf("pgstore: create: %d rows for a batch of %d", i, len(batch))
	}
	return nil
}

package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/pgstore"
	"github.com/petstore/petstore/internal/pgtest"
)

var rex = pets.NewPet{Name: "Rex", CategoryID: 3}

func idemKey(k string) pets.IdempotencyKey {
	return pets.IdempotencyKey{Owner: "alice", Key: k, TTL: time.Hour}
}

// TestPostgresLostCommit is the case Idempotency-Key exists for: the
// connection fails after COMMIT was sent, so the database stored the pet but
// the store never heard. CreateOnce says the outcome is unknown (not that
// nothing was written); a retry with the same key gets the stored pet, and
// exactly one pet exists.
func TestPostgresLostCommit(t *testing.T) {
	proxy, dbURL := pgtest.NewProxy(t, pgtest.Schema(t))
	s := pgtest.Open(t, dbURL)
	ctx := context.Background()
	// The fingerprint is sent (as a bytea parameter) only with the batch
	// that ends in COMMIT.
	proxy.LoseAnswerTo(fingerprint(t, rex))
	_, _, err := s.CreateOnce(ctx, rex, idemKey("lost"))
	if !errors.Is(err, pets.ErrOutcomeUnknown) || !errors.Is(err, pets.ErrUnavailable) {
		t.Fatalf("CreateOnce whose COMMIT answer is lost: got %v, want ErrOutcomeUnknown and ErrUnavailable", err)
	}
	var (
		p        pets.Pet
		replayed bool
	)
	apitest.Eventually(t, "the retry to be answered", func() bool {
		p, replayed, err = s.CreateOnce(ctx, rex, idemKey("lost"))
		return !errors.Is(err, pets.ErrUnavailable)
	})
	if err != nil || !replayed {
		t.Fatalf("retry: got %+v, replayed %v, %v; want the stored pet, replayed", p, replayed, err)
	}
	page, err := s.List(ctx, pets.Query{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Pets) != 1 || page.Pets[0] != p {
		t.Fatalf("after the lost commit and the retry: got %+v, want exactly [%+v]", page.Pets, p)
	}
	if n, _ := s.Count(ctx); n != 1 {
		t.Fatalf("Count: got %d, want 1", n)
	}
}

// fingerprint returns the bytes of n's fingerprint, as the store sends them.
func fingerprint(t *testing.T, n pets.NewPet) string {
	t.Helper()
	n, err := n.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	fp := n.Fingerprint()
	return string(fp[:])
}

// TestPostgresClassifySent: only a failure after something was sent, that
// is not the server's refusal (an ERROR: a FATAL one ends the session,
// maybe after COMMIT), leaves the outcome unknown.
func TestPostgresClassifySent(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		unknown bool
	}{
		{"server refused", &pgconn.PgError{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: "23514"}, false},
		{"server refused, before 9.6", &pgconn.PgError{Severity: "ERROR", Code: "40001"}, false},
		{"statement cancelled", &pgconn.PgError{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: "57014"}, false},
		{"session ended (FATAL), maybe after COMMIT", &pgconn.PgError{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: "57P01"}, true},
		{"session ended (FATAL), localized", &pgconn.PgError{Severity: "SCHWERWIEGEND", SeverityUnlocalized: "FATAL", Code: "57P01"}, true},
		{"context done before sending", fmt.Errorf("send: %w", context.DeadlineExceeded), true},
		{"connection lost after sending", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"connection closed while reading", fmt.Errorf("read: %w", pgconn.ErrConnClosed), true},
	} {
		err := pgstore.ClassifySent("create", tc.err)
		if got := errors.Is(err, pets.ErrOutcomeUnknown); got != tc.unknown {
			t.Errorf("%s: %v wraps ErrOutcomeUnknown: %v, want %v", tc.name, err, got, tc.unknown)
		}
	}
}

// TestPostgresSweepExpiredKeys: a batch with one keyed create removes at
// most SweepExpired expired keys, oldest first, through the expiry index,
// and touches no live key.
func TestPostgresSweepExpiredKeys(t *testing.T) {
	dbURL := pgtest.Schema(t)
	s := pgtest.Open(t, dbURL)
	conn := connect(t, dbURL)
	ctx := context.Background()
	const live, expired = 20000, 40
	if _, err := conn.Exec(ctx, fmt.Sprintf(`insert into pets (name, category_id, status) values ('old', 1, 'sold');
		insert into idempotency_keys (owner, key, fingerprint, pet_id, expires_at)
			select 'bob', 'k' || i, sha256(i::text::bytea), 1,
				case when i <= %d then now() - interval '1 hour' + i * interval '1 second' else now() + interval '1 day' end
			from generate_series(1, %d) as i;
		analyze idempotency_keys`, expired, live+expired)); err != nil {
		t.Fatal(err)
	}
	count := func(cond string) int {
		var n int
		if err := conn.QueryRow(ctx, "select count(*) from idempotency_keys where "+cond).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if _, _, err := s.CreateOnce(ctx, rex, idemKey("new")); err != nil {
		t.Fatal(err)
	}
	if got, want := count("expires_at <= now()"), expired-pgstore.SweepExpired; got != want {
		t.Fatalf("expired keys after one CreateOnce: got %d, want %d", got, want)
	}
	if got := count("key = 'k1'"); got != 0 {
		t.Fatalf("the oldest expired key is still there")
	}
	if got := count("expires_at > now()"); got != live+1 {
		t.Fatalf("live keys: got %d, want %d", got, live+1)
	}

	plan, raw := explain(t, genericTx(t, conn), pgstore.SweepKeys, pgstore.SweepExpired)
	byExpiry := false
	plan.walk(func(n *planNode) {
		if n.NodeType == "Seq Scan" {
			t.Errorf("the sweep scans the table:\n%s", raw)
		}
		if n.IndexName == "idempotency_keys_expires_at" {
			byExpiry = true
		}
	})
	if !byExpiry {
		t.Errorf("the sweep does not use the expiry index:\n%s", raw)
	}
}

// TestPostgresSessionEndsAfterCommit: the server ends the session (a FATAL
// error, as pg_terminate_backend or a shutdown sends) after it ran the
// COMMIT. That is no refusal: the pet was stored, so the store must say the
// outcome is unknown, not that nothing was written. The chaos run found
// this as a phantom pet: a keyless create answered "nothing was written"
// whose pet was there.
func TestPostgresSessionEndsAfterCommit(t *testing.T) {
	proxy, dbURL := pgtest.NewProxy(t, pgtest.Schema(t))
	s := pgtest.Open(t, dbURL)
	ctx := context.Background()

	// Create's one batch carries the pet's name, CreateOnce's second one
	// the fingerprint.
	tom := pets.NewPet{Name: "Tom, who ends the session", CategoryID: 3}
	proxy.EndSessionAfter(tom.Name)
	if _, err := s.Create(ctx, tom); !errors.Is(err, pets.ErrOutcomeUnknown) {
		t.Errorf("Create whose session ends after COMMIT: got %v, want ErrOutcomeUnknown", err)
	}
	proxy.EndSessionAfter(fingerprint(t, rex))
	if _, _, err := s.CreateOnce(ctx, rex, idemKey("ended")); !errors.Is(err, pets.ErrOutcomeUnknown) {
		t.Errorf("CreateOnce whose session ends after COMMIT: got %v, want ErrOutcomeUnknown", err)
	}
	var (
		p        pets.Pet
		replayed bool
		err      error
	)
	apitest.Eventually(t, "the retry to be answered", func() bool {
		p, replayed, err = s.CreateOnce(ctx, rex, idemKey("ended"))
		return !errors.Is(err, pets.ErrUnavailable)
	})
	if err != nil || !replayed {
		t.Fatalf("retry: got %+v, replayed %v, %v; want the stored pet, replayed", p, replayed, err)
	}
	if n, _ := s.Count(ctx); n != 2 {
		t.Fatalf("Count: got %d, want 2 (both creates committed)", n)
	}
}

// TestPostgresExpiredKeyReplaced: a key whose record expired but is still
// stored (older expired keys took the sweep) names a new create: the pet
// is created, not replayed, and the record now names it.
func TestPostgresExpiredKeyReplaced(t *testing.T) {
	dbURL := pgtest.Schema(t)
	s := pgtest.Open(t, dbURL)
	conn := connect(t, dbURL)
	ctx := context.Background()
	if _, err := conn.Exec(ctx, fmt.Sprintf(`insert into pets (name, category_id, status) values ('old', 1, 'sold');
		insert into idempotency_keys (owner, key, fingerprint, pet_id, expires_at)
			select 'bob', 'k' || i, sha256(i::text::bytea), 1, now() - interval '1 hour' - i * interval '1 second'
			from generate_series(1, %d) as i`, 2*pgstore.SweepExpired)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `insert into idempotency_keys (owner, key, fingerprint, pet_id, expires_at)
		values ('alice', 'stale', $1, 1, now() - interval '1 minute')`, []byte(fingerprint(t, rex))); err != nil {
		t.Fatal(err)
	}
	p, replayed, err := s.CreateOnce(ctx, rex, idemKey("stale"))
	if err != nil || replayed || p.ID == 1 {
		t.Fatalf("CreateOnce with an expired key still stored: got %+v, replayed %v, %v; want a new pet", p, replayed, err)
	}
	var petID int64
	if err := conn.QueryRow(ctx, "select pet_id from idempotency_keys where owner = 'alice' and key = 'stale'").Scan(&petID); err != nil || petID != p.ID {
		t.Fatalf("the key's record names pet %d, %v; want %d", petID, err, p.ID)
	}
	if again, replayed, err := s.CreateOnce(ctx, rex, idemKey("stale")); err != nil || !replayed || again != p {
		t.Fatalf("retry: got %+v, replayed %v, %v; want %+v replayed", again, replayed, err, p)
	}
}

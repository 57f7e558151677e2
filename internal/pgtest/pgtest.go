// Package pgtest gives tests an empty PostgreSQL database of their own: a
// fresh schema in the database at PETSTORE_TEST_DATABASE_URL, dropped when
// the test ends. `make test` (and `make test-postgres`) starts a throwaway
// cluster and sets that variable wherever PostgreSQL's binaries are;
// without it the tests skip, except under CI=true, where a missing
// database fails them.
package pgtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/pgstore"
)

// EnvURL names the variable that holds the test database's URL.
const EnvURL = "PETSTORE_TEST_DATABASE_URL"

// URL returns the test database's URL, or skips t (fails it under CI=true)
// when there is none.
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u != "" {
		return u
	}
	const msg = EnvURL + " is not set: run `make test` (or `make test-postgres`), which starts a throwaway PostgreSQL cluster and sets it where PostgreSQL's binaries are"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " (CI=true: PostgreSQL tests must run)")
	}
	t.Skip(msg)
	return ""
}

// Schema creates an empty schema in the test database, drops it (and all in
// it) when t ends, and returns a URL whose connections use only that schema.
func Schema(t testing.TB) string {
	t.Helper()
	base := URL(t)
	var b [6]byte
	rand.Read(b[:])
	name := "test_" + hex.EncodeToString(b[:])
	Exec(t, base, "create schema "+name)
	t.Cleanup(func() { Exec(t, base, "drop schema "+name+" cascade") })
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("pgtest: %s: %v", EnvURL, err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// Restore loads a plain SQL dump of one schema (pg_dump --schema S
// --inserts) into a new schema of its own, dropped when t ends, and returns
// dbURL with that schema first in its search_path. The dump's schema name
// is replaced wherever it is written; psql's meta-commands (\restrict) are
// left out.
func Restore(t testing.TB, dump []byte, schema string) string {
	t.Helper()
	base := URL(t)
	var b [6]byte
	rand.Read(b[:])
	name := "restored_" + hex.EncodeToString(b[:])
	var sql bytes.Buffer
	for _, line := range bytes.SplitAfter(dump, []byte("\n")) {
		if !bytes.HasPrefix(line, []byte("\\")) {
			sql.Write(bytes.ReplaceAll(line, []byte(schema), []byte(name)))
		}
	}
	t.Cleanup(func() { Exec(t, base, "drop schema if exists "+name+" cascade") })
	Exec(t, base, sql.String())
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("pgtest: %s: %v", EnvURL, err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// Exec runs one SQL statement on a connection of its own to dbURL.
func Exec(t testing.TB, dbURL, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
}

// LockPets takes an ACCESS EXCLUSIVE lock on the pets table of dbURL in a
// transaction of its own, held until t ends, and returns a probe that
// reports whether a query waits for it (this schema's pets, not any lock of
// the cluster): a store call made to hang at will.
func LockPets(t testing.TB, dbURL string) (waiting func() bool) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatalf("pgtest: begin: %v", err)
	}
	t.Cleanup(func() { tx.Rollback(ctx) })
	if _, err := tx.Exec(ctx, "lock table pets in access exclusive mode"); err != nil {
		t.Fatalf("pgtest: lock pets: %v", err)
	}
	return func() bool {
		var n int
		if err := conn.QueryRow(ctx, "select count(*) from pg_locks where not granted and relation = 'pets'::regclass").Scan(&n); err != nil {
			t.Fatalf("pgtest: pg_locks: %v", err)
		}
		return n > 0
	}
}

// Open opens a store on dbURL and closes it when t ends.
func Open(t testing.TB, dbURL string, opts ...pgstore.Option) *pgstore.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := pgstore.Open(ctx, dbURL, opts...)
	if err != nil {
		t.Fatalf("pgstore.Open: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// NewStore returns an empty store in a fresh schema, in the manner the
// behaviour suites' newStore wants.
func NewStore(t *testing.T) pets.Store {
	t.Helper()
	return Open(t, Schema(t))
}

// Proxy is a TCP proxy on 127.0.0.1 in front of the test database, which a
// test (or the chaos run, cmd/petstore-chaos) uses to play a faulty network:
// cut every connection, delay, lose or hold traffic, or lose the answer to
// one request.
type Proxy struct {
	ln     net.Listener
	target string

	mu       sync.Mutex
	closed   bool
	down     bool
	lose     []byte // see LoseAnswerTo
	loseAll  []byte // see LoseAnswersTo
	end      []byte // see EndSessionAfter
	latency  time.Duration
	dropping bool          // see Lose
	held     chan struct{} // see Hold; nil when not holding
	answers  bool          // Lose and Hold apply to the database's answers only
	links    map[*link]bool
	wg       sync.WaitGroup
}

// link is one proxied connection: the client's and the database's side.
type link struct {
	c, d net.Conn
	// dropped is set when Lose discarded some of its traffic: the
	// connection is closed when the loss ends, as TCP would give up on it.
	dropped atomic.Bool
}

func (l *link) close() {
	l.c.Close()
	l.d.Close()
}

// NewProxy starts a proxy to the host and port of dbURL and returns it with
// dbURL pointed at it. It stops when t ends.
func NewProxy(t testing.TB, dbURL string) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	p, err := StartProxy(u.Host)
	if err != nil {
		t.Fatalf("pgtest: proxy: %v", err)
	}
	t.Cleanup(p.Close)
	u.Host = p.Addr()
	return p, u.String()
}

// StartProxy starts a proxy on a free port of 127.0.0.1 to target (a
// host:port). Close stops it.
func StartProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, links: map[*link]bool{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops the proxy, closes its connections and waits for them.
func (p *Proxy) Close() {
	p.ln.Close()
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.Release()
	p.Cut()
	p.wg.Wait()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.wg.Add(1)
		go p.serve(c)
		p.mu.Unlock()
	}
}

func (p *Proxy) serve(c net.Conn) {
	defer p.wg.Done()
	d, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		c.Close()
		return
	}
	l := &link{c: c, d: d}
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		l.close()
		return
	}
	p.links[l] = true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	// lost is set when the client sends what LoseAnswerTo waits for: the
	// database's next answer then ends the connection instead of reaching
	// the client. ending is set likewise by EndSessionAfter.
	var lost, ending atomic.Bool
	pipe := func(dst, src net.Conn, fromClient bool) {
		defer func() { done <- struct{}{} }()
		buf := make([]byte, 32<<10)
		var pending []byte // the database's answer, while ending
		for {
			n, err := src.Read(buf)
			if n > 0 {
				if fromClient {
					switch p.armed(buf[:n]) {
					case armedLose:
						lost.Store(true)
					case armedEnd:
						ending.Store(true)
					}
				}
				if !fromClient && lost.Load() {
					return
				}
				if !p.delay(l, fromClient) {
					// Lose: the bytes vanish.
				} else if !fromClient && ending.Load() {
					pending = append(pending, buf[:n]...)
					out, end := untilReady(pending)
					if end {
						dst.Write(out)
						dst.Write(fatalShutdown)
						return
					}
				} else if _, err := dst.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	go pipe(d, c, true)
	go pipe(c, d, false)
	<-done
	l.close()
	<-done
	p.mu.Lock()
	delete(p.links, l)
	p.mu.Unlock()
}

// delay applies the proxy's faults to one chunk of l's traffic before it is
// passed on: it waits while the proxy holds traffic, then for the latency,
// and reports false when the chunk is to be lost.
func (p *Proxy) delay(l *link, fromClient bool) bool {
	p.mu.Lock()
	held, latency := p.held, p.latency
	spared := fromClient && p.answers
	p.mu.Unlock()
	if held != nil && !spared {
		<-held
	}
	if latency > 0 {
		time.Sleep(latency)
	}
	p.mu.Lock()
	dropping := p.dropping && !(fromClient && p.answers)
	if dropping {
		// The link is marked in the same hold of the lock that saw the
		// loss on, and EndLoss ends the loss and closes the marked links
		// in one hold of it: either EndLoss came first, and the chunk
		// passes, or the link is marked before EndLoss looks, and closed.
		// Marked after the lock is let go, a link could be passed over
		// and relay what follows the hole, a stream no TCP connection
		// delivers.
		l.dropped.Store(true)
	}
	p.mu.Unlock()
	return !dropping
}

// What a client's chunk arms.
const (
	armedNone = iota
	armedLose
	armedEnd
)

// LoseAnswerTo arms the proxy once: the next read from a client that
// contains sent (bytes only a COMMIT's message or batch carries) is passed
// to the database, and that connection is closed when the database
// answers, before the client hears it. The database acts on what it got;
// the client sees its connection fail after sending it.
func (p *Proxy) LoseAnswerTo(sent string) {
	p.mu.Lock()
	p.lose = []byte(sent)
	p.mu.Unlock()
}

// LoseAnswersTo is LoseAnswerTo for every read that contains sent, until
// LoseAnswersTo(""): each such connection is closed before the database's
// answer reaches the client.
func (p *Proxy) LoseAnswersTo(sent string) {
	p.mu.Lock()
	p.loseAll = nil
	if sent != "" {
		p.loseAll = []byte(sent)
	}
	p.mu.Unlock()
}

// EndSessionAfter arms the proxy once: the next read from a client that
// contains sent is passed to the database, whose answer is passed back up
// to its ReadyForQuery; in place of that, the client gets the FATAL error
// of a session the server terminated (SQLSTATE 57P01, as from
// pg_terminate_backend or a shutdown), and the connection closes. The
// database finished the request (a COMMIT in it committed); the client
// hears that its session ended.
func (p *Proxy) EndSessionAfter(sent string) {
	p.mu.Lock()
	p.end = []byte(sent)
	p.mu.Unlock()
}

// armed reports what chunk triggers (LoseAnswerTo, LoseAnswersTo,
// EndSessionAfter), and disarms the ones that act once.
func (p *Proxy) armed(chunk []byte) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.lose != nil && bytes.Contains(chunk, p.lose):
		p.lose = nil
		return armedLose
	case p.end != nil && bytes.Contains(chunk, p.end):
		p.end = nil
		return armedEnd
	case p.loseAll != nil && bytes.Contains(chunk, p.loseAll):
		return armedLose
	}
	return armedNone
}

// untilReady returns the whole messages of the backend stream b before its
// first ReadyForQuery ('Z'), and whether that was reached.
func untilReady(b []byte) ([]byte, bool) {
	i := 0
	for len(b)-i >= 5 {
		n := int(binary.BigEndian.Uint32(b[i+1 : i+5]))
		if b[i] == 'Z' {
			return b[:i], true
		}
		if len(b)-i < 1+n {
			break
		}
		i += 1 + n
	}
	return nil, false
}

// fatalShutdown is the ErrorResponse of a backend terminated by the
// administrator, as PostgreSQL sends it before closing the connection.
var fatalShutdown = func() []byte {
	var body []byte
	for _, f := range []struct {
		code byte
		v    string
	}{{'S', "FATAL"}, {'V', "FATAL"}, {'C', "57P01"}, {'M', "terminating connection due to administrator command"}} {
		body = append(body, f.code)
		body = append(body, f.v...)
		body = append(body, 0)
	}
	body = append(body, 0)
	msg := []byte{'E', 0, 0, 0, 0}
	binary.BigEndian.PutUint32(msg[1:], uint32(4+len(body)))
	return append(msg, body...)
}()

// Cut closes every proxied connection and refuses new ones until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for l := range p.links {
		l.close()
	}
}

// Restore accepts connections again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// SetLatency delays every chunk of traffic, both ways, by d (0: none).
func (p *Proxy) SetLatency(d time.Duration) {
	p.mu.Lock()
	p.latency = d
	p.mu.Unlock()
}

// Direction is the traffic Lose and Hold apply to.
type Direction bool

const (
	BothWays Direction = false // to and from the database
	Answers  Direction = true  // from the database only: requests get through
)

// Lose starts a silent loss of traffic: every chunk going dir is
// discarded, and connections stay open, so clients wait for answers that
// never come (with Answers, the database acts on the requests: a COMMIT
// commits). EndLoss ends it.
func (p *Proxy) Lose(dir Direction) {
	p.mu.Lock()
	p.dropping, p.answers = true, bool(dir)
	p.mu.Unlock()
}

// EndLoss ends Lose: the connections that lost traffic are closed (their
// streams are no longer whole), as TCP would give up on them; new and
// untouched ones carry on.
func (p *Proxy) EndLoss() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropping = false
	for l := range p.links {
		if l.dropped.Load() {
			l.close()
		}
	}
}

// Hold stops traffic going dir without losing it, until Release: what is
// sent meanwhile arrives, in order, after Release. With Answers, the
// database acts on the requests, and its answers wait.
func (p *Proxy) Hold(dir Direction) {
	p.mu.Lock()
	if p.held == nil && !p.closed {
		p.held, p.answers = make(chan struct{}), bool(dir)
	}
	p.mu.Unlock()
}

// Release passes the traffic Hold stopped.
func (p *Proxy) Release() {
	p.mu.Lock()
	if p.held != nil {
		close(p.held)
		p.held = nil
	}
	p.mu.Unlock()
}

// Seed inserts n pets into the store at dbURL in one statement, named
// "pet 0"…, their statuses cycling through available, pending, sold, and
// updates the planner's statistics: a fixture for benchmarks.
func Seed(t testing.TB, dbURL string, n int) {
	t.Helper()
	Exec(t, dbURL, fmt.Sprintf(`insert into pets (name, category_id, status)
		select 'pet ' || i, 1 + i %% 7, (array['available', 'pending', 'sold'])[1 + i %% 3]
		from generate_series(0, %d) as i; analyze pets`, n-1))
}

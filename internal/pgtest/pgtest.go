// Package pgtest gives tests an empty PostgreSQL database of their own: a
// fresh schema in the database at PETSTORE_TEST_DATABASE_URL, dropped when
// the test ends. `make test-postgres` starts a throwaway cluster and sets
// that variable; without it the tests skip, except under CI=true, where a
// missing database fails them.
package pgtest

import (
	"bytes"
	"context"
	"crypto/rand"
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
	const msg = EnvURL + " is not set: run `make test-postgres`, which starts a throwaway PostgreSQL cluster and sets it"
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

// Open opens a store on dbURL and closes it when t ends.
func Open(t testing.TB, dbURL string) *pgstore.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := pgstore.Open(ctx, dbURL)
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
// test can cut (every connection closed, new ones refused) and restore, to
// play a database that goes away and comes back.
type Proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	down  bool
	lose  []byte // see LoseAnswerTo
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// NewProxy starts a proxy to the host and port of dbURL and returns it with
// dbURL pointed at it. It stops when t ends.
func NewProxy(t testing.TB, dbURL string) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("pgtest: proxy: %v", err)
	}
	p := &Proxy{ln: ln, target: u.Host, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.Cut()
		p.wg.Wait()
	})
	u.Host = ln.Addr().String()
	return p, u.String()
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
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		c.Close()
		d.Close()
		return
	}
	p.conns[c], p.conns[d] = true, true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	// lost is set when the client sends what LoseAnswerTo waits for: the
	// database's next answer then ends the connection instead of reaching
	// the client.
	var lost atomic.Bool
	pipe := func(dst, src net.Conn, fromClient bool) {
		defer func() { done <- struct{}{} }()
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				if fromClient && p.armed(buf[:n]) {
					lost.Store(true)
				}
				if !fromClient && lost.Load() {
					return
				}
				if _, err := dst.Write(buf[:n]); err != nil {
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
	c.Close()
	d.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, d)
	p.mu.Unlock()
}

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

// armed reports whether chunk holds what LoseAnswerTo waits for, and
// disarms the proxy if so.
func (p *Proxy) armed(chunk []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lose == nil || !bytes.Contains(chunk, p.lose) {
		return false
	}
	p.lose = nil
	return true
}

// Cut closes every proxied connection and refuses new ones until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
}

// Restore accepts connections again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.down = false
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

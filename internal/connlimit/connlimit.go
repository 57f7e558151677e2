// Package connlimit bounds the connections an http.Server holds open, and
// the time a request body may take to arrive, in a way that keeps the
// server answering new clients at the bound.
//
// A listener that stops accepting at its bound (golang.org/x/net/netutil's
// LimitListener) leaves every new client, a health probe included, queued
// behind the slow ones. Here the listener always accepts; at the bound it
// closes the least recently active connection that is waiting for its
// client: idle between requests, or waiting for the rest of a request whose
// first bytes came (a slow client's), its head or its body, or for any byte
// at all for longer than Grace. A connection running a request, and not
// waiting for its body, is never cut. A client whose request comes whole at
// once (a probe) is served however many slow clients reconnect meanwhile:
// its connection is the most recently active, and waits for nothing.
//
// Closing starts an eighth below the bound, so that new connections have
// room while their clients' first bytes are on their way. At the bound
// itself, when no connection is closable, the least recently active one not
// running a request (or waiting for its body) is closed; when every one is
// running a request, the new connection is closed at once.
//
// A connection runs a request from the moment net/http has read its head
// to the moment net/http has written its answer whole, as http.Server's
// ConnState reports (active, then idle): not from the handler's start to
// its return, since net/http writes the answer after it returns. While the
// handler reads the request's body and the connection has nothing buffered
// for it, the connection waits for its client as an idle one does: net/
// http reports it active once the head is read, so that four creates
// trickling their bodies would otherwise hold a bound of four. A
// connection's last activity is its accept, the end of its last request,
// or the start of its last wait for body bytes.
//
// A body must also keep coming (BodyRule): its k-th byte within Grace plus
// k / MinRate seconds of the first read of the body, and the whole of it
// within Max; a read past that fails with ErrBodyTooSlow, and the
// connection's write deadline is moved so that the answer to it can still
// be written.
package connlimit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The values of the closed-at-limit counter's label.
const (
	closedLeastRecent = "least_recent"
	closedNew         = "new"
)

// Limiter bounds the connections of one http.Server (see Wrap). It is safe
// for concurrent use.
type Limiter struct {
	// Body is the rule a request body's arrival keeps (the zero rule: none);
	// set it before Wrap.
	Body BodyRule

	max  int // connections open at most
	soft int // from this many on, a new connection closes a waiting one

	epoch time.Time // what conn.last counts from

	mu    sync.Mutex
	open  int
	conns connList // the connections counted, in no order that matters

	closed    *prometheus.CounterVec
	openGauge prometheus.GaugeFunc
	maxGauge  prometheus.Gauge
}

// conn is an accepted connection.
type conn struct {
	net.Conn
	l *Limiter
	// prev, next and gone are guarded by l.mu: c's place in l.conns, and
	// whether it is closed or no longer the Limiter's.
	prev, next *conn
	gone       bool
	since      time.Time // accepted
	// state is waiting (for its client: not running a request, or in a read
	// of its body), running, or cut (closed for room). It changes without
	// the Limiter's lock, off the request's path: waiting and running swap
	// on net/http's ConnState and around each read of a body, admit cuts a
	// waiting one, each by compare-and-swap, so a request that began to run
	// is never cut and one cut is never run.
	state atomic.Int32
	// last is when c last began to wait (since l.epoch): at accept, at the
	// end of a request, at the start of a read of its body.
	last atomic.Int64
	// reading is set while the server waits in Read, and got once a Read
	// has returned bytes: a connection that waits for its client after
	// sending some has had its chance.
	reading, got atomic.Bool
}

// Grace is how long a new connection whose client has sent nothing yet is
// safe from being closed for room.
const Grace = 250 * time.Millisecond

// The states of a conn.
const (
	waiting int32 = iota
	running
	cut
)

// closable reports whether c may be closed for room at now: it waits for
// its client, in Read, and its client has sent something, or nothing for
// Grace.
func (c *conn) closable(now time.Time) bool {
	return c.state.Load() == waiting && c.reading.Load() && (c.got.Load() || now.Sub(c.since) >= Grace)
}

// waitsFrom marks c as waiting for its client from now on.
func (c *conn) waitsFrom(from int32) {
	c.last.Store(int64(time.Since(c.l.epoch)))
	c.state.CompareAndSwap(from, waiting)
}

type connKey struct{}

// New returns a Limiter of max connections (at least 1).
func New(max int) *Limiter {
	l := &Limiter{max: max, soft: max - max/8, epoch: time.Now()}
	l.conns.init()
	l.closed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "petstore_connections_closed_at_limit_total",
		Help: "Connections closed because the connection limit was reached: least_recent, the least recently used one not running a request, closed to take a new one; new, a new one closed at once since every one was running a request.",
	}, []string{"connection"})
	l.closed.WithLabelValues(closedLeastRecent)
	l.closed.WithLabelValues(closedNew)
	l.openGauge = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "petstore_connections_open",
		Help: "Client connections open on the API's listener.",
	}, func() float64 { return float64(l.Open()) })
	l.maxGauge = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "petstore_connections_limit",
		Help: "The most client connections the server holds open at once (-max-connections).",
	})
	l.maxGauge.Set(float64(max))
	return l
}

// Collectors returns the limiter's metrics, for the app's registry.
func (l *Limiter) Collectors() []prometheus.Collector {
	return []prometheus.Collector{l.closed, l.openGauge, l.maxGauge}
}

// Open returns the number of connections open.
func (l *Limiter) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// Wrap makes srv keep at most l's bound of connections from ln open: it
// wraps srv's Handler and chains srv's ConnContext and ConnState hooks (call
// it once srv is set up, before Serve), and returns the listener to serve.
//
// ConnState tells when a connection runs a request (active) and when it
// waits for its client again (idle). The Handler refuses to run a request
// whose connection was closed for room in the instant between net/http
// reading it and reporting it active: it is not answered (its connection is
// gone), and so it must not be run either. It hands the handler the body
// through a reader that marks the connection as waiting for its client
// while a read of it waits, and holds it to l.Body.
func (l *Limiter) Wrap(srv *http.Server, ln net.Listener) net.Listener {
	next := srv.Handler
	if next == nil {
		next = http.DefaultServeMux
	}
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := r.Context().Value(connKey{}).(*conn)
		if ok && c.state.Load() == cut {
			return
		}
		if ok && r.Body != nil && r.Body != http.NoBody {
			// net/http reads what the handler left of the body after it
			// returns, from its own reader, which it tells by its type.
			orig := r.Body
			r.Body = &body{ReadCloser: orig, c: c}
			defer func() { r.Body = orig }()
		}
		next.ServeHTTP(w, r)
	})
	connContext := srv.ConnContext
	srv.ConnContext = func(ctx context.Context, nc net.Conn) context.Context {
		if c, ok := nc.(*conn); ok && c.l == l {
			ctx = context.WithValue(ctx, connKey{}, c)
		}
		if connContext != nil {
			ctx = connContext(ctx, nc)
		}
		return ctx
	}
	connState := srv.ConnState
	srv.ConnState = func(nc net.Conn, s http.ConnState) {
		if c, ok := nc.(*conn); ok && c.l == l {
			switch s {
			case http.StateActive: // net/http has read the head: c cannot be closed for room
				c.state.CompareAndSwap(waiting, running)
			case http.StateIdle: // net/http has written the answer whole
				c.waitsFrom(running)
			case http.StateClosed, http.StateHijacked:
				l.forget(c)
			}
		}
		if connState != nil {
			connState(nc, s)
		}
	}
	return &listener{Listener: ln, l: l}
}

type listener struct {
	net.Listener
	l *Limiter
}

// Accept returns the next connection, having made room for it.
func (ln *listener) Accept() (net.Conn, error) {
	for {
		nc, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		c, ok := ln.l.admit(nc, false)
		if !ok {
			// No connection is closable: let the connections' goroutines
			// read what their clients sent, then choose. Without a pause,
			// clients reconnecting at once can keep this loop busy long
			// enough to go round every connection before any is read.
			runtime.Gosched()
			c, _ = ln.l.admit(nc, true)
		}
		if c != nil {
			return c, nil
		}
	}
}

// admit counts nc in, closing the least recently active closable
// connection from l.soft connections on. At the bound with none closable,
// it returns ok false and does nothing unless last; if last, it closes the
// least recently active connection waiting for its client, or, when every
// one is running a request, closes nc and returns nil.
func (l *Limiter) admit(nc net.Conn, last bool) (c *conn, ok bool) {
	now := time.Now()
	l.mu.Lock()
	var victim *conn
	if l.open >= l.soft {
		victim = l.cutLeastRecent(now, true)
		if victim == nil && l.open >= l.max {
			if !last {
				l.mu.Unlock()
				return nil, false
			}
			if victim = l.cutLeastRecent(now, false); victim == nil {
				l.mu.Unlock()
				nc.Close()
				l.closed.WithLabelValues(closedNew).Inc()
				return nil, true
			}
		}
		if victim != nil {
			l.untrack(victim)
		}
	}
	c = &conn{Conn: nc, l: l, since: now}
	c.last.Store(int64(now.Sub(l.epoch)))
	l.conns.pushBack(c)
	l.open++
	l.mu.Unlock()
	if victim != nil {
		victim.Conn.Close() // the server's goroutine for it sees the error and ends
		l.closed.WithLabelValues(closedLeastRecent).Inc()
	}
	return c, true
}

// cutLeastRecent marks cut, and returns, the least recently active
// connection that waits for its client (closable at now, when closable is
// set), or returns nil. One that begins to run a request meanwhile is not
// cut: the next is tried. The caller holds mu.
func (l *Limiter) cutLeastRecent(now time.Time, closable bool) *conn {
	for range 4 {
		var best *conn
		for c := l.conns.front(); c != nil; c = l.conns.after(c) {
			if c.state.Load() != waiting || closable && !c.closable(now) {
				continue
			}
			if best == nil || c.last.Load() < best.last.Load() {
				best = c
			}
		}
		if best == nil || best.state.CompareAndSwap(waiting, cut) {
			return best
		}
	}
	return nil
}

// forget stops counting c: the server has closed it (or handed it over).
func (l *Limiter) forget(c *conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.untrack(c)
}

// untrack stops counting c, once; the caller holds mu.
func (l *Limiter) untrack(c *conn) {
	if c.gone {
		return
	}
	c.gone = true
	l.conns.remove(c)
	l.open--
}

// Read reads from the connection, marked as waiting for its client meanwhile.
func (c *conn) Read(b []byte) (int, error) {
	c.reading.Store(true)
	n, err := c.Conn.Read(b)
	c.reading.Store(false)
	if n > 0 && !c.got.Load() {
		c.got.Store(true)
	}
	return n, err
}

// CloseWrite shuts down the writing side of the underlying connection when
// it can (TCP): net/http does so before closing a connection whose request
// body it left unread, so that the client reads the answer before a reset.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Close closes c and stops counting it, for a connection closed elsewhere
// than by the server (which reports it through ConnState).
func (c *conn) Close() error {
	c.l.forget(c)
	return c.Conn.Close()
}

// BodyRule is how slowly a request body may arrive: its k-th byte within
// Grace plus k / MinRate seconds of the first read of the body, and all of
// it within Max. A zero MinRate or Max leaves that part out.
type BodyRule struct {
	Grace   time.Duration
	MinRate int // bytes a second
	Max     time.Duration
}

// deadline is when the body's byte after the first n must have arrived, for
// a body first read at start; zero for none.
func (r BodyRule) deadline(start time.Time, n int64) time.Time {
	var d time.Time
	if r.MinRate > 0 {
		d = start.Add(r.Grace + time.Duration(n+1)*time.Second/time.Duration(r.MinRate))
	}
	if r.Max > 0 && (d.IsZero() || start.Add(r.Max).Before(d)) {
		d = start.Add(r.Max)
	}
	return d
}

// ErrBodyTooSlow is the error of a body read cut off by the Limiter's
// BodyRule. It wraps os.ErrDeadlineExceeded.
var ErrBodyTooSlow = errors.New("connlimit: the request body arrives too slowly")

// answerTime is what the answer to a body cut off has to be written in:
// the server's write deadline, set when it read the head, may have passed.
const answerTime = 5 * time.Second

// body is a request's body on a Limiter's connection (see Wrap).
type body struct {
	io.ReadCloser
	c     *conn
	start time.Time // the first read; zero before it
	n     int64     // bytes read
	done  bool      // read to its end, or failed: the deadline is cleared
}

// Read reads from the body, the connection waiting for its client
// meanwhile, within the Limiter's BodyRule.
func (b *body) Read(p []byte) (int, error) {
	if b.done {
		return b.ReadCloser.Read(p)
	}
	l := b.c.l
	rule := l.Body != BodyRule{}
	if rule {
		if b.start.IsZero() {
			b.start = time.Now()
		}
		b.c.Conn.SetReadDeadline(l.Body.deadline(b.start, b.n))
	}
	l.waitBody(b.c)
	n, err := b.ReadCloser.Read(p)
	l.gotBody(b.c)
	b.n += int64(n)
	if b.c.state.Load() == cut && (err == nil || err == io.EOF) {
		// Closed for room while it waited (net/http's read in the
		// background, begun at the body's end, may have made it look
		// waiting a moment longer): the request is not run on.
		err = net.ErrClosed
	}
	if err != nil {
		b.done = true
		if rule && err == io.EOF {
			// net/http reads the connection in the background once the
			// body is read: no deadline of the body's may cut it. (After
			// a failure, the connection is not read again.)
			b.c.Conn.SetReadDeadline(time.Time{})
		}
		if rule && errors.Is(err, os.ErrDeadlineExceeded) {
			b.c.Conn.SetWriteDeadline(time.Now().Add(answerTime))
			err = fmt.Errorf("%w (%d bytes in %v): %w", ErrBodyTooSlow, b.n, time.Since(b.start).Round(time.Millisecond), err)
		}
	}
	return n, err
}

// waitBody marks c, running a request, as waiting for its client while
// its body is read: the most recently active.
func (l *Limiter) waitBody(c *conn) { c.waitsFrom(running) }

// gotBody marks the end of a read of c's body: c runs its request again
// (unless it was cut meanwhile).
func (l *Limiter) gotBody(c *conn) { c.state.CompareAndSwap(waiting, running) }

// connList is a list of connections, each linked through its own prev and
// next: adding one allocates nothing.
type connList struct{ root *conn } // root.next is the front, root.prev the back

func (w *connList) init() {
	w.root = &conn{}
	w.root.next, w.root.prev = w.root, w.root
}

// pushBack puts c, not in the list, at its back.
func (w *connList) pushBack(c *conn) {
	c.prev, c.next = w.root.prev, w.root
	w.root.prev.next = c
	w.root.prev = c
}

// remove takes c, in the list, out of it.
func (w *connList) remove(c *conn) {
	c.prev.next, c.next.prev = c.next, c.prev
	c.prev, c.next = nil, nil
}

// front is the first of the list, nil when it is empty.
func (w *connList) front() *conn { return w.after(w.root) }

// after is the one after c in the list, nil at its end.
func (w *connList) after(c *conn) *conn {
	if c.next == w.root {
		return nil
	}
	return c.next
}

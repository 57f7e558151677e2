package connlimit_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/connlimit"
)

// serve runs an http.Server with h behind a Limiter of max connections on
// a loopback port until the test ends.
func serve(t *testing.T, max int, h http.Handler) (*connlimit.Limiter, string) {
	t.Helper()
	return serveRule(t, max, connlimit.BodyRule{}, h)
}

// dial opens a connection and sends head (part of a request, or all of it).
func dial(t *testing.T, addr, head string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	return c
}

// closedByServer reports whether the server closed c, waiting at most d.
func closedByServer(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := c.Read(make([]byte, 1))
	return err == io.EOF || (err != nil && !isTimeout(err))
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

func get(t *testing.T, c net.Conn) int {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	res.Body.Close()
	return res.StatusCode
}

const (
	partial = "GET / HTTP/1.1\r\nHost: x\r\n"
	whole   = "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
)

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})

// TestLeastRecentWaitingClosed: at the bound, each new connection closes
// the one that has waited longest without running a request, oldest first;
// the new one is served.
func TestLeastRecentWaitingClosed(t *testing.T) {
	l, addr := serve(t, 3, ok)
	slow := []net.Conn{dial(t, addr, partial), dial(t, addr, partial)}
	idle := dial(t, addr, whole) // a request served: its use is more recent
	if got := get(t, idle); got != http.StatusOK {
		t.Fatalf("idle's request: got %d", got)
	}
	// Each is waiting in Read, having sent something: which one the probe
	// displaces is then by last use alone, not by which goroutine the
	// scheduler ran first.
	apitest.Eventually(t, "three open and closable", func() bool { return l.Open() == 3 && connlimit.Closable(l) == 3 })

	probe := dial(t, addr, whole)
	if got := get(t, probe); got != http.StatusOK {
		t.Fatalf("a request at the bound: got %d, want 200", got)
	}
	if !closedByServer(slow[0], 5*time.Second) {
		t.Error("the oldest slow connection is still open")
	}
	for i, c := range []net.Conn{slow[1], idle} {
		if closedByServer(c, 100*time.Millisecond) {
			t.Errorf("connection %d closed; only the least recently used should be", i+1)
		}
	}
	// The probe's connection, now idle, is the most recent: the next goes
	// after slow[1], then idle.
	next := dial(t, addr, whole)
	get(t, next)
	if !closedByServer(slow[1], 5*time.Second) {
		t.Error("the second slow connection is still open")
	}
	if closedByServer(idle, 100*time.Millisecond) || closedByServer(probe, 100*time.Millisecond) {
		t.Error("a more recently used connection was closed")
	}
	if got := closedAtLimit(t, l, "least_recent"); got != 2 {
		t.Errorf("closed at limit, least recent: got %v, want 2", got)
	}
	if l.Open() > 3 {
		t.Errorf("open: got %d, want at most 3", l.Open())
	}
}

// TestRunningNeverClosed: a connection running a request is never closed
// for room; when every one is, a new connection is closed at once.
func TestRunningNeverClosed(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	l, addr := serve(t, 2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-release
	}))
	busy := []net.Conn{dial(t, addr, whole), dial(t, addr, whole)}
	<-started
	<-started
	refused := dial(t, addr, whole)
	if !closedByServer(refused, 5*time.Second) {
		t.Fatal("a new connection with every one running a request: still open")
	}
	close(release)
	for i, c := range busy {
		if got := get(t, c); got != http.StatusOK {
			t.Errorf("running request %d: got %d, want 200", i+1, got)
		}
	}
	if got := closedAtLimit(t, l, "new"); got != 1 {
		t.Errorf("closed at limit, new: got %v, want 1", got)
	}
}

// TestOpenCountsDown: connections closed by the client, by the server's
// timeouts, or for room are no longer counted.
func TestOpenCountsDown(t *testing.T) {
	l, addr := serve(t, 4, ok)
	var cs []net.Conn
	for range 6 {
		cs = append(cs, dial(t, addr, partial))
	}
	apitest.Eventually(t, "the bound", func() bool { return l.Open() == 4 })
	for _, c := range cs {
		c.Close()
	}
	apitest.Eventually(t, "none open", func() bool { return l.Open() == 0 })
}

func TestMetricsLint(t *testing.T) {
	l := connlimit.New(8)
	for _, c := range l.Collectors() {
		problems, err := testutil.CollectAndLint(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Errorf("%s: %s", p.Metric, p.Text)
		}
	}
}

// closedAtLimit returns the count of connections closed at the limit with
// the label value which.
func closedAtLimit(t *testing.T, l *connlimit.Limiter, which string) float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(l.Collectors()...)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "petstore_connections_closed_at_limit_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetLabel()[0].GetValue() == which {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no petstore_connections_closed_at_limit_total{connection=%q}", which)
	return 0
}

// TestSilentNewcomerKept: a connection whose client has sent nothing yet is
// passed over for one that sent part of a request, though it is older, for
// Grace; then it is closable too.
func TestSilentNewcomerKept(t *testing.T) {
	l, addr := serve(t, 2, ok)
	silent := dial(t, addr, "")
	apitest.Eventually(t, "silent to be accepted", func() bool { return l.Open() == 1 })
	slow := dial(t, addr, partial)
	apitest.Eventually(t, "slow's part of a request to be read", func() bool { return connlimit.Closable(l) >= 1 })
	probe := dial(t, addr, whole)
	if got := get(t, probe); got != http.StatusOK {
		t.Fatalf("the newcomer: got %d, want 200", got)
	}
	if !closedByServer(slow, 5*time.Second) {
		t.Fatal("slow, which sent part of a request, is still open")
	}
	if closedByServer(silent, 10*time.Millisecond) {
		t.Fatal("silent was closed within its grace, though slow was closable")
	}
	apitest.Eventually(t, "silent to be closable after Grace", func() bool { return connlimit.Closable(l) == 2 })
	get(t, dial(t, addr, whole))
	if !closedByServer(silent, 5*time.Second) {
		t.Error("silent, past its grace and the least recently used, is still open")
	}
}

// TestConnCloseWrite: net/http looks for CloseWrite on the connections it
// gets, to half-close before closing on an unread body, so that the client
// is not reset before it reads the answer; the accepted connection passes
// it on to TCP's.
func TestConnCloseWrite(t *testing.T) {
	got := make(chan net.Conn, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	l := connlimit.New(4)
	srv := &http.Server{Handler: ok}
	wrapped := l.Wrap(srv, ln)
	go func() {
		c, err := wrapped.Accept()
		if err == nil {
			got <- c
		}
	}()
	c := dial(t, ln.Addr().String(), "")
	defer c.Close()
	sc := <-got
	defer sc.Close()
	if _, ok := sc.(interface{ CloseWrite() error }); !ok {
		t.Error("the accepted connection has no CloseWrite")
	}
	if err := sc.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
		t.Errorf("CloseWrite: %v", err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("after CloseWrite the client reads %v, want EOF (a half-close)", err)
	}
}

// holdListener's connections pass everything through, but for the one
// accepted after hold: its first write (the response net/http writes once
// the handler has returned) waits until release, or until the connection
// is closed, and says on writing that it has begun.
type holdListener struct {
	net.Listener
	writing chan struct{}
	mu      sync.Mutex
	release chan struct{} // the next connection's hold, until closed; nil: none
}

type holdConn struct {
	net.Conn
	ln        *holdListener
	release   chan struct{} // nil once the first write is done, or with no hold
	closed    chan struct{}
	closeOnce sync.Once
}

func (ln *holdListener) Accept() (net.Conn, error) {
	c, err := ln.Listener.Accept()
	if err != nil {
		return nil, err
	}
	ln.mu.Lock()
	release := ln.release
	ln.release = nil
	ln.mu.Unlock()
	return &holdConn{Conn: c, ln: ln, release: release, closed: make(chan struct{})}, nil
}

func (c *holdConn) Write(p []byte) (int, error) {
	if release := c.release; release != nil {
		c.release = nil
		c.ln.writing <- struct{}{}
		select {
		case <-release:
		case <-c.closed:
			return 0, net.ErrClosed
		}
	}
	return c.Conn.Write(p)
}

func (c *holdConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// TestFinishedAnswerKept: a request whose handler has returned is running
// until net/http has written its answer. A create commits, its 201 is held
// on its way to the client, and new connections arrive at the bound
// meanwhile: the create's connection is not closed for room, and its 201
// arrives. (Marked idle when its handler returned, the connection was
// closable, and closed, while net/http still had the answer to write.)
func TestFinishedAnswerKept(t *testing.T) {
	const creates = 5
	var committed atomic.Int32
	create := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			return
		}
		io.Copy(io.Discard, r.Body) // read whole: net/http starts its background read
		committed.Add(1)
		w.WriteHeader(http.StatusCreated)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hl := &holdListener{Listener: ln, writing: make(chan struct{})}
	l := connlimit.New(2)
	srv := &http.Server{Handler: create, ReadHeaderTimeout: time.Minute}
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.Serve(l.Wrap(srv, hl))
	}()
	t.Cleanup(func() {
		srv.Close()
		<-served
	})
	addr := ln.Addr().String()
	lost := 0
	for i := range creates {
		release := make(chan struct{})
		hl.mu.Lock()
		hl.release = release
		hl.mu.Unlock()
		c := dial(t, addr, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
		select {
		case <-hl.writing:
		case <-time.After(10 * time.Second):
			t.Fatalf("create %d: its answer was never written", i+1)
		}
		// New connections at the bound while the 201 is on its way: each
		// is answered, or closed at once when none may make room.
		// They stay open, idle, so that each next one must make room.
		conns := []net.Conn{c}
		for range 3 {
			n := dial(t, addr, whole)
			conns = append(conns, n)
			n.SetReadDeadline(time.Now().Add(10 * time.Second))
			if res, err := http.ReadResponse(bufio.NewReader(n), nil); err == nil {
				res.Body.Close()
			}
		}
		close(release)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if res, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil || res.StatusCode != http.StatusCreated {
			lost++
		}
		for _, c := range conns {
			c.Close()
		}
		apitest.Eventually(t, "every connection closed", func() bool { return l.Open() == 0 })
	}
	if lost > 0 {
		t.Fatalf("%d of %d committed creates (committed: %d) never got their 201: their connection was closed for room while the answer was being written", lost, creates, committed.Load())
	}
}

package wire

import (
	"context"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"
)

// notes is an Observer that keeps each exchange.
type notes struct{ got []*Exchange }

func (n *notes) Begin(x *Exchange) *Exchange { n.got = append(n.got, x); return x }
func (n *notes) End(*Exchange)               {}
func (n *notes) NoAnswer(*Exchange)          {}

// holding is a listener that accepts connections and never writes a byte
// on them: no TLS handshake, no answer.
func holding(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// Every request keeps -timeout, the ones written byte for byte too, and
// their TLS handshake with them: against a target that never answers, each
// raw request comes back without an answer within its timeout, and the
// third in a row makes the Client take the target for silent.
func TestRawRequestTimeout(t *testing.T) {
	const timeout = 200 * time.Millisecond
	for _, scheme := range []string{"http", "https"} {
		t.Run(scheme, func(t *testing.T) {
			base, _ := url.Parse(scheme + "://" + holding(t) + "/api")
			obs := &notes{}
			c := New(Config{Base: base, Timeout: timeout, MaxRequests: 10, Key: "k"}, obs)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			for i := range DefaultSilent {
				start := time.Now()
				x, err := c.Send(ctx, Request{Method: "GET", Target: "/pets", Raw: &Raw{}})
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				if took := time.Since(start); x.Status != 0 || took > 5*timeout {
					t.Fatalf("request %d: status %d after %s; want no answer within about %s", i, x.Status, took, timeout)
				}
			}
			if _, err := c.Send(ctx, Request{Method: "GET", Target: "/pets", Raw: &Raw{}}); err != ErrSilent {
				t.Errorf("after %d requests without an answer: %v, want ErrSilent", DefaultSilent, err)
			}
			if s := c.Stats(); s.Sent != DefaultSilent || !strings.Contains(s.Silent, "in a row") {
				t.Errorf("stats %+v: want %d sent and the target silent", s, DefaultSilent)
			}
		})
	}
}

package pgtest

import (
	"io"
	"net"
	"testing"
	"time"
)

// TestEndLossClosesWhatLost: a chunk lost just as EndLoss runs still gets
// its connection closed. The loss was once marked on the link after the
// proxy's lock was let go; an EndLoss in between passed the link over,
// and it relayed what followed the lost bytes: a stream with a hole in the
// middle, which no TCP connection delivers (a client could read a
// CommandComplete whose DataRows vanished).
func TestEndLossClosesWhatLost(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	send := make(chan string)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		for s := range send {
			c.Write([]byte(s))
		}
	}()
	p, err := StartProxy(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	decided, resume := make(chan struct{}), make(chan struct{})
	onDrop = func() {
		decided <- struct{}{}
		<-resume
	}
	defer func() { onDrop = nil }()

	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 16)
	send <- "A"
	if n, err := io.ReadAtLeast(c, buf, 1); err != nil || string(buf[:n]) != "A" {
		t.Fatalf("before the loss: %q, %v", buf[:n], err)
	}
	p.Lose(Answers)
	send <- "B" // lost
	<-decided
	p.EndLoss() // while the proxy is losing B
	close(resume)
	send <- "C"
	close(send)
	if n, err := c.Read(buf); err == nil {
		t.Fatalf("after the loss of B: read %q on the same connection; want it closed", buf[:n])
	}
}

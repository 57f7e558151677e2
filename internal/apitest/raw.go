package apitest

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// Raw writes raw, bytes as they are, on a new connection to addr, closes
// its write side (so that a short body ends), and reads one answer, all
// within 10 s: for what net/http's client would not send.
func Raw(t testing.TB, addr, raw string) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	// The server may answer and close before it has read everything.
	go func() {
		io.WriteString(conn, raw)
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
	}()
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil && len(body) == 0 {
		t.Fatalf("read body: %v", err)
	}
	return res, body
}

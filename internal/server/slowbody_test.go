package server

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/apitest"
)

const slowKey = "slow-key-0123456789abcdef0123456789"

// trickle opens a connection to addr and sends a create whose body declares
// 100 000 bytes, with Expect: 100-continue; once the server has asked for
// the body (the create is running, its body being read), it sends 2 bytes
// of it and nothing more. It returns the connection and its reader.
func trickle(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	head := "POST " + apitest.Path("/pets") + " HTTP/1.1\r\nHost: petstore\r\nAuthorization: Bearer " + slowKey +
		"\r\nContent-Type: application/json\r\nContent-Length: 100000\r\nExpect: 100-continue\r\n\r\n"
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
		t.Fatalf("waiting for 100 Continue: got %q, %v", line, err)
	}
	if _, err := br.ReadString('\n'); err != nil { // the blank line after it
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, `{"`); err != nil {
		t.Fatal(err)
	}
	return c, br
}

// TestSlowBodiesDoNotHoldTheBound: with -max-connections 4, four creates
// whose bodies trickle (2 of 100 000 bytes sent) wait for their clients,
// as an idle connection does: a fifth client's whole GET is answered at
// once, the least recently active waiting connection closed for room,
// unanswered. (A create running counted as busy until its body was read
// whole, and the GET's connection was closed at once: issue 61.)
func TestSlowBodiesDoNotHoldTheBound(t *testing.T) {
	base, stdout, _, _ := startServer(t, map[string]string{
		"PETSTORE_API_KEYS":        slowKey,
		"PETSTORE_MAX_CONNECTIONS": "4",
	})
	addr := strings.TrimPrefix(base, "http://")
	http.DefaultClient.CloseIdleConnections() // the start's probe: no fifth connection
	var slow []net.Conn
	for range 4 {
		c, _ := trickle(t, addr)
		slow = append(slow, c)
	}
	hc := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	req, _ := http.NewRequest("GET", base+apitest.Path("/pets"), nil)
	req.Header.Set("Authorization", "Bearer "+slowKey)
	start := time.Now()
	res, err := hc.Do(req)
	if err != nil {
		t.Fatalf("a whole GET beside four trickling bodies at a bound of 4: %v after %v\nlog:\n%s", err, time.Since(start).Round(time.Millisecond), stdout)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("the GET: got %d, want 200", res.StatusCode)
	}
	// Room was made by closing, unanswered, one connection waiting for its
	// client, the least recently active: the start's probe (idle, if the
	// server had not seen it closed yet) or else a trickler, never more
	// than one. Which trickler is the server's order of reading their
	// bytes, which a loaded machine may swap. (Read within the body's
	// grace: no 408 yet.)
	var closed []int
	for i, c := range slow {
		c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		n, err := c.Read(make([]byte, 1))
		switch {
		case n > 0:
			t.Errorf("trickling create %d: answered before its body came", i+1)
		case err != nil && !isTimeout(err):
			closed = append(closed, i+1)
		}
	}
	if len(closed) > 1 {
		t.Errorf("trickling creates %v closed: one connection makes room for the GET", closed)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// TestSlowBodyCutOff: a create whose body stops coming is cut off once it
// falls behind the contract's body-rate (its third byte due 5 s and 3/240 s
// after the body was first read), answered 408 request_timeout with
// Connection: close, and writes nothing; before, it waited out the 15 s
// read timeout and got 400.
func TestSlowBodyCutOff(t *testing.T) {
	t.Parallel()
	base, _, _, _ := startServer(t, map[string]string{"PETSTORE_API_KEYS": slowKey})
	c, br := trickle(t, strings.TrimPrefix(base, "http://"))
	start := time.Now()
	c.SetReadDeadline(time.Now().Add(12 * time.Second))
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("a body that stopped after 2 bytes: %v after %v, want a 408", err, time.Since(start).Round(time.Millisecond))
	}
	took := time.Since(start)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusRequestTimeout || !res.Close {
		t.Fatalf("got %d %s (Connection: close %v), want 408 and the connection closed", res.StatusCode, body, res.Close)
	}
	contract := apitest.Load(t)
	req, _ := http.NewRequest("POST", base+apitest.Path("/pets"), nil)
	contract.Check(t, req, res.StatusCode, res.Header, body)
	if !strings.Contains(string(body), `"code":"request_timeout"`) {
		t.Errorf("body: got %s, want code request_timeout", body)
	}
	if took < bodyGrace-time.Second || took > bodyGrace+3*time.Second {
		t.Errorf("answered after %v, want about %v (the grace)", took.Round(time.Millisecond), bodyGrace)
	}
	cl := &apitest.Client{Contract: contract, BaseURL: base, Key: slowKey}
	var page []map[string]any
	cl.Do(t, "GET", apitest.Path("/pets"), "").JSON(t, &page)
	if len(page) != 0 {
		t.Errorf("pets after the cut-off create: %d, want none", len(page))
	}
}

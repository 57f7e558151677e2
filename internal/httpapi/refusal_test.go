package httpapi_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/ratelimit"
)

// rawWait bounds how long a raw client waits for an answer. A refusal comes
// at once; this only turns a server that waits for the body into a failure
// rather than a hung test. Figures are measured, not timed here
// (docs/operating.md, the refusal latency).
const rawWait = 5 * time.Second

// refusal is a request the app refuses before it reads the body: a raw
// client declares a body and sends none of it.
type refusal struct {
	name           string
	method, target string
	header         []string // pairs
	status         int
}

// refusals is one request for each kind of refusal that comes before the
// body: the key, the path, the method, the query, a header, the declared
// length, the rate limit.
func refusals() []refusal {
	auth := "Bearer " + testKey
	return []refusal{
		{name: "no key", method: "POST", target: apitest.Path("/pets"), status: 401},
		{name: "wrong key", method: "POST", target: apitest.Path("/pets"), header: []string{"Authorization", "Bearer wrong-key-0123456789abcdef0123456789"}, status: 401},
		{name: "Basic scheme", method: "POST", target: apitest.Path("/pets"), header: []string{"Authorization", "Basic dXNlcjpwYXNz"}, status: 401},
		{name: "unknown path", method: "POST", target: apitest.Path("/cages"), header: []string{"Authorization", auth}, status: 404},
		{name: "unknown path, no key", method: "POST", target: "/nowhere", status: 404},
		{name: "wrong method", method: "PUT", target: apitest.Path("/pets/1"), header: []string{"Authorization", auth}, status: 405},
		{name: "bad Content-Type", method: "POST", target: apitest.Path("/pets"), header: []string{"Authorization", auth, "Content-Type", "text/plain"}, status: 400},
		{name: "unknown query parameter", method: "POST", target: apitest.Path("/pets?x=1"), header: []string{"Authorization", auth}, status: 400},
		{name: "bad Idempotency-Key", method: "POST", target: apitest.Path("/pets"), header: []string{"Authorization", auth, "Idempotency-Key", "a b"}, status: 400},
		{name: "body on a GET", method: "GET", target: apitest.Path("/pets"), header: []string{"Authorization", auth}, status: 400},
		{name: "declared length over the limit", method: "POST", target: apitest.Path("/pets"), header: []string{"Authorization", auth, "Content-Length", fmt.Sprint(httpapi.MaxBodyBytes + 1)}, status: 413},
		{name: "rate limited", method: "POST", target: apitest.Path("/pets"), header: []string{"Authorization", "Bearer " + otherKey}, status: 429},
		// Not refusals, but answers that read no body all the same.
		{name: "a body to /healthz", method: "GET", target: "/healthz", status: 200},
		{name: "a body to /docs", method: "GET", target: "/docs/", status: 200},
		{name: "content-coded body", method: "POST", target: apitest.Path("/pets"), header: []string{"Authorization", auth, "Content-Encoding", "gzip"}, status: 400},
		{name: "Accept without JSON", method: "POST", target: apitest.Path("/pets"), header: []string{"Authorization", auth, "Accept", "application/xml"}, status: 406},
	}
}

// TestRefusalsAnswerAtOnce: a request refused before its body is read is
// answered without the body, with and without Expect: 100-continue, with
// Connection: close (the body is left unread), never with 100 Continue
// (which asks for the body), and in the contract's words. The raw client
// declares 64 KiB and sends none of it: a server that reads the body before
// it answers (net/http discards up to 256 KiB after a handler that did not
// read it, unless the connection is to close) never answers.
func TestRefusalsAnswerAtOnce(t *testing.T) {
	srv := refusingServer(t)
	contract := apitest.Load(t)
	for _, r := range refusals() {
		for _, expect := range []bool{false, true} {
			name := r.name
			if expect {
				name += ", Expect: 100-continue"
			}
			t.Run(name, func(t *testing.T) {
				header := withDefaults(r.header, "Content-Type", "application/json", "Content-Length", "65536")
				if expect {
					header = append(header, "Expect", "100-continue")
				}
				res, body := rawExchange(t, srv, r.method, r.target, header)
				if res.StatusCode != r.status {
					t.Fatalf("got %d %s, want %d", res.StatusCode, body, r.status)
				}
				if !res.Close {
					t.Errorf("no Connection: close, though the body was left unread")
				}
				req := httptest.NewRequest(r.method, r.target, nil)
				contract.Check(t, req, res.StatusCode, res.Header, body)
			})
		}
	}
}

// TestExpectContinueStillAsksForTheBody: a create that is not refused gets
// 100 Continue, sends its body, and is created: the client of the test
// above speaks Expect as curl does.
func TestExpectContinueStillAsksForTheBody(t *testing.T) {
	srv := refusingServer(t)
	body := apitest.Body(`{"name":"Rex","categoryId":1}`)
	conn := rawDial(t, srv)
	writeHead(t, conn, "POST", apitest.Path("/pets"), []string{"Authorization", "Bearer " + testKey, "Content-Type", "application/json", "Content-Length", fmt.Sprint(len(body)), "Expect", "100-continue"})
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no 100 Continue: %v", err)
	}
	if res.StatusCode != http.StatusContinue {
		t.Fatalf("got %d, want 100 Continue", res.StatusCode)
	}
	if _, err := io.WriteString(conn, body); err != nil {
		t.Fatal(err)
	}
	if res, err = http.ReadResponse(br, nil); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusCreated || res.Close {
		t.Fatalf("got %d (close %v), want 201 on a connection kept", res.StatusCode, res.Close)
	}
}

// refusingServer serves the app on loopback with otherKey over its rate
// limit, as a real server does (not a recorder: the point is what net/http
// does with a body the app leaves).
func refusingServer(t *testing.T) *httptest.Server {
	t.Helper()
	limit, err := ratelimit.Parse("1000/m")
	if err != nil {
		t.Fatal(err)
	}
	frozen := time.Now()
	rl := ratelimit.New(limit, func() time.Time { return frozen }) // no token comes back
	for ok := true; ok; ok, _ = rl.Allow(apikey.Hash(otherKey).ID()) {
	}
	app, err := httpapi.New(httpapi.Config{Store: memstore.New(), Keys: apikey.NewSet(apikey.Hash(testKey), apikey.Hash(otherKey)), RateLimit: rl})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(app)
	t.Cleanup(srv.Close)
	return srv
}

func rawDial(t *testing.T, srv *httptest.Server) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.SetDeadline(time.Now().Add(rawWait)); err != nil {
		t.Fatal(err)
	}
	return conn
}

// writeHead writes a request's line and headers, and no body.
func writeHead(t *testing.T, conn net.Conn, method, target string, header []string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: petstore.test\r\n", method, target)
	for i := 0; i+1 < len(header); i += 2 {
		fmt.Fprintf(&b, "%s: %s\r\n", header[i], header[i+1])
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(conn, b.String()); err != nil {
		t.Fatal(err)
	}
}

// rawExchange sends a request's head on a new connection, and no body, and
// returns the final answer: a 100 Continue, which asks for the body, fails.
func rawExchange(t *testing.T, srv *httptest.Server, method, target string, header []string) (*http.Response, []byte) {
	t.Helper()
	conn := rawDial(t, srv)
	writeHead(t, conn, method, target, header)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer within %s without the body: the server waits for it (%v)", rawWait, err)
	}
	if res.StatusCode == http.StatusContinue {
		t.Fatal("100 Continue: the server asked for the body of a request it refuses")
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("reading the answer's body: %v", err)
	}
	return res, body
}

// withDefaults returns header pairs with each default pair added unless
// header names it already.
func withDefaults(header []string, defaults ...string) []string {
	out := append([]string(nil), header...)
	for i := 0; i+1 < len(defaults); i += 2 {
		named := false
		for j := 0; j+1 < len(header); j += 2 {
			named = named || strings.EqualFold(header[j], defaults[i])
		}
		if !named {
			out = append(out, defaults[i], defaults[i+1])
		}
	}
	return out
}

// TestThrottledRefusalAnswersAtOnce: an address over its budget of wrong
// keys is refused at once too, its body unread, with and without Expect.
func TestThrottledRefusalAnswersAtOnce(t *testing.T) {
	l, err := ratelimit.Parse("1/m,burst=1")
	if err != nil {
		t.Fatal(err)
	}
	app, err := httpapi.New(httpapi.Config{Store: memstore.New(), Keys: apikey.NewSet(apikey.Hash(testKey)), AuthFailures: &l})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(app)
	t.Cleanup(srv.Close)
	header := []string{"Authorization", "Bearer wrong-key-0123456789abcdef0123456789", "Content-Type", "application/json", "Content-Length", "65536"}
	if res, body := rawExchange(t, srv, "POST", apitest.Path("/pets"), header); res.StatusCode != 401 {
		t.Fatalf("the first wrong key: got %d %s, want 401", res.StatusCode, body)
	}
	for _, expect := range []bool{false, true} {
		h := append([]string{"Authorization", "Bearer " + testKey}, header[2:]...)
		if expect {
			h = append(h, "Expect", "100-continue")
		}
		res, body := rawExchange(t, srv, "POST", apitest.Path("/pets"), h)
		if res.StatusCode != 429 || !res.Close {
			t.Fatalf("Expect %v: got %d (close %v) %s, want 429 and Connection: close", expect, res.StatusCode, res.Close, body)
		}
		apitest.Load(t).Check(t, httptest.NewRequest("POST", apitest.Path("/pets"), nil), res.StatusCode, res.Header, body)
	}
}

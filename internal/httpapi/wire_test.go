package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/memstore"
)

// wireServer serves the app through httpapi.Listener, as serve does, with
// net/http's header limit at 64 KiB.
func wireServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.MaxHeaderBytes = 64 << 10
	srv.Listener = httpapi.Listener(srv.Listener, nil, srv.Config.MaxHeaderBytes)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// TestEveryAnswerIsTheContracts: what net/http answers by itself, before
// the app, reaches the client as the contract's Error with X-Request-Id and
// the security headers (a 431 on an operation's path is that operation's
// documented answer); and the app's own answers are left as they are.
func TestEveryAnswerIsTheContracts(t *testing.T) {
	app, err := httpapi.New(httpapi.Config{Store: memstore.New(), Keys: apikey.NewSet(apikey.Hash(testKey))})
	if err != nil {
		t.Fatal(err)
	}
	srv := wireServer(t, app)
	contract := apitest.Load(t)
	big := strings.Repeat("b", 70<<10)
	for _, tc := range []struct {
		name, raw string
		status    int
		msg       string
	}{
		{"100 KB URL", "GET " + apitest.Base() + "/pets?limit=" + big + " HTTP/1.1\r\nHost: x\r\n\r\n", 431, "larger than 64 KiB"},
		{"70 KB header", "GET " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\nX-Big: " + big + "\r\n\r\n", 431, "larger than 64 KiB"},
		{"raw space in the query", "GET " + apitest.Base() + "/pets?a b HTTP/1.1\r\nHost: x\r\n\r\n", 400, "not well-formed HTTP/1.1"},
		{"no Host", "GET " + apitest.Base() + "/pets HTTP/1.1\r\n\r\n", 400, "missing required Host header"},
		{"HTTP/2.0", "GET " + apitest.Base() + "/pets HTTP/2.0\r\nHost: x\r\n\r\n", 400, "not HTTP/1.1"},
		{"Transfer-Encoding gzip", "POST " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 400, "Transfer-Encoding"},
		{"Expect 200-ok", "GET " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n", 400, "Expect: only 100-continue"},
		{"the app's own 401", "GET " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\n\r\n", 401, "missing API key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body := apitest.Raw(t, srv.Listener.Addr().String(), tc.raw)
			if res.StatusCode != tc.status || !strings.Contains(string(body), tc.msg) {
				t.Fatalf("got %d %s, want %d with %q", res.StatusCode, body, tc.status, tc.msg)
			}
			if res.Header.Get("X-Request-Id") == "" || res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("X-Frame-Options") != "DENY" {
				t.Errorf("headers %v: want X-Request-Id and the security headers", res.Header)
			}
			// Each is GET or POST /pets as far as the contract knows.
			method := "GET"
			if strings.HasPrefix(tc.raw, "POST") {
				method = "POST"
			}
			contract.Check(t, httptest.NewRequest(method, apitest.Path("/pets"), nil), res.StatusCode, res.Header, body)
		})
	}
}

// TestHandlerAnswersAreNotRewritten: a handler's answer that looks most
// like net/http's own (text/plain, Connection: close, a 400) is left alone:
// net/http writes a handler's headers sorted, Connection first.
func TestHandlerAnswersAreNotRewritten(t *testing.T) {
	srv := wireServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, "400 Bad Request")
	}))
	res, body := apitest.Raw(t, srv.Listener.Addr().String(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if res.StatusCode != 400 || string(body) != "400 Bad Request" || res.Header.Get("X-Request-Id") != "" {
		t.Fatalf("got %d %v %q: the handler's own answer was rewritten", res.StatusCode, res.Header, body)
	}
}

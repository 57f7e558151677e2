package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apitest"
)

// TestWire sends hostile requests over TCP to the real server, as bytes:
// each is answered with an Error body, X-Request-Id and the security
// headers, whether the app answers it or net/http refuses it before any
// handler runs (what it cannot parse; httpapi.Listener rewrites its
// plain-text answer).
func TestWire(t *testing.T) {
	const key = "e2e-key-0123456789abcdef0123456789"
	base, _, _, _ := startServer(t, map[string]string{"PETSTORE_API_KEYS": key})
	addr := strings.TrimPrefix(base, "http://")
	auth := "Authorization: Bearer " + key + "\r\n"
	big := strings.Repeat("b", 70<<10) // over the 64 KiB header cap

	for _, tc := range []struct {
		name   string
		raw    string
		status int
		code   gen.ErrorCode
	}{
		// Parsed by net/http, answered by the app.
		{"encoded dot dot slash", "GET " + apitest.Base() + "/pets/..%2f HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", 400, gen.ErrorCodeInvalidRequest},
		{"double slash", "GET /" + apitest.Base() + "//pets HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", 404, gen.ErrorCodeNotFound},
		{"absolute form, no key", "GET http://evil.example" + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\n\r\n", 401, gen.ErrorCodeUnauthorized},
		{"OPTIONS *", "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", 404, gen.ErrorCodeNotFound},
		{"garbage method", "XYZZY " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\n\r\n", 405, gen.ErrorCodeMethodNotAllowed},
		{"CONNECT", "CONNECT " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\n\r\n", 405, gen.ErrorCodeMethodNotAllowed},
		{"60 KB path", "GET " + apitest.Base() + "/" + strings.Repeat("p", 60<<10) + " HTTP/1.1\r\nHost: x\r\n\r\n", 404, gen.ErrorCodeNotFound},
		{"60 KB Authorization", "GET " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + strings.Repeat("k", 60<<10) + "\r\n\r\n", 401, gen.ErrorCodeUnauthorized},
		{"2000 headers", "GET " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X-N: v\r\n", 2000) + "\r\n", 401, gen.ErrorCodeUnauthorized},
		{"HTTP/1.0 without Host", "GET " + apitest.Base() + "/pets?limit=0 HTTP/1.0\r\n" + auth + "\r\n", 400, gen.ErrorCodeInvalidRequest},
		{"chunked body on list", "GET " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\n" + auth + "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 400, gen.ErrorCodeInvalidRequest},
		{"body cut short", "POST " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\":\"Rex\"", 400, gen.ErrorCodeInvalidRequest},
		{"two Content-Type headers", "POST " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Type: application/json\r\nContent-Type: text/plain\r\nContent-Length: 29\r\n\r\n{\"name\":\"Rex\",\"categoryId\":1}", 400, gen.ErrorCodeInvalidRequest},
		{"Content-Type list", "POST " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Type: application/json, text/plain\r\nContent-Length: 29\r\n\r\n{\"name\":\"Rex\",\"categoryId\":1}", 400, gen.ErrorCodeInvalidRequest},
		{"latin1 body, latin1 charset", "POST " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Type: application/json; charset=latin1\r\nContent-Length: 29\r\n\r\n{\"name\":\"R\xe9x\",\"categoryId\":1}", 400, gen.ErrorCodeInvalidRequest},
		{"ASCII body, latin1 charset", "POST " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Type: application/json; charset=latin1\r\nContent-Length: 29\r\n\r\n{\"name\":\"Rex\",\"categoryId\":1}", 400, gen.ErrorCodeInvalidRequest},
		{"plus sign on petId", "GET " + apitest.Base() + "/pets/+1 HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", 400, gen.ErrorCodeInvalidRequest},
		{"leading zeros on petId", "GET " + apitest.Base() + "/pets/007 HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", 400, gen.ErrorCodeInvalidRequest},
		{"2^63 petId", "GET " + apitest.Base() + "/pets/9223372036854775808 HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", 400, gen.ErrorCodeInvalidRequest},
		{"2^63-1 petId", "GET " + apitest.Base() + "/pets/9223372036854775807 HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", 404, gen.ErrorCodeNotFound},

		// Refused by net/http before the app, rewritten as the contract's.
		{"header over 64 KiB", "GET " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\nX-Big: " + big + "\r\n\r\n", 431, gen.ErrorCodeInvalidRequest},
		{"Authorization over 64 KiB", "GET " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + big + "\r\n\r\n", 431, gen.ErrorCodeInvalidRequest},
		{"path over 64 KiB", "GET " + apitest.Base() + "/" + big + " HTTP/1.1\r\nHost: x\r\n\r\n", 431, gen.ErrorCodeInvalidRequest},
		{"query over 64 KiB", "GET " + apitest.Base() + "/pets?x=" + big + " HTTP/1.1\r\nHost: x\r\n\r\n", 431, gen.ErrorCodeInvalidRequest},
		{"malformed request line", "GARBAGE\r\n\r\n", 400, gen.ErrorCodeInvalidRequest},
		{"TLS to the plain port", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 400, gen.ErrorCodeInvalidRequest},
		{"raw space in the query", "GET " + apitest.Base() + "/pets?a b HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", 400, gen.ErrorCodeInvalidRequest},
		{"invalid method token", "G(T " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\n\r\n", 400, gen.ErrorCodeInvalidRequest},
		{"bad percent-encoding in path", "GET " + apitest.Base() + "/pets/%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400, gen.ErrorCodeInvalidRequest},
		{"control character in path", "GET " + apitest.Base() + "/pets/\x01 HTTP/1.1\r\nHost: x\r\n\r\n", 400, gen.ErrorCodeInvalidRequest},
		{"invalid header name", "GET " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\nBad Header: x\r\n\r\n", 400, gen.ErrorCodeInvalidRequest},
		{"NUL in Authorization", "GET " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\x00b\r\n\r\n", 400, gen.ErrorCodeInvalidRequest},
		{"HTTP/1.1 without Host", "GET " + apitest.Base() + "/pets HTTP/1.1\r\n" + auth + "\r\n", 400, gen.ErrorCodeInvalidRequest},
		{"malformed Host", "GET " + apitest.Base() + "/pets HTTP/1.1\r\nHost: a b\r\n\r\n", 400, gen.ErrorCodeInvalidRequest},
		{"two Host headers", "GET " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", 400, gen.ErrorCodeInvalidRequest},
		{"conflicting Content-Length", "POST " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n{}", 400, gen.ErrorCodeInvalidRequest},
		{"negative Content-Length", "POST " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400, gen.ErrorCodeInvalidRequest},
		{"HTTP/2.0 in plain text", "GET " + apitest.Base() + "/pets HTTP/2.0\r\nHost: x\r\n\r\n", 400, gen.ErrorCodeInvalidRequest},
		{"unknown Transfer-Encoding", "POST " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 400, gen.ErrorCodeInvalidRequest},
		{"unknown Expect", "GET " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n", 400, gen.ErrorCodeInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body := apitest.Raw(t, addr, tc.raw)
			if res.StatusCode != tc.status {
				t.Fatalf("got %d %q, want %d", res.StatusCode, body, tc.status)
			}
			if id := res.Header.Get("X-Request-Id"); id == "" || res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("X-Frame-Options") != "DENY" {
				t.Errorf("headers %v: want X-Request-Id and the security headers", res.Header)
			}
			var e gen.Error
			dec := json.NewDecoder(strings.NewReader(string(body)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&e); err != nil || e.Code != tc.code || int(e.Status) != tc.status || e.Message == "" {
				t.Fatalf("got %q (%v), want an Error with code %s and status %d", body, err, tc.code, tc.status)
			}
			if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type: got %q, want application/json", ct)
			}
		})
	}
}

// TestHeadBound: the contract's 64 KiB is the request line and headers
// together, to the byte: a head of exactly 64 KiB is served, one byte more
// is answered 431. (net/http reads 4096 bytes past MaxHeaderBytes before it
// answers 431; set to 64 KiB it served heads up to 68 KiB.)
func TestHeadBound(t *testing.T) {
	const key = "e2e-key-0123456789abcdef0123456789"
	base, _, _, _ := startServer(t, map[string]string{"PETSTORE_API_KEYS": key})
	addr := strings.TrimPrefix(base, "http://")
	for _, tc := range []struct {
		size, status int
	}{{64 << 10, 200}, {64<<10 + 1, 431}} {
		head := "GET " + apitest.Base() + "/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key + "\r\nX-Pad: "
		raw := head + strings.Repeat("p", tc.size-len(head)-len("\r\n\r\n")) + "\r\n\r\n"
		if res, body := apitest.Raw(t, addr, raw); res.StatusCode != tc.status {
			t.Errorf("a head of %d bytes: got %d %q, want %d", len(raw), res.StatusCode, body, tc.status)
		}
	}
}

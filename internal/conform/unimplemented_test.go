package conform

import (
	"net/http"
	"testing"
)

// TestUnimplemented: not_a_server_error lets through exactly the two 5xx
// RFC 9112 asks for: 501 to a Transfer-Encoding other than chunked, 505 to
// a protocol version other than HTTP/1.x; any other 5xx, or those two to
// another request, is a server error.
func TestUnimplemented(t *testing.T) {
	req := func(te ...string) *http.Request {
		r, _ := http.NewRequest(http.MethodPost, "http://x/v1/pets", nil)
		for _, v := range te {
			r.Header.Add("Transfer-Encoding", v)
		}
		return r
	}
	for _, tc := range []struct {
		name string
		x    exchange
		want bool
	}{
		{"501 to gzip", exchange{status: 501, req: req("gzip")}, true},
		{"501 to gzip, chunked", exchange{status: 501, req: req("gzip, chunked")}, true},
		{"501 to chunked", exchange{status: 501, req: req("chunked")}, false},
		{"501 to no Transfer-Encoding", exchange{status: 501, req: req()}, false},
		{"505 to HTTP/2.0", exchange{status: 505, req: req(), wire: &wire{proto: "HTTP/2.0"}}, true},
		{"505 to HTTP/1.0", exchange{status: 505, req: req(), wire: &wire{proto: "HTTP/1.0"}}, false},
		{"505 to HTTP/1.1", exchange{status: 505, req: req()}, false},
		{"500 to gzip", exchange{status: 500, req: req("gzip")}, false},
		{"503 to HTTP/2.0", exchange{status: 503, req: req(), wire: &wire{proto: "HTTP/2.0"}}, false},
	} {
		if got := unimplemented(&tc.x); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

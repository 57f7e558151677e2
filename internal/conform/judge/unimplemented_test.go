package judge

import (
	"net/http"
	"testing"

	"github.com/petstore/petstore/internal/conform/wire"
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
		x    Exchange
		want bool
	}{
		{"501 to gzip", Exchange{Exchange: &wire.Exchange{Status: 501, Req: req("gzip")}}, true},
		{"501 to gzip, chunked", Exchange{Exchange: &wire.Exchange{Status: 501, Req: req("gzip, chunked")}}, true},
		{"501 to chunked", Exchange{Exchange: &wire.Exchange{Status: 501, Req: req("chunked")}}, false},
		{"501 to no Transfer-Encoding", Exchange{Exchange: &wire.Exchange{Status: 501, Req: req()}}, false},
		{"505 to HTTP/2.0", Exchange{Exchange: &wire.Exchange{Status: 505, Req: req(), Raw: &wire.Raw{Proto: "HTTP/2.0"}}}, true},
		{"505 to HTTP/1.0", Exchange{Exchange: &wire.Exchange{Status: 505, Req: req(), Raw: &wire.Raw{Proto: "HTTP/1.0"}}}, false},
		{"505 to HTTP/1.1", Exchange{Exchange: &wire.Exchange{Status: 505, Req: req()}}, false},
		{"500 to gzip", Exchange{Exchange: &wire.Exchange{Status: 500, Req: req("gzip")}}, false},
		{"503 to HTTP/2.0", Exchange{Exchange: &wire.Exchange{Status: 503, Req: req(), Raw: &wire.Raw{Proto: "HTTP/2.0"}}}, false},
	} {
		if got := Unimplemented(&tc.x); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

package conform_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/httpapi"
)

// headMax is the contract's bound on a request line and headers.
const headMax = 64 << 10

// A serverDefect is a defect of the server around the app, not of a
// handler: listen builds the server with it.
type serverDefect struct {
	http.Handler
	plain     bool // net/http's own plain-text answers, not the contract's (no httpapi.Listener)
	maxHeader int  // http.Server.MaxHeaderBytes; 0: the reference's
	// headerTimeout is http.Server.ReadHeaderTimeout; 0: the reference's
	// (the time the contract gives a head, 5 s).
	headerTimeout time.Duration
}

// listen serves h on loopback as petstore serve does: net/http's own
// answers rewritten as the contract's (httpapi.Listener), 431 past headMax
// (net/http reads 4096 bytes past MaxHeaderBytes), OPTIONS * to the app;
// a serverDefect changes that. (.ci/kit-mutants.sh puts a version of its
// own in its place for a tree without httpapi.Listener.)
func listen(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.MaxHeaderBytes = headMax - 4096
	srv.Config.ReadHeaderTimeout = 5 * time.Second
	srv.Config.DisableGeneralOptionsHandler = true
	d, _ := h.(serverDefect)
	if d.maxHeader != 0 {
		srv.Config.MaxHeaderBytes = d.maxHeader
	}
	if d.headerTimeout != 0 {
		srv.Config.ReadHeaderTimeout = d.headerTimeout
	}
	if !d.plain {
		srv.Listener = httpapi.Listener(srv.Listener, nil, headMax)
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

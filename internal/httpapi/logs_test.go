package httpapi_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/syncbuf"
)

// maxLine bounds a log line of a request whatever the request: the fields
// of its own, and what it quotes of the request, at most 512 bytes each.
const maxLine = 2 << 10

// TestLogLinesAreBounded: a 60 KB path or method makes a log line of at
// most maxLine, which says how much it left out, whether the access log is
// appended by hand (as served) or goes through slog.
func TestLogLinesAreBounded(t *testing.T) {
	long := strings.Repeat("p", 60<<10)
	for _, tc := range []struct{ name, method, target string }{
		{"60 KB path", "GET", apitest.Path("/") + long},
		{"60 KB path under a route", "GET", apitest.Path("/pets/") + long},
		{"60 KB method", "X" + long, apitest.Path("/pets")},
		{"60 KB of two-byte characters", "GET", apitest.Path("/") + strings.Repeat("%C3%A9", 10<<10)},
	} {
		for _, byHand := range []bool{true, false} {
			var log syncbuf.Buffer
			cfg := httpapi.Config{Store: memstore.New(), Keys: apikey.NewSet(apikey.Hash(testKey)), Logger: slog.New(slog.NewJSONHandler(&log, nil))}
			if byHand {
				cfg.AccessLog = &log
			}
			app, err := httpapi.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(http.MethodGet, tc.target, nil)
			req.Method = tc.method
			app.ServeHTTP(httptest.NewRecorder(), req)
			lines := strings.Split(strings.TrimSpace(log.String()), "\n")
			if len(lines) != 1 {
				t.Fatalf("%s (by hand %v): %d log lines, want 1", tc.name, byHand, len(lines))
			}
			if n := len(lines[0]); n > maxLine || !strings.Contains(lines[0], "bytes)") {
				t.Errorf("%s (by hand %v): a line of %d bytes (want at most %d, saying what it left out): %.200s…", tc.name, byHand, n, maxLine, lines[0])
			}
		}
	}
}

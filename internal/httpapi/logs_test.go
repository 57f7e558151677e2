package httpapi_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/pets"
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

// stackError is a panic a store recovered from, with where it happened.
type stackError struct{}

func (stackError) Error() string { return "panic while committing a batch: boom" }
func (stackError) Unwrap() error { return pets.ErrPanic }
func (stackError) Stack() []byte { return []byte("goroutine 7 [running]:\nwrite.go:42") }

// TestStorePanicLogged: a create the store answers after recovering from
// a panic is told what the store said (here, outcome unknown), logged with
// its request id and the panic's stack, and counted as the store's panic.
func TestStorePanicLogged(t *testing.T) {
	var log syncbuf.Buffer
	err := fmt.Errorf("pgstore: create: %w: %w: %w", pets.ErrUnavailable, pets.ErrOutcomeUnknown, stackError{})
	app, aerr := httpapi.New(httpapi.Config{Store: failingStore{err: err}, Keys: apikey.NewSet(apikey.Hash(testKey)), Logger: slog.New(slog.NewJSONHandler(&log, nil))})
	if aerr != nil {
		t.Fatal(aerr)
	}
	req := httptest.NewRequest(http.MethodPost, apitest.Path("/pets"), strings.NewReader(apitest.Body(`{"name":"Rex","categoryId":1}`)))
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	app.ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), `"outcome_unknown"`) {
		t.Fatalf("got %d %s; want 503 outcome_unknown", rec.Code, rec.Body)
	}
	var line struct {
		Msg, RequestID, Stack string
	}
	for l := range strings.Lines(log.String()) {
		var v map[string]any
		if json.Unmarshal([]byte(l), &v) == nil && v["msg"] == "request failed" {
			line.Msg, _ = v["msg"].(string)
			line.RequestID, _ = v["request_id"].(string)
			line.Stack, _ = v["stack"].(string)
		}
	}
	if line.Msg == "" || line.RequestID != rec.Header().Get("X-Request-Id") || !strings.Contains(line.Stack, "write.go:42") {
		t.Fatalf("log %s: want a request failed line with the request id %q and the stack", log.String(), rec.Header().Get("X-Request-Id"))
	}
	metrics := httptest.NewRecorder()
	app.ServeHTTP(metrics, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if want := `petstore_store_operation_duration_seconds_count{operation="create",outcome="panic"} 1`; !strings.Contains(metrics.Body.String(), want) {
		t.Fatalf("/metrics lacks %s", want)
	}
}

// TestAccessLogText: with AccessLogText the access lines go to AccessLog as
// slog's TextHandler writes them (the text log's format), not to Logger.
func TestAccessLogText(t *testing.T) {
	var access, log syncbuf.Buffer
	app, err := httpapi.New(httpapi.Config{Store: memstore.New(), Keys: apikey.NewSet(apikey.Hash(testKey)),
		Logger: slog.New(slog.NewTextHandler(&log, nil)), AccessLog: &access, AccessLogText: true})
	if err != nil {
		t.Fatal(err)
	}
	app.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/nowhere", nil))
	line := access.String()
	if !strings.HasPrefix(line, "time=") || !strings.Contains(line, " level=INFO msg=request method=GET path=/nowhere route=\"\" status=404 ") || strings.Count(line, "\n") != 1 {
		t.Errorf("access line: got %q, want one slog text line of the 404", line)
	}
	if log.String() != "" {
		t.Errorf("the logger got %q, want nothing", log.String())
	}
}

package httpapi_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/syncbuf"
)

// waitingStore is a memory store that honours its context as a database
// does: a List waits until the caller gives up, then fails with the
// context's error.
type waitingStore struct {
	*memstore.Store
	waiting chan struct{} // closed once a List waits
	once    sync.Once
}

func (s *waitingStore) List(ctx context.Context, _ pets.Query) (pets.Page, error) {
	s.once.Do(func() { close(s.waiting) })
	<-ctx.Done()
	return pets.Page{}, fmt.Errorf("memstore: list: %w", ctx.Err())
}

// TestClientCancel: a client that hangs up while its store call runs is no
// outage: logged as 499 (never a 5xx), no ERROR line, the canceled outcome
// in the store metrics; and no status is sent (the handler aborts). TestPostgresClientCancel is the same over PostgreSQL.
func TestClientCancel(t *testing.T) {
	s := &waitingStore{Store: memstore.New(), waiting: make(chan struct{})}
	checkClientCancel(t, s, func() bool {
		select {
		case <-s.waiting:
			return true
		default:
			return false
		}
	})
}

// checkClientCancel sends GET /pets to the app over store, cancels it
// once waiting reports the store call under way, and checks what the
// server made of it: its status, its log and its metrics.
func checkClientCancel(t *testing.T, store pets.Store, waiting func() bool) {
	t.Helper()
	var log syncbuf.Buffer
	app, err := httpapi.New(httpapi.Config{Store: store, Keys: apikey.NewSet(apikey.Hash(testKey)), Logger: slog.New(slog.NewJSONHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := httptest.NewRequest("GET", apitest.Path("/pets"), nil).WithContext(ctx)
	req.Header.Set("Authorization", "Bearer "+testKey)
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	var aborted any
	go func() {
		defer close(done)
		defer func() { aborted = recover() }()
		app.ServeHTTP(rec, req)
	}()
	apitest.Eventually(t, "the store call to be under way", waiting)
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the request did not end within 10s of its cancel")
	}
	if aborted != http.ErrAbortHandler {
		t.Errorf("canceled request: the handler ended with %v, want it aborted (http.ErrAbortHandler: no status sent)", aborted)
	}
	if rec.Body.Len() != 0 || rec.Header().Get(echo.HeaderContentType) != "" {
		t.Errorf("canceled request: something was written: %q %v", rec.Body, rec.Header())
	}
	logged := false
	for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		if strings.Contains(line, `"level":"ERROR"`) {
			t.Errorf("canceled request logged at ERROR: %s", line)
		}
		logged = logged || strings.Contains(line, `"msg":"request"`) && strings.Contains(line, `"status":499`)
	}
	if !logged {
		t.Errorf("no access line with status 499 (client closed request):\n%s", log.String())
	}
	mrec := httptest.NewRecorder()
	app.ServeHTTP(mrec, httptest.NewRequest("GET", "/metrics", nil))
	sc := bufio.NewScanner(mrec.Body)
	var canceled bool
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, `petstore_store_operation_duration_seconds_count{operation="list",outcome="canceled"} `):
			canceled = strings.HasSuffix(line, " 1")
		case strings.HasPrefix(line, "petstore_store_operation_duration_seconds_count{") && strings.Contains(line, `outcome="unavailable"`) && !strings.HasSuffix(line, " 0"):
			t.Errorf("canceled request counted as the store unavailable: %s", line)
		case strings.HasPrefix(line, "petstore_http_requests_total{") && strings.Contains(line, `code="5`):
			t.Errorf("canceled request counted as a 5xx: %s", line)
		}
	}
	if !canceled {
		t.Errorf("no list/canceled observation in the store metrics:\n%s", mrec.Body)
	}
}

package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/labstack/echo/v4"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/syncbuf"
)

// flakyStore is a memstore with a Ping that fails with the error in err
// (nil: answers), or waits for its context to end when block is set.
type flakyStore struct {
	*memstore.Store
	err   atomic.Pointer[error]
	block atomic.Bool
	// deadline is the time left on the context of the last Ping.
	deadline atomic.Int64
}

func (s *flakyStore) Ping(ctx context.Context) error {
	if d, ok := ctx.Deadline(); ok {
		s.deadline.Store(int64(time.Until(d)))
	} else {
		s.deadline.Store(-1)
	}
	if s.block.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	if p := s.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (s *flakyStore) fail(err error) { s.err.Store(&err) }

func wantReady(t *testing.T, c *apitest.Client) {
	t.Helper()
	res := c.Do(t, "GET", "/readyz", "")
	if res.Status != http.StatusOK || strings.TrimSpace(string(res.Body)) != `{"status":"ready"}` {
		t.Fatalf("GET /readyz: got %d %s, want 200 {\"status\":\"ready\"}", res.Status, res.Body)
	}
}

func TestReadyz(t *testing.T) {
	anon := func(c *apitest.Client) *apitest.Client { c.Key = ""; return c }

	t.Run("store without Ping", func(t *testing.T) {
		wantReady(t, anon(newClient(t, memstore.New())))
	})

	t.Run("store fails then recovers", func(t *testing.T) {
		s := &flakyStore{Store: memstore.New()}
		c := anon(newClient(t, s))
		wantReady(t, c)
		if d := time.Duration(s.deadline.Load()); d <= 0 || d > time.Second {
			t.Errorf("Ping's context: got %v left, want a deadline of at most 1s", d)
		}
		s.fail(errors.New("dial tcp 127.0.0.1:5432: connection refused"))
		res := c.Do(t, "GET", "/readyz", "")
		wantError(t, res, http.StatusServiceUnavailable, gen.ErrorCodeUnavailable, "not ready")
		if strings.Contains(string(res.Body), "5432") {
			t.Errorf("503 body %s leaks the store's error", res.Body)
		}
		s.err.Store(nil)
		wantReady(t, c)
	})

	t.Run("draining", func(t *testing.T) {
		// Both ways the access line is written: by hand (as served) and
		// through slog.
		for _, byHand := range []bool{true, false} {
			draining := make(chan struct{})
			var log syncbuf.Buffer
			cfg := httpapi.Config{Store: memstore.New(), Keys: apikey.NewSet(apikey.Hash(testKey)), Draining: draining, Logger: slog.New(slog.NewJSONHandler(&log, nil))}
			if byHand {
				cfg.AccessLog = &log
			}
			app, err := httpapi.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			c := &apitest.Client{Contract: apitest.Load(t), Handler: app}
			wantReady(t, c)
			close(draining)
			wantError(t, c.Do(t, "GET", "/readyz", ""), http.StatusServiceUnavailable, gen.ErrorCodeUnavailable, "shutting down")
			if res := c.Do(t, "GET", "/healthz", ""); res.Status != http.StatusOK {
				t.Errorf("GET /healthz while draining: got %d, want 200 (alive, only not ready)", res.Status)
			}
			// A drain is no fault: alerting on ERROR must not fire on
			// every deploy.
			if strings.Contains(log.String(), `"level":"ERROR"`) || !strings.Contains(log.String(), `"status":503`) {
				t.Errorf("by hand %v: /readyz while draining: want its 503 logged, at INFO, and no ERROR line:\n%s", byHand, log.String())
			}
		}
	})

	t.Run("store fails: a fault, logged as ERROR", func(t *testing.T) {
		s := &flakyStore{Store: memstore.New()}
		s.fail(errors.New("connection refused"))
		var log syncbuf.Buffer
		app, err := httpapi.New(httpapi.Config{Store: s, Keys: apikey.NewSet(apikey.Hash(testKey)), Logger: slog.New(slog.NewJSONHandler(&log, nil)), AccessLog: &log})
		if err != nil {
			t.Fatal(err)
		}
		c := &apitest.Client{Contract: apitest.Load(t), Handler: app}
		wantError(t, c.Do(t, "GET", "/readyz", ""), http.StatusServiceUnavailable, gen.ErrorCodeUnavailable, "not ready")
		if n := strings.Count(log.String(), `"level":"ERROR"`); n != 2 {
			t.Errorf("a store that fails /readyz: %d ERROR lines, want 2 (the failure, the access line):\n%s", n, log.String())
		}
	})

	t.Run("store hangs", func(t *testing.T) {
		s := &flakyStore{Store: memstore.New()}
		s.block.Store(true)
		c := anon(newClient(t, s))
		start := time.Now()
		wantError(t, c.Do(t, "GET", "/readyz", ""), http.StatusServiceUnavailable, gen.ErrorCodeUnavailable, "not ready")
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("GET /readyz on a hung store took %v; want it bounded near 1s", took)
		}
	})
}

// scrape gets /metrics without a key and parses it.
func scrape(t *testing.T, c *apitest.Client) map[string]*dto.MetricFamily {
	t.Helper()
	anon := *c
	anon.Key = ""
	res := anon.Do(t, "GET", "/metrics", "")
	if res.Status != http.StatusOK {
		t.Fatalf("GET /metrics: got %d %s", res.Status, res.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(res.Body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, res.Body)
	}
	return fams
}

// value returns the value of the series of family name whose labels include
// the pairs given ("name", "value", …): a counter's or gauge's value, a
// histogram's sample count. ok is false when there is no such series.
func value(fams map[string]*dto.MetricFamily, name string, pairs ...string) (v float64, ok bool) {
	mf := fams[name]
	if mf == nil {
		return 0, false
	}
next:
	for _, m := range mf.GetMetric() {
		for i := 0; i+1 < len(pairs); i += 2 {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == pairs[i] && l.GetValue() == pairs[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
		return m.GetUntyped().GetValue(), true
	}
	return 0, false
}

func wantValue(t *testing.T, fams map[string]*dto.MetricFamily, want float64, name string, pairs ...string) {
	t.Helper()
	got, ok := value(fams, name, pairs...)
	if !ok {
		t.Errorf("%s%v: no such series", name, pairs)
		return
	}
	if got != want {
		t.Errorf("%s%v: got %v, want %v", name, pairs, got, want)
	}
}

func TestMetrics(t *testing.T) {
	c := newClient(t, memstore.New())
	other := newClient(t, memstore.New()) // a second app in the process
	anon := *c
	anon.Key = ""

	c.Create(t, apitest.Body(`{"name":"Rex","categoryId":1}`))
	c.Create(t, apitest.Body(`{"name":"Tom","categoryId":2}`))
	c.Do(t, "GET", apitest.Path("/pets"), "")
	c.Do(t, "GET", apitest.Path("/pets/1"), "")
	c.Do(t, "GET", apitest.Path("/pets/999"), "")
	c.Do(t, "GET", apitest.Path("/pets?limit=0"), "")
	anon.Do(t, "GET", apitest.Path("/pets"), "")
	anon.Do(t, "POST", apitest.Path("/pets"), `{}`)
	c.Do(t, "GET", apitest.Path("/nope-1"), "")
	c.Do(t, "GET", apitest.Path("/nope-2?x=1"), "")
	c.Do(t, "DELETE", apitest.Path("/pets"), "")
	c.Do(t, "GET", "/healthz", "")
	c.Do(t, "GET", "/readyz", "")
	other.Do(t, "GET", apitest.Path("/pets"), "")

	fams := scrape(t, c)
	const reqs, dur = "petstore_http_requests_total", "petstore_http_request_duration_seconds"
	for _, tc := range []struct {
		op, code string
		n        float64
	}{
		{"createPet", "201", 2},
		{"listPets", "200", 1},
		{"listPets", "400", 1},
		{"listPets", "401", 1},
		{"createPet", "401", 1},
		{"getPet", "200", 1},
		{"getPet", "404", 1},
		{"none", "404", 2},
		{apitest.Path("/pets"), "405", 1},
		{"/healthz", "200", 1},
		{"/readyz", "200", 1},
	} {
		wantValue(t, fams, tc.n, reqs, "operation", tc.op, "code", tc.code)
		wantValue(t, fams, tc.n, dur, "operation", tc.op, "code", tc.code)
	}
	var total float64
	for _, m := range fams[reqs].GetMetric() {
		total += m.GetCounter().GetValue()
		for _, l := range m.GetLabel() {
			if strings.Contains(l.GetValue(), "nope") {
				t.Errorf("%s has the raw path %q as a label value", reqs, l.GetValue())
			}
		}
	}
	if total != 13 {
		t.Errorf("%s: got %v requests in all, want 13 (this app's, not the other's)", reqs, total)
	}
	wantValue(t, fams, 1, "petstore_http_requests_in_flight") // the scrape itself

	const store = "petstore_store_operation_duration_seconds"
	wantValue(t, fams, 2, store, "operation", "create", "outcome", "ok")
	wantValue(t, fams, 1, store, "operation", "list", "outcome", "ok")
	wantValue(t, fams, 1, store, "operation", "get", "outcome", "ok")
	wantValue(t, fams, 1, store, "operation", "get", "outcome", "not_found")
	wantValue(t, fams, 0, store, "operation", "create", "outcome", "unavailable")

	wantValue(t, fams, 2, "petstore_pets")
	wantValue(t, fams, 1, "petstore_build_info", "go_version", runtime.Version())
	for _, name := range []string{"go_build_info", "go_goroutines", "go_memstats_heap_alloc_bytes", "process_cpu_seconds_total", "process_open_fds"} {
		if fams[name] == nil {
			t.Errorf("/metrics lacks %s", name)
		}
	}

	// A scrape counts itself; the other app's registry is its own.
	wantValue(t, scrape(t, c), 1, reqs, "operation", "/metrics", "code", "200")
	wantValue(t, scrape(t, other), 1, reqs, "operation", "listPets", "code", "200")
}

// A panic in a handler is counted as the 500 the mapper sends.
func TestMetricsCountPanics(t *testing.T) {
	c := newClient(t, failingStore{})
	wantError(t, c.Do(t, "GET", apitest.Path("/pets"), ""), 500, gen.ErrorCodeInternal, "")
	fams := scrape(t, c)
	wantValue(t, fams, 1, "petstore_http_requests_total", "operation", "listPets", "code", "500")
	if _, ok := value(fams, "petstore_pets"); ok {
		t.Errorf("petstore_pets for a store without Count: want no such gauge")
	}
}

// badCountStore is a memstore whose Count fails.
type badCountStore struct{ *memstore.Store }

func (badCountStore) Count(context.Context) (int64, error) { return 0, pets.ErrUnavailable }

// A store that cannot count leaves the gauge out, not the scrape.
func TestMetricsCountFails(t *testing.T) {
	c := newClient(t, badCountStore{memstore.New()})
	fams := scrape(t, c)
	if _, ok := value(fams, "petstore_pets"); ok {
		t.Errorf("petstore_pets when Count fails: want no sample")
	}
	wantValue(t, fams, 1, "petstore_build_info")
	// The handler counts the failure after it has gathered: the next scrape
	// shows it.
	wantValue(t, scrape(t, c), 1, "promhttp_metric_handler_errors_total", "cause", "gathering")
}

// loggedClient is a client of an app whose log, JSON as served, goes to
// log; the app runs in the test's goroutine (apitest.Client.Handler).
func loggedClient(t *testing.T, log *bytes.Buffer) *apitest.Client {
	t.Helper()
	app, err := httpapi.New(httpapi.Config{
		Store:     memstore.New(),
		Keys:      apikey.NewSet(apikey.Hash(testKey)),
		Logger:    slog.New(slog.NewJSONHandler(log, nil)),
		AccessLog: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &apitest.Client{Contract: apitest.Load(t), Handler: app, Key: testKey}
}

// X-Request-Id: a sane client id is kept, anything else replaced by a fresh
// random UUID; either way it is in the response, errors included, and in the
// log.
func TestRequestID(t *testing.T) {
	var logBuf bytes.Buffer
	c := loggedClient(t, &logBuf)
	long := strings.Repeat("a", 129)
	fresh := map[string]bool{} // every generated id, to find repeats
	for _, tc := range []struct {
		name, path, sent string
		keep             bool
	}{
		{"kept", apitest.Path("/pets"), "req-42.a_b:c", true},
		{"kept at 128", apitest.Path("/pets"), long[:128], true},
		{"kept on 404", apitest.Path("/pets/7"), "req-404", true},
		{"none sent", apitest.Path("/pets"), "", false},
		{"too long", apitest.Path("/pets"), long, false},
		{"space", apitest.Path("/pets"), "a b", false},
		{"percent", apitest.Path("/pets"), "a%0Ab", false},
		{"quote", "/healthz", `a"b`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.sent != "" {
				hdr = []string{"X-Request-Id", tc.sent}
			}
			res := c.Do(t, "GET", tc.path, "", hdr...)
			got := res.Header.Get("X-Request-Id")
			switch {
			case tc.keep && got != tc.sent:
				t.Errorf("X-Request-Id: got %q, want the client's %q", got, tc.sent)
			case !tc.keep && (len(got) < 16 || got == tc.sent):
				t.Errorf("X-Request-Id: got %q, want a fresh id in place of %q", got, tc.sent)
			case !tc.keep && (fresh[got] || !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(got)):
				t.Errorf("X-Request-Id: got %q, want a new random (version 4) UUID (seen: %v)", got, fresh)
			}
			if !tc.keep {
				fresh[got] = true
			}
			if !loggedID(t, logBuf.String(), got) {
				t.Errorf("no access log line with request_id %q:\n%s", got, logBuf.String())
			}
		})
	}
}

func loggedID(t *testing.T, log, id string) bool {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		var line struct {
			Msg       string `json:"msg"`
			RequestID string `json:"request_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		if line.Msg == "request" && line.RequestID == id {
			return true
		}
	}
	return false
}

// Every response, of the API or not, success or error, carries the security
// headers, once each.
func TestSecurityHeaders(t *testing.T) {
	c := newClient(t, memstore.New())
	for _, tc := range []struct {
		method, path, body string
		header             []string
		status             int
	}{
		{"POST", apitest.Path("/pets"), apitest.Body(`{"name":"Rex","categoryId":1}`), nil, 201},
		{"GET", apitest.Path("/pets"), "", nil, 200},
		{"GET", apitest.Path("/pets/1"), "", nil, 200},
		{"GET", apitest.Path("/pets"), "", []string{"Authorization", ""}, 401},
		{"GET", apitest.Path("/pets?limit=0"), "", nil, 400},
		{"GET", apitest.Path("/pets/2"), "", nil, 404},
		{"GET", apitest.Path("/nowhere"), "", nil, 404},
		{"DELETE", apitest.Path("/pets"), "", nil, 405},
		{"GET", "/healthz", "", nil, 200},
		{"GET", "/openapi.yaml", "", nil, 200},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			header := tc.header
			if tc.body != "" {
				header = append(header, "Content-Type", "application/json")
			}
			res := c.Do(t, tc.method, tc.path, tc.body, header...)
			if res.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", res.Status, tc.status, res.Body)
			}
			for name, want := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY"} {
				if got := res.Header.Values(name); len(got) != 1 || got[0] != want {
					t.Errorf("%s: got %q, want [%s]", name, got, want)
				}
			}
		})
	}
}

// Each access log line names the key its request was authenticated with, and
// no other: the state a request carries through the chain is reused across
// requests, and must not carry one request's key into the next one's line.
func TestAccessLogKeyID(t *testing.T) {
	var logBuf bytes.Buffer
	c := loggedClient(t, &logBuf)
	anon := &apitest.Client{Contract: c.Contract, Handler: c.Handler}
	id := apikey.Hash(testKey).ID()
	steps := []struct {
		c      *apitest.Client
		path   string
		status int
		keyID  string
	}{
		{c, apitest.Path("/pets"), http.StatusOK, id},
		{anon, apitest.Path("/pets"), http.StatusUnauthorized, ""},
		{c, apitest.Path("/pets/1"), http.StatusNotFound, id},
		{anon, "/healthz", http.StatusOK, ""},
		{c, apitest.Path("/pets?limit=0"), http.StatusBadRequest, id},
		{anon, apitest.Path("/pets/1"), http.StatusUnauthorized, ""},
	}
	for _, s := range steps {
		logBuf.Reset()
		if res := s.c.Do(t, "GET", s.path, ""); res.Status != s.status {
			t.Fatalf("GET %s: got %d, want %d", s.path, res.Status, s.status)
		}
		var line struct {
			Msg   string  `json:"msg"`
			KeyID *string `json:"key_id"`
		}
		if err := json.Unmarshal(logBuf.Bytes(), &line); err != nil || line.Msg != "request" || line.KeyID == nil {
			t.Fatalf("GET %s: access log %q: want one request line with a key_id (%v)", s.path, logBuf.String(), err)
		}
		if *line.KeyID != s.keyID {
			t.Errorf("GET %s: key_id %q, want %q", s.path, *line.KeyID, s.keyID)
		}
	}
}

// TestLaterMiddlewareRuns: middleware added to the app after New runs, on
// the API and elsewhere: the app's own middleware keeps to Echo's chain.
func TestLaterMiddlewareRuns(t *testing.T) {
	app, err := httpapi.New(httpapi.Config{Store: memstore.New(), Keys: apikey.NewSet(apikey.Hash(testKey))})
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	app.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			ran++
			return next(c)
		}
	})
	c := &apitest.Client{Contract: apitest.Load(t), Handler: app, Key: testKey}
	for _, path := range []string{apitest.Path("/pets"), "/healthz", "/nowhere"} {
		before := ran
		c.Do(t, "GET", path, "")
		if ran != before+1 {
			t.Errorf("GET %s: the middleware added after New ran %d times, want once", path, ran-before)
		}
	}
}

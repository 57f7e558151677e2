package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/syncbuf"
	"github.com/petstore/petstore/internal/telemetry"
)

func TestConfigured(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_SERVICE_NAME": "x"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "console"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, false},
		{map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, false},
	} {
		if got := telemetry.Configured(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("Configured(%v) = %v, want %v", tc.env, got, tc.want)
		}
	}
}

// TestOffLeavesTheServerAlone: with nothing configured, Setup returns
// tracing that installs no hook and wraps no handler.
func TestOffLeavesTheServerAlone(t *testing.T) {
	for _, v := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER", "OTEL_SDK_DISABLED"} {
		t.Setenv(v, "")
	}
	tr, err := telemetry.Setup(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if tr.On() || tr.PgxTracer() != nil {
		t.Fatal("tracing is on with nothing configured")
	}
	var cfg httpapi.Config
	if err := tr.Apply(&cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Trace != nil || cfg.TraceID != nil || cfg.WrapStore != nil {
		t.Error("Apply set a hook with tracing off")
	}
	h := http.NotFoundHandler()
	if fmt.Sprint(tr.Handler(h)) != fmt.Sprint(h) {
		t.Error("Handler wrapped the app with tracing off")
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}

// traced is a server traced into an in-memory exporter.
type traced struct {
	*apitest.Client
	spans  *tracetest.InMemoryExporter
	access *syncbuf.Buffer
}

// The key of every traced server: no span may carry any of it.
const testKey = "trace-test-key-5ecret0123456789abcdef"

// memory is the memory store, whatever the tracing.
func memory(*testing.T, *telemetry.Tracing) pets.Store { return memstore.New() }

func serveTraced(t *testing.T, newStore func(*testing.T, *telemetry.Tracing) pets.Store, tr func(trace.TracerProvider) *telemetry.Tracing) traced {
	t.Helper()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	tracing := tr(tp)
	store := newStore(t, tracing)
	digests, err := apikey.ParseKeys(testKey)
	if err != nil {
		t.Fatal(err)
	}
	access := &syncbuf.Buffer{}
	cfg := httpapi.Config{Store: store, Keys: apikey.NewSet(digests...), AccessLog: access}
	if err := tracing.Apply(&cfg); err != nil {
		t.Fatal(err)
	}
	app, err := httpapi.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(tracing.Handler(app))
	t.Cleanup(srv.Close)
	return traced{Client: &apitest.Client{Contract: apitest.Load(t), BaseURL: srv.URL, Key: testKey}, spans: spans, access: access}
}

// span waits for the ended span named name and returns it.
func (s traced) span(t *testing.T, name string) tracetest.SpanStub {
	t.Helper()
	var found tracetest.SpanStub
	apitest.Eventually(t, "span "+name, func() bool {
		for _, sp := range s.spans.GetSpans() {
			if sp.Name == name {
				found = sp
				return true
			}
		}
		return false
	})
	return found
}

func attrs(sp tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range sp.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

const (
	remoteTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	remoteSpan  = "00f067aa0ba902b7"
	secretName  = "Body-Only-Name-7f3a"
)

// checkServerSpan checks sp is op's server span, with the HTTP attributes.
func checkServerSpan(t *testing.T, sp tracetest.SpanStub, method, route string, status int) {
	t.Helper()
	if sp.SpanKind != trace.SpanKindServer {
		t.Errorf("%s: kind %v, want server", sp.Name, sp.SpanKind)
	}
	a := attrs(sp)
	if got := a["http.route"].AsString(); got != route {
		t.Errorf("%s: http.route %q, want %q", sp.Name, got, route)
	}
	if got := a["http.request.method"].AsString(); got != method {
		t.Errorf("%s: http.request.method %q, want %q", sp.Name, got, method)
	}
	if got := a["http.response.status_code"].AsInt64(); got != int64(status) {
		t.Errorf("%s: http.response.status_code %d, want %d", sp.Name, got, status)
	}
}

// checkChild checks child's parent is parent, in the same trace.
func checkChild(t *testing.T, child, parent tracetest.SpanStub) {
	t.Helper()
	if child.Parent.SpanID() != parent.SpanContext.SpanID() || child.SpanContext.TraceID() != parent.SpanContext.TraceID() {
		t.Errorf("span %q is not a child of %q", child.Name, parent.Name)
	}
}

// noSecrets fails t if any span's name, attributes, events or status quote
// the key, the Authorization header or the request body.
func noSecrets(t *testing.T, spans tracetest.SpanStubs) {
	t.Helper()
	for _, sp := range spans {
		texts := []string{sp.Name, sp.Status.Description}
		for _, kv := range sp.Attributes {
			texts = append(texts, string(kv.Key)+"="+kv.Value.String())
		}
		for _, ev := range sp.Events {
			texts = append(texts, ev.Name)
			for _, kv := range ev.Attributes {
				texts = append(texts, string(kv.Key)+"="+kv.Value.String())
			}
		}
		for _, s := range texts {
			for _, secret := range []string{testKey, testKey[:12], "Bearer", "authorization", secretName, `"name"`} {
				if strings.Contains(strings.ToLower(s), strings.ToLower(secret)) {
					t.Errorf("span %q carries %q: %s", sp.Name, secret, s)
				}
			}
		}
	}
}

func TestTraces(t *testing.T) {
	s := serveTraced(t, memory, telemetry.New)
	checkTraces(t, s, "store create", "store get")
}

// checkTraces sends a create (with a traceparent), a get, a health check
// and a request for no route, and checks their spans; store spans are the
// children the store's create and get must have (names given).
func checkTraces(t *testing.T, s traced, createChild, getChild string) (create, get tracetest.SpanStub) {
	t.Helper()
	res := s.Do(t, "POST", apitest.Path("/pets"), apitest.Body(`{"name":"`+secretName+`","categoryId":3}`),
		"traceparent", "00-"+remoteTrace+"-"+remoteSpan+"-01")
	if res.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	var pet struct{ ID int64 }
	if err := json.Unmarshal(res.Body, &pet); err != nil {
		t.Fatal(err)
	}
	if res := s.Do(t, "GET", apitest.Path(fmt.Sprintf("/pets/%d", pet.ID)), ""); res.Status != http.StatusOK {
		t.Fatalf("get: %d", res.Status)
	}
	if res, err := http.Get(s.BaseURL + "/healthz"); err != nil {
		t.Fatal(err)
	} else {
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	if res, err := http.Get(s.BaseURL + "/no/such/path"); err != nil {
		t.Fatal(err)
	} else {
		res.Body.Close()
	}

	create = s.span(t, "createPet")
	checkServerSpan(t, create, "POST", apitest.Path("/pets"), http.StatusCreated)
	if got := create.SpanContext.TraceID().String(); got != remoteTrace {
		t.Errorf("createPet: trace %s, want the traceparent's %s", got, remoteTrace)
	}
	if got := create.Parent.SpanID().String(); got != remoteSpan || !create.Parent.IsRemote() {
		t.Errorf("createPet: parent %s (remote %v), want the traceparent's %s", got, create.Parent.IsRemote(), remoteSpan)
	}
	checkChild(t, s.span(t, createChild), create)

	get = s.span(t, "getPet")
	checkServerSpan(t, get, "GET", apitest.Path("/pets/:petId"), http.StatusOK)
	if get.Parent.IsValid() {
		t.Errorf("getPet: has a parent without a traceparent")
	}
	checkChild(t, s.span(t, getChild), get)

	checkServerSpan(t, s.span(t, "GET /healthz"), "GET", "/healthz", http.StatusOK)
	notFound := s.span(t, "GET") // no route: the method alone
	if code := attrs(notFound)["http.response.status_code"].AsInt64(); code != http.StatusNotFound {
		t.Errorf("no route: status %d, want 404", code)
	}

	noSecrets(t, s.spans.GetSpans())

	// The access log line of the create names its trace.
	apitest.Eventually(t, "the create's access line with its trace id", func() bool {
		return strings.Contains(s.access.String(), `"trace_id":"`+remoteTrace+`"`)
	})
	return create, get
}

// TestRefusedKeyNotInSpans: a request refused 401 is traced without its
// Authorization header.
func TestRefusedKeyNotInSpans(t *testing.T) {
	s := serveTraced(t, memory, telemetry.New)
	if res := s.Do(t, "GET", apitest.Path("/pets"), "", "Authorization", "Bearer "+testKey+"x"); res.Status != http.StatusUnauthorized {
		t.Fatalf("a wrong key: got %d, want 401", res.Status)
	}
	sp := s.span(t, "listPets")
	checkServerSpan(t, sp, "GET", apitest.Path("/pets"), http.StatusUnauthorized)
	noSecrets(t, s.spans.GetSpans())
}

// TestOffNoTraceID: with tracing off, the access line has no trace_id,
// even for a request that carries a traceparent.
func TestOffNoTraceID(t *testing.T) {
	s := serveTraced(t, memory, func(trace.TracerProvider) *telemetry.Tracing { return &telemetry.Tracing{} })
	s.Do(t, "GET", apitest.Path("/pets"), "", "traceparent", "00-"+remoteTrace+"-"+remoteSpan+"-01")
	apitest.Eventually(t, "the access line", func() bool { return strings.Contains(s.access.String(), `"route":"`+apitest.Base()+`/pets"`) })
	if strings.Contains(s.access.String(), "trace_id") {
		t.Errorf("access line has a trace id with tracing off: %s", s.access)
	}
}

package server

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/petstore/petstore/internal/apitest"
)

// otlpReceiver is an OTLP/HTTP trace receiver: it decodes each protobuf
// ExportTraceServiceRequest posted to /v1/traces and keeps its spans.
type otlpReceiver struct {
	mu      sync.Mutex
	spans   map[string]string // span name → trace id (hex)
	service []string          // service.name of each resource
}

func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want POST /v1/traces of application/x-protobuf", http.StatusBadRequest)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	var export coltrace.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(b, &export)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	for _, rs := range export.ResourceSpans {
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				r.service = append(r.service, kv.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				r.spans[sp.Name] = hex.EncodeToString(sp.TraceId)
			}
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func (r *otlpReceiver) traceOf(name string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, ok := r.spans[name]
	return id, ok
}

// TestTracesReachOTLPReceiver runs the server configured for traces
// by the standard environment alone, and sees its spans arrive, as OTLP
// over HTTP/protobuf, at a receiver; they are flushed when the server stops
// (the batch delay is the SDK's default 5s, longer than the test waits).
func TestTracesReachOTLPReceiver(t *testing.T) {
	recv := &otlpReceiver{spans: map[string]string{}}
	collector := httptest.NewServer(recv)
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_SERVICE_NAME", "petstore-otlp-test")
	for _, v := range []string{"OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_SDK_DISABLED", "OTEL_TRACES_SAMPLER"} {
		t.Setenv(v, "")
	}

	const key = "otlp-key-0123456789abcdef0123456789"
	const traceID = "0af7651916cd43dd8448eb211c80319c"
	base, stdout, _, stop := startServer(t, map[string]string{"PETSTORE_API_KEYS": key})
	if !strings.Contains(stdout.String(), `"msg":"tracing on"`) {
		t.Errorf("no 'tracing on' line:\n%s", stdout)
	}
	c := &apitest.Client{Contract: apitest.Load(t), BaseURL: base, Key: key}
	res := c.Do(t, "POST", apitest.Path("/pets"), apitest.Body(`{"name":"Rex","categoryId":3}`), "traceparent", "00-"+traceID+"-b7ad6b7169203331-01")
	if res.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	if err := stop(); err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, name := range []string{"createPet", "store create", "GET /healthz"} {
		if _, ok := recv.traceOf(name); !ok {
			t.Errorf("the receiver has no span %q after the server stopped; it has %v", name, recv.spans)
		}
	}
	if id, _ := recv.traceOf("createPet"); id != traceID {
		t.Errorf("createPet arrived in trace %s, want the traceparent's %s", id, traceID)
	}
	recv.mu.Lock()
	if len(recv.service) == 0 || recv.service[0] != "petstore-otlp-test" {
		t.Errorf("service.name %v, want OTEL_SERVICE_NAME's", recv.service)
	}
	recv.mu.Unlock()
	// The access line of the create names its trace.
	if !bytes.Contains([]byte(stdout.String()), []byte(`"trace_id":"`+traceID+`"`)) {
		t.Errorf("no access line with trace_id %s:\n%s", traceID, stdout)
	}
}

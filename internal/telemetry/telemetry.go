// Package telemetry is the server's OpenTelemetry tracing: off unless the
// standard OTEL_* environment configures an exporter, and then a server span
// per request (otelhttp), named by the contract's operation id, a span per
// store call, the pgx tracer (otelpgx) under it on PostgreSQL, and the trace
// id in the access log line.
//
// Nothing here creates a span a library already creates: otelhttp makes the
// server span (W3C traceparent extraction, HTTP attributes, status), otelpgx
// the query spans; this package only names the server span once Echo has
// routed the request, and wraps the store, which no library instruments.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/pets"
)

// ServiceName is service.name unless OTEL_SERVICE_NAME or
// OTEL_RESOURCE_ATTRIBUTES say otherwise.
const ServiceName = "petstore"

// instrumentation is the name of the tracer of this package's spans.
const instrumentation = "github.com/petstore/petstore/internal/telemetry"

// Tracing is the process's tracing: on with a provider, or off (the zero
// value), when every method leaves the server as it is.
type Tracing struct {
	tp       trace.TracerProvider // nil: off
	prop     propagation.TextMapPropagator
	shutdown func(context.Context) error
	exporter string // for the start-up log line
}

// Configured reports whether the environment asks for traces: an
// OTEL_TRACES_EXPORTER other than "none", or, with none named, an OTLP
// endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).
// OTEL_SDK_DISABLED=true turns it off whatever else is set. autoexport alone
// would export to localhost:4318 with nothing set: a server that nobody
// configured for traces must not try to send them.
func Configured(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	switch v := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); v {
	case "":
		return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	case "none":
		return false
	}
	return true
}

// Setup reads the process's OTEL_* environment (as every OpenTelemetry SDK
// does: autoexport and the SDK read it directly) and returns the tracing it
// configures: off unless Configured; otherwise autoexport's span exporter
// (OTLP over http/protobuf by default, grpc with
// OTEL_EXPORTER_OTLP_PROTOCOL=grpc, or console) behind a batching provider
// whose sampler is OTEL_TRACES_SAMPLER's (default parentbased_always_on).
func Setup(ctx context.Context) (*Tracing, error) {
	if !Configured(os.Getenv) {
		return &Tracing{}, nil
	}
	exp, err := autoexport.NewSpanExporter(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	if autoexport.IsNoneSpanExporter(exp) {
		return &Tracing{}, nil
	}
	// Later options win: the environment's service.name over ours.
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(ServiceName)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		exp.Shutdown(ctx)
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	t := New(tp)
	t.shutdown = tp.Shutdown
	t.exporter = fmt.Sprintf("%T", exp)
	return t, nil
}

// New returns tracing on with tp (tests give it one over an in-memory
// exporter), taking W3C trace context from requests.
func New(tp trace.TracerProvider) *Tracing {
	return &Tracing{tp: tp, prop: propagation.TraceContext{}}
}

// On reports whether requests are traced.
func (t *Tracing) On() bool { return t.tp != nil }

// Exporter names the span exporter in use, for the start-up log line.
func (t *Tracing) Exporter() string { return t.exporter }

// Shutdown flushes the spans not yet exported and stops the provider; call
// it once the server has drained. A no-op when off.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t.shutdown == nil {
		return nil
	}
	return t.shutdown(ctx)
}

// Handler wraps the app in otelhttp's server instrumentation: the server
// span, started from the request's traceparent, with the HTTP semantic
// conventions' attributes and status. It starts named by the method alone
// (the HTTP conventions' name without a route); the Trace middleware
// Apply installs names it once Echo has routed. Off: h itself.
func (t *Tracing) Handler(h http.Handler) http.Handler {
	if !t.On() {
		return h
	}
	return otelhttp.NewHandler(h, ServiceName,
		otelhttp.WithTracerProvider(t.tp),
		otelhttp.WithPropagators(t.prop),
		// Metrics are Prometheus' (/metrics); no OTel meter is wanted.
		otelhttp.WithMeterProvider(noop.NewMeterProvider()),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method }),
	)
}

// Apply sets the tracing hooks of cfg: the middleware that names the server
// span, the trace id of the access log line, and the store's spans. Off:
// cfg is left as it is.
func (t *Tracing) Apply(cfg *httpapi.Config) error {
	if !t.On() {
		return nil
	}
	cfg.Trace = nameSpan
	cfg.TraceID = TraceID
	tracer := t.tp.Tracer(instrumentation)
	cfg.WrapStore = func(s pets.Store) pets.Store { return wrapStore(s, tracer) }
	return nil
}

// PgxTracer is the tracer for the PostgreSQL pool (pgstore.WithTracer):
// otelpgx's, naming each query span by its SQL operation, with the statement
// text (placeholders, never the arguments) in db.query.text. Off: nil.
func (t *Tracing) PgxTracer() pgx.QueryTracer {
	if !t.On() {
		return nil
	}
	return otelpgx.NewTracer(
		otelpgx.WithTracerProvider(t.tp),
		otelpgx.WithMeterProvider(noop.NewMeterProvider()),
	)
}

// TraceID is the id of the trace ctx's span belongs to, "" for none.
func TraceID(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.HasTraceID() {
		return ""
	}
	return sc.TraceID().String()
}

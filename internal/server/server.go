// Package server is petstore serve: its settings, one table (Settings) from
// which the flags, the environment, the checks, the help and the docs'
// options table come, and the wiring of the server they configure: the
// keys and their reload, the store, the app, tracing and metrics, the
// listener and its bound on connections, profiling, and the drain.
//
// cmd/petstore's serve parses its arguments and environment (Flags,
// Configure) and calls Run; nothing here reads the process's arguments or
// environment, but for the OTEL_* variables that telemetry.Setup leaves to
// the OpenTelemetry SDK, as every SDK does.
package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/petstore/petstore/internal/connlimit"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/logbuf"
	"github.com/petstore/petstore/internal/telemetry"
)

// Timeouts of the HTTP server and of shutdown.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 15 * time.Second
	// The contract's body-rate: a body's k-th byte within bodyGrace plus
	// k / bodyMinRate seconds of its first read, all of it within
	// bodyTimeout (connlimit.BodyRule).
	bodyGrace       = 5 * time.Second
	bodyMinRate     = 240 // bytes a second
	bodyTimeout     = 15 * time.Second
	writeTimeout    = 15 * time.Second
	idleTimeout     = 60 * time.Second
	shutdownTimeout = 10 * time.Second
	maxHeaderBytes  = 64 << 10
	// The access log's buffer (logbuf): 256 KiB, about a thousand lines,
	// written at least ten times a second.
	accessBuffer   = 256 << 10
	accessInterval = 100 * time.Millisecond
)

// Usage is serve's description, for petstore help serve (the flags follow
// it, from Settings).
const Usage = `usage: petstore [serve] [flags]

Serves the Pet Store API: the contract's operations under its base path (the
path of its servers URL, /v<major>), and /healthz, /readyz, /metrics,
/openapi.yaml and /docs beside them. Each flag has an
environment twin, named in its description; a flag wins over its variable.
With no keys configured, one key is generated and printed on stderr.

The keys file is re-read on SIGHUP and whenever it changes on disk (a
symlink swap included); a file that does not parse keeps the keys in force.
Keys from -api-keys stay as started.

On SIGTERM or SIGINT, /readyz answers 503 at once while the server goes on
serving for -shutdown-delay; then it stops accepting and lets the requests in
flight finish. A second signal skips the delay.

Example:
  PETSTORE_API_KEYS=dev-key-0123456789abcdef0123456789 petstore serve -addr 127.0.0.1:8080 -log-format text
`

// Run serves with cfg until ctx ends (at the first SIGTERM or SIGINT:
// Signals), then drains. The log goes to stdout; a generated key, and a
// log that cannot be written, are told on stderr.
func Run(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
	out := newLogOut(stdout, stderr)
	log := newLogger(cfg.LogFormat, out)
	keys, err := loadKeys(cfg, log)
	if err != nil {
		return err
	}
	if keys.reloader != nil {
		defer reloadKeys(keys.reloader)()
	}
	// Tracing (issue 34): off unless the OTEL_* environment configures it;
	// flushed once the server has drained (deferred before the store's close,
	// so it runs after it).
	tracing, err := telemetry.Setup(ctx)
	if err != nil {
		return err
	}
	defer flushTracing(tracing, log)
	store, err := openStore(ctx, cfg, tracing)
	if err != nil {
		return err
	}
	defer store.close()
	conns := connlimit.New(cfg.MaxConnections)
	conns.Body = connlimit.BodyRule{Grace: bodyGrace, MinRate: bodyMinRate, Max: bodyTimeout}
	// The access log, buffered and bounded: written at least every
	// accessInterval, and on the drain before "stopped".
	access := logbuf.New(out, accessBuffer, accessInterval)
	defer access.Close()
	app, err := newApp(ctx, cfg, keys, store.Store, tracing, log, access, append(conns.Collectors(), access.Collectors()...))
	if err != nil {
		return err
	}
	if cfg.PprofAddr != "" {
		pctx, stopPprof := context.WithCancel(ctx)
		defer stopPprof()
		if err := servePprof(pctx, cfg.PprofAddr, log); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("%s: listen on %s: %w", cfg.Sources["addr"], cfg.Addr, err)
	}
	srv := newHTTPServer(closeWhenDraining(ctx.Done(), tracing.Handler(app)), log) // tracing.Handler is app itself when tracing is off
	if keys.generated != "" {
		fmt.Fprintf(stderr, "petstore: no API keys configured; this run accepts the generated key\n  %s\n", keys.generated)
	}
	// net/http's own answers in the contract's words (httpapi.Listener),
	// and the connection cap (after srv is set up, before it serves).
	ln = conns.Wrap(srv, httpapi.Listener(ln, log, maxHeaderBytes))
	logListening(log, ln, cfg, store.name, keys, tracing)
	return serveUntilDrained(ctx, srv, ln, cfg.ShutdownDelay, log, access)
}

func newLogger(format string, w io.Writer) *slog.Logger {
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, nil))
	}
	return slog.New(slog.NewJSONHandler(w, nil))
}

// flushTracing sends the spans still buffered, within shutdownTimeout.
func flushTracing(tracing *telemetry.Tracing, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := tracing.Shutdown(ctx); err != nil {
		log.Warn("tracing: flush on shutdown", "error", err.Error())
	}
}

// logListening logs the start-up line: where the server listens and what it
// serves with.
func logListening(log *slog.Logger, ln net.Listener, cfg Config, storeName string, keys serveKeys, tracing *telemetry.Tracing) {
	limit := "off"
	if cfg.RateLimit != nil {
		limit = cfg.RateLimit.String()
	}
	if tracing.On() {
		log.Info("tracing on", "exporter", tracing.Exporter())
	}
	log.Info("listening", "addr", ln.Addr().String(), "store", storeName, "keys", keys.source.Current().Len(), "rate_limit", limit, "idempotency_ttl", shortDuration(cfg.IdempotencyTTL), "shutdown_delay", shortDuration(cfg.ShutdownDelay), "max_connections", cfg.MaxConnections, "version", cfg.Version)
}

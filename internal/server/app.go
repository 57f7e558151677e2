package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/ratelimit"
	"github.com/petstore/petstore/internal/telemetry"
)

// newApp builds the API's handler from the configuration. From the first
// signal on, /readyz answers 503: ctx.Done() is closed before cancel
// returns, so no probe after the signal sees 200.
func newApp(ctx context.Context, cfg Config, keys serveKeys, store pets.Store, tracing *telemetry.Tracing, log *slog.Logger, access io.Writer, collectors []prometheus.Collector) (http.Handler, error) {
	hcfg := httpapi.Config{Store: store, Keys: keys.source, Logger: log, IdempotencyTTL: cfg.IdempotencyTTL, Draining: ctx.Done(), Collectors: collectors}
	hcfg.Version, hcfg.Revision = cfg.Version, cfg.Revision // petstore_build_info says what petstore version says
	if keys.reloader != nil {
		hcfg.Collectors = append(hcfg.Collectors, keys.reloader.Collectors()...)
	}
	if err := tracing.Apply(&hcfg); err != nil { // tracing hooks: nothing when off
		return nil, err
	}
	// The access lines, in the log's format, go through the buffer.
	hcfg.AccessLog, hcfg.AccessLogText = access, cfg.LogFormat == "text"
	if cfg.RateLimit != nil {
		hcfg.RateLimit = ratelimit.New(*cfg.RateLimit, time.Now)
	}
	hcfg.AuthFailures, hcfg.TrustedProxies = cfg.AuthFailures, cfg.TrustedProxies
	return httpapi.New(hcfg)
}

// newHTTPServer is the HTTP server of the API, with its timeouts and limits.
func newHTTPServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		// net/http reads 4096 bytes past MaxHeaderBytes (its bufio slop)
		// before it answers 431: the contract's bound is the head's own.
		MaxHeaderBytes: maxHeaderBytes - 4096,
		// "OPTIONS *" goes to the app (404 Error), not net/http's 200.
		DisableGeneralOptionsHandler: true,
		ErrorLog:                     slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// closeWhenDraining answers with Connection: close once draining is
// closed, so that keep-alive clients reconnect, through the load balancer,
// to a replica that stays.
func closeWhenDraining(draining <-chan struct{}, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-draining:
			w.Header().Set("Connection", "close")
		default:
		}
		h.ServeHTTP(w, r)
	})
}

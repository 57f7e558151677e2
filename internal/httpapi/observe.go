package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
)

// observe is the outermost middleware: it gives each request its id, and
// once the request is answered, counts and times it by operation and final
// status (metrics) and writes its access log line. One middleware, one
// clock read at each end, where three of Echo's (request id, request logger)
// and ours (metrics) each read and wrapped their own.
//
// It must be outermost, so that it sees the status actually sent for every
// request, 404s and 405s included (Echo routes before this chain runs): an
// error that comes back, a recovered panic included, is rendered here
// through the mapper before it is counted and logged.
func observe(m *metrics, log *slog.Logger) echo.MiddlewareFunc {
	nextID := newIDs()
	h := log.Handler()
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			m.inFlight.Inc()
			defer m.inFlight.Dec()
			req := c.Request()
			id := req.Header.Get(echo.HeaderXRequestID)
			if id != "" && !saneID(id) {
				req.Header.Del(echo.HeaderXRequestID)
				id = ""
			}
			if id == "" {
				id = nextID()
			}
			c.Response().Header().Set(echo.HeaderXRequestID, id)

			err := next(c)
			if err != nil {
				c.Error(err) // the mapper writes nothing once committed
			}
			end := time.Now()
			m.count(c, end.Sub(start))
			logRequest(req.Context(), h, c, id, end, end.Sub(start))
			return err
		}
	}
}

// logRequest writes the access log line of a request: method, path, route,
// status, latency, request id and the key's non-secret ID. Never a header.
// It hands the record to the handler itself: slog.Logger would also look up
// the caller's program counter, which no handler here prints.
func logRequest(ctx context.Context, h slog.Handler, c echo.Context, id string, at time.Time, latency time.Duration) {
	status := c.Response().Status
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelError
	}
	if !h.Enabled(ctx, level) {
		return
	}
	keyID := ""
	if k := authKey(c); k != nil {
		keyID = k.ID
	}
	r := slog.NewRecord(at, level, "request", 0)
	r.AddAttrs(
		slog.String("method", c.Request().Method),
		slog.String("path", c.Request().URL.Path),
		slog.String("route", c.Path()),
		slog.Int("status", status),
		slog.Duration("latency", latency),
		slog.String("request_id", id),
		slog.String("key_id", keyID),
	)
	_ = h.Handle(ctx, r) // as slog.Logger does: a log that fails does not fail the request
}

// newIDs returns a generator of request ids unique to the process and,
// through a random prefix, across its restarts: "<16 hex digits>-<counter in
// base 36>". An id correlates log lines; it is no secret, so a counter
// serves, where Echo's default draws 32 random characters a request.
func newIDs() func() string {
	var seed [8]byte
	rand.Read(seed[:]) // never fails (crypto/rand)
	prefix := hex.EncodeToString(seed[:]) + "-"
	var n atomic.Uint64
	return func() string {
		return prefix + strconv.FormatUint(n.Add(1), 36)
	}
}

// saneID reports whether a client's X-Request-Id is kept: a short token.
func saneID(id string) bool {
	if len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}

package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// observe is the outermost middleware: it makes the request's call (the
// typed state the chain hands on; call.go), finds its operation in the
// table (its metrics series), and, once the request is answered, counts and
// times it by operation and final status (metrics) and writes its access log
// line. One middleware, one clock read at each end, where Echo's request
// logger and ours (metrics) each read and wrapped their own.
//
// It must be outermost, so that it sees the status actually sent for every
// request, 404s and 405s included (Echo routes before this chain runs): an
// error that comes back, a recovered panic included, is rendered here
// through the mapper, with the call, before it is counted and logged.
//
// inner is the rest of the global chain, composed once (globalMiddleware):
// it ends in dispatch, which runs the route's handler, next.
func observe(m *metrics, handle echo.HTTPErrorHandler, log accessLog, traceID func(context.Context) string, inner echo.HandlerFunc) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			m.inFlight.Inc()
			defer m.inFlight.Dec()
			req := c.Request()
			cl := &call{Context: c, handle: handle, series: m.lookup(c.Path(), req.Method), route: next}
			if req.ContentLength != 0 && !cl.series.operation {
				// Nothing but an operation reads a body: the connection
				// ends after the answer (bodyUnread).
				c.Response().Header().Set(echo.HeaderConnection, "close")
			}
			err := inner(cl)
			if err != nil {
				cl.Error(err) // the mapper writes nothing once committed
			}
			latency := time.Since(start) // one clock read: the monotonic one
			res := c.Response()
			cl.series.count(res.Status, latency)
			e := accessEntry{
				at: start.Add(latency), method: quoted(req.Method), path: quoted(req.URL.Path), route: c.Path(),
				status: res.Status, latency: latency, requestID: res.Header().Get(echo.HeaderXRequestID),
				byDesign: cl.byDesign,
			}
			if cl.caller != nil {
				e.keyID = cl.caller.ID
			}
			if traceID != nil { // tracing hook (issue 34)
				e.traceID = traceID(req.Context())
			}
			log.write(req.Context(), &e)
			if res.Status == statusClientClosed && !res.Committed {
				// The client hung up (errorHandler): close the connection
				// unanswered; net/http would otherwise send a 200.
				panic(http.ErrAbortHandler)
			}
			return err
		}
	}
}

// RouteOf names the route a request took, from the app's operation table:
// name is a contract operation's id (getPet), "METHOD route" for any other
// route (GET /healthz, or a method a path does not support), and the method
// alone for a request that matched no route, whose route is "": never a
// path the client chose. For the tracing hook (telemetry), inside observe.
func RouteOf(c echo.Context) (name, route string) {
	cl := callOf(c)
	if cl == nil || cl.series.route == "" {
		return c.Request().Method, ""
	}
	if cl.series.operation {
		return cl.series.op, cl.series.route
	}
	return c.Request().Method + " " + cl.series.route, cl.series.route
}

// accessEntry is the access log line of a request: method, path, route,
// status, latency, request id and the key's non-secret ID, and the trace id
// when the request is traced (no field otherwise). Never a header; what it
// quotes from the request (method, path) is cut to maxQuoted.
type accessEntry struct {
	at                        time.Time
	method, path, route       string
	status                    int
	latency                   time.Duration
	requestID, keyID, traceID string
	byDesign                  bool // a 5xx by design (apiError): INFO
}

// level is Error for a 5xx that is a fault, Info otherwise.
func (e *accessEntry) level() slog.Level {
	if e.status >= 500 && !e.byDesign {
		return slog.LevelError
	}
	return slog.LevelInfo
}

// maxQuoted is the most of a request's own text (its method, path, an
// error that quotes it) a log line holds, in bytes: a 60 KB path would
// otherwise make a 60 KB line.
const maxQuoted = 512

// quoted is s as a log line quotes it: whole up to maxQuoted bytes; longer,
// its first maxQuoted bytes, cut at a UTF-8 boundary, then how many bytes
// were left out.
func quoted(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	n := maxQuoted
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "...(+" + strconv.Itoa(len(s)-n) + " bytes)"
}

func (e *accessEntry) record() slog.Record {
	r := slog.NewRecord(e.at, e.level(), "request", 0)
	r.AddAttrs(
		slog.String("method", e.method),
		slog.String("path", e.path),
		slog.String("route", e.route),
		slog.Int("status", e.status),
		slog.Duration("latency", e.latency),
		slog.String("request_id", e.requestID),
		slog.String("key_id", e.keyID),
	)
	if e.traceID != "" {
		r.AddAttrs(slog.String("trace_id", e.traceID))
	}
	return r
}

// appendJSON appends e's line as slog's JSONHandler writes its record, byte
// for byte (TestAccessLineIsSlogs), without slog's attribute machinery.
func (e *accessEntry) appendJSON(b []byte) []byte {
	b = append(b, `{"time":"`...)
	b = e.at.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":`...)
	b = appendString(b, e.level().String(), slogJSON)
	b = append(b, `,"msg":"request","method":`...)
	b = appendString(b, e.method, slogJSON)
	b = append(b, `,"path":`...)
	b = appendString(b, e.path, slogJSON)
	b = append(b, `,"route":`...)
	b = appendString(b, e.route, slogJSON)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(e.status), 10)
	b = append(b, `,"latency":`...)
	b = strconv.AppendInt(b, int64(e.latency), 10)
	b = append(b, `,"request_id":`...)
	b = appendString(b, e.requestID, slogJSON)
	b = append(b, `,"key_id":`...)
	b = appendString(b, e.keyID, slogJSON)
	if e.traceID != "" {
		b = append(b, `,"trace_id":`...)
		b = appendString(b, e.traceID, slogJSON)
	}
	return append(b, "}\n"...)
}

// accessLog is where access log lines go: appended by hand to json when it
// is set (the JSON log as served: slog's handler was the largest cost of a
// getPet in process), otherwise handed to h as records.
type accessLog struct {
	h    slog.Handler
	json io.Writer
}

func (l accessLog) write(ctx context.Context, e *accessEntry) {
	if l.json == nil {
		if l.h.Enabled(ctx, e.level()) {
			// As slog.Logger does, but without looking up the caller's
			// program counter, which no handler here prints; a log that
			// fails does not fail the request.
			_ = l.h.Handle(ctx, e.record())
		}
		return
	}
	buf := bufs.Get().(*[]byte)
	*buf = e.appendJSON((*buf)[:0])
	l.json.Write(*buf) // one Write a line, as slog's handler writes it
	if cap(*buf) <= poolLimit {
		bufs.Put(buf)
	}
}

// uuid's pool of randomness: request ids read the system's random source
// once every 16, not once each.
func init() { uuid.EnableRandPool() }

// requestID gives each request its id in X-Request-Id, with Echo's RequestID
// middleware: the client's own when it is a short token (saneID), else a
// random UUID.
func requestID() echo.MiddlewareFunc {
	withID := middleware.RequestIDWithConfig(middleware.RequestIDConfig{Generator: uuid.NewString})
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		h := withID(next)
		return func(c echo.Context) error {
			if id := c.Request().Header.Get(echo.HeaderXRequestID); id != "" && !saneID(id) {
				c.Request().Header.Del(echo.HeaderXRequestID)
			}
			return h(c)
		}
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

// Package httpapi is the HTTP face of the Pet Store: the Echo app with the
// OpenAPI request validator, authentication, the handlers of the generated
// ServerInterface, the one error mapper, CORS, and the operational endpoints
// outside the contract: /healthz, /readyz, /metrics, the served spec and its
// documentation. The input rules to the letter are package strict's.
package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/contract"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/ratelimit"
)

// BasePath is where the embedded contract's operations live: the path of
// its servers URL (contract.BasePath), so a new major's /v2 moves the server.
var BasePath = sync.OnceValue(func() string {
	spec, err := gen.GetSpec()
	if err != nil {
		panic(fmt.Sprintf("httpapi: load embedded spec: %v", err))
	}
	base, err := contract.BasePath(spec)
	if err != nil {
		panic(err)
	}
	return base
})

// MaxBodyBytes is the largest request body accepted (1 MiB). decodeBody
// enforces it where it reads the body (no middleware wraps the body before:
// see bodyUnread).
const MaxBodyBytes = 1 << 20

// DefaultIdempotencyTTL is how long the outcome of a create with an
// Idempotency-Key is kept unless Config says otherwise.
const DefaultIdempotencyTTL = 24 * time.Hour

// Config is what the app is built from.
type Config struct {
	Store pets.Store
	// Spec is the contract the app serves: its operations' rules and its
	// schemas, NewPet's members included. Nil: the embedded openapi.yaml
	// (gen.GetSpec), which the server is generated from and serves at
	// /openapi.yaml. Tests (and the drill of evolving the contract) pass
	// another: a spec with the same operations and other members.
	Spec *openapi3.T
	// Keys gives the key set in force, asked on every request: a fixed
	// *apikey.Set, or an *apikey.Reloader whose set follows its keys file.
	Keys   apikey.Source
	Logger *slog.Logger
	// Collectors are more metrics for /metrics (the key reloader's).
	Collectors []prometheus.Collector
	// RateLimit limits the requests of each key; nil means no limit.
	RateLimit *ratelimit.Store[string]
	// AuthFailures limits the wrong keys each client address may send
	// (throttle); nil means no limit.
	AuthFailures *ratelimit.Limit
	// TrustedProxies are the proxies whose X-Forwarded-For names the client
	// address AuthFailures counts by; none: the peer's own address.
	TrustedProxies []netip.Prefix
	// Now is the throttle's clock; nil means time.Now.
	Now func() time.Time
	// IdempotencyTTL is how long the outcome of a create sent with an
	// Idempotency-Key is kept; zero means DefaultIdempotencyTTL.
	IdempotencyTTL time.Duration
	// AccessLog, when set, receives the access log: one JSON line a
	// request, the line Logger's slog.JSONHandler would write, appended by
	// hand; or with AccessLogText, slog.TextHandler's line. When nil, the
	// lines go to Logger.
	AccessLog     io.Writer
	AccessLogText bool
	// Draining, once closed, makes /readyz answer 503: the server is shutting
	// down and goes on serving only until the load balancer has seen it go.
	// Nil: never.
	Draining <-chan struct{}
	// Version and Revision label petstore_build_info: the build's version
	// and VCS revision (petstore version's); "" is unknown.
	Version, Revision string
	// NoValidation builds the app without the OpenAPI request validator.
	// For measuring the validator's cost only: never serve with it.
	NoValidation bool

	// Tracing hooks (issue 34; set by telemetry.Tracing.Apply, all nil when
	// tracing is off, so the hot path pays nothing for it).
	// Trace runs just inside observe, once Echo has routed the request.
	Trace echo.MiddlewareFunc
	// TraceID gives the trace id for the access log line ("" for none).
	TraceID func(context.Context) string
	// WrapStore wraps the store the handlers call (after the metrics).
	WrapStore func(pets.Store) pets.Store
}

// New returns the Echo app that serves the API of cfg.Spec, by default the
// embedded spec.
func New(cfg Config) (*echo.Echo, error) {
	spec := cfg.Spec
	if spec == nil {
		var err error
		if spec, err = gen.GetSpec(); err != nil {
			return nil, fmt.Errorf("httpapi: load embedded spec: %w", err)
		}
	}
	return newApp(cfg, spec)
}

// newApp builds the app that serves spec's operations, in New's steps, from
// one table of them (operationsOf). It fails unless every route under the
// base path is an operation with its chain (routes.go).
func newApp(cfg Config, spec *openapi3.T) (*echo.Echo, error) {
	cfg, err := withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	base, err := contract.BasePath(spec)
	if err != nil {
		return nil, fmt.Errorf("httpapi: %w", err)
	}
	ops, err := operationsOf(spec, base, bodyBinders)
	if err != nil {
		return nil, fmt.Errorf("httpapi: %w", err)
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = errorHandler(cfg.Logger)
	e.JSONSerializer = petJSON{}
	m, store, err := newMetrics(cfg.Store, cfg.Version, cfg.Revision)
	if err != nil {
		return nil, err
	}
	var t *throttle
	if cfg.AuthFailures != nil {
		t = newThrottle(*cfg.AuthFailures, cfg.TrustedProxies, cfg.Now)
		cfg.Collectors = append(slices.Clip(cfg.Collectors), t.collectors()...)
	}
	for _, c := range cfg.Collectors {
		if err := m.reg.Register(c); err != nil {
			return nil, fmt.Errorf("httpapi: Config.Collectors: %w", err)
		}
	}
	e.Use(globalMiddleware(cfg, m, ops, e.HTTPErrorHandler)...)
	registerOperational(e, cfg, m)
	if err := registerDocs(e, base); err != nil {
		return nil, fmt.Errorf("httpapi: %w", err)
	}
	if cfg.WrapStore != nil { // tracing hook (issue 34), after the metrics
		store = cfg.WrapStore(store)
	}
	h := &handler{store: store, idempotencyTTL: cfg.IdempotencyTTL, base: base}
	if err := registerAPI(e, ops, h, cfg, t); err != nil {
		return nil, fmt.Errorf("httpapi: %w", err)
	}
	if err := m.addRoutes(e, ops); err != nil {
		return nil, err
	}
	return e, nil
}

// withDefaults checks cfg and fills in what it leaves out.
func withDefaults(cfg Config) (Config, error) {
	if cfg.Store == nil || cfg.Keys == nil {
		return cfg, errors.New("httpapi: Config needs a Store and Keys")
	}
	if cfg.IdempotencyTTL < 0 {
		return cfg, errors.New("httpapi: Config.IdempotencyTTL is negative")
	}
	if cfg.IdempotencyTTL == 0 {
		cfg.IdempotencyTTL = DefaultIdempotencyTTL
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg, nil
}

// The security headers' values on every answer: the app's (securityHeaders)
// and those Listener writes for net/http's own.
const (
	contentTypeOptions = "nosniff" // X-Content-Type-Options
	frameOptions       = "DENY"    // X-Frame-Options
)

// globalMiddleware is what every request goes through, in order: observe
// outermost (see there), then the request id; Recover turns a panic into an
// error that it returns to observe, which renders, counts and logs it; the
// security headers, CORS (the methods of the spec's operations), and the
// answer to a method a path does not support. It is one middleware for
// Echo: Echo wraps its global middleware around the route's handler again
// on every request (a closure each), so the chain inside observe is
// composed here once, around dispatch, which calls the route's handler
// observe put on the call.
func globalMiddleware(cfg Config, m *metrics, ops *operations, handle echo.HTTPErrorHandler) []echo.MiddlewareFunc {
	log := cfg.Logger
	access := accessLog{h: log.Handler(), json: cfg.AccessLog}
	if cfg.AccessLog != nil && cfg.AccessLogText {
		access = accessLog{h: slog.NewTextHandler(cfg.AccessLog, nil)}
	}
	var mw []echo.MiddlewareFunc
	if cfg.Trace != nil { // tracing hook (issue 34): just inside observe
		mw = append(mw, cfg.Trace)
	}
	mw = append(mw,
		requestID(),
		middleware.RecoverWithConfig(middleware.RecoverConfig{
			DisablePrintStack:   true,
			DisableErrorHandler: true, // observe renders it, with the call
			LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
				log.LogAttrs(c.Request().Context(), slog.LevelError, "panic",
					slog.String("request_id", c.Response().Header().Get(echo.HeaderXRequestID)),
					slog.String("error", quoted(err.Error())), slog.String("stack", string(stack)))
				return err
			},
		}),
		securityHeaders,
		cors(ops),
		methodNotAllowed,
	)
	inner := dispatch
	for i := len(mw) - 1; i >= 0; i-- {
		inner = mw[i](inner)
	}
	return []echo.MiddlewareFunc{observe(m, handle, access, cfg.TraceID, inner)}
}

// dispatch runs the route's handler of the call (observe's).
func dispatch(c echo.Context) error {
	cl := callOf(c)
	if cl == nil {
		return errNoCall
	}
	return cl.route(c)
}

// The security headers' values, made once: net/http only reads a header's
// values, and a Set elsewhere replaces the slice.
var (
	contentTypeOptionsValue = []string{contentTypeOptions}
	frameOptionsValue       = []string{frameOptions}
)

// securityHeaders sets X-Content-Type-Options and X-Frame-Options on every
// answer, as Echo's Secure middleware did with these two settings alone
// (and nothing else: its other headers are off by default), without a
// slice a request.
func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h[echo.HeaderXContentTypeOptions] = contentTypeOptionsValue
		h[echo.HeaderXFrameOptions] = frameOptionsValue
		return next(c)
	}
}

// registerOperational adds the endpoints for operators, outside the
// contract and without a key: /healthz, /readyz and /metrics.
func registerOperational(e *echo.Echo, cfg Config, m *metrics) {
	e.GET("/healthz", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	})
	e.GET("/readyz", readyz(cfg.Store, cfg.Draining))
	e.GET("/metrics", m.handler(cfg.Logger))
}

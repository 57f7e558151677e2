// Package httpapi is the HTTP face of the Pet Store: the Echo app with the
// OpenAPI request validator, authentication, the handlers of the generated
// ServerInterface, the one error mapper, CORS, and the operational endpoints
// outside the contract: /healthz, /readyz, /metrics, the served spec and its
// documentation.
package httpapi

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/ratelimit"
)

// BasePath is where the API's operations live.
const BasePath = "/v1"

// MaxBodyBytes is the largest request body accepted (1 MiB).
const MaxBodyBytes = 1 << 20

// DefaultIdempotencyTTL is how long the outcome of a create with an
// Idempotency-Key is kept unless Config says otherwise.
const DefaultIdempotencyTTL = 24 * time.Hour

// Config is what the app is built from.
type Config struct {
	Store  pets.Store
	Keys   *apikey.Set
	Logger *slog.Logger
	// RateLimit limits the requests of each key; nil means no limit.
	RateLimit *ratelimit.Store
	// IdempotencyTTL is how long the outcome of a create sent with an
	// Idempotency-Key is kept; zero means DefaultIdempotencyTTL.
	IdempotencyTTL time.Duration
	// AccessLog, when set, receives the access log: one JSON line a
	// request, the line Logger's slog.JSONHandler would write, appended by
	// hand. When nil, the lines go to Logger.
	AccessLog io.Writer
	// NoValidation builds the app without the OpenAPI request validator.
	// For measuring the validator's cost only: never serve with it.
	NoValidation bool
}

// New returns the Echo app that serves the API.
func New(cfg Config) (*echo.Echo, error) {
	if cfg.Store == nil || cfg.Keys == nil {
		return nil, errors.New("httpapi: Config needs a Store and Keys")
	}
	if cfg.IdempotencyTTL < 0 {
		return nil, errors.New("httpapi: Config.IdempotencyTTL is negative")
	}
	if cfg.IdempotencyTTL == 0 {
		cfg.IdempotencyTTL = DefaultIdempotencyTTL
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = errorHandler(log)
	e.JSONSerializer = petJSON{}
	m, store, err := newMetrics(cfg.Store)
	if err != nil {
		return nil, err
	}

	// Order matters: observe is outermost (see there); Recover, inside it,
	// turns a panic into an error that observe renders, counts and logs.
	e.Use(
		observe(m, accessLog{h: log.Handler(), json: cfg.AccessLog}),
		requestID(),
		middleware.RecoverWithConfig(middleware.RecoverConfig{
			DisablePrintStack: true,
			LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
				log.LogAttrs(c.Request().Context(), slog.LevelError, "panic",
					slog.String("request_id", c.Response().Header().Get(echo.HeaderXRequestID)),
					slog.String("error", err.Error()), slog.String("stack", string(stack)))
				return err
			},
		}),
		middleware.SecureWithConfig(middleware.SecureConfig{ContentTypeNosniff: "nosniff", XFrameOptions: "DENY"}),
		limitBody(MaxBodyBytes),
		cors(),
		methodNotAllowed,
	)

	e.GET("/healthz", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	})
	e.GET("/readyz", readyz(cfg.Store))
	e.GET("/metrics", m.handler(log))

	if err := registerDocs(e); err != nil {
		return nil, fmt.Errorf("httpapi: %w", err)
	}

	spec, err := gen.GetSpec()
	if err != nil {
		return nil, fmt.Errorf("httpapi: load embedded spec: %w", err)
	}
	// Route by path under BasePath on any host.
	spec.Servers = openapi3.Servers{{URL: BasePath}}
	router, err := gorillamux.NewRouter(spec)
	if err != nil {
		return nil, fmt.Errorf("httpapi: route the embedded spec: %w", err)
	}
	auth := authenticate(cfg.Keys)
	var limit echo.MiddlewareFunc
	if cfg.RateLimit != nil {
		limit = rateLimit(cfg.RateLimit)
	}
	ops := map[string][]echo.MiddlewareFunc{}
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			if err := requireBearer(spec, op); err != nil {
				return nil, fmt.Errorf("httpapi: %s %s: %w", method, path, err)
			}
			chain := []echo.MiddlewareFunc{inContract(router), auth}
			if limit != nil {
				chain = append(chain, limit)
			}
			chain = append(chain, strictParams(paramRulesOf(item, op)))
			if op.RequestBody == nil {
				chain = append(chain, noBody)
			} else {
				chain = append(chain, jsonBody)
			}
			if !cfg.NoValidation {
				chain = append(chain, validate(&routers.Route{Spec: spec, Path: path, PathItem: item, Method: method, Operation: op}))
			}
			ops[op.OperationID] = chain
		}
	}
	gen.RegisterHandlersWithOptions(routesOnce{e}, &handler{store: store, idempotencyTTL: cfg.IdempotencyTTL}, gen.RegisterHandlersOptions{
		BaseURL:              BasePath,
		OperationMiddlewares: ops,
	})
	if err := m.addRoutes(e, spec); err != nil {
		return nil, err
	}
	return e, nil
}

// paramRules is what strictParams checks of one operation's parameters.
type paramRules struct {
	query map[string]*intRule // the query parameters defined; nil for a non-integer
	path  map[string]*intRule // the integer path parameters
}

// intRule is an integer parameter's range: its format's, narrowed by the
// schema's bounds where they are tighter (kin-openapi holds them as float64,
// exact for the small ones it narrows to; an int64 bound rounds to 2^63,
// which narrows nothing).
type intRule struct {
	bits     int
	min, max int64
}

// paramRulesOf collects the rules of an operation's parameters.
func paramRulesOf(item *openapi3.PathItem, op *openapi3.Operation) paramRules {
	rules := paramRules{query: map[string]*intRule{}, path: map[string]*intRule{}}
	for _, params := range []openapi3.Parameters{item.Parameters, op.Parameters} {
		for _, ref := range params {
			p := ref.Value
			if p == nil {
				continue
			}
			rule := intRuleOf(p.Schema)
			switch p.In {
			case openapi3.ParameterInQuery:
				rules.query[p.Name] = rule
			case openapi3.ParameterInPath:
				if rule != nil {
					rules.path[p.Name] = rule
				}
			}
		}
	}
	return rules
}

// intRuleOf is the rule of an integer schema, nil for any other.
func intRuleOf(ref *openapi3.SchemaRef) *intRule {
	if ref == nil || ref.Value == nil || ref.Value.Type == nil || !ref.Value.Type.Is("integer") {
		return nil
	}
	s := ref.Value
	r := &intRule{bits: 64, min: math.MinInt64, max: math.MaxInt64}
	if s.Format == "int32" {
		r.bits, r.min, r.max = 32, math.MinInt32, math.MaxInt32
	}
	if s.Min != nil && *s.Min > float64(r.min) {
		r.min = int64(math.Ceil(*s.Min))
	}
	if s.Max != nil && *s.Max < float64(r.max) {
		r.max = int64(math.Floor(*s.Max))
	}
	return r
}

// check holds v, the value of the integer parameter name, to the letter:
// base-10 digits with a "-" on a negative number only, no "+", no leading
// zeros, no "-0" (one spelling per number, as in JSON), within the format's
// range. The schema's own bounds are kin-openapi's to check.
func (r *intRule) check(name, v string) error {
	if !canonicalInt(v) {
		return invalid(`%s: must be a base-10 integer, without "+", leading zeros or "-0"`, name)
	}
	if _, err := strconv.ParseInt(v, 10, r.bits); err != nil {
		if v[0] == '-' {
			return invalid("%s: number must be at least %d", name, r.min)
		}
		return invalid("%s: number must be at most %d", name, r.max)
	}
	return nil
}

// canonicalInt reports whether v is an integer in canonical decimal form:
// 0, or an optional "-" and digits not starting with 0.
func canonicalInt(v string) bool {
	digits := strings.TrimPrefix(v, "-")
	if digits == "" || digits[0] == '0' && (len(digits) > 1 || len(v) > 1) {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true
}

// strictParams holds the parameters to the letter before kin-openapi sees
// them: it refuses query parameters the operation does not define, and
// repeated ones (a misspelt parameter silently ignored is a client bug
// hidden, and kin-openapi would validate only the first of repeated values),
// and integers not written canonically or out of their format's range
// (kin-openapi and the generated binder parse with strconv, which takes
// "+1", "007" and "-0"). See checkQuery.
func strictParams(rules paramRules) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			for i, name := range c.ParamNames() {
				rule := rules.path[name]
				if rule == nil {
					continue
				}
				v := c.ParamValues()[i]
				if c.Request().URL.RawPath != "" {
					// Echo routed the escaped path: its values are escaped.
					if u, err := url.PathUnescape(v); err == nil {
						v = u
					}
				}
				if err := rule.check(name, v); err != nil {
					return err
				}
			}
			raw := c.Request().URL.RawQuery
			if raw == "" {
				return next(c)
			}
			if err := rules.checkQuery(raw); err != nil {
				return err
			}
			return next(c)
		}
	}
}

// checkQuery holds a raw query to the operation's rules: each parameter
// defined, given once, an integer canonical and in range. The query is
// parsed by url.ParseQuery, not read through c.QueryParams, which drops a
// pair it cannot decode: "limit=%zz" would pass as no limit at all. The
// parameters are checked in the order they first appear, so that a query
// with two faults is always answered about the same one.
func (rules paramRules) checkQuery(raw string) error {
	values, err := url.ParseQuery(raw)
	if err != nil {
		return invalid("query: %v", err)
	}
	for pair := range strings.SplitSeq(raw, "&") {
		name, _, _ := strings.Cut(pair, "=")
		name, _ = url.QueryUnescape(name) // ParseQuery has unescaped it once already
		vs, ok := values[name]
		if !ok {
			continue // an empty pair, or a name already checked
		}
		delete(values, name)
		rule, ok := rules.query[name]
		switch {
		case !ok:
			return invalid("%.64q: unknown query parameter", name)
		case len(vs) > 1:
			return invalid("%s: must be given once", name)
		case rule != nil:
			if err := rule.check(name, vs[0]); err != nil {
				return err
			}
		}
	}
	return nil
}

// inContract answers 404 when the contract, routed as the validator routes
// it, has no operation at the request's path, though Echo's router found
// one: Echo lets a route's last parameter take the rest of the path
// (/v1/pets/1/, /v1/pets/a/b), and routes on the raw path where kin-openapi
// may split at an encoded slash (/v1/pets/%2f"). Without it such a path
// would get getPet's 401 or 400 instead of the 404 the contract promises.
//
// The contract's router (gorillamux: each parameter [^/]+ of the escaped
// path) runs only for a path with escapes of its own (URL.RawPath set).
// Otherwise the decoded path Echo routed has its slashes where the escaped
// one does, so the router agrees with Echo unless a parameter Echo bound is
// empty or spans a slash: checking that spares a second routing of every
// request (14% of getPet's CPU).
func inContract(router routers.Router) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if c.Request().URL.RawPath == "" {
				for _, v := range c.ParamValues() {
					if v == "" || strings.Contains(v, "/") {
						return echo.ErrNotFound
					}
				}
				return next(c)
			}
			if _, _, err := router.FindRoute(c.Request()); err != nil {
				return echo.ErrNotFound
			}
			return next(c)
		}
	}
}

// msgNoBody is the message for a body sent to an operation that takes none.
const msgNoBody = "body: this operation takes no request body"

// noBody refuses a request body, of any length or none declared, on an
// operation that takes none, without reading it: kin-openapi would read it
// whole (for its security check) before refusing it, answer a big one 413,
// which these operations do not document, and let a chunked one through.
func noBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if r := c.Request(); r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			return invalid(msgNoBody)
		}
		return next(c)
	}
}

// msgJSONType is the message for a Content-Type that is not JSON.
const msgJSONType = "Content-Type: must be application/json"

// jsonBody holds a body's Content-Type to the letter: one header, one media
// type, application/json in any case, and no parameter but a charset of
// utf-8 (in any case, quoted or not: RFC 9110 makes them equivalent).
// kin-openapi would read only the first of two headers, ignore a charset
// (and so accept latin1 bytes as UTF-8 text) and any other parameter. A
// request without a Content-Type is left to kin-openapi, which refuses it.
func jsonBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		values := c.Request().Header.Values(echo.HeaderContentType)
		switch {
		case len(values) > 1:
			return invalid("Content-Type: must be given once")
		case len(values) == 0, values[0] == echo.MIMEApplicationJSON:
			return next(c)
		}
		mt, params, err := mime.ParseMediaType(values[0])
		if err != nil || mt != echo.MIMEApplicationJSON {
			return invalid(msgJSONType)
		}
		for name, v := range params {
			if name != "charset" {
				return invalid("Content-Type: %.64q: unknown parameter; application/json takes only charset=utf-8", name)
			}
			if !strings.EqualFold(v, "utf-8") {
				return invalid("Content-Type: charset must be utf-8, not %.32q", v)
			}
		}
		return next(c)
	}
}

// limitBody caps request bodies lazily: the cap bites when the body is read,
// which is after authentication, so a client without a key gets 401 for any
// body and the server reads none of it.
func limitBody(n int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if r := c.Request(); r.Body != nil && r.Body != http.NoBody {
				r.Body = http.MaxBytesReader(nil, r.Body, n)
			}
			return next(c)
		}
	}
}

// methodNotAllowed answers a known path with an unsupported method 405 with
// an Allow header. Echo's router would answer OPTIONS 204 and list OPTIONS in
// Allow; this API supports no OPTIONS, so both are corrected here.
func methodNotAllowed(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		allow, _ := c.Get(echo.ContextKeyHeaderAllow).(string)
		if allow == "" {
			return next(c)
		}
		methods := strings.Split(allow, ", ")
		kept := methods[:0]
		for _, m := range methods {
			if m != http.MethodOptions {
				kept = append(kept, m)
			}
		}
		c.Response().Header().Set(echo.HeaderAllow, strings.Join(kept, ", "))
		return echo.ErrMethodNotAllowed
	}
}

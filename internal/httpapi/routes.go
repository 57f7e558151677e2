package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/labstack/echo/v4"

	"github.com/petstore/petstore/gen"
)

// registerAPI adds spec's operations under base, each behind the chain of
// middleware chainOf builds for it, through the generated registration. It
// fails closed: unless every operation of spec has a generated handler,
// every generated route is an operation of spec, and every route under base
// authenticates, whatever added it.
func registerAPI(e *echo.Echo, spec *openapi3.T, base string, h gen.ServerInterface, cfg Config) error {
	// The validator's router: by path under base on any host.
	routed := *spec
	routed.Servers = openapi3.Servers{{URL: base}}
	router, err := gorillamux.NewRouter(&routed)
	if err != nil {
		return fmt.Errorf("route the spec: %w", err)
	}
	r := &apiRouter{e: e, chains: map[string]opChain{}, authenticated: map[string]bool{}}
	echoPath := strings.NewReplacer("{", ":", "}", "")
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			if err := requireBearer(spec, op); err != nil {
				return fmt.Errorf("%s %s: %w", method, path, err)
			}
			route := &routers.Route{Spec: &routed, Path: path, PathItem: item, Method: method, Operation: op}
			r.chains[method+" "+base+echoPath.Replace(path)] = chainOf(route, router, cfg)
		}
	}
	gen.RegisterHandlersWithOptions(r, h, gen.RegisterHandlersOptions{BaseURL: base})
	for k, c := range r.chains {
		if !c.added {
			r.errs = append(r.errs, fmt.Errorf("%s (%s): no generated handler: run make generate and implement it", k, c.operationID))
		}
	}
	if err := errors.Join(r.errs...); err != nil {
		return err
	}
	return requireAuthentication(e.Routes(), base, r.authenticated)
}

// opChain is the middleware of one operation, in the order it runs.
type opChain struct {
	operationID string
	mw          []echo.MiddlewareFunc // authenticate always among them
	added       bool                  // a route was added with it
}

// chainOf is the middleware of one operation: the contract's path check,
// authentication (before anything reads the request), the rate limit, the
// strict rules for parameters and body, then the OpenAPI validator.
func chainOf(route *routers.Route, router routers.Router, cfg Config) opChain {
	op := route.Operation
	mw := []echo.MiddlewareFunc{inContract(router), authenticate(cfg.Keys)}
	if cfg.RateLimit != nil {
		mw = append(mw, rateLimit(cfg.RateLimit))
	}
	mw = append(mw, strictParams(paramRulesOf(route.PathItem, op)))
	if op.RequestBody == nil {
		mw = append(mw, noBody)
	} else {
		mw = append(mw, jsonBody)
	}
	if !cfg.NoValidation {
		mw = append(mw, validate(route))
	}
	if op.RequestBody != nil {
		mw = append(mw, decodeBody(op.RequestBody.Value, !cfg.NoValidation))
	}
	return opChain{operationID: op.OperationID, mw: mw}
}

// requireAuthentication fails unless every route under base is one of the
// authenticated ones (by "METHOD path").
func requireAuthentication(routes []*echo.Route, base string, authenticated map[string]bool) error {
	var errs []error
	for _, rt := range routes {
		k := rt.Method + " " + rt.Path
		if (rt.Path == base || strings.HasPrefix(rt.Path, base+"/")) && !authenticated[k] {
			errs = append(errs, fmt.Errorf("%s: served under %s without authentication", k, base))
		}
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}

// apiRouter is the gen.EchoRouter the generated registration adds the API's
// routes to: each gets its operation's chain, wrapped around the handler
// once, when the route is added (Echo would wrap a route's middleware around
// its handler again on every request), through Echo's own Add. A route that
// is no operation of the spec is not added, and fails registerAPI.
type apiRouter struct {
	e             *echo.Echo
	chains        map[string]opChain // by "METHOD path", Echo's path
	authenticated map[string]bool
	errs          []error
}

var _ gen.EchoRouter = (*apiRouter)(nil)

func (r *apiRouter) add(method, path string, h echo.HandlerFunc, mw []echo.MiddlewareFunc) *echo.Route {
	k := method + " " + path
	c, ok := r.chains[k]
	if !ok || len(mw) > 0 {
		r.errs = append(r.errs, fmt.Errorf("%s: a generated route that is no operation of the spec", k))
		return &echo.Route{Method: method, Path: path}
	}
	for i := len(c.mw) - 1; i >= 0; i-- {
		h = c.mw[i](h)
	}
	c.added = true
	r.chains[k] = c
	r.authenticated[k] = true // chainOf put authenticate in c.mw
	return r.e.Add(method, path, h)
}

func (r *apiRouter) CONNECT(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodConnect, path, h, m)
}

func (r *apiRouter) DELETE(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodDelete, path, h, m)
}

func (r *apiRouter) GET(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodGet, path, h, m)
}

func (r *apiRouter) HEAD(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodHead, path, h, m)
}

func (r *apiRouter) OPTIONS(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodOptions, path, h, m)
}

func (r *apiRouter) PATCH(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodPatch, path, h, m)
}

func (r *apiRouter) POST(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodPost, path, h, m)
}

func (r *apiRouter) PUT(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodPut, path, h, m)
}

func (r *apiRouter) TRACE(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodTrace, path, h, m)
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
// empty or spans a slash: checking that spares a second routing of most
// requests.
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

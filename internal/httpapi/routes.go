package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"

	"github.com/petstore/petstore/gen"
)

// registerAPI adds the table's operations, each behind the chain of
// middleware chainOf builds for it, through the generated registration. It
// fails closed: unless every operation of the table has a generated handler,
// every generated route is an operation of the table, and every route under
// the base path is an operation with its chain, whatever added it.
func registerAPI(e *echo.Echo, ops *operations, h gen.ServerInterface, cfg Config, t *throttle) error {
	r := &apiRouter{e: e, chains: map[string]*opChain{}}
	for _, op := range ops.list {
		r.chains[op.key()] = &opChain{op: op, mw: chainOf(op, ops.contract, cfg, t)}
	}
	gen.RegisterHandlersWithOptions(r, h, gen.RegisterHandlersOptions{BaseURL: ops.base})
	for _, op := range ops.list {
		if !r.chains[op.key()].added {
			r.errs = append(r.errs, fmt.Errorf("%s (%s): no generated handler: run make generate and implement it", op.key(), op.id))
		}
	}
	if err := errors.Join(r.errs...); err != nil {
		return err
	}
	return requireOperations(e.Routes(), ops, r.chains)
}

// opChain is the middleware of one operation, in the order it runs.
type opChain struct {
	op    *operation
	mw    []echo.MiddlewareFunc
	added bool // a route was added with it
}

// chainOf is the middleware of one operation: the contract's path check,
// authentication when the table says so (before anything reads the
// request), the rate limit, what the answer may be (Accept), the strict
// rules for parameters and body, then the OpenAPI validator, and the body,
// read and decoded last.
func chainOf(op *operation, r router, cfg Config, t *throttle) []echo.MiddlewareFunc {
	mw := []echo.MiddlewareFunc{inContract(r)}
	if op.auth {
		mw = append(mw, authenticate(cfg.Keys, t))
		if cfg.RateLimit != nil {
			mw = append(mw, rateLimit(cfg.RateLimit))
		}
	}
	mw = append(mw, acceptJSON, strictParams(paramRulesOf(op.spec.PathItem, op.spec.Operation)))
	body := op.spec.Operation.RequestBody
	if body == nil {
		mw = append(mw, noBody)
	} else {
		mw = append(mw, jsonBody)
	}
	if !cfg.NoValidation {
		mw = append(mw, validate(op.spec))
	}
	if body != nil {
		mw = append(mw, decodeBody(body.Value, op.bind, !cfg.NoValidation))
	}
	return mw
}

// requireOperations fails unless every route under the base path is an
// operation of the table that was added with its chain (by "METHOD path"):
// a route added some other way would be served without its authentication.
func requireOperations(routes []*echo.Route, ops *operations, chains map[string]*opChain) error {
	var errs []error
	for _, rt := range routes {
		k := rt.Method + " " + rt.Path
		if c := chains[k]; ops.under(rt.Path) && (c == nil || !c.added) {
			errs = append(errs, fmt.Errorf("%s: served under %s without its operation's chain (authentication)", k, ops.base))
		}
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}

// apiRouter is the gen.EchoRouter the generated registration adds the API's
// routes to: each gets its operation's chain, wrapped around the handler
// once, when the route is added (Echo would wrap a route's middleware around
// its handler again on every request), through Echo's own Add. A route that
// is no operation of the table is not added, and fails registerAPI.
type apiRouter struct {
	e      *echo.Echo
	chains map[string]*opChain // by "METHOD path", Echo's path
	errs   []error
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

// router finds the operation of a request as the contract routes it
// (contract.Contract).
type router interface {
	Route(*http.Request) (*routers.Route, map[string]string, error)
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
func inContract(r router) echo.MiddlewareFunc {
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
			if _, _, err := r.Route(c.Request()); err != nil {
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
		allow := allowed(c)
		if allow == "" {
			return next(c)
		}
		c.Response().Header().Set(echo.HeaderAllow, allow)
		return echo.ErrMethodNotAllowed
	}
}

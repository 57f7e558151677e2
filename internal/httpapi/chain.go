package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/petstore/petstore/gen"
)

// Echo builds its middleware chains on every request: ServeHTTP wraps the
// routed handler in every global middleware (applyMiddleware in echo.go), and
// a route added with middleware wraps its handler in them again inside the
// handler (echo.go, add). Each wrap allocates a closure, per middleware, per
// request. The two helpers below build each chain once, at start.

// useOnce installs mw as Echo's global middleware, built into one chain at
// start. The chain ends in a call of the handler the router found for the
// request (c.Handler()), which is the handler Echo would wrap anyway: so
// Echo's per-request wrapping is of this one middleware, whose constructor
// returns the chain already built.
func useOnce(e *echo.Echo, mw ...echo.MiddlewareFunc) {
	chain := applyMiddleware(func(c echo.Context) error { return c.Handler()(c) }, mw)
	e.Use(func(echo.HandlerFunc) echo.HandlerFunc { return chain })
}

// routesOnce is a gen.EchoRouter that wraps each route's handler in its
// middleware once, when the route is added, rather than on every request.
type routesOnce struct{ e *echo.Echo }

var _ gen.EchoRouter = routesOnce{}

func applyMiddleware(h echo.HandlerFunc, mw []echo.MiddlewareFunc) echo.HandlerFunc {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

func (r routesOnce) add(method, path string, h echo.HandlerFunc, mw []echo.MiddlewareFunc) *echo.Route {
	return r.e.Add(method, path, applyMiddleware(h, mw))
}

func (r routesOnce) CONNECT(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodConnect, path, h, m)
}

func (r routesOnce) DELETE(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodDelete, path, h, m)
}

func (r routesOnce) GET(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodGet, path, h, m)
}

func (r routesOnce) HEAD(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodHead, path, h, m)
}

func (r routesOnce) OPTIONS(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodOptions, path, h, m)
}

func (r routesOnce) PATCH(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodPatch, path, h, m)
}

func (r routesOnce) POST(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodPost, path, h, m)
}

func (r routesOnce) PUT(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodPut, path, h, m)
}

func (r routesOnce) TRACE(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodTrace, path, h, m)
}

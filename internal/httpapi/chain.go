package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/petstore/petstore/gen"
)

// Echo wraps a route's handler in the middleware it was added with on every
// request (echo.go, add): a closure per middleware, per request. A route's
// middleware here is the API's per-operation chain (six or seven deep), so
// routesOnce wraps each handler once, when the route is added; the route is
// still added through Echo's own API (Echo.Add), and Echo's global
// middleware (Echo.Use) runs around it as usual.

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

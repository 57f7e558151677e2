package httpapi

import (
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// cors answers every request that carries an Origin with
// Access-Control-Allow-Origin: * (declared in the spec), so a web page may
// call the API with a key its user holds. Keys travel in Authorization, never
// in cookies, so credentials are not allowed. A preflight on a path that has
// operations is answered 204 by Echo's CORS middleware, with the methods of
// the path's operations (allowed) and the headers of the table's (corsHeaders):
// an operation added to the spec is in both with no edit here. Any other
// OPTIONS is left to the router and methodNotAllowed, which answer 404 or 405.
func cors(ops *operations) echo.MiddlewareFunc {
	allowHeaders, exposeHeaders := corsHeaders(ops)
	withCORS := middleware.CORSWithConfig(middleware.CORSConfig{
		AllowOrigins: []string{"*"},
		// No AllowMethods: a preflight is answered with the Allow list
		// the router made for its path, set to allowed(c) below.
		AllowHeaders:  allowHeaders,
		ExposeHeaders: exposeHeaders,
		MaxAge:        600,
	})
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		h := withCORS(next)
		return func(c echo.Context) error {
			r := c.Request()
			if r.Method != http.MethodOptions {
				return h(c)
			}
			if isPreflight(c) {
				c.Set(echo.ContextKeyHeaderAllow, allowed(c))
				return h(c)
			}
			if r.Header.Get(echo.HeaderOrigin) != "" {
				c.Response().Header().Set(echo.HeaderAccessControlAllowOrigin, "*")
			}
			return next(c)
		}
	}
}

// isPreflight reports whether c is a CORS preflight on a path that has
// operations (the router has put their methods in the context).
func isPreflight(c echo.Context) bool {
	r := c.Request()
	allow, _ := c.Get(echo.ContextKeyHeaderAllow).(string)
	return r.Method == http.MethodOptions && allow != "" &&
		r.Header.Get(echo.HeaderOrigin) != "" && r.Header.Get(echo.HeaderAccessControlRequestMethod) != ""
}

// allowed is the Allow list of a request whose method no route of its path
// takes: the methods of the path's operations, as the router lists them
// (it has the table's routes), without the OPTIONS Echo adds, which this
// API does not serve. "" when the router found a route, or no path.
func allowed(c echo.Context) string {
	allow, _ := c.Get(echo.ContextKeyHeaderAllow).(string)
	if allow == "" {
		return ""
	}
	methods := strings.Split(allow, ", ")
	return strings.Join(slices.DeleteFunc(methods, func(m string) bool { return m == http.MethodOptions }), ", ")
}

// corsHeaders are the request headers a page may send and the response
// headers it may read, from the table's operations: Authorization when an
// operation requires the key, Content-Type when one takes a body, every
// header parameter; every response header the operations declare but
// CORS's own. X-Request-Id, which the server reads and answers on every
// request, is in both. As the spec spells them, sorted, each once.
func corsHeaders(ops *operations) (allow, expose []string) {
	allow, expose = []string{echo.HeaderXRequestID}, []string{echo.HeaderXRequestID}
	for _, op := range ops.list {
		o := op.spec.Operation
		if op.auth {
			allow = append(allow, echo.HeaderAuthorization)
		}
		if o.RequestBody != nil {
			allow = append(allow, echo.HeaderContentType)
		}
		for _, p := range append(slices.Clip(op.spec.PathItem.Parameters), o.Parameters...) {
			if p.Value != nil && p.Value.In == "header" {
				allow = append(allow, p.Value.Name)
			}
		}
		for _, r := range o.Responses.Map() {
			if r.Value == nil {
				continue
			}
			for name := range r.Value.Headers {
				if !strings.HasPrefix(strings.ToLower(name), "access-control-") {
					expose = append(expose, name)
				}
			}
		}
	}
	slices.Sort(allow)
	slices.Sort(expose)
	return slices.Compact(allow), slices.Compact(expose)
}

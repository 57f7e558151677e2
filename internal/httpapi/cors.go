package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// exposedHeaders are the response headers the spec declares, which a web
// page may read from a cross-origin answer.
var exposedHeaders = []string{
	"Link", "Location", headerReplayed, "Deprecation", "Sunset", "Retry-After", "WWW-Authenticate",
	"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", echo.HeaderXRequestID,
}

// cors answers every request that carries an Origin with
// Access-Control-Allow-Origin: * (declared in the spec), so a web page may
// call the API with a key its user holds. Keys travel in Authorization, never
// in cookies, so credentials are not allowed. A preflight on a path that has
// operations is answered 204 by Echo's CORS middleware; any other OPTIONS is
// left to the router and methodNotAllowed, which answer 404 or 405.
func cors() echo.MiddlewareFunc {
	withCORS := middleware.CORSWithConfig(middleware.CORSConfig{
		AllowOrigins:  []string{"*"},
		AllowMethods:  []string{http.MethodGet, http.MethodPost},
		AllowHeaders:  []string{echo.HeaderAuthorization, echo.HeaderContentType, echo.HeaderXRequestID, "Idempotency-Key"},
		ExposeHeaders: exposedHeaders,
		MaxAge:        600,
	})
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		h := withCORS(next)
		return func(c echo.Context) error {
			r := c.Request()
			if r.Method != http.MethodOptions || isPreflight(c) {
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

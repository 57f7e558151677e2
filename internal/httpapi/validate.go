package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"
)

// validateOptions are kin-openapi's options for every request.
var validateOptions = func() *openapi3filter.Options {
	opts := &openapi3filter.Options{
		AuthenticationFunc:                confirmAuthenticated,
		SkipSettingDefaults:               true, // defaults are the domain's; no body re-encoding
		RejectWhenRequestBodyNotSpecified: true,
	}
	// validationError words every error with Error(), which by default dumps
	// the schema and the value, indented: for 10 000 nested arrays that is
	// some 100 MB and seconds of CPU from a 20 KB body. The mapper words
	// errors itself, so the short form is enough.
	opts.WithCustomSchemaErrorFunc(describeBodySchemaError)
	return opts
}()

// echoContextKey is the context.Context key under which the validator hands
// the echo.Context to its callbacks (confirmAuthenticated).
type echoContextKey struct{}

// validate is kin-openapi's request validator for one operation of the spec:
// openapi3filter.ValidateRequest over the route Echo has already matched.
//
// It stands in for echo-middleware's OapiRequestValidator, which looks the
// operation up again on every request with its own gorillamux router (regular
// expressions over every path of the spec), after Echo has routed the
// request to the operation's handler: that lookup was 45% of the validator's
// time on getPet (see BENCHMARKS.md). Everything else is as echo-middleware
// does it: path parameters are unescaped as gorillamux would give them, the
// echo.Context is in the validation context, and errors are the same. A
// path gorillamux would match to no operation never gets here: inContract
// answers it 404 first.
func validate(route *routers.Route) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if err := validateRequest(c, route); err != nil {
				return err
			}
			return next(c)
		}
	}
}

func validateRequest(c echo.Context, route *routers.Route) error {
	req := c.Request()
	var params map[string]string
	if names := c.ParamNames(); len(names) > 0 {
		params = make(map[string]string, len(names))
		values := c.ParamValues()
		for i, name := range names {
			v := values[i]
			// Echo matches the escaped path when it differs from the
			// decoded one (URL.RawPath), as gorillamux always does; and
			// echo-middleware unescapes what gorillamux matched.
			if req.URL.RawPath != "" {
				if u, err := url.PathUnescape(v); err == nil {
					v = u
				}
			}
			params[name] = v
		}
	}
	ctx := context.WithValue(context.Background(), echoContextKey{}, c)
	err := openapi3filter.ValidateRequest(ctx, &openapi3filter.RequestValidationInput{
		Request:    req,
		PathParams: params,
		Route:      route,
		Options:    validateOptions,
	})
	if err == nil {
		return nil
	}
	return validationError(err)
}

// validationError is the error echo-middleware (v1.1.0) makes of a
// validation error; the error mapper describes it.
func validationError(err error) *echo.HTTPError {
	var me openapi3.MultiError
	if errors.As(err, &me) {
		return &echo.HTTPError{Code: http.StatusBadRequest, Message: me.Error(), Internal: me}
	}
	switch e := err.(type) {
	case *openapi3filter.RequestError:
		first, _, _ := strings.Cut(e.Error(), "\n")
		return &echo.HTTPError{Code: http.StatusBadRequest, Message: first, Internal: err}
	case *openapi3filter.SecurityRequirementsError:
		for _, err := range e.Errors {
			if he, ok := err.(*echo.HTTPError); ok {
				return he
			}
		}
		return &echo.HTTPError{Code: http.StatusForbidden, Message: e.Error(), Internal: err}
	}
	return &echo.HTTPError{Code: http.StatusInternalServerError, Message: fmt.Sprintf("error validating request: %s", err), Internal: err}
}

// echoContext returns the echo.Context validateRequest put in ctx, or nil.
func echoContext(ctx context.Context) echo.Context {
	c, _ := ctx.Value(echoContextKey{}).(echo.Context)
	return c
}

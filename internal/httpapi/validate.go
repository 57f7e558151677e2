package httpapi

import (
	"net/http"
	"net/url"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"
	echomiddleware "github.com/oapi-codegen/echo-middleware"
)

// bodyOptions are echo-middleware's options for an operation that takes a
// request body; paramOptions for one that takes none.
var bodyOptions, paramOptions = func() (*echomiddleware.Options, *echomiddleware.Options) {
	params := &echomiddleware.Options{Options: openapi3filter.Options{
		SkipSettingDefaults:               true, // defaults are the domain's; no body re-encoding
		RejectWhenRequestBodyNotSpecified: true,
	}}
	body := &echomiddleware.Options{Options: params.Options}
	// echo-middleware words every error with Error(), which by default dumps
	// the schema and the value, indented: for a body of 10 000 nested arrays
	// that is some 100 MB and seconds of CPU from 20 KB. The mapper words
	// errors from their fields, so the short form is enough. A parameter's
	// schema and value are small: kin-openapi would wrap the short form
	// around each of them, an allocation a parameter, for nothing.
	body.Options.WithCustomSchemaErrorFunc(describeBodySchemaError)
	return body, params
}()

// validate is kin-openapi's request validator for one operation of the spec,
// run by oapi-codegen's echo-middleware (ValidateRequestFromContext: the
// validation, the echo.Context in the validation context, the errors).
//
// echo-middleware's OapiRequestValidator would look the operation up again
// on every request with its own gorillamux router (regular expressions over
// every path of the spec) after Echo has routed the request: 45% of the
// validator's time on getPet (BENCHMARKS.md). So it is handed a router that
// answers with the route Echo matched. A path gorillamux would match to no
// operation never gets here: inContract answers it 404 first.
//
// The route is handed over without its security requirement. authenticate
// has enforced it before the validator runs (requireBearer checked at start
// that it is the bearer key alone); kin-openapi would only call back for that
// verdict, at two allocations a request, and read a body whole one more time
// (five more). With no AuthenticationFunc, a requirement kin-openapi did
// check would fail the request.
func validate(route *routers.Route) echo.MiddlewareFunc {
	op, own := *route.Operation, *route
	op.Security = &openapi3.SecurityRequirements{}
	own.Operation = &op
	route = &own
	opts := paramOptions
	if route.Operation.RequestBody != nil {
		opts = bodyOptions
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if err := echomiddleware.ValidateRequestFromContext(c, &matched{route: route, c: c}, opts); err != nil {
				return err
			}
			return next(c)
		}
	}
}

// matched is the routers.Router of one request: the operation Echo routed it
// to, with Echo's path parameters in the escaped form gorillamux matches
// (echo-middleware unescapes what the router gives it).
type matched struct {
	route *routers.Route
	c     echo.Context
}

func (m *matched) FindRoute(req *http.Request) (*routers.Route, map[string]string, error) {
	names := m.c.ParamNames()
	if len(names) == 0 {
		return m.route, nil, nil
	}
	values := m.c.ParamValues()
	params := make(map[string]string, len(names))
	for i, name := range names {
		v := values[i]
		// Echo matches URL.RawPath when it is set, URL.Path otherwise;
		// gorillamux always matches the escaped path.
		if req.URL.RawPath == "" {
			v = url.PathEscape(v)
		}
		params[name] = v
	}
	return m.route, params, nil
}

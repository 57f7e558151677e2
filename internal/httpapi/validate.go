package httpapi

import (
	"errors"
	"io"
	"net/http"
	"os"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"

	"github.com/petstore/petstore/internal/strict"
)

// validate is kin-openapi's validator of one operation's parameters,
// handed the route Echo matched and the path parameters Echo bound: the
// stock echo-middleware would route every request again with its own
// router (regular expressions over every path of the spec). A path
// gorillamux would match to no operation never gets here: inContract
// answers it 404 first.
//
// The route is handed over without its security requirement: authenticate
// has enforced it before the validator runs (requireBearer checked at start
// that it is the bearer key alone), and kin-openapi would only call back for
// that verdict. The body is decodeBody's.
func validate(route *routers.Route) echo.MiddlewareFunc {
	op, own := *route.Operation, *route
	op.Security = &openapi3.SecurityRequirements{}
	own.Operation = &op
	opts := &openapi3filter.Options{ExcludeRequestBody: true, SkipSettingDefaults: true}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			in := &openapi3filter.RequestValidationInput{Request: c.Request(), PathParams: pathParams(c), Route: &own, Options: opts}
			if err := openapi3filter.ValidateRequest(c.Request().Context(), in); err != nil {
				return err
			}
			return next(c)
		}
	}
}

// pathParams are the path parameters Echo bound, unescaped.
func pathParams(c echo.Context) map[string]string {
	names := c.ParamNames()
	if len(names) == 0 {
		return nil
	}
	params := make(map[string]string, len(names))
	for i, name := range names {
		params[name] = paramValue(c, i)
	}
	return params
}

// decodeBody reads an operation's JSON body, decodes it once, strictly
// (strict.DecodeJSON), checks the value against the operation's schema with
// kin-openapi when check is set, and hands it to the handler, typed, with
// bind. It is the first and only reader of the body: everything before it
// refuses without touching it (so that net/http can answer a refusal to a
// request with Expect: 100-continue at once; bodyUnread). A body declared or
// found over MaxBodyBytes is refused 413, the first without a byte read.
func decodeBody(body *openapi3.RequestBody, bind bindFunc, check bool) echo.MiddlewareFunc {
	schema := bodySchema(body)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			cl := callOf(c)
			if cl == nil {
				return errNoCall
			}
			data, err := readBody(cl)
			if err != nil {
				return err
			}
			switch {
			case len(data) == 0 && body.Required:
				return invalid("body: a JSON object is required")
			case len(data) == 0:
				return next(c)
			case len(c.Request().Header.Values(echo.HeaderContentType)) == 0:
				return invalid(strict.MsgJSONType)
			}
			v, err := strict.DecodeJSON(data)
			if err != nil {
				return err
			}
			if check && schema != nil {
				if err := schema.VisitJSON(v, openapi3.VisitAsRequest()); err != nil {
					return invalid("%s", describeBodyError(err))
				}
			}
			if err := bind(cl, v); err != nil {
				return err
			}
			return next(c)
		}
	}
}

// readBody reads a request's body, up to MaxBodyBytes, and marks it read
// once it has read it to its end.
func readBody(cl *call) ([]byte, error) {
	r := cl.Request()
	if r.ContentLength > MaxBodyBytes {
		return nil, &http.MaxBytesError{Limit: MaxBodyBytes}
	}
	if r.Body == nil || r.Body == http.NoBody {
		cl.bodyRead = true
		return nil, nil
	}
	data, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, err
	case errors.Is(err, os.ErrDeadlineExceeded):
		// Cut off for arriving too slowly (connlimit's BodyRule, the
		// contract's body-rate).
		return nil, &apiError{Status: http.StatusRequestTimeout, Code: codeRequestTimeout, Message: msgRequestTimeout}
	case err != nil:
		return nil, invalid("body: invalid")
	}
	cl.bodyRead = true
	return data, nil
}

package httpapi

import (
	"errors"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"

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
// that verdict. strictParams has held every integer parameter to its
// format already; one whose schema says nothing more but its bounds
// (checkedByStrict) is not parsed and checked again: its bounds are
// compared here, and only a request that breaks one goes to kin-openapi
// with every parameter, for the same verdict, in the same order, as ever.
// Otherwise kin-openapi gets the other parameters, and not even that when
// the request sends none of them. The body is decodeBody's; the query,
// strictParams' parse of it.
func validate(route *routers.Route) echo.MiddlewareFunc {
	whole := withoutSecurity(*route)
	left := whole
	op, item := *whole.Operation, *whole.PathItem
	op.Parameters, item.Parameters = leftToValidate(op.Parameters), leftToValidate(item.Parameters)
	left.Operation, left.PathItem = &op, &item
	bounded := boundedByStrict(append(slices.Clone(route.PathItem.Parameters), route.Operation.Parameters...))
	rest := append(slices.Clone(item.Parameters), op.Parameters...)
	opts := &openapi3filter.Options{ExcludeRequestBody: true, SkipSettingDefaults: true}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := &left
			switch {
			case outOfBounds(c, bounded):
				r = &whole
			case noneSent(c, rest):
				return next(c) // kin-openapi has nothing left to check
			}
			in := &openapi3filter.RequestValidationInput{Request: c.Request(), PathParams: pathParams(c), Route: r, Options: opts}
			if cl := callOf(c); cl != nil {
				in.QueryParams = cl.query
			}
			if err := openapi3filter.ValidateRequest(c.Request().Context(), in); err != nil {
				return err
			}
			return next(c)
		}
	}
}

// withoutSecurity is route with an operation of no security requirement.
func withoutSecurity(route routers.Route) routers.Route {
	op := *route.Operation
	op.Security = &openapi3.SecurityRequirements{}
	route.Operation = &op
	return route
}

// boundedByStrict is the parameters of params that strictParams decides
// alone (checkedByStrict) and whose schema has a minimum or maximum.
func boundedByStrict(params openapi3.Parameters) []*openapi3.Parameter {
	var out []*openapi3.Parameter
	for _, ref := range params {
		if p := ref.Value; p != nil && checkedByStrict(p) && (p.Schema.Value.Min != nil || p.Schema.Value.Max != nil) {
			out = append(out, p)
		}
	}
	return out
}

// outOfBounds reports whether a parameter of params that c's request sends
// breaks its schema's minimum or maximum, compared as kin-openapi compares
// them (float64). strictParams has checked that each is an integer.
func outOfBounds(c echo.Context, params []*openapi3.Parameter) bool {
	for _, p := range params {
		var v string
		switch p.In {
		case openapi3.ParameterInPath:
			v = c.Param(p.Name)
		case openapi3.ParameterInQuery:
			if cl := callOf(c); cl != nil {
				v = cl.query.Get(p.Name)
			}
		}
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return true // kin-openapi says what
		}
		s, f := p.Schema.Value, float64(n)
		if s.Min != nil && !(*s.Min <= f) || s.Max != nil && !(*s.Max >= f) {
			return true
		}
	}
	return false
}

// noneSent reports whether c's request has none of params, every one of
// them optional and in its query or headers: kin-openapi would check
// nothing.
func noneSent(c echo.Context, params openapi3.Parameters) bool {
	for _, ref := range params {
		p := ref.Value
		switch {
		case p == nil || p.Required:
			return false
		case p.In == openapi3.ParameterInHeader:
			if _, ok := c.Request().Header[http.CanonicalHeaderKey(p.Name)]; ok {
				return false
			}
		case p.In == openapi3.ParameterInQuery:
			if cl := callOf(c); cl == nil || cl.query.Has(p.Name) || cl.query == nil && c.Request().URL.RawQuery != "" {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// leftToValidate is params less those strictParams decides alone.
func leftToValidate(params openapi3.Parameters) openapi3.Parameters {
	var left openapi3.Parameters
	for _, ref := range params {
		if ref.Value == nil || !checkedByStrict(ref.Value) {
			left = append(left, ref)
		}
	}
	return left
}

// checkedByStrict reports whether strictParams alone decides p: an integer
// in the path, or an optional one in the query, whose schema says nothing
// but its type, format and bounds (intRuleOf, which strict.Int checks to the
// letter, bounds included).
func checkedByStrict(p *openapi3.Parameter) bool {
	if p.Content != nil || p.Schema == nil || !(p.In == openapi3.ParameterInPath || p.In == openapi3.ParameterInQuery && !p.Required) {
		return false
	}
	s := p.Schema.Value
	return intRuleOf(s) != nil && s.Enum == nil && s.Const == nil && s.MultipleOf == nil &&
		!s.ExclusiveMin.IsSet() && !s.ExclusiveMax.IsSet() && !s.Nullable && s.Not == nil &&
		len(s.AllOf)+len(s.AnyOf)+len(s.OneOf) == 0 && (s.Format == "" || s.Format == "int32" || s.Format == "int64")
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
			buf := bodyBufs.Get().(*[]byte)
			defer putBodyBuf(buf)
			data, err := readBody(cl, buf)
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

// bodyBufs holds the buffers bodies are read into (readBody): a body is
// decoded, its values copied out, before its buffer goes back.
var bodyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// maxPooledBody is the largest body buffer that goes back to bodyBufs.
const maxPooledBody = 64 << 10

func putBodyBuf(buf *[]byte) {
	if cap(*buf) <= maxPooledBody {
		*buf = (*buf)[:0]
		bodyBufs.Put(buf)
	}
}

// readBody reads a request's body into *buf, up to MaxBodyBytes, and marks
// it read once it has read it to its end. It reads as io.ReadAll of an
// http.MaxBytesReader does, into a pooled buffer.
func readBody(cl *call, buf *[]byte) ([]byte, error) {
	r := cl.Request()
	if r.ContentLength > MaxBodyBytes {
		return nil, &http.MaxBytesError{Limit: MaxBodyBytes}
	}
	if r.Body == nil || r.Body == http.NoBody {
		cl.bodyRead = true
		return nil, nil
	}
	data, err := readAtMost(r.Body, MaxBodyBytes, (*buf)[:0])
	*buf = data
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

// readAtMost appends what r gives to b, to its end, failing with an
// http.MaxBytesError once it has read more than max bytes.
func readAtMost(r io.Reader, max int64, b []byte) ([]byte, error) {
	lr := io.LimitedReader{R: r, N: max + 1}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // room to read into
		}
		n, err := lr.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return b, err
		}
	}
	if int64(len(b)) > max {
		return b, &http.MaxBytesError{Limit: max}
	}
	return b, nil
}

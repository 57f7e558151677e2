package httpapi

import (
	"math"
	"net/http"
	"net/url"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"

	"github.com/petstore/petstore/internal/strict"
)

// paramRules is what strictParams checks of one operation's parameters.
type paramRules struct {
	query strict.Query
	path  map[string]*strict.Int // the integer path parameters
}

// paramRulesOf collects the rules of an operation's parameters.
func paramRulesOf(item *openapi3.PathItem, op *openapi3.Operation) paramRules {
	rules := paramRules{query: strict.Query{}, path: map[string]*strict.Int{}}
	for _, params := range []openapi3.Parameters{item.Parameters, op.Parameters} {
		for _, ref := range params {
			p := ref.Value
			if p == nil {
				continue
			}
			rule := intRuleOf(p.Schema.Value)
			switch p.In {
			case openapi3.ParameterInQuery:
				rules.query[p.Name] = rule
			case openapi3.ParameterInPath:
				if rule != nil {
					rules.path[p.Name] = rule
				}
			}
		}
	}
	return rules
}

// intRuleOf is the range of an integer schema, nil for any other: its
// format's, narrowed by the schema's bounds where they are tighter
// (kin-openapi holds them as float64, exact for the small ones it narrows
// to; an int64 bound rounds to 2^63, which narrows nothing).
func intRuleOf(s *openapi3.Schema) *strict.Int {
	if s == nil || s.Type == nil || !s.Type.Is("integer") {
		return nil
	}
	r := strict.Int64
	if s.Format == "int32" {
		r = strict.Int32
	}
	if s.Min != nil && *s.Min > float64(r.Min) {
		r.Min = int64(math.Ceil(*s.Min))
	}
	if s.Max != nil && *s.Max < float64(r.Max) {
		r.Max = int64(math.Floor(*s.Max))
	}
	return &r
}

// strictParams holds the parameters to the letter before kin-openapi sees
// them (strict.Query, strict.Int): kin-openapi and the generated binder
// parse integers with strconv, which takes "+1", "007" and "-0", ignore
// query parameters the operation does not define, and read only the first
// of repeated ones.
func strictParams(rules paramRules) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			for i, name := range c.ParamNames() {
				if rule := rules.path[name]; rule != nil {
					if err := rule.Check(name, paramValue(c, i)); err != nil {
						return err
					}
				}
			}
			query, err := rules.query.Values(c.Request().URL.RawQuery)
			if err != nil {
				return err
			}
			if cl := callOf(c); cl != nil {
				cl.query = query // parsed once, for the validator and the binder
			}
			return next(c)
		}
	}
}

// paramValue is the value of the i-th path parameter Echo bound, unescaped:
// Echo binds from the escaped path when the request has one of its own.
func paramValue(c echo.Context, i int) string {
	v := c.ParamValues()[i]
	if c.Request().URL.RawPath != "" {
		if u, err := url.PathUnescape(v); err == nil {
			v = u
		}
	}
	return v
}

// msgNoBody is the message for a body sent to an operation that takes none.
const msgNoBody = "body: this operation takes no request body"

// noBody refuses a request body, of any length or none declared, on an
// operation that takes none, without reading it: kin-openapi would read it
// whole before refusing it, answer a big one 413, which these operations do
// not document, and let a chunked one through.
func noBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if r := c.Request(); r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			return invalid(msgNoBody)
		}
		return next(c)
	}
}

// jsonBody holds a body's Content-Type to the letter (strict.JSONContentType)
// and its Content-Encoding to none (strict.IdentityEncoding) before anything
// reads the body. A request without a Content-Type is refused when its body
// is read (decodeBody), after its parameters are checked.
func jsonBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Request().Header
		if values := h.Values(echo.HeaderContentType); len(values) > 0 {
			if err := strict.JSONContentType(values); err != nil {
				return err
			}
		}
		if err := strict.IdentityEncoding(h.Values(echo.HeaderContentEncoding)); err != nil {
			return err
		}
		return next(c)
	}
}

// acceptJSON answers 406 a request whose Accept admits no application/json,
// the media type of every answer (strict.AcceptsJSON), and 400 one whose
// Accept does not parse.
func acceptJSON(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ok, err := strict.AcceptsJSON(c.Request().Header.Values(echo.HeaderAccept))
		if err != nil {
			return err
		}
		if !ok {
			return &apiError{Status: http.StatusNotAcceptable, Code: codeNotAcceptable, Message: "Accept: admits no application/json, the media type of every answer"}
		}
		return next(c)
	}
}

// bodyUnread reports whether a request has a body the app has not read to
// its end: an answer to it closes the connection (errorHandler), so that
// net/http neither reads the rest to keep the connection (up to 256 KiB,
// as long as the client takes to send it) nor, for Expect: 100-continue,
// waits for a body it never asked for.
func bodyUnread(c echo.Context) bool {
	r := c.Request()
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return false
	}
	cl := callOf(c)
	return cl == nil || !cl.bodyRead
}

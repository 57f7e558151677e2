//go:build rival

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"

	"github.com/petstore/petstore/internal/strict"
)

// bodyRead is set on the call once the rival reads its body.
const bodyRead = "rival.bodyRead"

// maxBody is the contract's bound of a request body (x-rules body-size).
const maxBody = 1 << 20

func badRequest(err error) error { return echo.NewHTTPError(http.StatusBadRequest, err.Error()) }

// paths answers 404 a path Echo's router took for an operation's with a
// parameter that holds a slash or nothing (a segment more, a trailing
// slash), before the key is checked.
func paths(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		for _, v := range c.ParamValues() {
			if v == "" || strings.Contains(v, "/") {
				return echo.ErrNotFound
			}
		}
		return next(c)
	}
}

// auth takes "Authorization: Bearer <key>", the scheme in any case, the
// key compared exactly; first, whatever else is wrong.
func (a *app) auth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		values := c.Request().Header.Values(echo.HeaderAuthorization)
		key := ""
		if len(values) == 1 {
			// credentials = auth-scheme 1*SP token68 (RFC 9110 section 11.4)
			if scheme, k, ok := strings.Cut(strings.Trim(values[0], " \t"), " "); ok && strings.EqualFold(scheme, "Bearer") {
				key = strings.TrimLeft(k, " ")
			}
		}
		if len(values) == 1 && a.keys[key] && key != "" {
			r := c.Request()
			c.SetRequest(r.WithContext(context.WithValue(r.Context(), apiKey{}, key)))
			return next(c)
		}
		challenge := `Bearer realm="petstore"`
		if len(values) > 0 && values[0] != "" {
			challenge += `, error="invalid_token"`
		}
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, challenge)
		return echo.NewHTTPError(http.StatusUnauthorized, "a valid API key is required: Authorization: Bearer <key>")
	}
}

// accept answers 406 a request whose Accept admits no application/json.
func accept(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ok, err := strict.AcceptsJSON(c.Request().Header.Values(echo.HeaderAccept))
		if err != nil {
			return badRequest(err)
		}
		if !ok {
			return echo.NewHTTPError(http.StatusNotAcceptable, "Accept: admits no application/json")
		}
		return next(c)
	}
}

// route is the spec's operation Echo routed the call to.
func (a *app) route(c echo.Context) *routers.Route {
	path := strings.TrimPrefix(c.Path(), a.base)
	for _, name := range c.ParamNames() {
		path = strings.Replace(path, ":"+name, "{"+name+"}", 1)
	}
	item := a.spec.Paths.Value(path)
	if item == nil {
		return nil
	}
	op := item.GetOperation(c.Request().Method)
	if op == nil {
		return nil
	}
	return &routers.Route{Spec: a.spec, Path: path, PathItem: item, Method: c.Request().Method, Operation: op}
}

// letter holds a request to the contract's rules that kin-openapi does
// not check: integers in one spelling, parameters defined and given once,
// the Content-Type and Content-Encoding of a body, its size, and the body
// exactly one JSON object with unique member names.
func (a *app) letter(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		rt := a.route(c)
		if rt == nil {
			return echo.ErrNotFound
		}
		if err := a.params(c, rt.Operation); err != nil {
			return badRequest(err)
		}
		r := c.Request()
		if rt.Operation.RequestBody == nil {
			if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
				return echo.NewHTTPError(http.StatusBadRequest, "body: this operation takes no request body")
			}
			return next(c)
		}
		if err := a.body(c); err != nil {
			return err
		}
		return next(c)
	}
}

// params holds the operation's parameters to the letter.
func (a *app) params(c echo.Context, op *openapi3.Operation) error {
	query := strict.Query{}
	for _, ref := range op.Parameters {
		p := ref.Value
		var rule *strict.Int
		if s := p.Schema.Value; s.Type.Is("integer") {
			rule = &strict.Int64
			if s.Format == "int32" {
				rule = &strict.Int32
			}
		}
		switch p.In {
		case "query":
			query[p.Name] = rule
		case "path":
			if rule != nil {
				if err := rule.Check(p.Name, c.Param(p.Name)); err != nil {
					return err
				}
			}
		case "header":
			if len(c.Request().Header.Values(p.Name)) > 1 {
				return errors.New(p.Name + ": must be sent at most once")
			}
		}
	}
	return query.Check(c.Request().URL.RawQuery)
}

// body reads a JSON body, held to the letter, and puts it back for the
// validator.
func (a *app) body(c echo.Context) error {
	r := c.Request()
	if err := strict.JSONContentType(r.Header.Values(echo.HeaderContentType)); err != nil {
		return badRequest(err)
	}
	if err := strict.IdentityEncoding(r.Header.Values(echo.HeaderContentEncoding)); err != nil {
		return badRequest(err)
	}
	if r.ContentLength > maxBody {
		return echo.NewHTTPError(http.StatusRequestEntityTooLarge, "body: larger than 1 MiB")
	}
	c.Set(bodyRead, true)
	b, err := io.ReadAll(http.MaxBytesReader(c.Response(), r.Body, maxBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return echo.NewHTTPError(http.StatusRequestEntityTooLarge, "body: larger than 1 MiB")
	}
	if err != nil {
		return badRequest(err)
	}
	v, err := strict.DecodeJSON(b)
	if a.defect == lenientJSON {
		err = json.Unmarshal(b, &v)
	}
	if err != nil {
		return badRequest(err)
	}
	if _, ok := v.(map[string]any); !ok {
		return echo.NewHTTPError(http.StatusBadRequest, "body: must be a JSON object")
	}
	if a.defect == refusesNull && nullIn(b) {
		return echo.NewHTTPError(http.StatusBadRequest, "body: null is not a value")
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	return nil
}

// validate holds the request to the spec with kin-openapi, which writes
// the defaults of the body's schema into it.
func (a *app) validate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		rt := a.route(c)
		params := map[string]string{}
		for _, name := range c.ParamNames() {
			params[name] = c.Param(name)
		}
		in := &openapi3filter.RequestValidationInput{Request: c.Request(), PathParams: params, Route: rt,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
				KeepValidatedValue: true, SkipSettingDefaults: a.defect == ignoresDefault}}
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			return badRequest(err)
		}
		return next(c)
	}
}

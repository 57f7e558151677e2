//go:build rival

package main

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"

	"github.com/petstore/petstore/internal/contract"
	"github.com/petstore/petstore/internal/rival/api"
)

// app is the rival: its pets, typed as oapi-codegen generates them, in a
// map behind a mutex, and the outcomes of keyed creates.
type app struct {
	spec   *openapi3.T
	base   string
	keys   map[string]bool
	defect string

	mu       sync.Mutex
	pets     map[int64]api.Pet
	lastID   int64
	outcomes map[string]outcome // by API key and Idempotency-Key
}

func newApp(keys []string, defect string) (*echo.Echo, error) {
	spec, err := api.GetSwagger()
	if err != nil {
		return nil, err
	}
	base, err := contract.BasePath(spec)
	if err != nil {
		return nil, err
	}
	a := &app{spec: spec, base: base, keys: map[string]bool{}, defect: defect,
		pets: map[int64]api.Pet{}, outcomes: map[string]outcome{}}
	for _, k := range keys {
		a.keys[k] = true
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = a.errorHandler
	e.Pre(cors)
	e.Use(a.methods)
	strict := api.NewStrictHandler(a, nil)
	api.RegisterHandlersWithBaseURL(routes{e, []echo.MiddlewareFunc{paths, a.auth, accept, a.letter, a.validate}}, strict, base)
	return e, nil
}

// routes registers each operation with the middleware every operation has:
// a path or method with no operation is answered without a key.
type routes struct {
	e  *echo.Echo
	mw []echo.MiddlewareFunc
}

func (r routes) add(method, path string, h echo.HandlerFunc, m []echo.MiddlewareFunc) *echo.Route {
	return r.e.Add(method, path, h, append(slices.Clone(r.mw), m...)...)
}

func (r routes) CONNECT(p string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodConnect, p, h, m)
}
func (r routes) DELETE(p string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodDelete, p, h, m)
}
func (r routes) GET(p string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodGet, p, h, m)
}
func (r routes) HEAD(p string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodHead, p, h, m)
}
func (r routes) OPTIONS(p string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodOptions, p, h, m)
}
func (r routes) PATCH(p string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodPatch, p, h, m)
}
func (r routes) POST(p string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodPost, p, h, m)
}
func (r routes) PUT(p string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodPut, p, h, m)
}
func (r routes) TRACE(p string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.add(http.MethodTrace, p, h, m)
}

// cors: every answer to a request with an Origin may be read by any page.
func cors(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().Header.Get(echo.HeaderOrigin) != "" {
			c.Response().Header().Set(echo.HeaderAccessControlAllowOrigin, "*")
		}
		return next(c)
	}
}

// methods answers a known path with a method it has no operation for:
// a CORS preflight 204, anything else 405 with Allow (Echo's router would
// answer OPTIONS 204 and list OPTIONS).
func (a *app) methods(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		allow, _ := c.Get(echo.ContextKeyHeaderAllow).(string)
		if allow == "" {
			return next(c)
		}
		methods := slices.DeleteFunc(strings.Split(allow, ", "), func(m string) bool { return m == http.MethodOptions })
		allow = strings.Join(methods, ", ")
		r, h := c.Request(), c.Response().Header()
		if r.Method == http.MethodOptions && r.Header.Get(echo.HeaderOrigin) != "" && r.Header.Get(echo.HeaderAccessControlRequestMethod) != "" {
			h.Set(echo.HeaderAccessControlAllowMethods, allow)
			h.Set(echo.HeaderAccessControlAllowHeaders, "Authorization, Content-Type, Idempotency-Key")
			h.Set(echo.HeaderAccessControlMaxAge, "600")
			return c.NoContent(http.StatusNoContent)
		}
		h.Set(echo.HeaderAllow, allow)
		return echo.ErrMethodNotAllowed
	}
}

// codes is the Error code of each status the rival answers with.
var codes = map[int]api.ErrorCode{
	400: api.ErrorCodeInvalidRequest, 401: api.ErrorCodeUnauthorized, 404: api.ErrorCodeNotFound,
	405: api.ErrorCodeMethodNotAllowed, 406: api.ErrorCodeNotAcceptable, 413: api.ErrorCodePayloadTooLarge,
	500: api.ErrorCodeInternal,
}

// errorHandler answers every error with an Error body; one answered before
// the body was read closes the connection (the contract's refusal at once).
func (a *app) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, msg := http.StatusInternalServerError, "internal error"
	var he *echo.HTTPError
	if errors.As(err, &he) {
		status, msg = he.Code, fmt.Sprint(he.Message)
	}
	code, ok := codes[status]
	if !ok {
		status, code = http.StatusInternalServerError, api.ErrorCodeInternal
	}
	if a.defect == wrongErrorBody && status == http.StatusBadRequest {
		code = api.ErrorCodeNotFound
	}
	if read, _ := c.Get(bodyRead).(bool); !read {
		c.Response().Header().Set("Connection", "close")
	}
	if c.Request().Method == http.MethodHead {
		c.NoContent(status)
		return
	}
	c.JSON(status, api.Error{Code: code, Message: oneLine(msg), Status: int32(status)})
}

// oneLine is msg as an Error's message: one line of at most 1024
// characters, no control character.
func oneLine(msg string) string {
	msg = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, msg)
	if r := []rune(msg); len(r) > 1024 {
		msg = string(r[:1024])
	}
	if strings.TrimSpace(msg) == "" {
		msg = http.StatusText(http.StatusBadRequest)
	}
	return msg
}

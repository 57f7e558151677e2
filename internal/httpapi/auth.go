package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/labstack/echo/v4"
	echomiddleware "github.com/oapi-codegen/echo-middleware"

	"github.com/petstore/petstore/internal/apikey"
)

// authKey returns the key a request was authenticated with, or nil: its
// non-secret ID, which logs and rate limits name, and its digest, whose hex
// names the owner of its idempotency keys (the 12-digit ID could let two
// keys of a large set share them).
func authKey(c echo.Context) *apikey.Key {
	if r, ok := c.(*request); ok {
		return r.key
	}
	return nil
}

var (
	errNoCredentials = errors.New("no bearer credentials")
	errInvalidToken  = errors.New("invalid bearer token")
)

// authenticate checks the bearer key of every API request before anything
// else reads the request: kin-openapi reads and buffers the whole body before
// it calls its AuthenticationFunc, so deciding there would let a client
// without a key make the server read up to the body limit, and would answer an
// oversized body 413 instead of 401.
func authenticate(keys *apikey.Set) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			values := c.Request().Header.Values(echo.HeaderAuthorization)
			if len(values) == 0 {
				return &apiError{Status: http.StatusUnauthorized, Code: codeUnauthorized, Message: "missing API key: send the header Authorization: Bearer followed by the key", cause: errNoCredentials}
			}
			if len(values) > 1 {
				return &apiError{Status: http.StatusUnauthorized, Code: codeUnauthorized, Message: "invalid API key: send exactly one Authorization header", cause: errInvalidToken}
			}
			scheme, token, _ := strings.Cut(values[0], " ")
			if !strings.EqualFold(scheme, "Bearer") {
				return &apiError{Status: http.StatusUnauthorized, Code: codeUnauthorized, Message: "missing API key: the Authorization scheme must be Bearer", cause: errNoCredentials}
			}
			key, ok := keys.Lookup(strings.TrimLeft(token, " "))
			if !ok {
				return &apiError{Status: http.StatusUnauthorized, Code: codeUnauthorized, Message: "invalid API key", cause: errInvalidToken}
			}
			c.(*request).key = key // observe, outermost, made c a *request
			return next(c)
		}
	}
}

// confirmAuthenticated is the validator's AuthenticationFunc: it enforces the
// spec's security requirement with the verdict authenticate already reached.
func confirmAuthenticated(ctx context.Context, in *openapi3filter.AuthenticationInput) error {
	c := echomiddleware.GetEchoContext(ctx)
	if c != nil && in.SecuritySchemeName == "bearerAuth" {
		if authKey(c) != nil {
			return nil
		}
	}
	// The validator passes on an *echo.HTTPError as it is (any other error
	// becomes a 403); the error mapper turns it into the 401 body.
	return &echo.HTTPError{Code: http.StatusUnauthorized, Message: "invalid API key", Internal: errInvalidToken}
}

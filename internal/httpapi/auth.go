package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"

	"github.com/petstore/petstore/internal/apikey"
)

// keyOfRequest is the name under which authenticate keeps the key of a
// request in its echo.Context; authKey and setAuthKey are its accessors.
const keyOfRequest = "petstore.apikey"

// authKey returns the key a request was authenticated with, or nil: its
// non-secret ID, which logs and rate limits name, and its digest, whose hex
// names the owner of its idempotency keys (the 12-digit ID could let two
// keys of a large set share them).
func authKey(c echo.Context) *apikey.Key {
	k, _ := c.Get(keyOfRequest).(*apikey.Key)
	return k
}

func setAuthKey(c echo.Context, k *apikey.Key) { c.Set(keyOfRequest, k) }

var (
	errNoCredentials = errors.New("no bearer credentials")
	errInvalidToken  = errors.New("invalid bearer token")
)

// authenticate checks the bearer key of every API request before anything
// else reads the request, and is the only check of it (requireBearer): a
// check inside kin-openapi's validator would come after it reads and buffers
// the whole body, letting a client without a key make the server read up to
// the body limit, and answering an oversized body 413 instead of 401.
func authenticate(keys apikey.Source) echo.MiddlewareFunc {
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
			key, ok := keys.Current().Lookup(strings.TrimLeft(token, " "))
			if !ok {
				return &apiError{Status: http.StatusUnauthorized, Code: codeUnauthorized, Message: "invalid API key", cause: errInvalidToken}
			}
			setAuthKey(c, key)
			return next(c)
		}
	}
}

// bearerScheme is the spec's one security scheme: an HTTP bearer key.
const bearerScheme = "bearerAuth"

// requireBearer checks, at start, that an operation's security requirement
// (its own, or the spec's) is the one authenticate enforces on every
// operation: the bearer key alone. So the validator need not check it again
// on every request (see validate), and a spec that changes it fails New
// rather than being served with the wrong requirement.
func requireBearer(spec *openapi3.T, op *openapi3.Operation) error {
	sec := op.Security
	if sec == nil {
		sec = &spec.Security
	}
	if len(*sec) == 1 && len((*sec)[0]) == 1 && isBearer(spec, (*sec)[0]) {
		return nil
	}
	return fmt.Errorf("security requirement %v: the server enforces %q, an HTTP bearer key, alone", *sec, bearerScheme)
}

// isBearer tells whether a requirement names bearerScheme, declared as an
// HTTP bearer scheme.
func isBearer(spec *openapi3.T, req openapi3.SecurityRequirement) bool {
	if _, ok := req[bearerScheme]; !ok || spec.Components == nil {
		return false
	}
	ref := spec.Components.SecuritySchemes[bearerScheme]
	return ref != nil && ref.Value != nil && ref.Value.Type == "http" && strings.EqualFold(ref.Value.Scheme, "bearer")
}

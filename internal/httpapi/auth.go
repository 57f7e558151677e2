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

var (
	errNoCredentials = errors.New("no bearer credentials")
	errInvalidToken  = errors.New("invalid bearer token")
)

// authenticate checks the bearer key of every API request before anything
// else reads the request, and is the only check of it (requireBearer): a
// check inside kin-openapi's validator would come after it reads and buffers
// the whole body, letting a client without a key make the server read up to
// the body limit, and answering an oversized body 413 instead of 401. With
// a throttle, a client address over its budget of wrong keys is refused
// before its key is checked, and each wrong key takes from its budget.
func authenticate(keys apikey.Source, t *throttle) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if t != nil {
				if after, refused := t.refuse(c.Request()); refused {
					return throttled(after)
				}
			}
			token, err := bearerToken(c.Request().Header.Values(echo.HeaderAuthorization))
			if err != nil {
				return err
			}
			key, ok := keys.Current().Lookup(token)
			if !ok {
				if t != nil && token != "" { // a guess: an empty one guesses nothing
					t.fail(c.Request())
				}
				return &apiError{Status: http.StatusUnauthorized, Code: codeUnauthorized, Message: "invalid API key", cause: errInvalidToken}
			}
			cl := callOf(c)
			if cl == nil {
				return errNoCall
			}
			cl.caller = key
			return next(c)
		}
	}
}

// bearerToken is the key of a request's Authorization header values, or the
// 401 of what is wrong with them.
func bearerToken(values []string) (string, error) {
	if len(values) == 0 {
		return "", &apiError{Status: http.StatusUnauthorized, Code: codeUnauthorized, Message: "missing API key: send the header Authorization: Bearer followed by the key", cause: errNoCredentials}
	}
	if len(values) > 1 {
		return "", &apiError{Status: http.StatusUnauthorized, Code: codeUnauthorized, Message: "invalid API key: send exactly one Authorization header", cause: errInvalidToken}
	}
	scheme, token, _ := strings.Cut(values[0], " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", &apiError{Status: http.StatusUnauthorized, Code: codeUnauthorized, Message: "missing API key: the Authorization scheme must be Bearer", cause: errNoCredentials}
	}
	return strings.TrimLeft(token, " "), nil
}

// bearerScheme is the spec's one security scheme: an HTTP bearer key.
const bearerScheme = "bearerAuth"

// requireBearer tells, at start, whether an operation requires the bearer
// key. Its security requirement (its own, or the spec's) must be the one
// authenticate enforces, the bearer key alone, or, on the operation itself,
// none (security: []): an operation anyone may call. Anything else fails New
// rather than being served with the wrong requirement, so the validator need
// not check it again on every request (see validate). A spec with no
// requirement at all fails too: an operation is public only by its own word.
func requireBearer(spec *openapi3.T, op *openapi3.Operation) (bool, error) {
	sec := op.Security
	if sec != nil && len(*sec) == 0 {
		return false, nil
	}
	if sec == nil {
		sec = &spec.Security
	}
	if len(*sec) == 1 && len((*sec)[0]) == 1 && isBearer(spec, (*sec)[0]) {
		return true, nil
	}
	return false, fmt.Errorf("security requirement %v: the server enforces %q, an HTTP bearer key, alone, or none (security: [] on the operation)", *sec, bearerScheme)
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

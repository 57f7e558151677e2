package httpapi

import (
	"errors"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/pets"
)

// call is one request on its way through the app: its echo.Context, and
// the typed values the chain learns of it, which the handlers receive as
// they are, not under string keys in the Context's store. observe makes it
// and hands it down the chain as the request's Context, so that every
// middleware, the generated wrapper and the handler see it; callOf gets it
// back. oapi-codegen's strict server was the other way to typed values: it
// decodes the body itself with encoding/json, so the body would be decoded
// twice (strict.DecodeJSON's rules first) and the handlers rewritten around
// response objects; a call costs one small allocation, where Echo's store
// made a map for the first string key.
type call struct {
	echo.Context
	// handle renders an error that reaches the Context's Error (the app's
	// errorHandler), with this call rather than the Context inside it.
	handle echo.HTTPErrorHandler
	// series is the request's metrics series: its operation, or its route
	// (observe, from the operation table).
	series *series
	// route is the handler Echo routed the request to, with its
	// operation's chain (dispatch runs it).
	route echo.HandlerFunc
	// query is the query strictParams parsed and checked; nil before, or
	// for an empty one.
	query url.Values
	// caller is the key authenticate accepted; nil before, or without one.
	caller *apikey.Key
	// newPet is createPet's body, decoded and checked (decodeBody).
	newPet pets.NewPet
	// bodyRead is set once the body has been read to its end (readBody).
	bodyRead bool
	// byDesign is set for a 5xx the server answers on purpose (apiError).
	byDesign bool
}

var _ echo.Context = (*call)(nil)

// Error renders err through the app's error mapper with this call, so that
// what the call knows (its caller, its body) shapes the answer.
func (cl *call) Error(err error) { cl.handle(err, cl) }

// QueryParams is the request's query as strictParams parsed it, for the
// generated binder: parsed once, not again by Echo.
func (cl *call) QueryParams() url.Values {
	if cl.query != nil {
		return cl.query
	}
	return cl.Context.QueryParams()
}

// callOf returns the call c is, or nil when c did not come through observe.
func callOf(c echo.Context) *call {
	cl, _ := c.(*call)
	return cl
}

// errNoCall is a handler reached without the app's chain: a fault.
var errNoCall = errors.New("httpapi: a handler reached outside the app's chain")

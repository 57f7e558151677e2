// Package benchtarget holds the two servers `make bench` (.ci/load) measures
// the real binary against, over loopback with the same load. They are
// benchmark programs, never served: each is a main package under internal/,
// built only by .ci/load, so no release or `go install` of the module ships
// them, and cmd/petstore keeps no mode that turns its checks off.
//
//   - bare: the plain form of this stack on this spec, the shape of
//     oapi-codegen's examples/petstore-expanded/echo: Echo, echo-middleware's
//     stock OapiRequestValidator (its own router), the same handlers and
//     memory store, no other middleware.
//   - floor: net/http alone: no framework, no validation, the same store and
//     JSON shapes.
//
// make bench-peer measures a third, the peer, that is not here: oapi-codegen's
// own examples/petstore-expanded/echo, on its own spec, built from its public
// source by .ci/bench.sh (build_peer) with .ci/peer/main.go.
package benchtarget

import (
	"context"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"
	echomiddleware "github.com/oapi-codegen/echo-middleware"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/pets"
)

// Bare is the bare baseline's app over store: Echo, echo-middleware's stock
// OapiRequestValidator and the app's handlers, nothing else.
func Bare(store pets.Store) (*echo.Echo, error) {
	spec, err := gen.GetSpec()
	if err != nil {
		return nil, err
	}
	// The example clears servers; this spec's operations live under the
	// base path its servers name.
	spec.Servers = openapi3.Servers{{URL: httpapi.BasePath()}}

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	// The example has no security; this spec requires a bearer key, so the
	// stock validator is given an AuthenticationFunc that accepts any
	// request, and the baseline runs without keys.
	e.Use(echomiddleware.OapiRequestValidatorWithOptions(spec, &echomiddleware.Options{
		SilenceServersWarning: true,
		Options: openapi3filter.Options{
			AuthenticationFunc: func(context.Context, *openapi3filter.AuthenticationInput) error { return nil },
		},
	}))
	h, err := httpapi.Handlers(store)
	if err != nil {
		return nil, err
	}
	gen.RegisterHandlersWithBaseURL(e, h, httpapi.BasePath())
	return e, nil
}

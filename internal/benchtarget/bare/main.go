// Command bare is the bare baseline of `make bench` (see package
// benchtarget): Echo + echo-middleware's stock OapiRequestValidator + the
// app's handlers over the memory store, nothing else. Never serve it.
package main

import (
	"context"
	"flag"
	"log"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"
	echomiddleware "github.com/oapi-codegen/echo-middleware"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/memstore"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18081", "listen address (loopback)")
	flag.Parse()

	// httpapi registers its strict JSON body decoder with kin-openapi at
	// init; the stock stack uses kin-openapi's own.
	openapi3filter.RegisterBodyDecoder("application/json", openapi3filter.JSONBodyDecoder)

	spec, err := gen.GetSpec()
	if err != nil {
		log.Fatal(err)
	}
	// The example clears servers; this spec's operations live under /v1.
	spec.Servers = openapi3.Servers{{URL: httpapi.BasePath}}

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	// The example has no security; this spec requires a bearer key, so the
	// stock validator is given an AuthenticationFunc that accepts any
	// request, and the baseline runs without keys.
	e.Use(echomiddleware.OapiRequestValidatorWithOptions(spec, &echomiddleware.Options{
		Options: openapi3filter.Options{
			AuthenticationFunc: func(context.Context, *openapi3filter.AuthenticationInput) error { return nil },
		},
	}))
	gen.RegisterHandlersWithBaseURL(e, httpapi.Handlers(memstore.New()), httpapi.BasePath)
	if err := e.Start(*addr); err != nil && err != http.ErrServerClosed {
		log.Fatal(err)
	}
}

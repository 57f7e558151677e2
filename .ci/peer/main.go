// Command peer is the peer of `make bench-peer` (.ci/bench-peer): oapi-codegen's
// examples/petstore-expanded/echo as its upstream setup builds it today
// (server.NewEchoServer: Echo, echo-middleware's OapiRequestValidator over
// the example's spec, the example's handlers over a map; no auth, no logs),
// listening on a loopback address. It is not part of this module: .ci/bench.sh's
// build_peer copies it into a temporary module beside the example's handlers
// and spec, taken from the Go module proxy, and the server code oapi-codegen
// (this module's pinned version) generates from that spec. Never serve it.
package main

import (
	"flag"
	"log"
	"net"
	"net/http"
	"net/http/pprof"

	"github.com/deepmap/oapi-codegen/examples/petstore-expanded/echo/api"
	"github.com/labstack/echo/v4"
	middleware "github.com/oapi-codegen/echo-middleware"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18083", "listen address (loopback)")
	prof := flag.String("pprof", "", "serve net/http/pprof on this loopback address (make bench-layers); off when empty")
	flag.Parse()
	if *prof != "" {
		servePprof(*prof)
	}
	swagger, err := api.GetSpec()
	if err != nil {
		log.Fatal(err)
	}
	swagger.Servers = nil // as the example: no server names to match
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Use(middleware.OapiRequestValidator(swagger))
	api.RegisterHandlers(e, api.NewPetStore())
	if err := e.Start(*addr); err != nil && err != http.ErrServerClosed {
		log.Fatal(err)
	}
}

// servePprof serves net/http/pprof on addr beside the peer, as petstore
// serve -pprof does: on a listener of its own, off the peer's request path.
func servePprof(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	log.Printf("pprof listening on %s", ln.Addr())
	go http.Serve(ln, mux)
}

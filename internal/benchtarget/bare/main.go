// Command bare is the bare baseline of `make bench` (see package
// benchtarget): Echo + echo-middleware's stock OapiRequestValidator + the
// app's handlers over the memory store, nothing else. Never serve it.
package main

import (
	"flag"
	"log"
	"net/http"

	"github.com/petstore/petstore/internal/benchtarget"
	"github.com/petstore/petstore/internal/memstore"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18081", "listen address (loopback)")
	flag.Parse()

	e, err := benchtarget.Bare(memstore.New())
	if err != nil {
		log.Fatal(err)
	}
	if err := e.Start(*addr); err != nil && err != http.ErrServerClosed {
		log.Fatal(err)
	}
}

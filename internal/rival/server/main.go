//go:build rival

// Command server is the plain rival (package rival): one in-memory app a
// listener, each with the defect it is given planted ("none": the correct
// rival; "transform:NAMES": the correct rival, its answers transformed by
// package transform). It prints "rival DEFECT http://ADDR" a line, once every listener
// listens, and serves until it is killed.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/rival/transform"
)

// headMax is the contract's bound of a request head (x-rules head-size).
const headMax = 65536

func main() {
	keys := flag.String("keys", "", "the API keys the rival takes, comma-separated")
	defects := flag.String("defects", "none", "the defects to plant, one listener each, comma-separated (none: no defect)")
	flag.Parse()
	var lines []string
	for _, d := range strings.Split(*defects, ",") {
		app, err := handler(strings.Split(*keys, ","), d)
		if err != nil {
			log.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			log.Fatal(err)
		}
		lines = append(lines, fmt.Sprintf("rival %s http://%s", d, ln.Addr()))
		// net/http's own answers (a head too large, a malformed request)
		// rewritten as the contract's Error bodies: the reference's
		// listener, as any implementation needs one.
		srv := &http.Server{Handler: app, MaxHeaderBytes: headMax - 4096, ReadHeaderTimeout: 5 * time.Second, DisableGeneralOptionsHandler: true}
		go srv.Serve(httpapi.Listener(ln, nil, headMax))
	}
	fmt.Println(strings.Join(lines, "\n"))
	select {}
}

// handler is the rival with defect d planted, or, for "transform:NAMES",
// the correct rival with its answers in another legal form.
func handler(keys []string, d string) (http.Handler, error) {
	how, legal := strings.CutPrefix(d, "transform:")
	if !legal {
		if d != "none" && !known[d] {
			return nil, fmt.Errorf("no defect %q", d)
		}
		return newApp(keys, d)
	}
	app, err := newApp(keys, "none")
	if err != nil {
		return nil, err
	}
	return transform.Wrap(how, app)
}

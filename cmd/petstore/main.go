// Command petstore serves the Pet Store API.
//
//	petstore [serve] [flags]   serve the API (the default)
//	petstore keygen            print a new API key and its digest line
//	petstore conform BASE_URL  check an implementation of the API against the contract
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "petstore: %v\n", err)
		os.Exit(exitCode(err))
	}
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// bounded runs do with a context that ends at SIGINT or SIGTERM (a second
// one ends the program at once) or after bound, and turns its result into
// the exit status: 0 passed, 1 failed, 2 could not run, 130 interrupted.
func bounded(bound time.Duration, stderr io.Writer, do func(context.Context) (bool, error)) int {
	sigCtx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-sigCtx.Done()
		stop()
	}()
	ctx, cancel := context.WithTimeout(sigCtx, bound)
	defer cancel()
	ok, err := do(ctx)
	switch {
	case err != nil && sigCtx.Err() != nil:
		fmt.Fprintln(stderr, "petstore-chaos: interrupted:", err)
		return 130
	case err != nil && ctx.Err() != nil:
		fmt.Fprintln(stderr, "petstore-chaos: out of time:", err)
		return 2
	case err != nil:
		fmt.Fprintln(stderr, "petstore-chaos:", err)
		return 2
	case !ok:
		return 1
	}
	return 0
}

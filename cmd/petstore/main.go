// Command petstore serves the Pet Store API.
//
//	petstore [serve] [flags]   serve the API (the default)
//	petstore keygen            print a new API key and its digest line
//	petstore conform BASE_URL  check an implementation of the API against the contract
//	petstore version           print the version, the VCS revision and whether the tree was modified
//	petstore help [COMMAND]    list the commands, or show one's usage
//
// Exit status: 0 done, 1 failed, 2 a usage error, 3 conform's run
// incomplete (exitStatus).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/petstore/petstore/internal/conform"
)

func main() {
	ctx := signals(context.Background())
	if err := run(ctx, os.Args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "petstore: %v\n", err)
		os.Exit(exitStatus(err))
	}
}

// Exit statuses of the process: exitFailure for a failure, exitUsage for a
// usage error, alike for every command (an unknown command, flag or
// argument, or a flag's value refused). conform exits exitUsage too when it
// cannot judge the target (conform.ErrCannotRun), and exitIncomplete when
// its run found no failure but could not judge all it should
// (conform.ErrIncomplete).
const (
	exitFailure    = 1
	exitUsage      = 2
	exitIncomplete = 3
)

// usageError marks an error of the command line; its text is unchanged.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// usageErrorf is a usage error with fmt.Errorf's text.
func usageErrorf(format string, a ...any) error {
	return usageError{fmt.Errorf(format, a...)}
}

// exitStatus is the process's exit status for run's error.
func exitStatus(err error) int {
	if errors.As(err, new(usageError)) || errors.Is(err, conform.ErrCannotRun) {
		return exitUsage
	}
	if errors.Is(err, conform.ErrIncomplete) {
		return exitIncomplete
	}
	return exitFailure
}

// signals returns a context that ends at the first SIGTERM or SIGINT and
// whose skipDelay channel closes at the second. After the second, the
// signals' default action is back: a third ends the process at once.
func signals(parent context.Context) context.Context {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(parent)
	skip := make(chan struct{})
	go func() {
		<-ch
		cancel()
		<-ch
		close(skip)
		signal.Reset(os.Interrupt, syscall.SIGTERM)
	}()
	return withSkipDelay(ctx, skip)
}

type skipDelayKey struct{}

// withSkipDelay returns ctx carrying skip: once it is closed, serve cuts its
// shutdown delay short.
func withSkipDelay(ctx context.Context, skip <-chan struct{}) context.Context {
	return context.WithValue(ctx, skipDelayKey{}, skip)
}

// skipDelay returns ctx's skip channel; nil (never closed) when it has none.
func skipDelay(ctx context.Context) <-chan struct{} {
	skip, _ := ctx.Value(skipDelayKey{}).(<-chan struct{})
	return skip
}

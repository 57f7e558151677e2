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

	"github.com/petstore/petstore/internal/cli"
	"github.com/petstore/petstore/internal/conform"
	"github.com/petstore/petstore/internal/server"
)

func main() {
	ctx := server.Signals(context.Background())
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

// usageErrorf is a usage error (cli.UsageError) with fmt.Errorf's text.
func usageErrorf(format string, a ...any) error {
	return cli.Usagef(format, a...)
}

// exitStatus is the process's exit status for run's error.
func exitStatus(err error) int {
	if errors.As(err, new(cli.UsageError)) || errors.Is(err, conform.ErrCannotRun) {
		return exitUsage
	}
	if errors.Is(err, conform.ErrIncomplete) {
		return exitIncomplete
	}
	return exitFailure
}

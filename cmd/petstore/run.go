package main

import (
	"context"
	"fmt"
	"io"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/cli"
)

// run is the whole program: main only gives it the process's context,
// arguments, environment and output streams. ctx ends at the first SIGTERM
// or SIGINT; server.WithSkipDelay tells serve of the second. run looks the
// command up in program's table and calls it itself; serve parses its
// arguments here too, so they reach no other package of this module before
// the server starts (server.Run gets the Config they make).
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd, rest, err := program.Lookup(args)
	if err != nil {
		return err
	}
	return cmd(ctx, rest, getenv, stdout, stderr)
}

// program is petstore's command line: the table of commands, and the
// frame's help and version. Its commands are set in init: help's run reads
// them.
var program = &cli.Program{
	Name:    "petstore",
	Default: "serve",
	Title:   func() string { return "petstore " + buildVersion() + ": the Pet Store API's reference server." },
	Tail:    helpTail,
	Version: printVersion,
}

func init() {
	program.Commands = []cli.Command{
		{Name: "serve", Summary: "serve the API (the default command)", Run: serve},
		{Name: "keygen", Summary: "print a new API key and the digest line for the keys file", Run: keygen},
		{Name: "conform", Summary: "check an implementation of the API against the contract", Run: conformCmd},
		{Name: "version", Summary: "print the version, the VCS revision and whether the tree was modified", Run: versionCmd},
		{Name: "help", Summary: "list the commands, or show a command's description, flags and example", Run: program.Help},
	}
}

const helpTail = `
With no COMMAND, petstore serves. Run petstore help COMMAND (or petstore
COMMAND -h) for a command's description, flags and an example. Every command
takes -version: it prints what petstore version prints, and does nothing else.

Exit status: 0 done; 1 failed (serve could not start or stopped on an
error, conform's checks failed); 2 a usage error, alike for every command:
an unknown command, flag or argument, or a value a flag does not take
(conform exits 2 too when it cannot judge the target); 3 conform's run
incomplete: no check failed, but it could not judge all it should.
`

const keygenUsage = `usage: petstore keygen

Prints a new random API key and its digest line. Give the key to the client:
it is shown only this once. Append the digest line to the file that
PETSTORE_API_KEYS_FILE (-api-keys-file) names: the server keeps only digests.

Example:
  petstore keygen
  # API key: give it to the client; it is shown only this once.
  psk_2bV0…
  # Digest line: append it to the PETSTORE_API_KEYS_FILE.
  5c1f9e…
`

func keygen(_ context.Context, args []string, _ func(string) string, stdout, _ io.Writer) error {
	if done, err := cli.ParseNoArgs("petstore keygen", keygenUsage, args, stdout); done || err != nil {
		return err
	}
	key, digest, err := apikey.Generate()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "# API key: give it to the client; it is shown only this once.\n%s\n# Digest line: append it to the PETSTORE_API_KEYS_FILE.\n%s\n", key, digest)
	return err
}

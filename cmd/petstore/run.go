package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/server"
)

// run is the whole program: main only gives it the process's context,
// arguments, environment and output streams. ctx ends at the first SIGTERM
// or SIGINT; server.WithSkipDelay tells serve of the second.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	name, rest := "serve", args[1:]
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		name, rest = rest[0], rest[1:]
	} else if len(rest) == 1 && isHelpFlag(rest[0]) {
		name, rest = "help", nil // petstore -h: the commands, not serve's flags
	}
	cmd := findCommand(name)
	if cmd == nil {
		return usageErrorf("unknown command %q (want %s; see petstore help)", name, commandNames())
	}
	if wantsVersion(rest) {
		return printVersion(stdout)
	}
	return cmd.run(ctx, rest, getenv, stdout, stderr)
}

// command is one of petstore's commands, as help lists it.
type command struct {
	name    string
	summary string // one line, for petstore help
	run     func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error
}

// commands lists petstore's commands in help's order. It is filled in init:
// help's run reads it.
var commands []command

func init() {
	commands = []command{
		{"serve", "serve the API (the default command)", serve},
		{"keygen", "print a new API key and the digest line for the keys file", keygen},
		{"conform", "check an implementation of the API against the contract", conformCmd},
		{"version", "print the version, the VCS revision and whether the tree was modified", versionCmd},
		{"help", "list the commands, or show a command's description, flags and example", help},
	}
}

func findCommand(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

func commandNames() string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func isHelpFlag(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help"
}

const helpUsage = `usage: petstore help [COMMAND]

Lists petstore's commands with one line each; with COMMAND, shows that
command's description, flags and an example (as petstore COMMAND -h does).

Example:
  petstore help serve
`

const helpTail = `
With no COMMAND, petstore serves. Run petstore help COMMAND (or petstore
COMMAND -h) for a command's description, flags and an example. Every command
takes -version: it prints what petstore version prints, and does nothing else.

Exit status: 0 done; 1 failed (serve could not start or stopped on an
error, conform's checks failed); 2 a usage error, alike for every command:
an unknown command, flag or argument, or a value a flag does not take
(conform exits 2 too when it cannot judge the target).
`

// help prints the list of commands, or one command's usage, on stdout.
func help(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	switch {
	case len(args) == 1 && isHelpFlag(args[0]):
		fmt.Fprint(stdout, helpUsage)
		return nil
	case len(args) > 1:
		return usageErrorf("help: unexpected argument %q (see petstore help -h)", args[1])
	case len(args) == 1:
		cmd := findCommand(args[0])
		if cmd == nil {
			return usageErrorf("help: unknown command %q (want %s)", args[0], commandNames())
		}
		return cmd.run(ctx, []string{"-h"}, getenv, stdout, stderr)
	}
	fmt.Fprintf(stdout, "petstore %s: the Pet Store API's reference server.\n\nusage: petstore [COMMAND] [flags]\n\nCommands:\n", buildVersion())
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	tw.Flush()
	fmt.Fprint(stdout, helpTail)
	return nil
}

// parseFlags parses a command's flags. -h prints usage and the flags on
// stdout and returns flag.ErrHelp; any other error is one line naming the
// command and where its help is.
func parseFlags(fs *flag.FlagSet, usage string, args []string, stdout io.Writer) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(fs, usage, stdout)
			return err
		}
		return usageErrorf("%s: %v (see %s -h)", strings.TrimPrefix(fs.Name(), "petstore "), err, fs.Name())
	}
	return nil
}

// noArgs refuses arguments left after the flags, alike for every command
// that takes none.
func noArgs(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return usageErrorf("%s: unexpected argument %q (see %s -h)", strings.TrimPrefix(fs.Name(), "petstore "), fs.Arg(0), fs.Name())
	}
	return nil
}

// parseNoArgs parses the flags of a command that takes neither flags nor
// arguments; done is set when -h printed its usage.
func parseNoArgs(name, usage string, args []string, stdout io.Writer) (done bool, err error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	if err := parseFlags(fs, usage, args, stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return true, nil
		}
		return false, err
	}
	return false, noArgs(fs)
}

func printUsage(fs *flag.FlagSet, usage string, w io.Writer) {
	fmt.Fprint(w, usage)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprint(w, "\nFlags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
}

// serve parses serve's settings (server.Settings: flags, then the
// environment) and runs the server until ctx ends.
func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := server.Flags()
	if err := parseFlags(fs, server.Usage, args, stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	cfg, err := server.Configure(fs, getenv)
	if err != nil {
		return usageErrorf("%w", err)
	}
	build := readBuildFacts()
	cfg.Version, cfg.Revision = build.version, build.revision
	cfg.Plant = plant(getenv)
	return server.Run(ctx, cfg, stdout, stderr)
}

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
	if done, err := parseNoArgs("petstore keygen", keygenUsage, args, stdout); done || err != nil {
		return err
	}
	key, digest, err := apikey.Generate()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "# API key: give it to the client; it is shown only this once.\n%s\n# Digest line: append it to the PETSTORE_API_KEYS_FILE.\n%s\n", key, digest)
	return err
}

// Package cli is the frame of a command line made of commands, as
// petstore's is: each command has a name, a one-line summary and its own
// flags; help lists the commands, or shows one's description, flags and
// example (as COMMAND -h does); every command takes -version; and a usage
// error (an unknown command, flag or argument, or a value a flag does not
// take) is one line naming the command and where its help is, alike for
// every command, marked as a UsageError. Program.Lookup finds the command
// args name; a main that calls it itself (cmd/petstore's run) hands the
// arguments straight to the command's package.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Func runs a command with the process's context, its arguments after the
// command's name, the environment and the output streams.
type Func func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error

// Command is one command, as help lists it.
type Command struct {
	Name    string
	Summary string // one line, for help
	Run     Func
}

// Program is a command line of commands.
type Program struct {
	Name string // the program's name, as its users type it
	// Default is the command run when the first argument is a flag, or
	// there is none.
	Default string
	// Commands are the commands in help's order; the help command among
	// them runs Help.
	Commands []Command
	// Title is help's first line; Tail follows the list of commands.
	Title func() string
	Tail  string
	// Version prints what -version, on any command, prints.
	Version func(w io.Writer) error
}

// Lookup finds what runs args (args[0] is the program) and the arguments
// it takes: the command args name, or the default one; help for a lone -h;
// the version for -version on any command (it does nothing else). A main
// that calls Lookup and then the function it returns hands the arguments
// straight to the command's own package: the frame is not on their way.
func (p *Program) Lookup(args []string) (run Func, rest []string, err error) {
	name, rest := p.Default, args[1:]
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		name, rest = rest[0], rest[1:]
	} else if len(rest) == 1 && isHelpFlag(rest[0]) {
		name, rest = "help", nil // -h: the commands, not the default command's flags
	}
	cmd := p.Find(name)
	if cmd == nil {
		return nil, nil, Usagef("unknown command %q (want %s; see %s help)", name, p.names(), p.Name)
	}
	if wantsVersion(rest) {
		return p.printVersion, nil, nil
	}
	return cmd.Run, rest, nil
}

// printVersion is what -version runs, whichever command it was given to.
func (p *Program) printVersion(_ context.Context, _ []string, _ func(string) string, stdout, _ io.Writer) error {
	return p.Version(stdout)
}

// Find returns the command called name, or nil.
func (p *Program) Find(name string) *Command {
	for i := range p.Commands {
		if p.Commands[i].Name == name {
			return &p.Commands[i]
		}
	}
	return nil
}

// names lists the commands' names: "a, b or c".
func (p *Program) names() string {
	names := make([]string, len(p.Commands))
	for i, c := range p.Commands {
		names[i] = c.Name
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func isHelpFlag(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help"
}

const helpUsage = `usage: %[1]s help [COMMAND]

Lists %[1]s's commands with one line each; with COMMAND, shows that
command's description, flags and an example (as %[1]s COMMAND -h does).

Example:
  %[1]s help serve
`

// Help is the help command: it prints the list of commands, or one
// command's usage, on stdout.
func (p *Program) Help(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	switch {
	case len(args) == 1 && isHelpFlag(args[0]):
		fmt.Fprintf(stdout, helpUsage, p.Name)
		return nil
	case len(args) > 1:
		return Usagef("help: unexpected argument %q (see %s help -h)", args[1], p.Name)
	case len(args) == 1:
		cmd := p.Find(args[0])
		if cmd == nil {
			return Usagef("help: unknown command %q (want %s)", args[0], p.names())
		}
		return cmd.Run(ctx, []string{"-h"}, getenv, stdout, stderr)
	}
	fmt.Fprintf(stdout, "%s\n\nusage: %s [COMMAND] [flags]\n\nCommands:\n", p.Title(), p.Name)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, c := range p.Commands {
		fmt.Fprintf(tw, "  %s\t%s\n", c.Name, c.Summary)
	}
	tw.Flush()
	fmt.Fprint(stdout, p.Tail)
	return nil
}

// wantsVersion reports whether a command's arguments ask for the version
// (-version or --version, before any "--"): every command takes it, so Lookup
// answers it before the command parses its flags.
func wantsVersion(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-version", "--version", "-version=true", "--version=true":
			return true
		}
	}
	return false
}

// UsageError marks an error of the command line; its text is unchanged.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef is a usage error with fmt.Errorf's text.
func Usagef(format string, a ...any) error {
	return UsageError{fmt.Errorf(format, a...)}
}

// command is the command's name in a FlagSet's name ("petstore serve").
func command(fs *flag.FlagSet) string {
	_, name, _ := strings.Cut(fs.Name(), " ")
	return name
}

// ParseFlags parses a command's flags, on a FlagSet named "PROGRAM
// COMMAND". -h prints usage and the flags on stdout and returns
// flag.ErrHelp; any other error is one line naming the command and where
// its help is.
func ParseFlags(fs *flag.FlagSet, usage string, args []string, stdout io.Writer) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(fs, usage, stdout)
			return err
		}
		return Usagef("%s: %v (see %s -h)", command(fs), err, fs.Name())
	}
	return nil
}

// NoArgs refuses arguments left after the flags, alike for every command
// that takes none.
func NoArgs(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return Usagef("%s: unexpected argument %q (see %s -h)", command(fs), fs.Arg(0), fs.Name())
	}
	return nil
}

// ParseNoArgs parses the flags of a command that takes neither flags nor
// arguments; done is set when -h printed its usage.
func ParseNoArgs(name, usage string, args []string, stdout io.Writer) (done bool, err error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	if err := ParseFlags(fs, usage, args, stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return true, nil
		}
		return false, err
	}
	return false, NoArgs(fs)
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

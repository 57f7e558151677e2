package cli_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/cli"
)

// toy is a program of two commands, other than petstore: the frame's words
// come from it.
func toy() *cli.Program {
	p := &cli.Program{
		Name: "toy", Default: "go",
		Title:   func() string { return "toy 1.0: a toy." },
		Tail:    "\nThe end.\n",
		Version: func(w io.Writer) error { _, err := io.WriteString(w, "toy 1.0\n"); return err },
	}
	p.Commands = []cli.Command{
		{Name: "go", Summary: "go somewhere", Run: func(_ context.Context, args []string, _ func(string) string, stdout, _ io.Writer) error {
			fs := flag.NewFlagSet("toy go", flag.ContinueOnError)
			fast := fs.Bool("fast", false, "go fast")
			if err := cli.ParseFlags(fs, "usage: toy go [-fast]\n", args, stdout); err != nil {
				if errors.Is(err, flag.ErrHelp) {
					return nil
				}
				return err
			}
			if err := cli.NoArgs(fs); err != nil {
				return err
			}
			_, err := io.WriteString(stdout, map[bool]string{true: "fast\n", false: "slow\n"}[*fast])
			return err
		}},
		{Name: "help", Summary: "list the commands", Run: p.Help},
	}
	return p
}

// The toy program, looked up and run as cmd/petstore's run does: help,
// -version, usage errors, flags.
func TestProgram(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		out, err  string // err: a usage error's text
		outPrefix bool
	}{
		{args: nil, out: "slow\n"},
		{args: []string{"-fast"}, out: "fast\n"},
		{args: []string{"go", "-fast"}, out: "fast\n"},
		{args: []string{"go", "-fast", "--version"}, out: "toy 1.0\n"},
		{args: []string{"go", "--", "-version"}, err: `go: unexpected argument "-version" (see toy go -h)`},
		{args: []string{"fly"}, err: `unknown command "fly" (want go or help; see toy help)`},
		{args: []string{"go", "-slow"}, err: "go: flag provided but not defined: -slow (see toy go -h)"},
		{args: []string{"help", "fly"}, err: `help: unknown command "fly" (want go or help)`},
		{args: []string{"help", "go", "x"}, err: `help: unexpected argument "x" (see toy help -h)`},
		{args: []string{"-h"}, out: "toy 1.0: a toy.\n\nusage: toy [COMMAND] [flags]\n\nCommands:\n  go    go somewhere\n  help  list the commands\n\nThe end.\n"},
		{args: []string{"help", "go"}, out: "usage: toy go [-fast]\n\nFlags:\n", outPrefix: true},
		{args: []string{"help", "-h"}, out: "usage: toy help [COMMAND]\n", outPrefix: true},
	} {
		var out bytes.Buffer
		run, rest, err := toy().Lookup(append([]string{"toy"}, tc.args...))
		if err == nil {
			err = run(context.Background(), rest, func(string) string { return "" }, &out, io.Discard)
		}
		if tc.err != "" {
			if err == nil || err.Error() != tc.err || !errors.As(err, new(cli.UsageError)) {
				t.Errorf("toy %s: got %v, want usage error %q", strings.Join(tc.args, " "), err, tc.err)
			}
			continue
		}
		if err != nil || out.String() != tc.out && !(tc.outPrefix && strings.HasPrefix(out.String(), tc.out)) {
			t.Errorf("toy %s: got %v and\n%s\nwant\n%s", strings.Join(tc.args, " "), err, out.String(), tc.out)
		}
	}
}

// Lookup gives the function to run and the arguments it gets.
func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		args []string
		rest []string
		out  string // what the function found prints, given rest
		err  string
	}{
		{args: nil, rest: []string{}, out: "slow\n"},
		{args: []string{"-fast"}, rest: []string{"-fast"}, out: "fast\n"},
		{args: []string{"go", "-fast", "x"}, rest: []string{"-fast", "x"}, err: `go: unexpected argument "x" (see toy go -h)`},
		{args: []string{"-h"}, rest: nil, out: "toy 1.0: a toy.\n"},
		{args: []string{"help", "go"}, rest: []string{"go"}, out: "usage: toy go [-fast]\n"},
		{args: []string{"go", "-version"}, rest: nil, out: "toy 1.0\n"},
		{args: []string{"help", "-version"}, rest: nil, out: "toy 1.0\n"},
		{args: []string{"fly", "-fast"}, err: `unknown command "fly" (want go or help; see toy help)`},
	} {
		run, rest, err := toy().Lookup(append([]string{"toy"}, tc.args...))
		if err == nil {
			if !slices.Equal(rest, tc.rest) || (rest == nil) != (tc.rest == nil) {
				t.Errorf("toy %s: rest %q, want %q", strings.Join(tc.args, " "), rest, tc.rest)
			}
			var out bytes.Buffer
			err = run(context.Background(), rest, func(string) string { return "" }, &out, io.Discard)
			if err == nil && !strings.HasPrefix(out.String(), tc.out) {
				t.Errorf("toy %s: got\n%s\nwant it to start with\n%s", strings.Join(tc.args, " "), out.String(), tc.out)
			}
		}
		if got := fmt.Sprint(err); tc.err != "" && got != tc.err || tc.err == "" && err != nil {
			t.Errorf("toy %s: error %v, want %q", strings.Join(tc.args, " "), err, tc.err)
		}
	}
}

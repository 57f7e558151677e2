package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/mattn/go-isatty"

	"github.com/petstore/petstore/internal/conform"
)

const conformUsage = `usage: petstore conform [flags] BASE_URL

Holds the API at BASE_URL (its base address, e.g. http://127.0.0.1:8080/v1)
to the Pet Store contract: it derives cases from the spec, sends them, judges
every response and prints a table of checks, then each failure with a curl
command that replays it (the key shown as $PETSTORE_KEY).

It CREATES PETS on the target: point it at a server you may write to.

BASE_URL is the API's base address, the part before the operations' paths:
http://127.0.0.1:8080/v1, not …/v1/pets. Flags may come before or after it.

Exit status: 0 pass: every check asked for judged at least one case and
passed, and the run judged all it should; 1 fail: a check failed (a
request that got no answer fails not_a_server_error); 2 it could not run
(bad flags, target unreachable, key refused); 3 incomplete: no check
failed, but the run could not judge all it should (a check asked for
judged no case, -checks named one that cannot run, the request budget ran
out, the target stopped answering, a walk of the listing or the read-back
was cut short, a promise over time could not be exercised, the spec no
longer states a sentence the kit judges by, the first create was
refused): the report's "Incomplete" lists what and why. A JUnit report
shows each such gap as a test case in error, never as passed.

Each request has -timeout to be answered, the ones written byte for byte
included (connecting, TLS, writing, the whole answer). Three requests in a
row without an answer, and the kit takes the target for one that stopped
answering: it sends no more, and says so (exit 1 when a check failed,
else 3).

With a second key (-key2, or PETSTORE_CONFORM_KEY2) it also checks what
the contract promises across API keys (the scope of Idempotency-Key);
without one those checks are skipped, and the report says so (named by
-checks, they were asked for: the run is incomplete). -examples N
adds N random sequences of operations judged against the kit's model of the
contract; the first that fails is shrunk and printed as curl lines, in order.

Example:
  PETSTORE_CONFORM_KEY=psk_… petstore conform http://127.0.0.1:8080/v1 -seed 42

From a clone of the repository: build, serve with a key, check.
  make build
  export PETSTORE_CONFORM_KEY=$(bin/petstore keygen | grep '^psk_')
  PETSTORE_API_KEYS=$PETSTORE_CONFORM_KEY bin/petstore serve &
  until curl -sf http://127.0.0.1:8080/healthz >/dev/null; do sleep 0.1; done
  bin/petstore conform http://127.0.0.1:8080/v1
  bin/petstore conform http://127.0.0.1:8080/v1 -checks pagination,ordering -seed 42
  bin/petstore conform -key "$PETSTORE_CONFORM_KEY" -junit conform.xml http://127.0.0.1:8080/v1

Flags:
`

// conformFlags are the flags of conform.
type conformFlags struct {
	fs                                            *flag.FlagSet
	key, key2, spec, checks, exclude, junit, json *string
	history                                       *string
	seed                                          *uint64
	examples, maxRequests                         *int
	timeout                                       *time.Duration
}

func newConformFlags() *conformFlags {
	fs := flag.NewFlagSet("petstore conform", flag.ContinueOnError)
	// Parse errors become run's one line; the usage is printed for -h only.
	fs.SetOutput(io.Discard)
	// The keys' defaults are not the environment's: -h must not print them.
	return &conformFlags{
		fs:          fs,
		key:         fs.String("key", "", "a `KEY` the target accepts (default: PETSTORE_CONFORM_KEY, which keeps it out of the process list)"),
		key2:        fs.String("key2", "", "a second `KEY` the target accepts, another tenant, for the checks across keys (default: PETSTORE_CONFORM_KEY2); without one they are skipped, and the report says so"),
		spec:        fs.String("spec", "", "hold the target to the OpenAPI document in `FILE` (default: the embedded openapi.yaml); bounds come from it"),
		checks:      fs.String("checks", "", "run only the checks in `a,b` (comma-separated)"),
		exclude:     fs.String("exclude-checks", "", "never run the checks in `a,b` (comma-separated)"),
		junit:       fs.String("junit", "", "write a JUnit XML report to `FILE`: one testcase per (check, operation)"),
		json:        fs.String("json", "", "write a JSON report to `FILE`"),
		history:     fs.String("history", "", "write the run's history to `FILE`: every exchange as a JSON line, which `petstore-chaos check -history FILE` judges as the run did"),
		seed:        fs.Uint64("seed", 0, "derive the cases from seed `N`, to replay a run (0: a random seed; the one used is printed)"),
		examples:    fs.Int("examples", 0, "also run `N` random sequences of operations against the kit's model; the first that fails is shrunk and printed as curl lines"),
		maxRequests: fs.Int("max-requests", 0, fmt.Sprintf("send at most `N` requests (default %d, and %d more a sequence of -examples plus %d for shrinking); a run cut short judges what it sent, and is incomplete (exit 3)", conform.DefaultMaxRequests, conform.ExamplesBudget, conform.ShrinkBudget)),
		timeout:     fs.Duration("timeout", conform.DefaultTimeout, "time allowed for each request, the ones written byte for byte included; three requests in a row without an answer end the run"),
	}
}

func (f *conformFlags) usage(w io.Writer) {
	fmt.Fprint(w, conformUsage)
	f.fs.SetOutput(w)
	f.fs.PrintDefaults()
	f.fs.SetOutput(io.Discard)
	fmt.Fprint(w, "\nChecks:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range conform.Checks {
		fmt.Fprintf(tw, "  %s\t%s\n", c.Name, c.Description)
	}
	tw.Flush()
}

// cannotRun is a usage error of conform: it exits 2.
func cannotRun(format string, a ...any) error {
	msg := strings.Join(strings.Fields(fmt.Sprintf(format, a...)), " ")
	return fmt.Errorf("conform: %w: %s (see petstore conform -h)", conform.ErrCannotRun, msg)
}

// parse parses args, flags before or after BASE_URL: it parses again after
// each argument, until the arguments or a "--" end. It returns the one
// BASE_URL.
func (f *conformFlags) parse(args []string) (string, error) {
	var positional []string
	for rest := args; ; {
		if err := f.fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return "", err
			}
			return "", cannotRun("%v", err)
		}
		left := f.fs.Args()
		if len(left) == 0 {
			break
		}
		if n := len(rest) - len(left); n > 0 && rest[n-1] == "--" {
			positional = append(positional, left...)
			break
		}
		positional = append(positional, left[0])
		rest = left[1:]
	}
	if len(positional) != 1 {
		return "", cannotRun("want one BASE_URL argument, got %d; flags go before or after it", len(positional))
	}
	return positional[0], nil
}

// config is the kit's configuration from the flags and the environment.
func (f *conformFlags) config(ctx context.Context, base string, getenv func(string) string) (conform.Config, error) {
	switch {
	case *f.maxRequests < 0 || *f.maxRequests == 0 && flagSet(f.fs, "max-requests"):
		return conform.Config{}, cannotRun("-max-requests %d: want a positive number", *f.maxRequests)
	case *f.timeout <= 0:
		return conform.Config{}, cannotRun("-timeout %v: want a positive duration", *f.timeout)
	case *f.examples < 0:
		return conform.Config{}, cannotRun("-examples %d: want 0 or more", *f.examples)
	}
	cfg := conform.Config{
		BaseURL: base, Key: *f.key, Key2: *f.key2,
		Checks: splitList(*f.checks), Exclude: splitList(*f.exclude),
		Seed: *f.seed, Examples: *f.examples, MaxRequests: *f.maxRequests, Timeout: *f.timeout,
	}
	if cfg.Key == "" {
		cfg.Key = getenv("PETSTORE_CONFORM_KEY")
	}
	if cfg.Key2 == "" {
		cfg.Key2 = getenv("PETSTORE_CONFORM_KEY2")
	}
	if *f.spec != "" {
		spec, err := loadSpec(ctx, *f.spec)
		if err != nil {
			return conform.Config{}, cannotRun("-spec %s: %v", *f.spec, err)
		}
		cfg.Spec = spec
	}
	return cfg, nil
}

// flagSet reports whether the flag name was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// reports are the -junit, -json and -history files of a run, opened
// before it: a run whose report cannot be written has not run. The
// history is written by the run itself (its write is nil).
type reports struct {
	files  []*os.File
	writes []func(*conform.Report, io.Writer) error
	flags  []string
}

func openReports(junitFile, jsonFile, historyFile string) (*reports, error) {
	rs := &reports{}
	for _, out := range []struct {
		flag, file string
		write      func(*conform.Report, io.Writer) error
	}{
		{"-junit", junitFile, (*conform.Report).WriteJUnit},
		{"-json", jsonFile, (*conform.Report).WriteJSON},
		{"-history", historyFile, nil},
	} {
		if out.file == "" {
			continue
		}
		f, err := os.Create(out.file)
		if err != nil {
			rs.discard()
			return nil, cannotRun("%s: %v", out.flag, err)
		}
		rs.files, rs.writes, rs.flags = append(rs.files, f), append(rs.writes, out.write), append(rs.flags, out.flag)
	}
	return rs, nil
}

// history is the -history file, or nil.
func (rs *reports) history() io.Writer {
	for i, f := range rs.files {
		if rs.writes[i] == nil {
			return f
		}
	}
	return nil
}

// discard closes and removes the files: a run that cannot judge the target
// leaves none behind.
func (rs *reports) discard() {
	for _, f := range rs.files {
		f.Close()
		os.Remove(f.Name())
	}
}

// write writes rep to each file and closes it.
func (rs *reports) write(rep *conform.Report) error {
	var first error
	for i, f := range rs.files {
		var err error
		if rs.writes[i] != nil {
			err = rs.writes[i](rep, f)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil && first == nil {
			first = fmt.Errorf("conform: %s: %w", rs.flags[i], err)
		}
	}
	return first
}

// conformCmd runs the conformance kit against the API at its one argument.
// The report goes to stdout, the progress line to stderr when it is a
// terminal; -junit and -json write files as well.
func conformCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	f := newConformFlags()
	base, err := f.parse(args)
	if errors.Is(err, flag.ErrHelp) {
		f.usage(stdout)
		return nil
	}
	if err != nil {
		return err
	}
	cfg, err := f.config(ctx, base, getenv)
	if err != nil {
		return err
	}
	if file, ok := stderr.(*os.File); ok && isatty.IsTerminal(file.Fd()) {
		cfg.Progress = stderr
	}
	rs, err := openReports(*f.junit, *f.json, *f.history)
	if err != nil {
		return err
	}
	cfg.History = rs.history()
	rep, err := conform.Run(ctx, cfg)
	if err != nil {
		rs.discard()
		return fmt.Errorf("conform: %w", err)
	}
	if err := rep.WriteText(stdout); err != nil {
		rs.discard()
		return fmt.Errorf("conform: %w", err)
	}
	if err := rs.write(rep); err != nil {
		return err
	}
	var failed []string
	for _, c := range conform.Checks {
		if rep.Failed(c.Name) {
			failed = append(failed, c.Name)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("conform: checks failed: %s", strings.Join(failed, ", "))
	}
	if rep.Verdict() == conform.Incomplete {
		var what []string
		for _, g := range rep.Incomplete {
			if g.Check != "" {
				g.What += " (" + g.Check + ")"
			}
			what = append(what, g.What)
		}
		return fmt.Errorf("conform: %w: not judged: %s", conform.ErrIncomplete, strings.Join(what, "; "))
	}
	return nil
}

// loadSpec reads and validates the OpenAPI document in file. External
// references are not followed: the contract is one file.
func loadSpec(ctx context.Context, file string) (*openapi3.T, error) {
	spec, err := openapi3.NewLoader().LoadFromFile(file)
	if err != nil {
		return nil, err
	}
	if err := spec.Validate(ctx); err != nil {
		return nil, fmt.Errorf("not a valid OpenAPI document: %v", err)
	}
	return spec, nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

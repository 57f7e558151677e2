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

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/mattn/go-isatty"

	"github.com/petstore/petstore/internal/conform"
)

// Exit statuses of the process. conform alone uses exitCannotRun; every
// other error of run exits exitFailure.
const (
	exitFailure   = 1
	exitCannotRun = 2
)

// exitCode is the exit status for run's error: 2 when conform could not
// judge the target, 1 otherwise (conform's checks failed, or serve or
// keygen failed).
func exitCode(err error) int {
	if errors.Is(err, conform.ErrCannotRun) {
		return exitCannotRun
	}
	return exitFailure
}

const conformUsage = `usage: petstore conform [flags] BASE_URL

Holds the API at BASE_URL (its base address, e.g. http://127.0.0.1:8080/v1)
to the Pet Store contract: it derives cases from the spec, sends them, judges
every response and prints a table of checks, then each failure with a curl
command that replays it (the key shown as $PETSTORE_KEY).

It CREATES PETS on the target: point it at a server you may write to.

BASE_URL is the API's base address, the part before the operations' paths:
http://127.0.0.1:8080/v1, not …/v1/pets. Flags may come before or after it.

Exit status: 0 every check passed, 1 a check failed, 2 it could not run
(bad flags, target unreachable, key refused).

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

// conformCmd runs the conformance kit against the API at its one argument.
// The report goes to stdout, the progress line to stderr when it is a
// terminal; -junit and -json write files as well.
func conformCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("petstore conform", flag.ContinueOnError)
	// Parse errors become run's one line; the usage is printed for -h only.
	fs.SetOutput(io.Discard)
	// The key's default is not the environment's: -h must not print it.
	key := fs.String("key", "", "a `KEY` the target accepts (default: PETSTORE_CONFORM_KEY, which keeps it out of the process list)")
	specFile := fs.String("spec", "", "hold the target to the OpenAPI document in `FILE` (default: the embedded openapi.yaml)")
	checks := fs.String("checks", "", "run only the checks in `a,b` (comma-separated)")
	exclude := fs.String("exclude-checks", "", "never run the checks in `a,b` (comma-separated)")
	junitFile := fs.String("junit", "", "write a JUnit XML report to `FILE`: one testcase per (check, operation)")
	jsonFile := fs.String("json", "", "write a JSON report to `FILE`")
	seed := fs.Uint64("seed", 0, "derive the cases from seed `N`, to replay a run (0: a random seed; the one used is printed)")
	maxRequests := fs.Int("max-requests", conform.DefaultMaxRequests, "send at most `N` requests; a run cut short says so, and judges what it sent")
	timeout := fs.Duration("timeout", conform.DefaultTimeout, "time allowed for each request")
	usage := func(w io.Writer) {
		fmt.Fprint(w, conformUsage)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
		fmt.Fprint(w, "\nChecks:\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, c := range conform.Checks {
			fmt.Fprintf(tw, "  %s\t%s\n", c.Name, c.Description)
		}
		tw.Flush()
	}
	cannotRun := func(format string, a ...any) error {
		msg := strings.Join(strings.Fields(fmt.Sprintf(format, a...)), " ")
		return fmt.Errorf("conform: %w: %s (see petstore conform -h)", conform.ErrCannotRun, msg)
	}
	// Flags may follow BASE_URL: parse again after each argument, until
	// the arguments or a "--" end.
	var positional []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				usage(stdout)
				return nil
			}
			return cannotRun("%v", err)
		}
		left := fs.Args()
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
		return cannotRun("want one BASE_URL argument, got %d; flags go before or after it", len(positional))
	}
	if *maxRequests <= 0 {
		return cannotRun("-max-requests %d: want a positive number", *maxRequests)
	}
	if *timeout <= 0 {
		return cannotRun("-timeout %v: want a positive duration", *timeout)
	}
	if *key == "" {
		*key = getenv("PETSTORE_CONFORM_KEY")
	}
	cfg := conform.Config{
		BaseURL:     positional[0],
		Key:         *key,
		Checks:      splitList(*checks),
		Exclude:     splitList(*exclude),
		Seed:        *seed,
		MaxRequests: *maxRequests,
		Timeout:     *timeout,
	}
	if *specFile != "" {
		spec, err := loadSpec(ctx, *specFile)
		if err != nil {
			return cannotRun("-spec %s: %v", *specFile, err)
		}
		cfg.Spec = spec
	}
	if f, ok := stderr.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		cfg.Progress = stderr
	}
	// Open the report files first: a run whose report cannot be written
	// has not run. A run that cannot judge the target leaves none behind.
	var reports []func(*conform.Report) error
	var created []string
	for _, out := range []struct {
		flag, file string
		write      func(*conform.Report, io.Writer) error
	}{
		{"-junit", *junitFile, (*conform.Report).WriteJUnit},
		{"-json", *jsonFile, (*conform.Report).WriteJSON},
	} {
		if out.file == "" {
			continue
		}
		f, err := os.Create(out.file)
		if err != nil {
			return cannotRun("%s: %v", out.flag, err)
		}
		defer f.Close()
		created = append(created, out.file)
		reports = append(reports, func(rep *conform.Report) error {
			if err := out.write(rep, f); err != nil {
				return fmt.Errorf("conform: %s: %w", out.flag, err)
			}
			if err := f.Close(); err != nil {
				return fmt.Errorf("conform: %s: %w", out.flag, err)
			}
			return nil
		})
	}

	rep, err := conform.Run(ctx, cfg)
	if err != nil {
		for _, file := range created {
			os.Remove(file)
		}
		return fmt.Errorf("conform: %w", err)
	}
	if err := rep.WriteText(stdout); err != nil {
		return fmt.Errorf("conform: %w", err)
	}
	for _, write := range reports {
		if err := write(rep); err != nil {
			return err
		}
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

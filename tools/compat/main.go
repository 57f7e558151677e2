// Command compat is the compatibility gate of the contract: it compares
// openapi.yaml with the released contract (released/openapi.yaml) using
// oasdiff, applies the project's version rule, and writes CHANGELOG.md.
//
//	compat check     the gate (make check-compat): one line "ok …", or the list of what the tree needs
//	compat drift     gen/ against a fresh generation only (make check-generate)
//	compat changelog write CHANGELOG.md's Unreleased section (make changelog)
//	compat major     move openapi.yaml to the next major: info.version and base path; drop the waivers that name no change (make new-major)
//	compat release   make openapi.yaml the released contract (make release-contract)
//
// released/waivers.yaml lists the breaking changes (by oasdiff) that the
// project accepts as additive against the release, each with its reason
// (docs/evolving-the-contract.md, "Waivers").
//
// It is a module of its own so that oasdiff's kin-openapi does not decide
// the server's.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v3"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "compat:", err)
		os.Exit(1)
	}
}

// options are the command and its flags; the paths are relative to dir.
type options struct {
	cmd                                string
	base, rev, changelog, waivers, gen string
	generated                          string // a fresh generation of gen/'s files ("": not compared)
	verbose                            bool
}

const usage = "usage: compat check|drift|changelog|major|release [flags]"

func run(args []string, stdout io.Writer) error {
	o, err := parseOptions(args)
	if err != nil {
		return err
	}
	switch o.cmd {
	case "drift":
		return checkDrift(o, stdout)
	case "major":
		return newMajor(o, stdout)
	case "check", "changelog", "release":
	default:
		return fmt.Errorf("unknown command %q (%s)", o.cmd, usage)
	}
	in, err := readInputs(o)
	if err != nil {
		return err
	}
	switch o.cmd {
	case "check":
		return check(o, in, stdout)
	case "changelog":
		return os.WriteFile(o.changelog, []byte(changelog(in.changelog, in.report, oasdiffVersion(), false)), 0o644)
	}
	return release(o, in)
}

// parseOptions reads the command and its flags, and moves to -dir.
func parseOptions(args []string) (options, error) {
	if len(args) == 0 {
		return options{}, errors.New(usage)
	}
	o := options{cmd: args[0]}
	fs := flag.NewFlagSet("compat "+args[0], flag.ContinueOnError)
	fs.StringVar(&o.base, "base", "released/openapi.yaml", "the released contract")
	fs.StringVar(&o.rev, "rev", "openapi.yaml", "the contract as it is now")
	fs.StringVar(&o.changelog, "changelog", "CHANGELOG.md", "the changelog file; check: \"\" to leave it unchecked")
	fs.StringVar(&o.waivers, "waivers", "released/waivers.yaml", "breaking changes accepted as additive against the release (optional)")
	fs.StringVar(&o.gen, "gen", "gen", "the generated code's directory")
	fs.StringVar(&o.generated, "generated", "", "check, drift: a directory holding a fresh generation of gen/'s files, to compare gen/ with")
	fs.BoolVar(&o.verbose, "v", false, "check: list the changes even when the tree passes")
	dir := fs.String("dir", ".", "the repository: the other paths are relative to it")
	if err := fs.Parse(args[1:]); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q (%s)", fs.Arg(0), usage)
	}
	if o.generated != "" && !strings.HasPrefix(o.generated, "/") {
		wd, err := os.Getwd()
		if err != nil {
			return o, err
		}
		o.generated = wd + "/" + o.generated
	}
	return o, os.Chdir(*dir)
}

// inputs are the files the gate reads, and their comparison.
type inputs struct {
	rev         []byte
	waiversData []byte
	waivers     []Waiver
	changelog   string // "" when the file does not exist
	report      *Report
}

func readInputs(o options) (*inputs, error) {
	base, err := os.ReadFile(o.base)
	if err != nil {
		return nil, err
	}
	in := &inputs{}
	if in.rev, err = os.ReadFile(o.rev); err != nil {
		return nil, err
	}
	in.waiversData, err = os.ReadFile(o.waivers)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if in.waivers, err = ParseWaivers(in.waiversData); err != nil {
		return nil, fmt.Errorf("%s: %w", o.waivers, err)
	}
	if o.changelog != "" {
		old, err := os.ReadFile(o.changelog)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		in.changelog = string(old)
	}
	in.report, err = Compare(base, in.rev, in.waivers...)
	return in, err
}

// check is the gate: one line "ok …" when the tree passes; else each thing
// it needs, and the changes that decide the version, and an error.
func check(o options, in *inputs, stdout io.Writer) error {
	r := in.report
	var needs []string
	if o.generated != "" {
		files, err := drift(o.gen, o.generated)
		if err != nil {
			return err
		}
		if len(files) > 0 {
			needs = append(needs, fmt.Sprintf("make generate: %s not what %s generates", strings.Join(files, ", "), o.rev))
		}
	}
	needs = append(needs, r.Problems...)
	for _, p := range r.Leftovers {
		needs = append(needs, fmt.Sprintf("%s:%s still names the old base path %s (make new-major moves it)", o.rev, strings.TrimPrefix(p.String(), "line "), r.OldBasePath))
	}
	logStale := o.changelog != "" && changelog(in.changelog, r, oasdiffVersion(), false) != in.changelog
	if logStale {
		needs = append(needs, fmt.Sprintf("make changelog: %s does not list the changes of %s", o.changelog, o.rev))
	}
	head := fmt.Sprintf("%s %s against %s %s", o.rev, r.RevVersion, o.base, r.BaseVersion)
	if len(needs) == 0 {
		fmt.Fprintf(stdout, "ok: %s (%s)\n", head, raiseSummary(r))
		if o.verbose {
			printChanges(stdout, r, true)
		}
		return nil
	}
	fmt.Fprintf(stdout, "not ok: %s needs:\n", head)
	for _, n := range needs {
		fmt.Fprintf(stdout, "  - %s\n", n)
	}
	if len(r.Problems) > 0 || o.verbose {
		printChanges(stdout, r, o.verbose)
	}
	return errors.New("the tree does not pass the gate (docs/evolving-the-contract.md)")
}

func raiseSummary(r *Report) string {
	if r.Required == None {
		return "no change"
	}
	return "changes that need a " + r.Required.String() + " raise"
}

// printChanges lists the changes since the release: those that decide the
// raise, or all of them and the breaking ones as a waiver names them.
func printChanges(w io.Writer, r *Report, all bool) {
	fmt.Fprintf(w, "the changes since the release (%s):\n", raiseSummary(r))
	others := 0
	for _, c := range r.Changes {
		if all || c.Raise == r.Required {
			fmt.Fprintf(w, "  %s\n", c)
		} else {
			others++
		}
	}
	if r.Wording && (all || r.Required == Patch) {
		fmt.Fprintln(w, "  wording   descriptions or other prose changed")
	}
	if others > 0 {
		fmt.Fprintf(w, "  and %d change(s) that need less (-v lists them)\n", others)
	}
	if all && len(r.Unwaived) > 0 {
		out, _ := yaml.Marshal(map[string][]Waiver{"waivers": r.Unwaived})
		fmt.Fprintf(w, "the breaking changes as released/waivers.yaml would name them (waive one only after review, with its reason):\n%s", out)
	}
}

// checkDrift fails when gen/ differs from the fresh generation.
func checkDrift(o options, stdout io.Writer) error {
	if o.generated == "" {
		return errors.New("drift: -generated DIR is required")
	}
	files, err := drift(o.gen, o.generated)
	if err != nil {
		return err
	}
	if len(files) > 0 {
		return fmt.Errorf("%s not what %s generates: run make generate", strings.Join(files, ", "), o.rev)
	}
	return nil
}

// newMajor rewrites openapi.yaml for the next major after the release, and
// removes from the waivers those that name no change of the moved spec.
func newMajor(o options, stdout io.Writer) error {
	base, err := readSpec(o.base)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(o.rev)
	if err != nil {
		return err
	}
	out, v, places, err := moveMajor(data, base)
	if err != nil {
		return fmt.Errorf("%s: %w", o.rev, err)
	}
	waivers, stale, err := staleWaivers(o, out)
	if err != nil {
		return err
	}
	if err := os.WriteFile(o.rev, out, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: info.version %s, the base path moved in %d place(s):\n", o.rev, v, len(places))
	for _, p := range places {
		fmt.Fprintf(stdout, "  %s\n", p)
	}
	if len(stale) > 0 {
		if err := os.WriteFile(o.waivers, waivers, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: removed %d waiver(s) that name no change of the new major:\n", o.waivers, len(stale))
		for _, w := range stale {
			fmt.Fprintf(stdout, "  %s at %s %v\n", w.ID, w.Where, w.Args)
		}
	}
	fmt.Fprintln(stdout, "next: make generate, make changelog, make check-compat")
	return nil
}

// staleWaivers are the waivers that name no change of rev against the
// release, and the waivers file without them (nil when there is none).
func staleWaivers(o options, rev []byte) ([]byte, []Waiver, error) {
	data, err := os.ReadFile(o.waivers)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	all, err := ParseWaivers(data)
	if err != nil || len(all) == 0 {
		return nil, nil, err
	}
	base, err := os.ReadFile(o.base)
	if err != nil {
		return nil, nil, err
	}
	r, err := Compare(base, rev, all...)
	if err != nil {
		return nil, nil, err
	}
	var stale []Waiver
	for _, i := range r.Stale {
		stale = append(stale, all[i])
	}
	if len(stale) == 0 {
		return nil, nil, nil
	}
	out, err := dropWaivers(data, r.Stale)
	return out, stale, err
}

func readSpec(file string) (*openapi3.T, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if doc.Info == nil {
		return nil, fmt.Errorf("%s: no info object", file)
	}
	return doc, nil
}

// release names the Unreleased changes after info.version and makes the
// revision the released contract.
func release(o options, in *inputs) error {
	r := in.report
	if !r.OK() {
		return fmt.Errorf("not releasable: make check-compat says what the tree needs")
	}
	if r.Required == None {
		return fmt.Errorf("%s has no change since the release %s", o.rev, r.BaseVersion)
	}
	if in.changelog == "" {
		return fmt.Errorf("%s: missing", o.changelog)
	}
	if err := os.WriteFile(o.changelog, []byte(changelog(in.changelog, r, oasdiffVersion(), true)), 0o644); err != nil {
		return err
	}
	if len(in.waivers) > 0 {
		// A waiver holds against the release it was written for.
		if err := os.WriteFile(o.waivers, emptyWaivers(in.waiversData), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(o.base, in.rev, 0o644)
}

// oasdiffVersion is the version of oasdiff built in, from go.mod.
func oasdiffVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path == "github.com/oasdiff/oasdiff" {
				return m.Version
			}
		}
	}
	return "(unknown version)"
}

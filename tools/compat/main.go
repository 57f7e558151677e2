// Command compat guards the evolution of the contract: it compares
// openapi.yaml with the released contract (released/openapi.yaml) using
// oasdiff, applies the project's version rule, and writes CHANGELOG.md.
//
//	compat check     fail unless info.version carries every change (make check-compat)
//	compat changelog write CHANGELOG.md; with -check, fail when it is stale (make changelog)
//	compat release   make openapi.yaml the released contract (make release-contract)
//
// released/waivers.yaml lists the breaking changes (by oasdiff) that the
// project accepts as additive against the release, each with its reason.
//
// It is a module of its own so that oasdiff's kin-openapi does not decide
// the server's.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "compat:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: compat check|changelog|release [flags]")
	}
	fs := flag.NewFlagSet("compat "+args[0], flag.ContinueOnError)
	basePath := fs.String("base", "released/openapi.yaml", "the released contract")
	revPath := fs.String("rev", "openapi.yaml", "the contract as it is now")
	logPath := fs.String("changelog", "CHANGELOG.md", "the changelog file")
	waiversPath := fs.String("waivers", "released/waivers.yaml", "breaking changes accepted as additive against the release (optional)")
	check := fs.Bool("check", false, "changelog: fail when the file is not what it would write")
	dir := fs.String("dir", ".", "the repository: the other paths are relative to it")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if err := os.Chdir(*dir); err != nil {
		return err
	}
	base, err := os.ReadFile(*basePath)
	if err != nil {
		return err
	}
	rev, err := os.ReadFile(*revPath)
	if err != nil {
		return err
	}
	waiversData, err := os.ReadFile(*waiversPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	waivers, err := ParseWaivers(waiversData)
	if err != nil {
		return fmt.Errorf("%s: %w", *waiversPath, err)
	}
	report, err := Compare(base, rev, waivers...)
	if err != nil {
		return err
	}

	switch args[0] {
	case "check":
		need := "no change"
		if report.Required != None {
			need = "needs a " + report.Required.String() + " raise"
		}
		fmt.Fprintf(stdout, "%s %s against %s %s: %s\n", *revPath, report.RevVersion, *basePath, report.BaseVersion, need)
		for _, c := range report.Changes {
			fmt.Fprintf(stdout, "  %s\n", c)
		}
		if report.Wording {
			fmt.Fprintln(stdout, "  wording   descriptions or other prose changed")
		}
		if !report.OK() {
			for _, p := range report.Problems {
				fmt.Fprintf(stdout, "FAIL: %s\n", p)
			}
			return errors.New("the version rule is not met (docs/evolving-the-contract.md)")
		}
		fmt.Fprintln(stdout, "ok")
		return nil

	case "changelog":
		old, err := os.ReadFile(*logPath)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		out := []byte(changelog(string(old), report, oasdiffVersion(), false))
		if *check {
			if !bytes.Equal(out, old) {
				return fmt.Errorf("%s is not up to date with %s: run make changelog and commit it", *logPath, *revPath)
			}
			return nil
		}
		return os.WriteFile(*logPath, out, 0o644)

	case "release":
		if !report.OK() {
			return fmt.Errorf("not releasable: %v", report.Problems)
		}
		if report.Required == None {
			return fmt.Errorf("%s has no change since the release %s", *revPath, report.BaseVersion)
		}
		old, err := os.ReadFile(*logPath)
		if err != nil {
			return err
		}
		if err := os.WriteFile(*logPath, []byte(changelog(string(old), report, oasdiffVersion(), true)), 0o644); err != nil {
			return err
		}
		if len(waivers) > 0 {
			// A waiver holds against the release it was written for.
			if err := os.WriteFile(*waiversPath, emptyWaivers(waiversData), 0o644); err != nil {
				return err
			}
		}
		return os.WriteFile(*basePath, rev, 0o644)
	}
	return fmt.Errorf("unknown command %q: check, changelog or release", args[0])
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

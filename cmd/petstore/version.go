package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"text/tabwriter"
)

// version, revision and modified are stamped with -ldflags "-X main.version=…"
// (make build, make image; the Dockerfile stamps version and revision).
// The build info Go records in a git clone wins over the stamped revision
// and modified flag; Go records none in a git worktree (.git is a file) or
// without .git (the Dockerfile's context), and the stamps stand in.
var version, revision, modified string

// buildVersion is the version the build was stamped with, else the module
// version Go recorded, else "unknown".
func buildVersion() string {
	return readBuildFacts().version
}

// buildFacts is what petstore version prints, and what /metrics' build info
// says (newApp): one reading of the stamps and the build info.
type buildFacts struct {
	version, module, revision, time, modified, goVersion string
}

// readBuildFacts reads the stamps and the build info Go recorded. The
// revision is "" when neither knows it; every other fact is "unknown".
func readBuildFacts() buildFacts {
	f := buildFacts{version: version, module: "unknown", revision: revision, modified: modified, goVersion: "unknown"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		f.module, f.goVersion = bi.Main.Path+" "+bi.Main.Version, bi.GoVersion
		if f.version == "" && bi.Main.Version != "(devel)" {
			f.version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				f.revision = s.Value // wins over the stamp: Go read it from the checkout
			case "vcs.time":
				f.time = s.Value
			case "vcs.modified":
				f.modified = s.Value
			}
		}
	}
	if f.version == "" {
		f.version = "unknown"
	}
	if f.modified == "" {
		f.modified = "unknown"
	}
	return f
}

const versionUsage = `usage: petstore version

Prints the build's version (as make build or make image stamped it, else the
module version), the module, the VCS revision it was built from, the
revision's commit time, whether the working tree had changes not committed
(modified: true), and the Go that built it. The revision and the modified
flag come from the build information Go records when it builds in a git
checkout. Every command takes -version as well: petstore serve -version.

Example:
  petstore version
`

// versionCmd prints the build's facts on stdout.
func versionCmd(_ context.Context, args []string, _ func(string) string, stdout, _ io.Writer) error {
	if done, err := parseNoArgs("petstore version", versionUsage, args, stdout); done || err != nil {
		return err
	}
	return printVersion(stdout)
}

func printVersion(w io.Writer) error {
	f := readBuildFacts()
	if f.revision == "" {
		f.revision = "unknown (built outside a git checkout, or by go run or go test)"
	}
	fmt.Fprintf(w, "petstore %s\n", f.version)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	for _, kv := range [][2]string{
		{"module:", f.module},
		{"revision:", f.revision},
		{"commit time:", f.time},
		{"modified:", f.modified},
		{"go:", f.goVersion},
	} {
		if kv[1] != "" {
			fmt.Fprintf(tw, "%s\t%s\n", kv[0], kv[1])
		}
	}
	return tw.Flush()
}

// wantsVersion reports whether a command's arguments ask for the version
// (-version or --version, before any "--"): every command takes it, so run
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

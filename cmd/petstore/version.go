package main

import (
	"context"
	"io"

	"github.com/petstore/petstore/internal/buildinfo"
	"github.com/petstore/petstore/internal/cli"
)

// version, revision and modified are stamped with -ldflags "-X main.version=…"
// (make build, make image; the Dockerfile stamps version and revision).
// buildinfo.Read says which wins over what Go recorded.
var version, revision, modified string

// readBuildFacts is what petstore version prints and /metrics' build info
// says: one reading of the stamps and the build info.
func readBuildFacts() buildinfo.Facts { return buildinfo.Read(version, revision, modified) }

// buildVersion is the version the build was stamped with, else the module
// version Go recorded, else "unknown".
func buildVersion() string { return readBuildFacts().Version }

func printVersion(w io.Writer) error { return readBuildFacts().Write(w) }

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
	if done, err := cli.ParseNoArgs("petstore version", versionUsage, args, stdout); done || err != nil {
		return err
	}
	return printVersion(stdout)
}

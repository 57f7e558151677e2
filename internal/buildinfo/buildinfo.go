// Package buildinfo is what a build of petstore says about itself, in
// petstore version and in /metrics' petstore_build_info: the version and
// revision it was stamped with (make build, make image), and the build
// information Go recorded.
package buildinfo

import (
	"fmt"
	"io"
	"runtime/debug"
	"text/tabwriter"
)

// Facts are what petstore version prints: one reading of the stamps and
// the build info.
type Facts struct {
	Version, Module, Revision, Time, Modified, GoVersion string
}

// Read reads the stamps (-ldflags "-X main.version=…", "" when not
// stamped) and the build info Go recorded. The build info's revision and
// modified flag win over the stamped ones: Go read them from the checkout;
// Go records none in a git worktree (.git is a file) or without .git (the
// Dockerfile's context), and the stamps stand in. The version is the
// stamped one, else the module version Go recorded. The revision is "" when
// neither knows it; every other fact is "unknown".
func Read(version, revision, modified string) Facts {
	f := Facts{Version: version, Module: "unknown", Revision: revision, Modified: modified, GoVersion: "unknown"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		f.Module, f.GoVersion = bi.Main.Path+" "+bi.Main.Version, bi.GoVersion
		if f.Version == "" && bi.Main.Version != "(devel)" {
			f.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				f.Revision = s.Value
			case "vcs.time":
				f.Time = s.Value
			case "vcs.modified":
				f.Modified = s.Value
			}
		}
	}
	if f.Version == "" {
		f.Version = "unknown"
	}
	if f.Modified == "" {
		f.Modified = "unknown"
	}
	return f
}

// Write prints the facts as petstore version does: the version, then one
// line a fact known.
func (f Facts) Write(w io.Writer) error {
	if f.Revision == "" {
		f.Revision = "unknown (built outside a git checkout, or by go run or go test)"
	}
	fmt.Fprintf(w, "petstore %s\n", f.Version)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	for _, kv := range [][2]string{
		{"module:", f.Module},
		{"revision:", f.Revision},
		{"commit time:", f.Time},
		{"modified:", f.Modified},
		{"go:", f.GoVersion},
	} {
		if kv[1] != "" {
			fmt.Fprintf(tw, "%s\t%s\n", kv[0], kv[1])
		}
	}
	return tw.Flush()
}

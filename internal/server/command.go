package server

import (
	"context"
	"errors"
	"flag"
	"io"

	"github.com/petstore/petstore/internal/buildinfo"
	"github.com/petstore/petstore/internal/cli"
)

// Command is serve as a command of a cli.Program: cmd/petstore's run
// calls it with serve's arguments (cli.Program.Lookup finds it), and it
// parses serve's settings (Settings: flags, then the environment) and runs
// the server until ctx ends. build gives the binary's version and revision (for the
// log and /metrics); plant, when it is not nil, the defect the environment
// plants (a build with the chaosbroken tag; nil otherwise). A value refused
// is a cli.UsageError.
func Command(build func() buildinfo.Facts, plant func(getenv func(string) string) (Plant, error)) cli.Func {
	return func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
		fs := Flags()
		if err := cli.ParseFlags(fs, Usage, args, stdout); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
		if err := cli.NoArgs(fs); err != nil {
			return err
		}
		cfg, err := Configure(fs, getenv)
		if err != nil {
			return cli.Usagef("%w", err)
		}
		facts := build()
		cfg.Version, cfg.Revision = facts.Version, facts.Revision
		if plant != nil {
			if cfg.Plant, err = plant(getenv); err != nil {
				return cli.Usagef("%w", err)
			}
		}
		return Run(ctx, cfg, stdout, stderr)
	}
}

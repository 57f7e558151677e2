package main

import (
	"context"
	"errors"
	"flag"
	"io"

	"github.com/petstore/petstore/internal/cli"
	"github.com/petstore/petstore/internal/server"
)

// serve parses serve's arguments with the server's settings table
// (server.Flags, then server.Configure: flags, then the environment) and
// runs the server until ctx ends. The arguments stop here: the server gets
// the Config they make. A value refused is a cli.UsageError.
func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := server.Flags()
	if err := cli.ParseFlags(fs, server.Usage, args, stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if err := cli.NoArgs(fs); err != nil {
		return err
	}
	cfg, err := server.Configure(fs, getenv)
	if err != nil {
		return cli.Usagef("%w", err)
	}
	facts := readBuildFacts()
	cfg.Version, cfg.Revision = facts.Version, facts.Revision
	if newPlant != nil {
		if cfg.Plant, err = newPlant(getenv); err != nil {
			return cli.Usagef("%w", err)
		}
	}
	return server.Run(ctx, cfg, stdout, stderr)
}

// newPlant returns the chaos run's planted defect the environment names
// (cmd/petstore/broken.go): set only in a build with the chaosbroken tag,
// which links internal/chaos/broken; nil otherwise.
var newPlant func(getenv func(string) string) (server.Plant, error)

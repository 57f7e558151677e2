// Command petstore-chaos runs the service under faults and audits what its
// clients saw (Jepsen's method, at the scale of one machine):
//
//	petstore-chaos run [flags]    start replicas, load them, inject faults, record the history, check it
//	petstore-chaos check [flags]  audit a recorded history against a final state, or judge a kit's (petstore conform -history)
//	petstore-chaos deploy [flags] a rolling deploy behind HAProxy under load, audited the same way
//
// run, with the PostgreSQL store, expects the throwaway cluster of
// .ci/with-postgres (make chaos): PETSTORE_TEST_DATABASE_URL, and PG_BIN,
// PGDATA, PG_LOG, PG_OPTS to restart it. Everything listens on 127.0.0.1;
// every process it starts is stopped when it ends, interrupted or not.
// docs/reliability.md explains the run and how to read its table. This
// command only parses and wires: the run is internal/chaos, the deploy
// internal/chaos/deploy (their layers: internal/chaos's doc).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/petstore/petstore/internal/chaos"
	"github.com/petstore/petstore/internal/chaos/deploy"
	"github.com/petstore/petstore/internal/chaos/workload"
	"github.com/petstore/petstore/internal/check"
	"github.com/petstore/petstore/internal/history"
)

func main() {
	os.Exit(cli(os.Args[1:], os.Stdout, os.Stderr))
}

func cli(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: petstore-chaos run|check|deploy [flags]")
		return 2
	}
	switch args[0] {
	case "run":
		var cfg chaos.Config
		return command(args, &cfg, stderr, func(ctx context.Context) (bool, error) { return chaos.Run(ctx, cfg, stdout, stderr) })
	case "check":
		return checkCmd(args[1:], stdout, stderr)
	case "deploy":
		var cfg deploy.Config
		return command(args, &cfg, stderr, func(ctx context.Context) (bool, error) { return deploy.Run(ctx, cfg, stdout, stderr) })
	}
	fmt.Fprintf(stderr, "petstore-chaos: unknown command %q (want run, check or deploy)\n", args[0])
	return 2
}

// config is a command's flags (chaos.Config, deploy.Config) and how long
// it may run.
type config interface {
	Register(fs *flag.FlagSet)
	Validate() error
	Bound() time.Duration
}

// command parses the flags of args[0] into cfg, then does it within
// cfg.Bound() (bounded): exit 0 when it passes, 1 when not, 2 when it could
// not run (its flags refused), 130 when interrupted.
func command(args []string, cfg config, stderr io.Writer, do func(context.Context) (bool, error)) int {
	fs := flag.NewFlagSet("petstore-chaos "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg.Register(fs)
	err := fs.Parse(args[1:])
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "petstore-chaos:", err)
		}
		return 2
	}
	return bounded(cfg.Bound(), stderr, do)
}

// checkCmd audits a history: exit 0 when it passes, 1 on any anomaly; a
// kit's history (petstore conform -history) is judged as the kit did
// (check.Replay), without a state: exit 3 when the checker cannot tell.
func checkCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("petstore-chaos check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	hpath := fs.String("history", "bin/chaos/history.jsonl", "the history (JSON lines)")
	spath := fs.String("state", "bin/chaos/state.jsonl", "the final state of the store (JSON lines of pets)")
	var opt check.Options
	fs.IntVar(&opt.MinAcked, "min-acked", 1, "fail unless at least this many creates were acknowledged")
	fs.IntVar(&opt.MinFaults, "min-faults", 0, "fail unless at least this many faults were injected")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ops, err := history.ReadFile(*hpath)
	if err != nil {
		fmt.Fprintln(stderr, "petstore-chaos:", err)
		return 2
	}
	if check.IsKit(ops) {
		j := check.Kit().Check(ops)
		j.Print(stdout)
		return map[string]int{check.Valid: 0, check.Invalid: 1, check.Unknown: 3}[j.Verdict]
	}
	state, err := history.ReadPetsFile(*spath)
	if err != nil {
		fmt.Fprintln(stderr, "petstore-chaos:", err)
		return 2
	}
	r := workload.Audit(ops, state, opt)
	r.Print(stdout)
	if !r.OK() {
		return 1
	}
	return 0
}

// bounded runs do with a context that ends at SIGINT or SIGTERM (a second
// one ends the program at once) or after bound, and turns its result into
// the exit status: 0 passed, 1 failed, 2 could not run, 130 interrupted.
func bounded(bound time.Duration, stderr io.Writer, do func(context.Context) (bool, error)) int {
	sigCtx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-sigCtx.Done()
		stop()
	}()
	ctx, cancel := context.WithTimeout(sigCtx, bound)
	defer cancel()
	ok, err := do(ctx)
	switch {
	case err != nil && sigCtx.Err() != nil:
		fmt.Fprintln(stderr, "petstore-chaos: interrupted:", err)
		return 130
	case err != nil && ctx.Err() != nil:
		fmt.Fprintln(stderr, "petstore-chaos: out of time:", err)
		return 2
	case err != nil:
		fmt.Fprintln(stderr, "petstore-chaos:", err)
		return 2
	case !ok:
		return 1
	}
	return 0
}

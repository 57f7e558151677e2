// Package chaos is the chaos run (make chaos), Jepsen's method at the
// scale of one machine: replicas of the real server on a throwaway
// PostgreSQL cluster (or one on the memory store), under the load of
// internal/chaos/workload and the faults of internal/chaos/nemesis, every
// operation recorded in a history (internal/history) and the history
// audited (internal/check) against the final state of the store.
// With a defect planted (internal/chaos/broken) the run passes only when
// the audit reports the anomaly that defect causes. docs/reliability.md
// explains the run and how to read its table.
//
// The packages below it are layered, each importing only those on the
// layers beneath it, never one beside it or above it:
//
//  1. history, lazyfs and broken (which import none of the others); check,
//     the audit, over history;
//  2. cluster (the processes: replicas, PostgreSQL) and workload (the
//     clients, which send to any Target and know no cluster);
//  3. nemesis (the faults, played on the cluster);
//  4. chaos (the run: cluster, workload and nemesis together) and deploy
//     (the rolling deploy behind HAProxy: cluster and workload, no
//     nemesis), which do not import each other;
//  5. cmd/petstore-chaos, which only parses the command line and calls
//     chaos.Run, deploy.Run or the audit of a kept history.
//
// It is not the conformance kit (internal/conform), which judges one
// server from outside without faults.
package chaos

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/petstore/petstore/internal/chaos/broken"
	"github.com/petstore/petstore/internal/chaos/nemesis"
	"github.com/petstore/petstore/internal/chaos/workload"
	"github.com/petstore/petstore/internal/check"
)

// Config is run's flags.
type Config struct {
	duration  time.Duration
	store     string
	replicas  int
	faults    []string
	faultList string // -faults as given
	broken    string
	out       string
	workload.Settings
	drain time.Duration
	opt   check.Options
}

// brokenKinds are the defects -broken plants (make chaos-broken), each
// with the kind of anomaly the audit must report for the run to pass.
// fsyncoff is the cluster's (fsync=off, which the run checks the cluster
// runs with); the others are internal/chaos/broken's, planted in the store
// from outside: a pgx tracer (nolock, reorder), a connection setting
// (asynccommit), a wrapper (nokey, nounknown, dirtyread). Each leaves
// evidence that it took effect, without which the run fails.
var brokenKinds = map[string]string{
	broken.NoLock:      check.KindWalkAnomalies,
	broken.Reorder:     check.KindLost,
	broken.AsyncCommit: check.KindLost,
	broken.FsyncOff:    check.KindLost,
	broken.NoKey:       check.KindDoubled,
	broken.NoUnknown:   check.KindPhantom,
	broken.DirtyRead:   check.KindAbortedReads,
}

// Register declares run's flags on fs, with their defaults.
func (c *Config) Register(fs *flag.FlagSet) {
	kinds := slices.Sorted(maps.Keys(brokenKinds))
	fs.DurationVar(&c.duration, "duration", 60*time.Second, "how long the load and the faults run")
	fs.StringVar(&c.store, "store", "postgres", "postgres (2 replicas, every fault) or memory (1 replica, pauses only)")
	fs.IntVar(&c.replicas, "replicas", 2, "replicas of the server (postgres)")
	fs.StringVar(&c.faultList, "faults", "", "comma-separated faults, of "+strings.Join(nemesis.All, ",")+" (default: all for postgres, pause for memory)")
	fs.StringVar(&c.broken, "broken", "", "plant this defect (a server built with the chaosbroken tag, or the cluster's fsync off), and pass only if the audit reports it: "+strings.Join(kinds, ", "))
	fs.StringVar(&c.out, "out", "bin/chaos", "directory for the history, the final state and the replicas' logs")
	fs.DurationVar(&c.drain, "drain", time.Second, "the replicas' -shutdown-delay: how long they serve on after SIGTERM")
	c.Settings.Register(fs, &c.opt)
	fs.IntVar(&c.opt.MinFaults, "min-faults", 0, "fail unless at least this many faults were injected")
}

// Validate checks the parsed flags, and sets the faults the store allows
// where -faults names none.
func (c *Config) Validate() error {
	kinds := slices.Sorted(maps.Keys(brokenKinds))
	if c.duration <= 0 || c.duration > time.Hour {
		return fmt.Errorf("duration %v: want up to 1h", c.duration)
	}
	switch c.store {
	case "postgres":
		c.faults = nemesis.All
	case "memory":
		c.replicas, c.faults = 1, []string{nemesis.Pause}
	default:
		return fmt.Errorf("store %q: want postgres or memory", c.store)
	}
	if c.faultList != "" {
		c.faults = strings.Split(c.faultList, ",")
		for _, f := range c.faults {
			if !slices.Contains(nemesis.All, f) {
				return fmt.Errorf("fault %q: want one of %s", f, strings.Join(nemesis.All, ","))
			}
			if c.store == "memory" && f != nemesis.Pause {
				return fmt.Errorf("fault %q: the memory store forgets on a kill; only pause applies", f)
			}
		}
	}
	if c.replicas < 1 || c.replicas > 8 {
		return errors.New("replicas: want 1 to 8")
	}
	if err := c.Settings.Validate(); err != nil {
		return err
	}
	if _, ok := brokenKinds[c.broken]; c.broken != "" && (!ok || c.store != "postgres") {
		return fmt.Errorf("broken %q: want one of %s, on postgres", c.broken, strings.Join(kinds, ", "))
	}
	if c.drain < 0 || c.drain > 10*time.Second {
		return fmt.Errorf("drain %v: want 0 to 10s", c.drain)
	}
	return nil
}

// Bound is how long the run may take, whatever happens: the run, the
// retries' grace, the start and the end.
func (c *Config) Bound() time.Duration { return c.duration + 5*time.Minute }

// Run is one chaos run; everything it starts is stopped when it returns.
// It reports whether the run passed: the audit found nothing or, with a
// defect planted, the plant took effect and the audit found the anomaly it
// causes. Its tables go to stdout, its log to stderr.
func Run(ctx context.Context, cfg Config, stdout, stderr io.Writer) (bool, error) {
	r, planted, err := execute(ctx, cfg, stdout, stderr)
	switch {
	case err != nil:
		return false, err
	case cfg.broken != "":
		return caught(r, cfg.broken, planted, stdout) == 0, nil
	}
	return r.OK(), nil
}

// caught reports whether the audit of a run with a planted defect found
// it: the anomaly kind it must cause, whatever else it caused (0), or
// not (1). A run whose plant never took effect (planted false) fails,
// whatever the audit found: its defect was not there to find.
func caught(r *check.Result, kind string, planted bool, stdout io.Writer) int {
	if !planted {
		fmt.Fprintf(stdout, "broken %s: NOT PLANTED: the defect never took effect (no evidence from the server or the cluster)\n", kind)
		return 1
	}
	want := brokenKinds[kind]
	var others []string
	for _, k := range check.Kinds {
		if n := len(r.Of(k)); n > 0 && k != want {
			others = append(others, fmt.Sprintf("%s %d", k, n))
		}
	}
	also := ""
	if len(others) > 0 {
		also = " (also: " + strings.Join(others, ", ") + ")"
	}
	if n := len(r.Of(want)); n > 0 {
		fmt.Fprintf(stdout, "broken %s: caught, %d %s%s\n", kind, n, want, also)
		return 0
	}
	fmt.Fprintf(stdout, "broken %s: MISSED: no %s%s\n", kind, want, also)
	return 1
}

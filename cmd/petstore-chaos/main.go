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
// docs/reliability.md explains the run and how to read its table.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/chaos/broken"
	"github.com/petstore/petstore/internal/check"
	"github.com/petstore/petstore/internal/history"
	"github.com/petstore/petstore/internal/pgtest"
	"github.com/petstore/petstore/internal/schemagen"
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
		return runCmd(args[1:], stdout, stderr)
	case "check":
		return checkCmd(args[1:], stdout, stderr)
	case "deploy":
		return deployCmd(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "petstore-chaos: unknown command %q (want run, check or deploy)\n", args[0])
	return 2
}

// checkCmd audits a history: exit 0 when it passes, 1 on any anomaly. A
// conformance kit's history (petstore conform -history) is judged as the
// kit judged it while it ran (check.Replay), without a final state: exit
// 3 when the checker cannot tell (unknown).
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
		j := check.Replay(ops)
		j.Print(stdout)
		return map[string]int{check.Valid: 0, check.Invalid: 1, check.Unknown: 3}[j.Verdict]
	}
	state, err := history.ReadPetsFile(*spath)
	if err != nil {
		fmt.Fprintln(stderr, "petstore-chaos:", err)
		return 2
	}
	r := audit(ops, state, opt)
	r.Print(stdout)
	if !r.OK() {
		return 1
	}
	return 0
}

// runConfig is run's flags.
type runConfig struct {
	duration time.Duration
	store    string
	replicas int
	faults   []string
	broken   string
	out      string
	loadFlags
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

func parseRun(args []string, stderr io.Writer) (runConfig, error) {
	var c runConfig
	kinds := slices.Sorted(maps.Keys(brokenKinds))
	fs := flag.NewFlagSet("petstore-chaos run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.DurationVar(&c.duration, "duration", 60*time.Second, "how long the load and the faults run")
	fs.StringVar(&c.store, "store", "postgres", "postgres (2 replicas, every fault) or memory (1 replica, pauses only)")
	fs.IntVar(&c.replicas, "replicas", 2, "replicas of the server (postgres)")
	faults := fs.String("faults", "", "comma-separated faults, of "+strings.Join(allFaults, ",")+" (default: all for postgres, pause for memory)")
	fs.StringVar(&c.broken, "broken", "", "plant this defect (a server built with the chaosbroken tag, or the cluster's fsync off), and pass only if the audit reports it: "+strings.Join(kinds, ", "))
	fs.StringVar(&c.out, "out", "bin/chaos", "directory for the history, the final state and the replicas' logs")
	fs.DurationVar(&c.drain, "drain", time.Second, "the replicas' -shutdown-delay: how long they serve on after SIGTERM")
	c.loadFlags.register(fs, &c.opt)
	fs.IntVar(&c.opt.MinFaults, "min-faults", 0, "fail unless at least this many faults were injected")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.duration <= 0 || c.duration > time.Hour {
		return c, fmt.Errorf("duration %v: want up to 1h", c.duration)
	}
	switch c.store {
	case "postgres":
		c.faults = allFaults
	case "memory":
		c.replicas, c.faults = 1, []string{faultPause}
	default:
		return c, fmt.Errorf("store %q: want postgres or memory", c.store)
	}
	if *faults != "" {
		c.faults = strings.Split(*faults, ",")
		for _, f := range c.faults {
			if !slices.Contains(allFaults, f) {
				return c, fmt.Errorf("fault %q: want one of %s", f, strings.Join(allFaults, ","))
			}
			if c.store == "memory" && f != faultPause {
				return c, fmt.Errorf("fault %q: the memory store forgets on a kill; only pause applies", f)
			}
		}
	}
	if c.replicas < 1 || c.replicas > 8 {
		return c, errors.New("replicas: want 1 to 8")
	}
	if err := c.loadFlags.validate(); err != nil {
		return c, err
	}
	if _, ok := brokenKinds[c.broken]; c.broken != "" && (!ok || c.store != "postgres") {
		return c, fmt.Errorf("broken %q: want one of %s, on postgres", c.broken, strings.Join(kinds, ", "))
	}
	if c.drain < 0 || c.drain > 10*time.Second {
		return c, fmt.Errorf("drain %v: want 0 to 10s", c.drain)
	}
	return c, nil
}

func runCmd(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseRun(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "petstore-chaos:", err)
		}
		return 2
	}
	// Bounded whatever happens: the run, the retries' grace, the start
	// and the end.
	return bounded(cfg.duration+5*time.Minute, stderr, func(ctx context.Context) (bool, error) {
		r, planted, err := execute(ctx, cfg, stdout, stderr)
		switch {
		case err != nil:
			return false, err
		case cfg.broken != "":
			return caught(r, cfg.broken, planted, stdout) == 0, nil
		}
		return r.OK(), nil
	})
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

// run is one chaos run: what it started, and the history it writes.
type run struct {
	cfg      runConfig
	logf     func(format string, args ...any)
	tmp      string
	key      string
	env      []string
	dbURL    string // direct, not through the proxy
	pg       *postgres
	proxy    *pgtest.Proxy // between the replicas and the database
	replicas []*replica
	h        *history.Writer
	start    time.Time
	// unrecovered is set when the database did not start again after a
	// fault: the run goes on, and the final state is empty.
	unrecovered *unrecovered
}

// execute is the run; everything it starts is stopped when it returns.
// With a planted defect, planted says whether it took effect.
func execute(ctx context.Context, cfg runConfig, stdout, stderr io.Writer) (res *check.Result, planted bool, err error) {
	wall := time.Now()
	r := &run{cfg: cfg, logf: func(format string, args ...any) {
		fmt.Fprintf(stderr, "chaos: "+format+"\n", args...)
	}}
	defer r.close()
	if err := r.prepare(ctx); err != nil {
		return nil, false, err
	}
	if cfg.store == "postgres" {
		if err := r.startDatabase(ctx); err != nil {
			return nil, false, err
		}
	}
	if err := r.startReplicas(ctx); err != nil {
		return nil, false, err
	}
	l, err := newLoad(nil, r.replicas, r.key, cfg.createRate, cfg.readRate) // its history is set when the load begins
	if err != nil {
		return nil, false, err
	}
	if err := r.checkEmpty(ctx, l); err != nil {
		return nil, false, err
	}
	if err := r.runLoad(ctx, l); err != nil {
		return nil, false, err
	}
	state, err := r.finalState(ctx, l)
	if err != nil {
		return nil, false, fmt.Errorf("final state: %w", err)
	}
	ops, err := saveHistory(r.h, cfg.out, state)
	r.h = nil // closed
	if err != nil {
		return nil, false, err
	}
	res = audit(ops, state, cfg.opt)
	if r.unrecovered != nil {
		res.Short = append(res.Short, r.unrecovered.Error()+"; the final state is taken as empty")
	}
	fmt.Fprintf(stdout, "chaos run: %s, %v of load, %d replicas, %d operations; wall time %v\n",
		r.what(), cfg.duration, len(r.replicas), len(ops), time.Since(wall).Round(time.Second))
	res.Print(stdout)
	if cfg.broken != "" {
		if planted, err = broken.Took(r.evidence(), cfg.broken); err != nil {
			return nil, false, err
		}
	}
	return res, planted, nil
}

func (r *run) what() string {
	what := r.cfg.store
	if r.pg != nil {
		what += fmt.Sprintf(" (%s)", r.pg.describe())
	}
	if r.cfg.broken != "" {
		what += ", broken=" + r.cfg.broken
	}
	return what
}

// close stops everything the run started.
func (r *run) close() {
	for _, rep := range r.replicas {
		rep.close()
	}
	if r.h != nil {
		r.h.Close()
	}
	if r.proxy != nil {
		r.proxy.Close()
	}
	if r.pg != nil {
		r.pg.close()
	}
	if r.tmp != "" {
		os.RemoveAll(r.tmp)
	}
}

// prepare makes the output directory, builds the server and makes its
// key and environment.
func (r *run) prepare(ctx context.Context) error {
	if err := os.MkdirAll(r.cfg.out, 0o755); err != nil {
		return err
	}
	var err error
	if r.tmp, err = os.MkdirTemp("", "petstore-chaos-"); err != nil {
		return err
	}
	if r.key, _, err = apikey.Generate(); err != nil {
		return err
	}
	r.env = replicaEnv("PETSTORE_API_KEYS=" + r.key)
	if r.cfg.broken != "" {
		r.env = append(r.env, broken.Env+"="+r.cfg.broken, broken.EvidenceEnv+"="+r.evidence())
	}
	return nil
}

// evidence is the file where a planted defect says it took effect.
func (r *run) evidence() string { return filepath.Join(r.tmp, "evidence") }

// startDatabase restarts the cluster of .ci/with-postgres as the run needs
// it (fsync on, unless fsyncoff is planted; on a lazy filesystem when
// power cuts are among the faults) and puts the faulty proxy in front.
func (r *run) startDatabase(ctx context.Context) error {
	r.dbURL = os.Getenv(pgtest.EnvURL)
	if r.dbURL == "" {
		return fmt.Errorf("%s is not set: run under .ci/with-postgres (make chaos)", pgtest.EnvURL)
	}
	var err error
	if r.pg, err = postgresFromEnv(); err != nil {
		return err
	}
	if err := r.pg.restart(ctx, r.cfg.broken != broken.FsyncOff, slices.Contains(r.cfg.faults, faultPowerCut)); err != nil {
		return fmt.Errorf("restart PostgreSQL: %w", err)
	}
	if r.cfg.broken == broken.FsyncOff {
		if err := r.fsyncOff(ctx); err != nil {
			return err
		}
	}
	u, err := url.Parse(r.dbURL)
	if err != nil {
		return fmt.Errorf("%s: %w", pgtest.EnvURL, err)
	}
	if r.proxy, err = pgtest.StartProxy(u.Host); err != nil {
		return err
	}
	u.Host = r.proxy.Addr()
	r.env = append(r.env, "PETSTORE_DATABASE_URL="+u.String())
	return nil
}

// fsyncOff records the evidence of the fsyncoff plant: the cluster, asked,
// says it runs with fsync off.
func (r *run) fsyncOff(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, r.dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var fsync string
	if err := conn.QueryRow(ctx, "show fsync").Scan(&fsync); err != nil {
		return err
	}
	if fsync != "off" {
		return nil // no evidence: the run fails as not planted
	}
	return broken.Record(r.evidence(), broken.FsyncOff)
}

// startReplicas builds the server and starts the replicas, each behind
// its front (for partitions).
func (r *run) startReplicas(ctx context.Context) error {
	bin := filepath.Join(r.tmp, "petstore")
	var flags []string
	if r.cfg.broken != "" {
		flags = []string{"-tags", "chaosbroken"}
	}
	if err := buildServer(ctx, bin, flags...); err != nil {
		return err
	}
	var err error
	r.replicas, err = startReplicas(ctx, r.cfg.replicas, bin, r.env, r.cfg.out, r.cfg.drain, true)
	return err
}

// checkEmpty makes sure the store holds no pet before the load: every pet
// at the end is this run's. On a lazy filesystem, it then writes back
// everything so far (the migrated schema), as a machine's page cache would
// have long before a power cut.
func (r *run) checkEmpty(ctx context.Context, l *load) error {
	var n int64
	if r.pg == nil {
		pets, err := l.walkAll(ctx, r.replicas[0])
		if err != nil {
			return err
		}
		n = int64(len(pets))
	} else {
		conn, err := pgx.Connect(ctx, r.dbURL)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		if err := conn.QueryRow(ctx, "select count(*) from pets").Scan(&n); err != nil {
			return err
		}
		if r.pg.lazy != nil {
			if err := r.pg.lazy.Sync(); err != nil {
				return err
			}
		}
	}
	if n != 0 {
		return fmt.Errorf("the store holds %d pets before the run: want none, so that every pet is this run's", n)
	}
	return nil
}

// runLoad runs l's clients and the nemesis for the run's duration, and
// the keys' retries for a grace period after it.
func (r *run) runLoad(ctx context.Context, l *load) error {
	addrs := make([]string, len(r.replicas))
	for i, rep := range r.replicas {
		addrs[i] = rep.name + "=" + rep.ClientAddr() + "->" + rep.Addr()
	}
	r.logf("%s for %v: %d replicas (%s, drain %v), %d writers, faults %s; history in %s",
		r.what(), r.cfg.duration, len(r.replicas), strings.Join(addrs, " "), r.cfg.drain, r.cfg.writers, strings.Join(r.cfg.faults, ","), r.cfg.out)
	r.start = time.Now()
	var err error
	if r.h, err = history.CreateFile(filepath.Join(r.cfg.out, "history.jsonl"), r.start); err != nil {
		return err
	}
	l.h = r.h
	loadCtx, stopLoad := context.WithTimeout(ctx, r.cfg.duration)
	defer stopLoad()

	var nemErr error
	var nemDone sync.WaitGroup
	nemDone.Go(func() {
		n := &nemesis{h: r.h, log: r.logf, faults: r.cfg.faults, replicas: r.replicas, proxy: r.proxy, pg: r.pg, dbURL: r.dbURL}
		nemErr = n.run(loadCtx)
	})
	wait := l.start(ctx, loadCtx, r.cfg.loadFlags)
	<-loadCtx.Done()
	nemDone.Wait()
	wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if u := (*unrecovered)(nil); errors.As(nemErr, &u) {
		r.logf("%v: the store holds nothing the service can read", u)
		r.unrecovered = u
	} else if nemErr != nil {
		return nemErr
	}
	r.logf("load ended after %v; reading the final state", time.Since(r.start).Round(time.Millisecond))
	return nil
}

// finalState reads every pet the store holds, once the replicas stopped.
func (r *run) finalState(ctx context.Context, l *load) ([]history.Pet, error) {
	if r.pg == nil {
		state, err := l.walkAll(ctx, r.replicas[0])
		for _, rep := range r.replicas {
			rep.stop()
		}
		return state, err
	}
	for _, rep := range r.replicas {
		rep.stop()
	}
	if r.unrecovered != nil {
		return nil, nil
	}
	return readState(ctx, r.dbURL)
}

// saveHistory closes h, the history in the directory out, writes the
// final state beside it, and reads the history back: the audit reads what
// a later check would.
func saveHistory(h *history.Writer, out string, state []history.Pet) ([]history.Op, error) {
	if err := h.Close(); err != nil {
		return nil, err
	}
	if err := history.WritePets(filepath.Join(out, "state.jsonl"), state); err != nil {
		return nil, err
	}
	return history.ReadFile(filepath.Join(out, "history.jsonl"))
}

// readState reads every pet straight from the database, once no other
// session is left (a transaction of a stopped replica ends first).
func readState(ctx context.Context, dbURL string) ([]history.Pet, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	for {
		var others int
		if err := conn.QueryRow(ctx, `select count(*) from pg_stat_activity
			where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`).Scan(&others); err != nil {
			return nil, err
		}
		if others == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%d sessions still open: %w", others, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	// extra holds every other member, as canonical JSON (pgstore's
	// columns.go, migration 005).
	rows, err := conn.Query(ctx, `select id, name, category_id, status, extra from pets order by id`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (history.Pet, error) {
		var p history.Pet
		var extra string
		if err := row.Scan(&p.ID, &p.Name, &p.CategoryID, &p.Status, &extra); err != nil {
			return p, err
		}
		if extra != "" {
			c, err := schemagen.CanonicalJSON([]byte(extra))
			if err != nil {
				return p, fmt.Errorf("pet %d: extra %.40q: %w", p.ID, extra, err)
			}
			if string(c) != "{}" {
				p.Rest = string(c)
			}
		}
		return p, nil
	})
}

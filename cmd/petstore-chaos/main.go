// Command petstore-chaos runs the service under faults and audits what its
// clients saw (Jepsen's method, at the scale of one machine):
//
//	petstore-chaos run [flags]    start replicas, load them, inject faults, record the history, check it
//	petstore-chaos check [flags]  audit a recorded history against a final state
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
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/chaos/check"
	"github.com/petstore/petstore/internal/chaos/history"
	"github.com/petstore/petstore/internal/pgtest"
)

func main() {
	os.Exit(cli(os.Args[1:], os.Stdout, os.Stderr))
}

func cli(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: petstore-chaos run|check [flags]")
		return 2
	}
	switch args[0] {
	case "run":
		return runCmd(args[1:], stdout, stderr)
	case "check":
		return checkCmd(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "petstore-chaos: unknown command %q (want run or check)\n", args[0])
	return 2
}

// checkCmd audits a history: exit 0 when it passes, 1 on any anomaly.
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
	state, err := history.ReadPetsFile(*spath)
	if err != nil {
		fmt.Fprintln(stderr, "petstore-chaos:", err)
		return 2
	}
	r := check.Check(ops, state, opt)
	r.Print(stdout)
	if !r.OK() {
		return 1
	}
	return 0
}

// runConfig is run's flags.
type runConfig struct {
	duration   time.Duration
	store      string
	replicas   int
	faults     []string
	broken     string
	out        string
	writers    int
	createRate float64
	readRate   float64
	keyless    float64
	opt        check.Options
}

func parseRun(args []string, stderr io.Writer) (runConfig, error) {
	var c runConfig
	fs := flag.NewFlagSet("petstore-chaos run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.DurationVar(&c.duration, "duration", 60*time.Second, "how long the load and the faults run")
	fs.StringVar(&c.store, "store", "postgres", "postgres (2 replicas, every fault) or memory (1 replica, pauses only)")
	fs.IntVar(&c.replicas, "replicas", 2, "replicas of the server (postgres)")
	faults := fs.String("faults", "", "comma-separated faults, of "+strings.Join(allFaults, ",")+" (default: all for postgres, pause for memory)")
	fs.StringVar(&c.broken, "broken", "", "build the server with the chaosbroken tag and plant this fault: nolock, reorder, asynccommit, nokey or nounknown")
	fs.StringVar(&c.out, "out", "bin/chaos", "directory for the history, the final state and the replicas' logs")
	fs.IntVar(&c.writers, "writers", 8, "concurrent writers")
	fs.Float64Var(&c.createRate, "create-rate", 150, "creates a second, at most, across writers")
	fs.Float64Var(&c.readRate, "read-rate", 100, "gets and walks begun a second, at most")
	fs.Float64Var(&c.keyless, "keyless", 0.1, "share of creates sent without Idempotency-Key (never retried)")
	fs.IntVar(&c.opt.MinAcked, "min-acked", 1, "fail unless at least this many creates were acknowledged")
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
	if c.replicas < 1 || c.replicas > 8 || c.writers < 1 || c.writers > 64 {
		return c, errors.New("want 1 to 8 replicas and 1 to 64 writers")
	}
	if !slices.Contains([]string{"", "nolock", "reorder", "asynccommit", "nokey", "nounknown"}, c.broken) {
		return c, fmt.Errorf("broken %q: want nolock, reorder, asynccommit, nokey or nounknown", c.broken)
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
	sigCtx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-sigCtx.Done()
		stop() // a second interrupt ends the program at once
	}()
	// Bounded whatever happens: the run, the retries' grace, the start
	// and the end.
	ctx, cancel := context.WithTimeout(sigCtx, cfg.duration+5*time.Minute)
	defer cancel()
	r, err := execute(ctx, cfg, stdout, stderr)
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
	case !r.OK():
		return 1
	}
	return 0
}

// execute is the run; everything it starts is stopped when it returns.
func execute(ctx context.Context, cfg runConfig, stdout, stderr io.Writer) (*check.Result, error) {
	wall := time.Now()
	logf := func(format string, args ...any) {
		fmt.Fprintf(stderr, "chaos: "+format+"\n", args...)
	}
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "petstore-chaos-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	bin, err := buildServer(ctx, tmp, cfg.broken != "")
	if err != nil {
		return nil, err
	}
	key, _, err := apikey.Generate()
	if err != nil {
		return nil, err
	}

	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PETSTORE_") {
			env = append(env, kv)
		}
	}
	env = append(env, "PETSTORE_API_KEYS="+key)
	if cfg.broken != "" {
		env = append(env, "PETSTORE_CHAOS_BROKEN="+cfg.broken)
	}

	var (
		dbURL string
		pg    *postgres
		proxy *pgtest.Proxy
	)
	if cfg.store == "postgres" {
		dbURL = os.Getenv(pgtest.EnvURL)
		if dbURL == "" {
			return nil, fmt.Errorf("%s is not set: run under .ci/with-postgres (make chaos)", pgtest.EnvURL)
		}
		if pg, err = postgresFromEnv(); err != nil {
			return nil, err
		}
		u, err := url.Parse(dbURL)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pgtest.EnvURL, err)
		}
		if proxy, err = pgtest.StartProxy(u.Host); err != nil {
			return nil, err
		}
		defer proxy.Close()
		u.Host = proxy.Addr()
		env = append(env, "PETSTORE_DATABASE_URL="+u.String())
	}

	var replicas []*replica
	defer func() {
		for _, r := range replicas {
			r.kill()
			r.log.Close()
		}
	}()
	for i := 1; i <= cfg.replicas; i++ {
		name := fmt.Sprintf("r%d", i)
		r, err := newReplica(name, bin, env, filepath.Join(cfg.out, name+".log"))
		if err != nil {
			return nil, err
		}
		replicas = append(replicas, r)
		if err := r.start(ctx); err != nil {
			return nil, fmt.Errorf("start %s: %w (log: %s)", name, err, r.log.Name())
		}
	}
	addrs := make([]string, len(replicas))
	for i, r := range replicas {
		addrs[i] = r.name + "=" + r.Addr()
	}
	what := cfg.store
	if cfg.broken != "" {
		what += ", broken=" + cfg.broken
	}
	logf("%s for %v: %d replicas (%s), %d writers, faults %s; history in %s",
		what, cfg.duration, len(replicas), strings.Join(addrs, " "), cfg.writers, strings.Join(cfg.faults, ","), cfg.out)

	start := time.Now()
	h, err := history.CreateFile(filepath.Join(cfg.out, "history.jsonl"), start)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	l := newLoad(h, replicas, key, cfg.createRate, cfg.readRate)
	loadCtx, stopLoad := context.WithTimeout(ctx, cfg.duration)
	defer stopLoad()
	// Retries of keys begun before the end run on for a grace period.
	grace, stopGrace := context.WithTimeout(ctx, cfg.duration+30*time.Second)
	defer stopGrace()

	var nemErr error
	var nemDone sync.WaitGroup
	nemDone.Go(func() {
		n := &nemesis{h: h, log: logf, faults: cfg.faults, replicas: replicas, proxy: proxy, pg: pg, dbURL: dbURL}
		nemErr = n.run(loadCtx)
	})
	var writers, readers sync.WaitGroup
	for i := range cfg.writers {
		writers.Go(func() { l.writer(loadCtx, grace, 1+i, cfg.keyless) })
	}
	for i := range 2 {
		readers.Go(func() { l.getter(loadCtx, 100+i) })
		readers.Go(func() { l.walker(loadCtx, 200+i) })
	}
	<-loadCtx.Done()
	nemDone.Wait()
	readers.Wait()
	writers.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if nemErr != nil {
		return nil, nemErr
	}
	logf("load ended after %v; reading the final state", time.Since(start).Round(time.Millisecond))

	var state []history.Pet
	if cfg.store == "memory" {
		if state, err = l.walkAll(ctx, replicas[0]); err != nil {
			return nil, fmt.Errorf("final state: %w", err)
		}
		for _, r := range replicas {
			r.stop()
		}
	} else {
		for _, r := range replicas {
			r.stop()
		}
		if state, err = readState(ctx, dbURL); err != nil {
			return nil, fmt.Errorf("final state: %w", err)
		}
	}
	if err := h.Close(); err != nil {
		return nil, err
	}
	if err := history.WritePets(filepath.Join(cfg.out, "state.jsonl"), state); err != nil {
		return nil, err
	}
	ops, err := history.ReadFile(filepath.Join(cfg.out, "history.jsonl"))
	if err != nil {
		return nil, err
	}
	r := check.Check(ops, state, cfg.opt)
	fmt.Fprintf(stdout, "chaos run: %s, %v of load, %d replicas, %d operations; wall time %v\n",
		what, cfg.duration, len(replicas), len(ops), time.Since(wall).Round(time.Second))
	r.Print(stdout)
	return r, nil
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
	rows, err := conn.Query(ctx, `select id, name, category_id, status from pets order by id`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (history.Pet, error) {
		var p history.Pet
		err := row.Scan(&p.ID, &p.Name, &p.CategoryID, &p.Status)
		return p, err
	})
}

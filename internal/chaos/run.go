package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	"github.com/petstore/petstore/internal/chaos/cluster"
	"github.com/petstore/petstore/internal/chaos/nemesis"
	"github.com/petstore/petstore/internal/chaos/workload"
	"github.com/petstore/petstore/internal/check"
	"github.com/petstore/petstore/internal/history"
	"github.com/petstore/petstore/internal/pgtest"
)

// run is one chaos run: what it started, and the history it writes.
type run struct {
	cfg      Config
	logf     func(format string, args ...any)
	tmp      string
	key      string
	env      []string
	dbURL    string // direct, not through the proxy
	pg       *cluster.Postgres
	proxy    *pgtest.Proxy // between the replicas and the database
	replicas []*cluster.Replica
	h        *history.Writer
	start    time.Time
	// unrecovered is set when the database did not start again after a
	// fault: the run goes on, and the final state is empty.
	unrecovered *nemesis.Unrecovered
}

// execute is the run; everything it starts is stopped when it returns.
// With a planted defect, planted says whether it took effect.
func execute(ctx context.Context, cfg Config, stdout, stderr io.Writer) (res *check.Result, planted bool, err error) {
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
	l, err := workload.New(nil, r.targets(), r.key, cfg.CreateRate, cfg.ReadRate) // its history is set when the load begins
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
	ops, err := workload.Save(r.h, cfg.out, state)
	r.h = nil // closed
	if err != nil {
		return nil, false, err
	}
	res = workload.Audit(ops, state, cfg.opt)
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
		what += fmt.Sprintf(" (%s)", r.pg.Describe())
	}
	if r.cfg.broken != "" {
		what += ", broken=" + r.cfg.broken
	}
	return what
}

// close stops everything the run started.
func (r *run) close() {
	for _, rep := range r.replicas {
		rep.Close()
	}
	if r.h != nil {
		r.h.Close()
	}
	if r.proxy != nil {
		r.proxy.Close()
	}
	if r.pg != nil {
		r.pg.Close()
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
	r.env = cluster.Env("PETSTORE_API_KEYS=" + r.key)
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
	if r.pg, err = cluster.PostgresFromEnv(); err != nil {
		return err
	}
	if err := r.pg.Restart(ctx, r.cfg.broken != broken.FsyncOff, slices.Contains(r.cfg.faults, nemesis.PowerCut)); err != nil {
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
	if err := cluster.Build(ctx, bin, flags...); err != nil {
		return err
	}
	var err error
	r.replicas, err = cluster.StartReplicas(ctx, r.cfg.replicas, bin, r.env, r.cfg.out, r.cfg.drain, true)
	return err
}

// checkEmpty makes sure the store holds no pet before the load: every pet
// at the end is this run's. On a lazy filesystem, it then writes back
// everything so far (the migrated schema), as a machine's page cache would
// have long before a power cut.
func (r *run) checkEmpty(ctx context.Context, l *workload.Load) error {
	var n int64
	if r.pg == nil {
		pets, err := l.WalkAll(ctx, r.replicas[0])
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
		if err := r.pg.SyncLazy(); err != nil {
			return err
		}
	}
	if n != 0 {
		return fmt.Errorf("the store holds %d pets before the run: want none, so that every pet is this run's", n)
	}
	return nil
}

// runLoad runs l's clients and the nemesis for the run's duration, and
// the keys' retries for a grace period after it.
func (r *run) runLoad(ctx context.Context, l *workload.Load) error {
	addrs := make([]string, len(r.replicas))
	for i, rep := range r.replicas {
		addrs[i] = rep.Name() + "=" + rep.ClientAddr() + "->" + rep.Addr()
	}
	r.logf("%s for %v: %d replicas (%s, drain %v), %d writers, faults %s; history in %s",
		r.what(), r.cfg.duration, len(r.replicas), strings.Join(addrs, " "), r.cfg.drain, r.cfg.Writers, strings.Join(r.cfg.faults, ","), r.cfg.out)
	r.start = time.Now()
	var err error
	if r.h, err = history.CreateFile(filepath.Join(r.cfg.out, "history.jsonl"), r.start); err != nil {
		return err
	}
	l.SetHistory(r.h)
	loadCtx, stopLoad := context.WithTimeout(ctx, r.cfg.duration)
	defer stopLoad()

	var nemErr error
	var nemDone sync.WaitGroup
	nemDone.Go(func() {
		n := &nemesis.Nemesis{H: r.h, Log: r.logf, Faults: r.cfg.faults, Replicas: r.replicas, Proxy: r.proxy, PG: r.pg, DBURL: r.dbURL,
			Marker: workload.NamePrefix}
		nemErr = n.Run(loadCtx)
	})
	wait := l.Start(ctx, loadCtx, r.cfg.Settings)
	<-loadCtx.Done()
	nemDone.Wait()
	wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if u := (*nemesis.Unrecovered)(nil); errors.As(nemErr, &u) {
		r.logf("%v: the store holds nothing the service can read", u)
		r.unrecovered = u
	} else if nemErr != nil {
		return nemErr
	}
	r.logf("load ended after %v; reading the final state", time.Since(r.start).Round(time.Millisecond))
	return nil
}

// finalState reads every pet the store holds, once the replicas stopped.
func (r *run) finalState(ctx context.Context, l *workload.Load) ([]history.Pet, error) {
	if r.pg == nil {
		state, err := l.WalkAll(ctx, r.replicas[0])
		for _, rep := range r.replicas {
			rep.Stop()
		}
		return state, err
	}
	for _, rep := range r.replicas {
		rep.Stop()
	}
	if r.unrecovered != nil {
		return nil, nil
	}
	return cluster.ReadState(ctx, r.dbURL)
}

// targets are the replicas, as the clients see them.
func (r *run) targets() []workload.Target {
	ts := make([]workload.Target, len(r.replicas))
	for i, rep := range r.replicas {
		ts[i] = rep
	}
	return ts
}

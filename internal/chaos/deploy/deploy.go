// Package deploy is the rolling deploy behind HAProxy (make deploy-test):
// replicas of the real server (internal/chaos/cluster) on the throwaway
// PostgreSQL of .ci/with-postgres, behind an HAProxy configured as
// docs/deploying.md recommends, under a steady load (internal/chaos/workload)
// through the balancer; round after round each replica in turn is drained
// (SIGTERM), stopped and started on a new binary. Its report times each
// step, compares the rounds' throughput with the steady stretches around
// them, counts every request and every operation's final outcome, and
// audits the history; the run fails on any failed request or anomaly. It
// is not the chaos run (internal/chaos): no nemesis plays here, the only
// faults are the deploys themselves.
package deploy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/chaos/cluster"
	"github.com/petstore/petstore/internal/chaos/workload"
	"github.com/petstore/petstore/internal/check"
	"github.com/petstore/petstore/internal/history"
	"github.com/petstore/petstore/internal/pgtest"
)

// recommendedDrain is the shortest PETSTORE_SHUTDOWN_DELAY that the
// recommended checks (defaultLB) leave a margin in: they take a draining
// replica out within inter + (fall-1) × fastinter (0.75 s), plus a check's
// own time (docs/deploying.md).
const recommendedDrain = 2 * time.Second

// faultDeploy names a rolling deploy's step in the history: one replica
// drained, stopped and started again on a new binary.
const faultDeploy = "deploy"

// Config is deploy's flags.
type Config struct {
	replicas      int
	rounds        int
	steady        time.Duration // load with no deploy: before, between and after the rounds
	shutdownDelay time.Duration
	waitUp        bool // wait for the balancer to put a replica back before draining the next
	out           string
	haproxy       string
	workload.Settings
	lb  lbConfig
	opt check.Options
}

// Register declares deploy's flags on fs, with their defaults (the
// balancer's are the recommended ones).
func (c *Config) Register(fs *flag.FlagSet) {
	c.lb = defaultLB
	fs.IntVar(&c.replicas, "replicas", 2, "replicas behind the balancer")
	fs.IntVar(&c.rounds, "rounds", 3, "rolling rounds: each replica in turn drained, stopped and started on a new binary")
	fs.DurationVar(&c.steady, "steady", 10*time.Second, "load with no deploy before, between and after the rounds: the steady state the rounds are measured against")
	fs.DurationVar(&c.shutdownDelay, "shutdown-delay", recommendedDrain, "the replicas' -shutdown-delay (drain)")
	fs.BoolVar(&c.waitUp, "wait-up", true, "drain the next replica only once the balancer has put the last one back")
	fs.StringVar(&c.out, "out", "bin/deploy", "directory for the history, the final state, the replicas' and HAProxy's logs and its configuration")
	fs.StringVar(&c.haproxy, "haproxy", "haproxy", "the HAProxy binary")
	c.Settings.Register(fs, &c.opt)
	lbFlags(fs, &c.lb)
}

// Validate checks the parsed flags.
func (c *Config) Validate() error {
	switch {
	case c.replicas < 2 || c.replicas > 8:
		return errors.New("replicas: want 2 to 8 (one is drained at a time)")
	case c.rounds < 1 || c.rounds > 20:
		return errors.New("rounds: want 1 to 20")
	case c.steady < time.Second || c.steady > 10*time.Minute:
		return errors.New("steady: want 1s to 10m")
	case c.shutdownDelay < 0 || c.shutdownDelay > time.Minute:
		return errors.New("shutdown-delay: want 0 to 1m")
	}
	if err := c.Settings.Validate(); err != nil {
		return err
	}
	c.opt.MinFaults = c.rounds * c.replicas
	return c.lb.validate()
}

// lbFlags are the balancer's settings, defaulting to the recommended ones.
func lbFlags(fs *flag.FlagSet, lb *lbConfig) {
	fs.DurationVar(&lb.Inter, "check-inter", lb.Inter, "HAProxy: health check interval (inter)")
	fs.DurationVar(&lb.FastInter, "check-fastinter", lb.FastInter, "HAProxy: check interval while a server changes state (fastinter; 0: inter)")
	fs.DurationVar(&lb.DownInter, "check-downinter", lb.DownInter, "HAProxy: check interval while a server is down (downinter; 0: inter)")
	fs.IntVar(&lb.Fall, "check-fall", lb.Fall, "HAProxy: failed checks that take a server out (fall)")
	fs.IntVar(&lb.Rise, "check-rise", lb.Rise, "HAProxy: good checks that put it back (rise)")
	fs.DurationVar(&lb.Check, "timeout-check", lb.Check, "HAProxy: timeout check")
	fs.IntVar(&lb.Retries, "retries", lb.Retries, "HAProxy: retries")
	fs.StringVar(&lb.RetryOn, "retry-on", lb.RetryOn, "HAProxy: retry-on keywords, space-separated")
	fs.BoolVar(&lb.Redispatch, "redispatch", lb.Redispatch, "HAProxy: option redispatch 1 (every retry to another server)")
	fs.BoolVar(&lb.PostL7Retry, "post-l7-retry", lb.PostL7Retry, "HAProxy: let retry-on retry a POST beyond a connection failure (unsafe for keyless creates)")
	fs.StringVar(&lb.Reuse, "http-reuse", lb.Reuse, "HAProxy: http-reuse (never, safe, aggressive, always)")
	fs.DurationVar(&lb.Connect, "timeout-connect", lb.Connect, "HAProxy: timeout connect")
	fs.DurationVar(&lb.Server, "timeout-server", lb.Server, "HAProxy: timeout server")
	fs.DurationVar(&lb.Client, "timeout-client", lb.Client, "HAProxy: timeout client")
	fs.DurationVar(&lb.KeepAlive, "timeout-keep-alive", lb.KeepAlive, "HAProxy: timeout http-keep-alive (the clients' idle connections: above their own idle timeout, the workload's 30s, Go's default 90s)")
}

// Bound is how long the run may take, whatever happens: each step at most
// its drain and a minute.
func (c *Config) Bound() time.Duration {
	return time.Duration(c.rounds+1)*c.steady + time.Duration(c.rounds*c.replicas)*(c.shutdownDelay+time.Minute) + 5*time.Minute
}

// rollout is one deploy run's moving parts.
type rollout struct {
	cfg      Config
	logf     func(format string, args ...any)
	h        *history.Writer
	lb       *haproxy
	replicas []*cluster.Replica
	bins     []string // bins[i] is version deploy-i
}

// Run is the rolling deploy; everything it starts is stopped when it
// returns. It reports whether the run passed: no request failed, the audit
// found nothing, every step was made. Its tables go to stdout, its log to
// stderr.
func Run(ctx context.Context, cfg Config, stdout, stderr io.Writer) (bool, error) {
	wall := time.Now()
	ro := &rollout{cfg: cfg, logf: func(format string, args ...any) { fmt.Fprintf(stderr, "deploy: "+format+"\n", args...) }}
	dbURL := os.Getenv(pgtest.EnvURL)
	if dbURL == "" {
		return false, fmt.Errorf("%s is not set: run under .ci/with-postgres (make deploy-test)", pgtest.EnvURL)
	}
	hapath, err := exec.LookPath(cfg.haproxy)
	if err != nil {
		return false, fmt.Errorf("%w: install HAProxy (apt-get install haproxy)", err)
	}
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return false, err
	}
	tmp, err := os.MkdirTemp("", "petstore-deploy-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)
	if ro.bins, err = buildVersions(ctx, tmp, cfg.rounds+1); err != nil {
		return false, err
	}
	key, _, err := apikey.Generate()
	if err != nil {
		return false, err
	}
	defer func() {
		for _, r := range ro.replicas {
			r.Close()
		}
	}()
	// The balancer (on loopback) is the proxy whose X-Forwarded-For names
	// the client for the throttle of wrong keys, as docs/deploying.md
	// recommends.
	env := cluster.Env("PETSTORE_API_KEYS="+key, "PETSTORE_DATABASE_URL="+dbURL, "PETSTORE_TRUSTED_PROXIES=127.0.0.1")
	ro.replicas, err = cluster.StartReplicas(ctx, cfg.replicas, ro.bins[0], env, cfg.out, cfg.shutdownDelay, false)
	if err != nil {
		return false, err
	}
	servers := make([]lbServer, len(ro.replicas))
	for i, r := range ro.replicas {
		servers[i] = lbServer{r.Name(), r.Addr()}
	}
	if ro.lb, err = startHAProxy(ctx, hapath, tmp, filepath.Join(cfg.out, "haproxy.log"), cfg.lb, servers); err != nil {
		return false, err
	}
	defer ro.lb.stop()
	if err := copyFile(filepath.Join(tmp, "haproxy.cfg"), filepath.Join(cfg.out, "haproxy.cfg")); err != nil {
		return false, err
	}
	for _, r := range ro.replicas {
		if _, err := ro.lb.waitStatus(ctx, r.Name(), "UP", 30*time.Second); err != nil {
			return false, err
		}
	}
	ro.logf("%d replicas (%s) behind HAProxy on %s, drain %v; %d rounds; history in %s",
		len(ro.replicas), strings.Join(serverList(servers), " "), ro.lb.addr, cfg.shutdownDelay, cfg.rounds, cfg.out)
	res, err := ro.run(ctx, key)
	if err != nil {
		if ro.h != nil {
			ro.h.Close()
		}
		return false, err
	}
	return ro.finish(ctx, dbURL, res, wall, stdout)
}

func serverList(servers []lbServer) []string {
	out := make([]string, len(servers))
	for i, s := range servers {
		out[i] = s.Name + "=" + s.Addr
	}
	return out
}

// runResult is what the load and the rounds left behind.
type runResult struct {
	steps   []step
	tally   *workload.Tally
	phases  []phase
	loadEnd int64 // history time
	backend map[string]string
}

// run loads the service through the balancer, steady stretches and rounds
// in turn; it returns once the load has ended.
func (ro *rollout) run(ctx context.Context, key string) (*runResult, error) {
	start := time.Now()
	h, err := history.CreateFile(filepath.Join(ro.cfg.out, "history.jsonl"), start)
	if err != nil {
		return nil, err
	}
	ro.h = h
	// The clients know one server: the balancer.
	l, err := workload.New(h, []workload.Target{workload.At("lb", ro.lb.addr)}, key, ro.cfg.CreateRate, ro.cfg.ReadRate)
	if err != nil {
		return nil, err
	}
	res := &runResult{tally: &workload.Tally{}}
	l.SetTally(res.tally)

	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	wait := l.Start(ctx, loadCtx, ro.cfg.Settings)

	// The first seconds warm the connections and the getters up.
	warm := start.Add(min(2*time.Second, ro.cfg.steady/4))
	res.steps, res.phases, err = ro.phases(ctx, warm)
	res.loadEnd = h.Now() // before the cancel: whatever it cuts short completes after
	stopLoad()
	wait()
	if err != nil {
		return nil, err
	}
	st, err := ro.lb.stats()
	if err != nil {
		return nil, err
	}
	res.backend = st[lbBackend+"/BACKEND"]
	return res, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// phases alternates steady stretches with rounds (steady, round 1,
// steady, …, round n, steady), so that each round is measured against the
// load around it; round i rolls every replica over, in turn, onto version
// deploy-i. Each round ends with every replica back in the balancer.
func (ro *rollout) phases(ctx context.Context, from time.Time) ([]step, []phase, error) {
	var steps []step
	var steady, rounds phase
	steady.name, rounds.name = "steady, all", "rounds, all"
	all := []phase{}
	stretch := func(name string, p *phase, do func() error) error {
		s := span{start: from}
		err := do()
		from = time.Now()
		s.end = from
		p.spans = append(p.spans, s)
		all = append(all, phase{name: name, spans: []span{s}})
		return err
	}
	for round := 1; ; round++ {
		if err := stretch(fmt.Sprintf("steady %d", round-1), &steady, func() error { return sleepCtx(ctx, ro.cfg.steady) }); err != nil {
			return steps, nil, err
		}
		if round > ro.cfg.rounds {
			break
		}
		err := stretch(fmt.Sprintf("round %d", round), &rounds, func() error {
			s, err := ro.round(ctx, round)
			steps = append(steps, s...)
			return err
		})
		if err != nil {
			return steps, nil, err
		}
	}
	return steps, append(all, steady, rounds), nil
}

// round rolls every replica over, in turn, onto version deploy-i.
func (ro *rollout) round(ctx context.Context, round int) ([]step, error) {
	var steps []step
	for _, r := range ro.replicas {
		s, err := ro.roll(ctx, r, round)
		steps = append(steps, s)
		ro.logf("round %d %s → %s: out %v, exited %v, ready %v, back in %v", round, r.Name(), s.version,
			s.out.Round(time.Millisecond), s.exited.Round(time.Millisecond), s.ready.Round(time.Millisecond), s.in.Round(time.Millisecond))
		if err != nil {
			return steps, fmt.Errorf("round %d, %s: %w", round, r.Name(), err)
		}
	}
	if !ro.cfg.waitUp {
		for _, r := range ro.replicas {
			if _, err := ro.lb.waitStatus(ctx, r.Name(), "UP", 30*time.Second); err != nil {
				return steps, err
			}
		}
	}
	return steps, nil
}

// roll drains r (SIGTERM), waits for it to exit, starts it on the round's
// binary and, with waitUp, waits until the balancer has put it back.
func (ro *rollout) roll(ctx context.Context, r *cluster.Replica, round int) (step, error) {
	s := step{round: round, replica: r.Name(), version: version(round)}
	op := history.Op{Kind: history.Fault, Fault: faultDeploy, Target: r.Name(), Invoke: ro.h.Now()}
	defer func() {
		op.Complete = ro.h.Now()
		ro.h.Add(op)
	}()
	// Watch for the balancer taking it out while it drains.
	t0 := time.Now()
	watch, stopWatch := context.WithCancel(ctx)
	outc := make(chan time.Time, 1)
	go func() {
		t, _ := ro.lb.waitStatus(watch, r.Name(), "DOWN", 5*time.Minute)
		outc <- t
	}()
	stopAndSee := func() {
		stopWatch()
		if t := <-outc; !t.IsZero() {
			s.out = t.Sub(t0)
		}
	}
	if r.Stop() {
		stopAndSee()
		op.Error = "did not exit after SIGTERM"
		return s, fmt.Errorf("%s did not exit within %v of SIGTERM", r.Name(), r.Drain()+cluster.ShutdownBound)
	}
	s.exited = time.Since(t0)
	addr := r.Addr()
	r.SetBinary(ro.bins[round])
	err := r.Start(ctx)
	s.ready = time.Since(t0)
	if err == nil && r.Addr() != addr {
		err = ro.lb.setAddr(r.Name(), r.Addr())
	}
	if err == nil {
		err = checkVersion(r.LogPath(), s.version)
	}
	if err == nil && ro.cfg.waitUp {
		var up time.Time
		if up, err = ro.lb.waitStatus(ctx, r.Name(), "UP", time.Minute); err == nil {
			s.in = up.Sub(t0)
		}
	}
	stopAndSee()
	if err != nil {
		op.Error = err.Error()
	}
	return s, err
}

func version(i int) string { return fmt.Sprintf("deploy-%d", i) }

// buildVersions builds n binaries of ./cmd/petstore into dir, each stamped
// with its version (deploy-0 …): a deploy starts a binary that differs
// from the one it stops. After the first, a build is only a link.
func buildVersions(ctx context.Context, dir string, n int) ([]string, error) {
	bins := make([]string, n)
	for i := range bins {
		bins[i] = filepath.Join(dir, "petstore-"+version(i))
		if err := cluster.Build(ctx, bins[i], "-ldflags", "-X main.version="+version(i)); err != nil {
			return nil, err
		}
	}
	return bins, nil
}

// checkVersion reads the replica's log for its last "listening" line and
// checks that it names the version wanted.
func checkVersion(logPath, want string) error {
	b, err := os.ReadFile(logPath)
	if err != nil {
		return err
	}
	got := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var line struct{ Msg, Version string }
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" {
			got = line.Version
		}
	}
	if got != want {
		return fmt.Errorf("%s: the replica started version %q, want %q", logPath, got, want)
	}
	return nil
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

// finish stops the replicas and the balancer, reads the final state,
// audits the history and prints the tables; it reports whether the run
// passed.
func (ro *rollout) finish(ctx context.Context, dbURL string, res *runResult, wall time.Time, w io.Writer) (bool, error) {
	var stopped sync.WaitGroup
	for _, r := range ro.replicas {
		stopped.Go(func() { r.Stop() }) // each drains: at once, not one after the other
	}
	stopped.Wait()
	ro.lb.stop()
	state, err := cluster.ReadState(ctx, dbURL)
	if err != nil {
		return false, fmt.Errorf("final state: %w", err)
	}
	ops, err := workload.Save(ro.h, ro.cfg.out, state)
	if err != nil {
		return false, err
	}
	audit := workload.Audit(ops, state, ro.cfg.opt)
	fin := finals(ops, res.loadEnd)
	fmt.Fprintf(w, "rolling deploy: %d replicas behind HAProxy, %d rounds, drain %v, %d operations; wall time %v\n",
		len(ro.replicas), ro.cfg.rounds, ro.cfg.shutdownDelay, len(ops), time.Since(wall).Round(time.Second))
	printSteps(w, res.steps, ro.cfg.shutdownDelay)
	fmt.Fprintln(w)
	printPhases(w, byPhase(res.tally.Requests(), res.phases))
	fmt.Fprintln(w)
	workload.PrintByStatus(w, res.tally.Requests())
	fmt.Fprintln(w)
	printFinals(w, fin)
	printLB(w, res.backend)
	fmt.Fprintln(w)
	audit.Print(w)
	failed := failedTotal(fin)
	ok := failed == 0 && audit.OK() && len(res.steps) == ro.cfg.rounds*ro.cfg.replicas
	if ok {
		fmt.Fprintln(w, "deploy: PASS (0 failed requests, audit clean)")
	} else {
		fmt.Fprintf(w, "deploy: FAIL (%d failed requests, audit %s)\n", failed, map[bool]string{true: "clean", false: "not clean"}[audit.OK()])
	}
	return ok, nil
}

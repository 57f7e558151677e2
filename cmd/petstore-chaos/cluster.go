package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/petstore/petstore/internal/chaos/lazyfs"
	"github.com/petstore/petstore/internal/pgtest"
)

// buildServer builds the real binary (./cmd/petstore) at bin, with the
// extra go build flags given (-tags, -ldflags).
func buildServer(ctx context.Context, bin string, flags ...string) error {
	args := append(append([]string{"build", "-trimpath", "-o", bin}, flags...), "./cmd/petstore")
	cmd := exec.CommandContext(ctx, goCmd(), args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build %s: %w", filepath.Base(bin), err)
	}
	return nil
}

// replicaEnv is the replicas' environment: this one without PETSTORE_
// variables, and extra (KEY=value each).
func replicaEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PETSTORE_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

func goCmd() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

// freePort returns a port of 127.0.0.1 that nothing listens on now, below
// the range the kernel draws the local ports of connections from (32768
// and up by default), so that no client connection takes it while a
// replica restarts.
func freePort() (int, error) {
	for range 50 {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", 10000+rand.IntN(22000)))
		if err == nil {
			defer ln.Close()
			return ln.Addr().(*net.TCPAddr).Port, nil
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// replica is one server process, which the nemesis kills, restarts and
// pauses. Its port stays the same across restarts, unless taken meanwhile
// (never when it has a front).
type replica struct {
	name string
	bin  string
	env  []string
	log  *os.File
	// drain is its -shutdown-delay: how long it serves on after SIGTERM,
	// /readyz answering 503.
	drain time.Duration
	// front, if set, is the proxy clients reach it through, which a
	// partition plays on (see addFront).
	front *pgtest.Proxy

	mu     sync.Mutex
	addr   string
	cmd    *exec.Cmd
	exited chan struct{}
}

// addFront puts a proxy between the clients and the replica.
func (r *replica) addFront() error {
	p, err := pgtest.StartProxy(r.Addr())
	if err != nil {
		return err
	}
	r.front = p
	return nil
}

// ClientAddr is where clients reach the replica: its front, if it has one.
func (r *replica) ClientAddr() string {
	if r.front != nil {
		return r.front.Addr()
	}
	return r.Addr()
}

func newReplica(name, bin string, env []string, logPath string) (*replica, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &replica{name: name, bin: bin, env: env, log: f, addr: fmt.Sprintf("127.0.0.1:%d", port)}, nil
}

// startReplicas starts n replicas of bin, named r1 …, in env: each logs
// to its name's file in the directory out, serves on for drain after
// SIGTERM and, if front, is reached through a front of its own (for
// partitions). On an error, it returns those made so far, to be closed.
func startReplicas(ctx context.Context, n int, bin string, env []string, out string, drain time.Duration, front bool) ([]*replica, error) {
	var reps []*replica
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("r%d", i)
		r, err := newReplica(name, bin, env, filepath.Join(out, name+".log"))
		if err != nil {
			return reps, err
		}
		r.drain = drain
		reps = append(reps, r)
		if front {
			if err := r.addFront(); err != nil {
				return reps, err
			}
		}
		if err := r.start(ctx); err != nil {
			return reps, fmt.Errorf("start %s: %w (log: %s)", name, err, r.log.Name())
		}
	}
	return reps, nil
}

// Addr is the replica's host:port.
func (r *replica) Addr() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.addr
}

// start starts the process and waits until it answers /readyz, trying
// another port if its own was taken.
func (r *replica) start(ctx context.Context) error {
	var err error
	for range 3 {
		if err = r.startOnce(ctx); err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		r.kill()
		if r.front != nil {
			// The front proxies to this port: wait for it.
			time.Sleep(time.Second)
			continue
		}
		port, perr := freePort()
		if perr != nil {
			return perr
		}
		r.mu.Lock()
		r.addr = fmt.Sprintf("127.0.0.1:%d", port)
		r.mu.Unlock()
	}
	return err
}

func (r *replica) startOnce(ctx context.Context) error {
	cmd := exec.Command(r.bin, "serve", "-addr", r.Addr(), "-log-format", "json", "-shutdown-delay", r.drain.String())
	cmd.Env = r.env
	cmd.Stdout, cmd.Stderr = r.log, r.log
	// A process group of its own, which a kill ends whole; and killed
	// with this program, however it ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	r.mu.Lock()
	r.cmd, r.exited = cmd, exited
	r.mu.Unlock()
	return waitReady(ctx, "http://"+r.Addr()+"/readyz", exited, 30*time.Second)
}

// waitReady polls url until it answers 200, the process exits, or the
// deadline passes.
func waitReady(ctx context.Context, url string, exited <-chan struct{}, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			return fmt.Errorf("%s exited before it was ready", url)
		case <-ctx.Done():
			return fmt.Errorf("%s: not ready: %w", url, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// kill sends SIGKILL to the replica's process group and waits for it.
func (r *replica) kill() {
	r.signal(syscall.SIGKILL)
	r.mu.Lock()
	exited := r.exited
	r.mu.Unlock()
	if exited != nil {
		<-exited
	}
}

// close stops the replica at once, and its front.
func (r *replica) close() {
	r.kill()
	if r.front != nil {
		r.front.Close()
	}
	r.log.Close()
}

// shutdownBound is how long a replica may take to exit after its drain:
// the server's own shutdown timeout (10 s) and a margin.
const shutdownBound = 15 * time.Second

// stop ends the replica gracefully (SIGCONT, SIGTERM: it drains, then
// shuts down), or kills it after its drain and shutdownBound; killed
// reports the latter.
func (r *replica) stop() (killed bool) {
	r.signal(syscall.SIGCONT)
	r.signal(syscall.SIGTERM)
	r.mu.Lock()
	exited := r.exited
	r.mu.Unlock()
	if exited == nil {
		return false
	}
	select {
	case <-exited:
		return false
	case <-time.After(r.drain + shutdownBound):
		r.kill()
		return true
	}
}

// signal sends sig to the replica's process group, if it runs.
func (r *replica) signal(sig syscall.Signal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	select {
	case <-r.exited:
		return
	default:
	}
	syscall.Kill(-r.cmd.Process.Pid, sig)
}

// postgres restarts the throwaway cluster of .ci/with-postgres, which
// exports where it is (PG_BIN, PGDATA, PG_LOG, PG_OPTS); the run moves it
// onto a lazy filesystem for power cuts (restart with lazy).
type postgres struct {
	bin, data, log, opts string

	backing string     // the data directory under the lazy one
	lazy    *lazyfs.FS // nil unless restarted with lazy
}

func postgresFromEnv() (*postgres, error) {
	pg := &postgres{bin: os.Getenv("PG_BIN"), data: os.Getenv("PGDATA"), log: os.Getenv("PG_LOG"), opts: os.Getenv("PG_OPTS")}
	if pg.bin == "" || pg.data == "" || pg.log == "" || pg.opts == "" {
		return nil, errors.New("PG_BIN, PGDATA, PG_LOG and PG_OPTS are not all set: run under .ci/with-postgres (make chaos)")
	}
	return pg, nil
}

// pgCtl runs pg_ctl as the cluster's owner: the postgres user when this
// runs as root (as .ci/with-postgres does).
func (pg *postgres) pgCtl(ctx context.Context, args ...string) error {
	name, full := filepath.Join(pg.bin, "pg_ctl"), append([]string{"-D", pg.data}, args...)
	if os.Geteuid() == 0 {
		full = append([]string{"-u", "postgres", "--", name}, full...)
		name = "runuser"
	}
	out, err := exec.CommandContext(ctx, name, full...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl %s: %w: %s", strings.Join(args, " "), err, strings.ReplaceAll(strings.TrimSpace(string(out)), "\n", " "))
	}
	return nil
}

// restart stops the cluster cleanly and starts it again with fsync as
// given, on a lazy filesystem if lazy: its data directory is mounted at a
// sibling directory, where PostgreSQL runs from then on.
func (pg *postgres) restart(ctx context.Context, fsync, lazy bool) error {
	if err := pg.pgCtl(ctx, "-m", "fast", "-w", "stop"); err != nil {
		return err
	}
	pg.opts = setting(pg.opts, "fsync", map[bool]string{true: "on", false: "off"}[fsync])
	if lazy {
		mnt := pg.data + "-lazy"
		var st syscall.Stat_t
		if err := syscall.Stat(pg.data, &st); err != nil {
			return err
		}
		if err := os.Mkdir(mnt, 0o700); err != nil {
			return err
		}
		if err := os.Chown(mnt, int(st.Uid), int(st.Gid)); err != nil {
			return err
		}
		fs, err := lazyfs.Mount(pg.data, mnt)
		if err != nil {
			return err
		}
		pg.backing, pg.data, pg.lazy = pg.data, mnt, fs
	}
	return pg.start(ctx)
}

// setting returns PostgreSQL's command-line options with -c name=value,
// in place of the option's value if it is there.
func setting(opts, name, value string) string {
	fields := strings.Fields(opts)
	for i, f := range fields {
		if strings.HasPrefix(f, name+"=") && i > 0 && fields[i-1] == "-c" {
			fields[i] = name + "=" + value
			return strings.Join(fields, " ")
		}
	}
	return opts + " -c " + name + "=" + value
}

// close stops a cluster on a lazy filesystem and unmounts it, leaving the
// data directory where .ci/with-postgres made it (and removes it).
func (pg *postgres) close() {
	if pg.lazy == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pg.crash(ctx)
	pg.lazy.Sync()
	if err := pg.lazy.Unmount(); err == nil {
		os.Remove(pg.data)
	}
	pg.data, pg.lazy = pg.backing, nil
}

// crash stops the cluster at once (immediate mode: its processes quit
// without a checkpoint; the start replays the WAL). The operating system
// keeps every write they made, fsynced or not.
func (pg *postgres) crash(ctx context.Context) error {
	return pg.pgCtl(ctx, "-m", "immediate", "-w", "stop")
}

// powerCut stops the cluster at once and drops every write its files did
// not fsync (the lazy filesystem's cache): what a machine losing power
// loses. It returns the bytes dropped.
func (pg *postgres) powerCut(ctx context.Context) (int64, error) {
	if pg.lazy == nil {
		return 0, errors.New("power cut: the cluster is not on a lazy filesystem")
	}
	if err := pg.crash(ctx); err != nil {
		return 0, err
	}
	return pg.lazy.Drop(), nil
}

func (pg *postgres) start(ctx context.Context) error {
	err := pg.pgCtl(ctx, "-l", pg.log, "-w", "-t", "60", "-o", pg.opts, "start")
	if err != nil {
		if b, rerr := os.ReadFile(pg.log); rerr == nil {
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			err = fmt.Errorf("%w; the log ends: %s", err, strings.Join(lines[max(0, len(lines)-8):], " | "))
		}
	}
	return err
}

// describe says how the cluster runs: its fsync and synchronous_commit
// settings, and whether on a lazy filesystem.
func (pg *postgres) describe() string {
	d := "fsync=on"
	if strings.Contains(pg.opts, "fsync=off") {
		d = "fsync=off"
	}
	if pg.lazy != nil {
		d += ", on lazyfs"
	}
	return d
}

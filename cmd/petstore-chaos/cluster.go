package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// buildServer builds the real binary (./cmd/petstore) into dir, with the
// chaosbroken tag when broken is set.
func buildServer(ctx context.Context, dir string, broken bool) (string, error) {
	bin := filepath.Join(dir, "petstore")
	args := []string{"build", "-trimpath", "-o", bin}
	if broken {
		args = append(args, "-tags", "chaosbroken")
	}
	cmd := exec.CommandContext(ctx, goCmd(), append(args, "./cmd/petstore")...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build the server: %w", err)
	}
	return bin, nil
}

func goCmd() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

// freePort returns a port of 127.0.0.1 that nothing listens on now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// replica is one server process, which the nemesis kills, restarts and
// pauses. Its port stays the same across restarts, unless taken meanwhile.
type replica struct {
	name string
	bin  string
	env  []string
	log  *os.File
	// shutdownDelay is the server's -shutdown-delay: how long it drains
	// after SIGTERM (0, the default, for none).
	shutdownDelay time.Duration

	mu     sync.Mutex
	addr   string
	cmd    *exec.Cmd
	exited chan struct{}
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
	cmd := exec.Command(r.bin, "serve", "-addr", r.Addr(), "-log-format", "json", "-shutdown-delay", r.shutdownDelay.String())
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

// stop ends the replica gracefully (SIGCONT, SIGTERM), or kills it after
// a few seconds.
func (r *replica) stop() {
	r.signal(syscall.SIGCONT)
	r.signal(syscall.SIGTERM)
	r.mu.Lock()
	exited := r.exited
	r.mu.Unlock()
	if exited == nil {
		return
	}
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		r.kill()
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
// exports where it is (PG_BIN, PGDATA, PG_LOG, PG_OPTS).
type postgres struct {
	bin, data, log, opts string
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
		return fmt.Errorf("pg_ctl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// crash stops the cluster at once, as a power cut would (immediate mode:
// no checkpoint; the start replays the WAL).
func (pg *postgres) crash(ctx context.Context) error {
	return pg.pgCtl(ctx, "-m", "immediate", "-w", "stop")
}

func (pg *postgres) start(ctx context.Context) error {
	return pg.pgCtl(ctx, "-l", pg.log, "-w", "-t", "60", "-o", pg.opts, "start")
}

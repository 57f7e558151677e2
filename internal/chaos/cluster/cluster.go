// Package cluster starts and stops the processes that a chaos run
// (internal/chaos) and a rolling deploy (internal/chaos/deploy) are made
// of: replicas of the real server, built from ./cmd/petstore, each on a
// port of its own and, for partitions, behind a front proxy; and the
// throwaway PostgreSQL cluster of .ci/with-postgres, which it restarts,
// crashes and cuts the power of (on a lazy filesystem), and whose final
// state it reads. It is not the fault schedule (internal/chaos/nemesis),
// which plays on these processes, nor the clients (internal/chaos/workload),
// which send to them; it knows neither.
package cluster

import (
	"context"
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

	"github.com/petstore/petstore/internal/pgtest"
)

// Build builds the real binary (./cmd/petstore) at bin, with the
// extra go build flags given (-tags, -ldflags).
func Build(ctx context.Context, bin string, flags ...string) error {
	args := append(append([]string{"build", "-trimpath", "-o", bin}, flags...), "./cmd/petstore")
	cmd := exec.CommandContext(ctx, goCmd(), args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build %s: %w", filepath.Base(bin), err)
	}
	return nil
}

// Env is the replicas' environment: this one without PETSTORE_
// variables, and extra (KEY=value each).
func Env(extra ...string) []string {
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

// FreePort returns a port of 127.0.0.1 that nothing listens on now, below
// the range the kernel draws the local ports of connections from (32768
// and up by default), so that no client connection takes it while a
// replica restarts.
func FreePort() (int, error) {
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

// Replica is one server process, which the nemesis kills, restarts and
// pauses. Its port stays the same across restarts, unless taken meanwhile
// (never when it has a front).
type Replica struct {
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
func (r *Replica) addFront() error {
	p, err := pgtest.StartProxy(r.Addr())
	if err != nil {
		return err
	}
	r.front = p
	return nil
}

// Name is the replica's name: r1, r2 ….
func (r *Replica) Name() string { return r.name }

// Front is the proxy clients reach the replica through; nil if it has none.
func (r *Replica) Front() *pgtest.Proxy { return r.front }

// Drain is the replica's -shutdown-delay.
func (r *Replica) Drain() time.Duration { return r.drain }

// LogPath is the file the replica logs to.
func (r *Replica) LogPath() string { return r.log.Name() }

// SetBinary makes the next Start run bin (a deploy's new version); call it
// while the replica is stopped.
func (r *Replica) SetBinary(bin string) { r.bin = bin }

// ClientAddr is where clients reach the replica: its front, if it has one.
func (r *Replica) ClientAddr() string {
	if r.front != nil {
		return r.front.Addr()
	}
	return r.Addr()
}

func newReplica(name, bin string, env []string, logPath string) (*Replica, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Replica{name: name, bin: bin, env: env, log: f, addr: fmt.Sprintf("127.0.0.1:%d", port)}, nil
}

// StartReplicas starts n replicas of bin, named r1 …, in env: each logs
// to its name's file in the directory out, serves on for drain after
// SIGTERM and, if front, is reached through a front of its own (for
// partitions). On an error, it returns those made so far, to be closed.
func StartReplicas(ctx context.Context, n int, bin string, env []string, out string, drain time.Duration, front bool) ([]*Replica, error) {
	var reps []*Replica
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
		if err := r.Start(ctx); err != nil {
			return reps, fmt.Errorf("start %s: %w (log: %s)", name, err, r.log.Name())
		}
	}
	return reps, nil
}

// Addr is the replica's own host:port.
func (r *Replica) Addr() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.addr
}

// Start starts the process and waits until it answers /readyz, trying
// another port if its own was taken.
func (r *Replica) Start(ctx context.Context) error {
	var err error
	for range 3 {
		if err = r.startOnce(ctx); err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		r.Kill()
		if r.front != nil {
			// The front proxies to this port: wait for it.
			time.Sleep(time.Second)
			continue
		}
		port, perr := FreePort()
		if perr != nil {
			return perr
		}
		r.mu.Lock()
		r.addr = fmt.Sprintf("127.0.0.1:%d", port)
		r.mu.Unlock()
	}
	return err
}

func (r *Replica) startOnce(ctx context.Context) error {
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

// Kill sends SIGKILL to the replica's process group and waits for it.
func (r *Replica) Kill() {
	r.Signal(syscall.SIGKILL)
	r.mu.Lock()
	exited := r.exited
	r.mu.Unlock()
	if exited != nil {
		<-exited
	}
}

// Close stops the replica at once, and its front.
func (r *Replica) Close() {
	r.Kill()
	if r.front != nil {
		r.front.Close()
	}
	r.log.Close()
}

// ShutdownBound is how long a replica may take to exit after its drain:
// the server's own shutdown timeout (10 s) and a margin.
const ShutdownBound = 15 * time.Second

// Stop ends the replica gracefully (SIGCONT, SIGTERM: it drains, then
// shuts down), or kills it after its drain and ShutdownBound; killed
// reports the latter.
func (r *Replica) Stop() (killed bool) {
	r.Signal(syscall.SIGCONT)
	r.Signal(syscall.SIGTERM)
	r.mu.Lock()
	exited := r.exited
	r.mu.Unlock()
	if exited == nil {
		return false
	}
	select {
	case <-exited:
		return false
	case <-time.After(r.drain + ShutdownBound):
		r.Kill()
		return true
	}
}

// Signal sends sig to the replica's process group, if it runs.
func (r *Replica) Signal(sig syscall.Signal) {
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

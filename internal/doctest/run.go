package doctest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/petstore/petstore/internal/syncbuf"
)

// Runner runs the marked blocks of Markdown files, each with bash -euo
// pipefail as written, in a fresh temporary directory (TMPDIR points there
// too, and it is removed afterwards), or in the repository for blocks
// marked repo.
//
// A block that mentions localhost:8080 gets a fresh server of its own: the
// server binary started as the file's last "doctest serve" block says
// ([NAME=value ...] make run, which is `petstore serve -log-format=text
// -shutdown-delay=0`),
// on a free loopback port that replaces localhost:8080 in the block. Ports a
// block names in ports= are replaced by free ones. A block passes when
// bash exits 0 and its output has the lines Expect wants.
type Runner struct {
	Root     string    // the repository
	Petstore string    // the server binary
	Out      io.Writer // progress, and each failure with its output
	// Postgres is false when the machine has no PostgreSQL binaries: blocks
	// marked postgres are then skipped with a notice, or fail when
	// RequirePostgres is set (CI).
	Postgres        bool
	RequirePostgres bool
	Timeout         time.Duration // for one block; 0 means 3 minutes
}

// Result counts the blocks.
type Result struct{ Passed, Failed, Skipped int }

func (r Result) String() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", r.Passed, r.Failed, r.Skipped)
}

// PostgresAvailable reports whether PostgreSQL's initdb is installed where
// Debian puts it, which is what the documented walkthrough uses.
func PostgresAvailable() bool {
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	return len(m) > 0
}

var serveLine = regexp.MustCompile(`^((?:[A-Z_][A-Z0-9_]*=[^ \t'"$]* +)*)make run$`)

// Run runs the blocks of docs in order.
func (r *Runner) Run(ctx context.Context, docs []*Doc) Result {
	var res Result
	for _, d := range docs {
		var serveEnv []string
		haveServe := false
		for _, b := range d.Blocks {
			m := b.Marker
			switch {
			case m == nil:
				r.fail(&res, b, errors.New("no doctest marker (make lint says so too)"), "")
				continue
			case m.Skip != "":
				continue // documented, not counted: nothing was attempted
			case m.Serve:
				env, err := parseServe(b.Text)
				if err != nil {
					r.fail(&res, b, err, "")
					continue
				}
				serveEnv, haveServe = env, true
				continue
			case m.Postgres && !r.Postgres:
				if r.RequirePostgres {
					r.fail(&res, b, errors.New("needs PostgreSQL, and it is required here (CI): no /usr/lib/postgresql/*/bin/initdb"), "")
				} else {
					res.Skipped++
					fmt.Fprintf(r.Out, "SKIP %s: needs PostgreSQL (apt-get install postgresql)\n", b)
				}
				continue
			}
			if strings.Contains(b.Text, "localhost:8080") && !haveServe {
				r.fail(&res, b, errors.New("uses localhost:8080, but no <!-- doctest serve --> block above it in the file says how its server starts"), "")
				continue
			}
			start := time.Now()
			out, err := r.runBlock(ctx, b, serveEnv)
			if err != nil {
				r.fail(&res, b, err, out)
				continue
			}
			res.Passed++
			fmt.Fprintf(r.Out, "PASS %s (%.1fs)\n", b, time.Since(start).Seconds())
		}
	}
	return res
}

func (r *Runner) fail(res *Result, b Block, err error, out string) {
	res.Failed++
	fmt.Fprintf(r.Out, "FAIL %s: %v\n", b, err)
	if out != "" {
		fmt.Fprintf(r.Out, "---- output of %s\n%s---- end of output\n", b, out)
	}
}

// parseServe reads a serve block: one line, "[NAME=value ...] make run".
func parseServe(text string) ([]string, error) {
	line := strings.TrimSpace(text)
	sub := serveLine.FindStringSubmatch(line)
	if sub == nil {
		return nil, fmt.Errorf("a doctest serve block is one line, [NAME=value ...] make run; got %q", line)
	}
	return strings.Fields(sub[1]), nil
}

// runBlock runs one block; the output returned is its stdout and stderr
// interleaved, and the server's log when it had one.
func (r *Runner) runBlock(ctx context.Context, b Block, serveEnv []string) (string, error) {
	timeout := r.Timeout
	if timeout == 0 {
		timeout = 3 * time.Minute
	}
	if b.Marker.Timeout > 0 {
		timeout = b.Marker.Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	dir, err := os.MkdirTemp("", "doctest-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	// World-readable, so that a block may hand a directory under it to
	// another user (initdb runs as postgres).
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	env := append(cleanEnv(), "TMPDIR="+dir)

	script := b.Text
	for _, p := range b.Marker.Ports {
		free, err := freePort()
		if err != nil {
			return "", err
		}
		script = regexp.MustCompile(`\b`+p+`\b`).ReplaceAllString(script, free)
	}
	var serverLog *syncbuf.Buffer
	if strings.Contains(script, "localhost:8080") {
		srv, err := r.startServer(ctx, dir, append(env, serveEnv...))
		if err != nil {
			return srv.log(), err
		}
		serverLog = srv.out
		defer srv.stop()
		script = strings.ReplaceAll(script, "localhost:8080", srv.addr)
	}

	var stdout bytes.Buffer
	all := &syncbuf.Buffer{}
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	if cmd.Dir, err = r.workDir(b, dir); err != nil {
		return "", err
	}
	cmd.Env = env
	cmd.Stdin = nil
	cmd.Stdout = io.MultiWriter(&stdout, all)
	cmd.Stderr = all
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second // a background child holding the pipes
	runErr := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what the block left running
	}
	out := all.String()
	if serverLog != nil {
		out += "---- server log\n" + serverLog.String()
	}
	if ctx.Err() != nil {
		return out, fmt.Errorf("did not finish within %s", timeout)
	}
	if runErr != nil {
		return out, fmt.Errorf("bash: %v", runErr)
	}
	if err := Expect(b.Text, stdout.String()); err != nil {
		return out, err
	}
	return out, nil
}

// workDir is where a block runs: the fresh directory dir, the repository
// (repo), or a copy of its working tree made in dir (copy).
func (r *Runner) workDir(b Block, dir string) (string, error) {
	switch {
	case b.Marker.Repo:
		return r.Root, nil
	case b.Marker.Copy:
		work := filepath.Join(dir, "repo")
		if err := copyTree(r.Root, work); err != nil {
			return "", fmt.Errorf("copy the repository: %w", err)
		}
		return work, nil
	}
	return dir, nil
}

type server struct {
	cmd  *exec.Cmd
	addr string
	out  *syncbuf.Buffer
	done chan struct{} // closed when the process has exited
}

func (s *server) log() string {
	if s == nil || s.out == nil {
		return ""
	}
	return "---- server log\n" + s.out.String()
}

var listening = regexp.MustCompile(`msg=listening addr=(\S+)`)

// startServer starts `petstore serve -log-format=text -shutdown-delay=0`
// (what make run runs) on a free loopback
// port and waits until /healthz answers.
func (r *Runner) startServer(ctx context.Context, dir string, env []string) (*server, error) {
	s := &server{out: &syncbuf.Buffer{}, done: make(chan struct{})}
	pr, pw := io.Pipe()
	s.cmd = exec.Command(r.Petstore, "serve", "-log-format=text", "-shutdown-delay=0")
	s.cmd.Dir = dir
	s.cmd.Env = append(env, "PETSTORE_ADDR=127.0.0.1:0")
	s.cmd.Stdout = pw
	s.cmd.Stderr = s.out
	if err := s.cmd.Start(); err != nil {
		close(s.done)
		return s, err
	}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			s.out.Write([]byte(line + "\n"))
			if m := listening.FindStringSubmatch(line); m != nil {
				select {
				case addrc <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	go func() { _ = s.cmd.Wait(); pw.Close(); close(s.done) }()

	deadline := time.NewTimer(15 * time.Second)
	defer deadline.Stop()
	select {
	case s.addr = <-addrc:
	case <-s.done:
		return s, errors.New("the server exited before it listened (its log follows)")
	case <-deadline.C:
		s.stop()
		return s, errors.New("the server did not log its listen address within 15s")
	case <-ctx.Done():
		s.stop()
		return s, ctx.Err()
	}
	for {
		resp, err := http.Get("http://" + s.addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case <-s.done:
			return s, fmt.Errorf("the server on %s exited before it was healthy (its log follows)", s.addr)
		case <-deadline.C:
			s.stop()
			return s, fmt.Errorf("the server on %s was not healthy within 15s", s.addr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop ends the server as an operator would (SIGTERM), then for good.
func (s *server) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// cleanEnv is the environment without the server's variables, so that a
// block sees only what it sets.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PETSTORE_") || strings.HasPrefix(kv, "TMPDIR=") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// freePort is a loopback port nothing listens on (the kernel's choice; it
// may be taken again before the block uses it, which is then a failure).
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	_, port, err := net.SplitHostPort(ln.Addr().String())
	return port, err
}

package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/syncbuf"
)

// startProcess starts cmd and waits for the JSON line on its stdout whose
// msg is ready, returning that line's addr. The process gets SIGTERM when the test ends (SIGKILL 20 s
// later); end sends it at once, waits for the process, and returns the addr
// of its last JSON line.
func startProcess(t *testing.T, cmd *exec.Cmd, ready string) (addr string, end func() string) {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	last := make(chan string, 1)
	go func() {
		type line struct{ Msg, Addr string }
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var l line
			if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == ready {
				found <- l.Addr
				break
			}
		}
		var final []byte // lines after it, an access log perhaps: only the last is parsed
		for sc.Scan() {
			final = append(final[:0], sc.Bytes()...)
		}
		io.Copy(io.Discard, stdout)
		var l line
		json.Unmarshal(final, &l)
		last <- l.Addr
	}()
	var once sync.Once
	result := ""
	end = func() string {
		once.Do(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case result = <-last:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				result = <-last
			}
			cmd.Wait()
		})
		return result
	}
	t.Cleanup(func() { end() })
	select {
	case addr = <-found:
		return addr, end
	case <-time.After(60 * time.Second):
		t.Fatalf("%s: no %q line within 60s; stderr: %s", cmd.Path, ready, stderr)
		return "", nil
	}
}

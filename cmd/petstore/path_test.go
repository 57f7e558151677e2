package main

import (
	"path"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// serve's arguments stay in cmd/petstore until the server starts (issue 53
// item 5): while the server serves, the goroutine that called run holds
// only cmd/petstore's frames above server.Run, which gets the Config the
// arguments make. internal/cli looks the command up and parses the flags,
// and returns; it is not on the way. Frames are placed by their
// file's directory: a closure inlined into its caller is named after the
// caller's package.
func TestServeArgumentsPath(t *testing.T) {
	_, _, _, stop := startServer(t, map[string]string{})
	defer stop()
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	for _, g := range strings.Split(string(buf), "\n\n") {
		frames := stackFrames(g)
		to := slices.IndexFunc(frames, func(f frame) bool { return f.fn == "github.com/petstore/petstore/internal/server.Run" })
		from := slices.IndexFunc(frames, func(f frame) bool { return strings.HasSuffix(f.file, "/cmd/petstore/run.go") })
		if from < 0 || to < 0 || to > from {
			continue
		}
		root := strings.TrimSuffix(frames[from].file, "cmd/petstore/run.go")
		var dirs []string
		for _, f := range frames[to+1 : from+1] {
			if d := path.Dir(strings.TrimPrefix(f.file, root)); !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
		if want := []string{"cmd/petstore"}; !slices.Equal(dirs, want) {
			t.Errorf("from run to server.Run the arguments pass through %v, want %v:\n%s", dirs, want, g)
		}
		return
	}
	t.Fatalf("no goroutine runs run and server.Run:\n%s", buf)
}

// frame is one call of a goroutine's trace: its function, without
// arguments, and its file.
type frame struct{ fn, file string }

// stackFrames is one goroutine's trace, innermost call first.
func stackFrames(g string) []frame {
	var fs []frame
	lines := strings.Split(g, "\n")
	for i := 0; i+1 < len(lines); i++ {
		fn, file := lines[i], lines[i+1]
		if !strings.HasPrefix(file, "\t") || strings.HasPrefix(fn, "\t") || strings.HasPrefix(fn, "created by ") {
			continue
		}
		if j := strings.LastIndexByte(fn, '('); j > 0 {
			fn = fn[:j]
		}
		file, _, _ = strings.Cut(strings.TrimPrefix(file, "\t"), ":")
		fs = append(fs, frame{fn, file})
		i++
	}
	return fs
}

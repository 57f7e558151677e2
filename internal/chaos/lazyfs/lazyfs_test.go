package lazyfs

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// TestCacheModel drives the cache with random writes, truncations and
// flushes, against a plain byte slice for the file and another for what
// was last flushed: a read sees the file, a flush makes the backing file
// the file, and dropping the cache leaves the last flush.
func TestCacheModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		f, err := os.Create(filepath.Join(t.TempDir(), "f"))
		if err != nil {
			t.Fatal(err)
		}
		initial := make([]byte, rng.IntN(3*pageSize))
		for i := range initial {
			initial[i] = byte(rng.IntN(256))
		}
		f.Write(initial)
		file, synced := bytes.Clone(initial), bytes.Clone(initial)
		c := newCache(int64(len(initial)))
		for step := range 30 {
			switch rng.IntN(6) {
			case 0, 1, 2:
				off := rng.IntN(4 * pageSize)
				data := make([]byte, 1+rng.IntN(2*pageSize))
				for i := range data {
					data[i] = byte(rng.IntN(256))
				}
				if err := c.write(f, data, int64(off)); err != nil {
					t.Fatal(err)
				}
				if need := off + len(data); need > len(file) {
					file = append(file, make([]byte, need-len(file))...)
				}
				copy(file[off:], data)
			case 3:
				size := rng.IntN(4 * pageSize)
				c.truncate(int64(size))
				if size < len(file) {
					file = file[:size]
				} else {
					file = append(file, make([]byte, size-len(file))...)
				}
			case 4:
				if err := c.flush(f); err != nil {
					t.Fatal(err)
				}
				synced = bytes.Clone(file)
				c = newCache(int64(len(file)))
			case 5:
				c = newCache(int64(len(synced))) // the drop
				file = bytes.Clone(synced)
			}
			got := make([]byte, 7*pageSize)
			n, err := c.read(f, got, 0)
			if err != nil || !bytes.Equal(got[:n], file) {
				t.Fatalf("round %d step %d: read %d bytes (%v), want the file's %d", round, step, n, err, len(file))
			}
			on, _ := os.ReadFile(f.Name())
			if !bytes.Equal(on, synced) {
				t.Fatalf("round %d step %d: the backing file holds %d bytes, not the %d last flushed", round, step, len(on), len(synced))
			}
		}
		f.Close()
	}
}

// mount mounts a lazy filesystem over a fresh directory, or skips the test
// where FUSE cannot mount (not root, no /dev/fuse), except in CI.
func mount(t *testing.T) (*FS, string, string) {
	t.Helper()
	backing, mnt := t.TempDir(), t.TempDir()
	f, err := Mount(backing, mnt)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("FUSE must work in CI (root, /dev/fuse, fuse3): %v", err)
		}
		t.Skipf("FUSE does not mount here: %v", err)
	}
	t.Cleanup(func() {
		if err := f.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	return f, backing, mnt
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, path, s string, fsync bool) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if fsync {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func fsyncDir(t *testing.T, dir string) {
	t.Helper()
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		t.Fatalf("fsync of directory %s: %v", dir, err)
	}
}

// TestDrop: a write not fsynced is read back until the drop, and gone
// after it; an fsynced one stays; fdatasync is an fsync.
func TestDrop(t *testing.T) {
	f, backing, mnt := mount(t)
	writeFile(t, filepath.Join(mnt, "synced"), "kept", true)
	writeFile(t, filepath.Join(mnt, "unsynced"), "lost", false)
	if got := readFile(t, filepath.Join(mnt, "unsynced")); got != "lost" {
		t.Fatalf("before the drop, the unsynced file reads %q", got)
	}
	if got := readFile(t, filepath.Join(backing, "unsynced")); got != "" {
		t.Fatalf("the backing file holds %q before any fsync", got)
	}
	// Appended after an fsync, then fdatasync'd: kept; appended again: lost.
	g, err := os.OpenFile(filepath.Join(mnt, "synced"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	g.WriteString(" and this")
	if err := syscall.Fdatasync(int(g.Fd())); err != nil {
		t.Fatal(err)
	}
	g.WriteString(" but not this")
	g.Close()
	if st, _ := os.Stat(filepath.Join(mnt, "synced")); st.Size() != int64(len("kept and this but not this")) {
		t.Fatalf("size before the drop: %d", st.Size())
	}
	if lost := f.Drop(); lost == 0 {
		t.Error("the drop lost nothing")
	}
	if got := readFile(t, filepath.Join(mnt, "synced")); got != "kept and this" {
		t.Errorf("the synced file reads %q after the drop", got)
	}
	if got := readFile(t, filepath.Join(mnt, "unsynced")); got != "" {
		t.Errorf("the unsynced file reads %q after the drop, want it empty (created, never synced)", got)
	}
}

// TestOSync: a write to a file opened O_DSYNC is durable when it returns.
func TestOSync(t *testing.T) {
	f, _, mnt := mount(t)
	g, err := os.OpenFile(filepath.Join(mnt, "wal"), os.O_WRONLY|os.O_CREATE|syscall.O_DSYNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	g.WriteString("commit")
	g.Close()
	f.Drop()
	if got := readFile(t, filepath.Join(mnt, "wal")); got != "commit" {
		t.Errorf("an O_DSYNC write reads %q after the drop", got)
	}
}

// TestRename: what PostgreSQL's durable_rename relies on: a file written,
// fsynced, renamed over another and its directory fsynced is there, whole,
// under its new name; the file it replaced is gone. Unsynced writes follow
// the file through a rename and are lost with it; an fsync by the new name
// keeps them.
func TestRename(t *testing.T) {
	f, _, mnt := mount(t)
	dir := filepath.Join(mnt, "pg_wal")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "target"), "old", true)
	writeFile(t, filepath.Join(dir, "tmp"), "new", true)
	if err := os.Rename(filepath.Join(dir, "tmp"), filepath.Join(dir, "target")); err != nil {
		t.Fatal(err)
	}
	fsyncDir(t, dir)

	writeFile(t, filepath.Join(dir, "a"), "unsynced", false)
	if err := os.Rename(filepath.Join(dir, "a"), filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "c"), "synced by its new name", false)
	if err := os.Rename(filepath.Join(dir, "c"), filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	d, err := os.OpenFile(filepath.Join(dir, "d"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if got := readFile(t, filepath.Join(dir, "b")); got != "unsynced" {
		t.Fatalf("a renamed file reads %q before the drop", got)
	}

	f.Drop()
	if got := readFile(t, filepath.Join(dir, "target")); got != "new" {
		t.Errorf("durable_rename: target reads %q, want new", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "tmp")); !os.IsNotExist(err) {
		t.Errorf("durable_rename: tmp is still there (%v)", err)
	}
	if got := readFile(t, filepath.Join(dir, "b")); got != "" {
		t.Errorf("unsynced, then renamed: reads %q after the drop, want empty", got)
	}
	if got := readFile(t, filepath.Join(dir, "d")); got != "synced by its new name" {
		t.Errorf("renamed, then fsynced: reads %q after the drop", got)
	}
}

// TestTruncateAndUnlink: an unsynced truncation is undone by the drop, a
// synced one is not; a file unlinked with unsynced writes leaves nothing
// to a new file of its name; a file grown past a truncation reads zeros
// there.
func TestTruncateAndUnlink(t *testing.T) {
	f, _, mnt := mount(t)
	p := filepath.Join(mnt, "rel")
	writeFile(t, p, "0123456789", true)
	if err := os.Truncate(p, 4); err != nil {
		t.Fatal(err)
	}
	g, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	g.WriteAt([]byte("x"), 7)
	g.Close()
	if got := readFile(t, p); got != "0123\x00\x00\x00x" {
		t.Fatalf("truncated then grown: %q", got)
	}
	f.Drop()
	if got := readFile(t, p); got != "0123456789" {
		t.Errorf("an unsynced truncation after the drop: %q", got)
	}

	q := filepath.Join(mnt, "gone")
	writeFile(t, q, "ghost", false)
	if err := os.Remove(q); err != nil {
		t.Fatal(err)
	}
	writeFile(t, q, "", false)
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Drop()
	if got := readFile(t, q); got != "" {
		t.Errorf("a new file where an unlinked one was reads %q", got)
	}
}

// TestSync: Sync writes everything back, as sync(1).
func TestSync(t *testing.T) {
	f, backing, mnt := mount(t)
	writeFile(t, filepath.Join(mnt, "x"), "synced by Sync", false)
	if f.Dirty() == 0 {
		t.Fatal("nothing dirty after a write")
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Drop()
	if got := readFile(t, filepath.Join(backing, "x")); got != "synced by Sync" {
		t.Errorf("after Sync and a drop: %q", got)
	}
}

// TestSizeWhileLookedUp: a file's size is its unsynced one however it is
// asked for. The kernel sets a file's size from every LOOKUP of its path
// (an open(2), a stat(2) by path), and an lseek(SEEK_END) or fstat in
// another process reads the size the kernel holds at that moment: a LOOKUP
// that answered the backing file's size (the size at the last fsync) made
// a concurrent PostgreSQL backend see a relation shorter than it is
// (mdnblocks), and its bitmap heap scans skipped the pages past that end:
// a page of pets came back empty (the chaos run's empty page).
func TestSizeWhileLookedUp(t *testing.T) {
	checkSizes(t, 3000, false, 2, lseekEnd)
}

// TestSizeWhileFlushed: a size asked while an fsync writes the cache back
// is the file's, not the backing file's from before the fsync (taken from
// the backing file, then the cache found gone). Asked by fstat: the kernel
// serialises lseek with fsync, not fstat, nor a LOOKUP, whose size it
// takes for every process.
func TestSizeWhileFlushed(t *testing.T) {
	checkSizes(t, 2000, true, 0, fstatSize)
}

func lseekEnd(fd int) (int64, error) { return syscall.Seek(fd, 0, io.SeekEnd) }

func fstatSize(fd int) (int64, error) {
	var st syscall.Stat_t
	err := syscall.Fstat(fd, &st)
	return st.Size, err
}

// checkSizes extends a file on a fresh mount by pages pages of 8 KiB
// (each fsynced if fsync), while lookers goroutines look its path up (stat)
// and three others ask its size with ask through descriptors they hold:
// no size may be smaller than the writes completed before it was asked
// made the file.
func checkSizes(t *testing.T, pages int64, fsync bool, lookers int, ask func(fd int) (int64, error)) {
	_, _, mnt := mount(t)
	path := filepath.Join(mnt, "rel")
	w, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var size atomic.Int64 // what completed writes made the file
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		page := make([]byte, 8192)
		for n := range pages {
			if _, err := w.WriteAt(page, n*8192); err != nil {
				t.Error(err)
				return
			}
			size.Store((n + 1) * 8192)
			if fsync {
				if err := w.Sync(); err != nil {
					t.Error(err)
					return
				}
			}
		}
	})
	running := func() bool {
		select {
		case <-done:
			return false
		default:
			return true
		}
	}
	for range lookers {
		wg.Go(func() {
			for running() {
				os.Stat(path)
			}
		})
	}
	var stale atomic.Int64
	for range 3 {
		wg.Go(func() {
			fd, err := syscall.Open(path, syscall.O_RDONLY, 0)
			if err != nil {
				t.Error(err)
				return
			}
			defer syscall.Close(fd)
			for running() {
				before := size.Load()
				got, err := ask(fd)
				if err != nil {
					t.Error(err)
					return
				}
				if got < before && stale.Add(1) <= 3 {
					t.Errorf("the size read %d bytes; completed writes made %d", got, before)
				}
			}
		})
	}
	wg.Wait()
	if n := stale.Load(); n > 0 {
		t.Errorf("%d sizes smaller than the file's", n)
	}
}

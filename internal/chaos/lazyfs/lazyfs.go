// Package lazyfs is a loopback FUSE filesystem that keeps every write not
// yet fsynced in its own memory, and forgets it all on Drop: the power cut
// of the chaos run (cmd/petstore-chaos), after Jepsen's LazyFS. A database
// whose data directory sits on it loses, at a Drop, exactly what a machine
// losing power loses from its page cache: every write since the file's
// last fsync (or fdatasync). What was fsynced is in the backing directory.
//
// What it keeps and what it passes through:
//
//   - file contents and sizes (writes, truncations, O_TRUNC) are cached per
//     file (per inode, so they follow a rename) until an fsync of that file,
//     a write to a file opened O_SYNC or O_DSYNC, or Sync;
//   - metadata (create, mkdir, rename, unlink, link, chmod) goes to the
//     backing directory at once, as if every directory were fsynced after
//     each change: a Drop never undoes a rename or brings back a file. A
//     real disk may lose a rename not followed by an fsync of its
//     directory; PostgreSQL fsyncs the directory where it relies on one
//     (durable_rename), so this spares it nothing it counts on;
//   - fsync of a directory succeeds and has nothing to write.
//
// The kernel keeps no copy of the data (files are opened direct_io, and
// attributes are not cached), so after a Drop every reader sees the
// backing state. Nothing is written back on a timer: a write that is never
// fsynced stays in memory until Sync or Drop, the worst a page cache may do.
package lazyfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// FS is a mounted lazy filesystem.
type FS struct {
	backing string
	server  *fuse.Server

	// mu guards caches; an inodeCache's own lock is taken after it.
	mu     sync.Mutex
	caches map[uint64]*inodeCache // by inode number, of every file written
}

// inodeCache is one file's cache (nil when the file is clean), with the
// lock that orders its operations and the backing file, opened when it was
// first written, for the flushes (an open file, not a path: it stays the
// file's through renames, and whatever the kernel forgets of the node).
type inodeCache struct {
	mu sync.Mutex
	c  *cache
	w  *os.File
}

// Mount mounts a lazy view of the directory backing at mountpoint; other
// users (the postgres user) may use it. It needs root (or fusermount3) and
// /dev/fuse. Unmount ends it.
func Mount(backing, mountpoint string) (*FS, error) {
	backing, err := filepath.Abs(backing)
	if err != nil {
		return nil, err
	}
	f := &FS{backing: backing, caches: map[uint64]*inodeCache{}}
	rootOps, err := fs.NewLoopbackRoot(backing)
	if err != nil {
		return nil, err
	}
	lb := rootOps.(*fs.LoopbackNode)
	root := &node{LoopbackNode: lb, fs: f}
	lb.RootData.RootNode = root
	zero := time.Duration(0)
	f.server, err = fs.Mount(mountpoint, root, &fs.Options{
		AttrTimeout:     &zero, // sizes change on a Drop: always ask
		NegativeTimeout: &zero,
		MountOptions: fuse.MountOptions{
			AllowOther:  true,
			DirectMount: true, // mount(2) as root; fusermount3 otherwise
			FsName:      "lazyfs:" + backing,
			Name:        "lazyfs",
			// The kernel checks permissions as for a local filesystem.
			Options: []string{"default_permissions"},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("lazyfs: mount %s on %s: %w", backing, mountpoint, err)
	}
	return f, nil
}

// Unmount unmounts the filesystem; what was not synced is lost.
func (f *FS) Unmount() error {
	var err error
	for range 50 { // busy while a process still has a file open
		if err = f.server.Unmount(); err == nil {
			f.mu.Lock()
			defer f.mu.Unlock()
			for ino, ic := range f.caches {
				if ic.w != nil {
					ic.w.Close()
				}
				delete(f.caches, ino)
			}
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// Drop forgets every write not fsynced: the power cut. Whoever uses the
// filesystem should have stopped first, as a machine without power has.
func (f *FS) Drop() (lost int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ic := range f.caches {
		ic.mu.Lock()
		if ic.c != nil {
			lost += ic.c.bytes()
		}
		ic.c = nil
		ic.mu.Unlock()
	}
	return lost
}

// Sync writes every cached write to the backing directory, as sync(1).
func (f *FS) Sync() error {
	f.mu.Lock()
	ics := make([]*inodeCache, 0, len(f.caches))
	for _, ic := range f.caches {
		ics = append(ics, ic)
	}
	f.mu.Unlock()
	var errs []error
	for _, ic := range ics {
		errs = append(errs, f.flush(ic))
	}
	return errors.Join(errs...)
}

// Dirty is the memory the unsynced writes hold.
func (f *FS) Dirty() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var n int64
	for _, ic := range f.caches {
		ic.mu.Lock()
		if ic.c != nil {
			n += ic.c.bytes()
		}
		ic.mu.Unlock()
	}
	return n
}

// lookup returns the cache of inode ino, locked, or nil when the file is
// clean. The caller unlocks it.
func (f *FS) lookup(ino uint64) *inodeCache {
	ic := f.get(ino)
	if ic == nil {
		return nil
	}
	ic.mu.Lock()
	if ic.c == nil {
		ic.mu.Unlock()
		return nil
	}
	return ic
}

// cacheOf returns n's cache, made if it has none, locked; fd, if not -1,
// is an open descriptor of its backing file (a file being created has no
// path yet). The caller unlocks it.
func (f *FS) cacheOf(n *node, fd int) (*inodeCache, error) {
	ino := n.StableAttr().Ino
	f.mu.Lock()
	ic := f.caches[ino]
	if ic == nil {
		ic = &inodeCache{}
		f.caches[ino] = ic
	}
	f.mu.Unlock()
	ic.mu.Lock()
	if ic.w == nil {
		path := f.path(n)
		if fd >= 0 {
			path = fmt.Sprintf("/proc/self/fd/%d", fd) // the same file, opened anew
		}
		w, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			ic.mu.Unlock()
			return nil, err
		}
		ic.w = w
	}
	if ic.c == nil {
		st, err := ic.w.Stat()
		if err != nil {
			ic.mu.Unlock()
			return nil, err
		}
		ic.c = newCache(st.Size())
	}
	return ic, nil
}

// get returns the cache entry of inode ino, nil if it has none.
func (f *FS) get(ino uint64) *inodeCache {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.caches[ino]
}

// forget drops the cache of inode ino (its last name was removed).
func (f *FS) forget(ino uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ic := f.caches[ino]; ic != nil {
		ic.mu.Lock()
		if ic.w != nil {
			ic.w.Close()
		}
		ic.c, ic.w = nil, nil
		ic.mu.Unlock()
		delete(f.caches, ino)
	}
}

// flush writes ic to its backing file: fsync.
func (f *FS) flush(ic *inodeCache) error {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if ic.c == nil {
		return nil
	}
	if err := ic.c.flush(ic.w); err != nil {
		return err
	}
	ic.c = nil
	return nil
}

// path is n's backing path.
func (f *FS) path(n *node) string {
	return filepath.Join(f.backing, n.Path(n.Root()))
}

// errno turns an error into the errno FUSE answers.
func errno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	return fs.ToErrno(err)
}

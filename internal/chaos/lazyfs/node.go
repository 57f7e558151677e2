package lazyfs

import (
	"context"
	"os"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// node is a loopback node whose files go through the cache.
type node struct {
	*fs.LoopbackNode
	fs   *FS
	gone atomic.Bool // its last name was removed: writes go straight through
}

var (
	_ fs.NodeWrapChilder    = (*node)(nil)
	_ fs.NodeLookuper       = (*node)(nil)
	_ fs.NodeLinker         = (*node)(nil)
	_ fs.NodeOpener         = (*node)(nil)
	_ fs.NodeCreater        = (*node)(nil)
	_ fs.NodeGetattrer      = (*node)(nil)
	_ fs.NodeSetattrer      = (*node)(nil)
	_ fs.NodeUnlinker       = (*node)(nil)
	_ fs.NodeRenamer        = (*node)(nil)
	_ fs.NodeStatxer        = (*node)(nil)
	_ fs.NodeCopyFileRanger = (*node)(nil)
)

// WrapChild makes every node of the tree a lazy one.
func (n *node) WrapChild(ctx context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	return &node{LoopbackNode: ops.(*fs.LoopbackNode), fs: n.fs}
}

func (n *node) ino() uint64 { return n.StableAttr().Ino }

// Open opens the backing file; O_TRUNC truncates in the cache.
func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	trunc := flags&syscall.O_TRUNC != 0
	fh, _, e := n.LoopbackNode.Open(ctx, readable(flags&^syscall.O_TRUNC))
	if e != 0 {
		return nil, 0, e
	}
	f := &file{lf: fh.(*fs.LoopbackFile), n: n, sync: flags&(syscall.O_SYNC|syscall.O_DSYNC) != 0}
	if trunc {
		if e := n.truncate(0, f.fd()); e != 0 {
			f.lf.Release(ctx)
			return nil, 0, e
		}
	}
	return f, fuse.FOPEN_DIRECT_IO, 0
}

// readable opens for reading and writing what is opened for writing: a
// partial page's other bytes are read from the backing file.
func readable(flags uint32) uint32 {
	if flags&syscall.O_ACCMODE == syscall.O_WRONLY {
		return flags&^syscall.O_ACCMODE | syscall.O_RDWR
	}
	return flags
}

// Create creates the backing file (metadata: at once).
func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	trunc := flags&syscall.O_TRUNC != 0
	in, fh, _, e := n.LoopbackNode.Create(ctx, name, readable(flags&^syscall.O_TRUNC), mode, out)
	if e != 0 {
		return nil, nil, 0, e
	}
	child := in.Operations().(*node)
	f := &file{lf: fh.(*fs.LoopbackFile), n: child, sync: flags&(syscall.O_SYNC|syscall.O_DSYNC) != 0}
	if trunc {
		if e := child.truncate(0, f.fd()); e != 0 {
			return nil, nil, 0, e
		}
		out.Size = 0
	}
	child.sized(&out.Attr)
	return in, f, fuse.FOPEN_DIRECT_IO, 0
}

// Lookup is the loopback's, with the size the cache gives the file. The
// kernel takes the size of every LOOKUP (each open or stat of the path:
// entries are not cached) as the file's, for every process: an lseek in
// another one, between its own GETATTR and its read of the size, reads it.
// The backing file's size there made PostgreSQL see a relation as it was
// at its last fsync.
func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	in, e := n.LoopbackNode.Lookup(ctx, name, out)
	if e != 0 {
		return nil, e
	}
	if child, ok := in.Operations().(*node); ok {
		child.sized(&out.Attr)
	}
	return in, 0
}

// Link is the loopback's, with the size the cache gives the file.
func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	in, e := n.LoopbackNode.Link(ctx, target, name, out)
	if e != 0 {
		return nil, e
	}
	if child, ok := in.Operations().(*node); ok {
		child.sized(&out.Attr)
	}
	return in, 0
}

// Getattr is the backing file's, with the size the cache gives it.
func (n *node) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if e := n.LoopbackNode.Getattr(ctx, unwrap(fh), out); e != 0 {
		return e
	}
	n.sized(&out.Attr)
	return 0
}

// sized sets a's size, taken from the backing file, to the file's: the
// cached one, if the file has a cache. A file written since the mount has
// an inodeCache; once flushed, its backing file is asked again, under the
// cache's lock, so that a flush that ended after a was taken (the backing
// file grew, the cache went) cannot leave a the size of the last fsync.
func (n *node) sized(a *fuse.Attr) {
	ic := n.fs.get(n.ino())
	if ic == nil {
		return // never written here: the backing file's size is the file's
	}
	ic.mu.Lock()
	defer ic.mu.Unlock()
	switch {
	case ic.c != nil:
		a.Size = uint64(ic.c.size)
	case ic.w != nil:
		st, err := ic.w.Stat()
		if err != nil {
			return
		}
		a.Size = uint64(st.Size())
	default:
		return
	}
	a.Blocks = (a.Size + 511) / 512
}

// Setattr truncates in the cache, and sets the rest on the backing file.
func (n *node) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if size, ok := in.GetSize(); ok && !n.IsDir() {
		fd := -1
		if f, ok := fh.(*file); ok {
			fd = f.fd()
		}
		if e := n.truncate(int64(size), fd); e != 0 {
			return e
		}
		rest := *in
		rest.Valid &^= fuse.FATTR_SIZE
		in = &rest
	}
	if e := n.LoopbackNode.Setattr(ctx, unwrap(fh), in, out); e != 0 {
		return e
	}
	n.sized(&out.Attr)
	return 0
}

// truncate truncates in the cache; fd as for cacheOf.
func (n *node) truncate(size int64, fd int) syscall.Errno {
	if n.gone.Load() {
		if fd >= 0 {
			return errno(syscall.Ftruncate(fd, size))
		}
		return errno(os.Truncate(n.fs.path(n), size))
	}
	ic, err := n.fs.cacheOf(n, fd)
	if err != nil {
		return errno(err)
	}
	ic.c.truncate(size)
	ic.mu.Unlock()
	return 0
}

// Unlink removes the name at once; a file left with no name loses its
// cache (nobody can fsync it).
func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	child := n.GetChild(name)
	lastName := n.lastName(name)
	if e := n.LoopbackNode.Unlink(ctx, name); e != 0 {
		return e
	}
	if child != nil && lastName {
		n.dropChild(child)
	}
	return 0
}

// Rename renames at once; the file's cache follows it (it is the inode's),
// and a file it replaces is unlinked.
func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	np, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	replaced := np.GetChild(newName)
	lastName := np.lastName(newName)
	if e := n.LoopbackNode.Rename(ctx, name, np.LoopbackNode, newName, flags); e != 0 {
		return e
	}
	if replaced != nil && lastName && flags&fs.RENAME_EXCHANGE == 0 {
		n.dropChild(replaced)
	}
	return 0
}

// dropChild marks child, a file whose last name was removed, as gone, and
// forgets its cache.
func (n *node) dropChild(child *fs.Inode) {
	if c, ok := child.Operations().(*node); ok {
		c.gone.Store(true)
	}
	n.fs.forget(child.StableAttr().Ino)
}

// lastName reports whether name in n is the last link of a regular file.
func (n *node) lastName(name string) bool {
	var st syscall.Stat_t
	if err := syscall.Lstat(n.fs.path(n)+"/"+name, &st); err != nil {
		return false
	}
	return st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Nlink == 1
}

// Statx is left to Getattr, which knows the cached size.
func (n *node) Statx(ctx context.Context, fh fs.FileHandle, flags uint32, mask uint32, out *fuse.StatxOut) syscall.Errno {
	return syscall.ENOSYS
}

// CopyFileRange is left to the kernel's read and write, which the cache sees.
func (n *node) CopyFileRange(ctx context.Context, fhIn fs.FileHandle, offIn uint64, out *fs.Inode, fhOut fs.FileHandle, offOut uint64, length uint64, flags uint64) (uint32, syscall.Errno) {
	return 0, syscall.ENOSYS
}

// unwrap returns the loopback file under fh, for the loopback's methods.
func unwrap(fh fs.FileHandle) fs.FileHandle {
	if f, ok := fh.(*file); ok {
		return f.lf
	}
	return fh
}

// file is an open file: reads merge the cache over the backing file,
// writes go to the cache, fsync writes the cache back.
type file struct {
	lf   *fs.LoopbackFile
	n    *node
	sync bool // opened O_SYNC or O_DSYNC: every write is flushed
}

var (
	_ fs.FileReader    = (*file)(nil)
	_ fs.FileWriter    = (*file)(nil)
	_ fs.FileFsyncer   = (*file)(nil)
	_ fs.FileFlusher   = (*file)(nil)
	_ fs.FileReleaser  = (*file)(nil)
	_ fs.FileAllocater = (*file)(nil)
)

// fdReader reads the backing file through the open descriptor.
type fdReader struct{ f *file }

func (r fdReader) ReadAt(b []byte, off int64) (int, error) {
	fd := r.f.fd()
	n := 0
	for n < len(b) {
		m, err := syscall.Pread(fd, b[n:], off+int64(n))
		if err != nil {
			return n, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return n, nil
}

func (f *file) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	ic := f.n.fs.lookup(f.n.ino())
	if ic == nil {
		return f.lf.Read(ctx, dest, off)
	}
	defer ic.mu.Unlock()
	n, err := ic.c.read(fdReader{f}, dest, off)
	if err != nil {
		return nil, errno(err)
	}
	return fuse.ReadResultData(dest[:n]), 0
}

func (f *file) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	if f.n.gone.Load() {
		return f.lf.Write(ctx, data, off)
	}
	ic, err := f.n.fs.cacheOf(f.n, f.fd())
	if err != nil {
		return 0, errno(err)
	}
	err = ic.c.write(fdReader{f}, data, off)
	ic.mu.Unlock()
	if err != nil {
		return 0, errno(err)
	}
	if f.sync {
		if err := f.n.fs.flush(ic); err != nil {
			return 0, errno(err)
		}
	}
	return uint32(len(data)), 0
}

func (f *file) fd() int {
	fd, _ := f.lf.PassthroughFd()
	return fd
}

// Fsync (and fdatasync) writes the file's cache to the backing file. The
// backing file itself is not fsynced: the lazy layer is the only cache a
// power cut empties.
func (f *file) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	ic := f.n.fs.get(f.n.ino())
	if ic == nil {
		return 0
	}
	return errno(f.n.fs.flush(ic))
}

func (f *file) Flush(ctx context.Context) syscall.Errno   { return f.lf.Flush(ctx) }
func (f *file) Release(ctx context.Context) syscall.Errno { return f.lf.Release(ctx) }

// Allocate is refused: posix_fallocate then writes the zeros itself,
// through the cache.
func (f *file) Allocate(ctx context.Context, off uint64, size uint64, mode uint32) syscall.Errno {
	return syscall.EOPNOTSUPP
}

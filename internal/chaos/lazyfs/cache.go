package lazyfs

import (
	"io"
	"os"
)

// pageSize is the unit the cache keeps a file's unsynced writes in.
const pageSize = 4096

// cache is what a file's writes since its last fsync changed: the pages
// written, the file's size, and how much of the backing file is still the
// file's content (a truncation cuts it; the backing file keeps the old bytes
// until the next fsync). The backing file holds the synced state; a read
// sees the backing file's valid bytes with the cached pages over them.
type cache struct {
	pages map[int64][]byte // page index → pageSize bytes
	size  int64            // the file's size
	valid int64            // the backing file's bytes below this are content
}

func newCache(backingSize int64) *cache {
	return &cache{pages: map[int64][]byte{}, size: backingSize, valid: backingSize}
}

// backing is what the cache reads unsynced pages' other bytes from.
type backing interface {
	ReadAt(b []byte, off int64) (int, error)
}

// page returns page i, loaded from b (its valid bytes) when not cached.
func (c *cache) page(b backing, i int64) ([]byte, error) {
	if p, ok := c.pages[i]; ok {
		return p, nil
	}
	p := make([]byte, pageSize)
	start := i * pageSize
	if n := min(pageSize, c.valid-start); n > 0 {
		if _, err := b.ReadAt(p[:n], start); err != nil && err != io.EOF {
			return nil, err
		}
	}
	c.pages[i] = p
	return p, nil
}

// write applies a write of data at off.
func (c *cache) write(b backing, data []byte, off int64) error {
	for done := 0; done < len(data); {
		at := off + int64(done)
		p, err := c.page(b, at/pageSize)
		if err != nil {
			return err
		}
		done += copy(p[at%pageSize:], data[done:])
	}
	c.size = max(c.size, off+int64(len(data)))
	return nil
}

// truncate sets the file's size: the bytes past it are gone, and read as
// zeros if the file grows again.
func (c *cache) truncate(size int64) {
	for i, p := range c.pages {
		switch start := i * pageSize; {
		case start >= size:
			delete(c.pages, i)
		case start+pageSize > size:
			clear(p[size-start:])
		}
	}
	c.size = size
	c.valid = min(c.valid, size)
}

// read fills dest with the file's bytes from off, and returns how many
// there are (fewer at the end of the file).
func (c *cache) read(b backing, dest []byte, off int64) (int, error) {
	n := int(max(0, min(int64(len(dest)), c.size-off)))
	dest = dest[:n]
	clear(dest)
	if m := int(max(0, min(int64(n), c.valid-off))); m > 0 {
		if _, err := b.ReadAt(dest[:m], off); err != nil && err != io.EOF {
			return 0, err
		}
	}
	for done := 0; done < n; {
		at := off + int64(done)
		i, in := at/pageSize, at%pageSize
		step := int(min(int64(n-done), pageSize-in))
		if p, ok := c.pages[i]; ok {
			copy(dest[done:done+step], p[in:])
		}
		done += step
	}
	return n, nil
}

// flush writes the cache to f, the backing file opened for writing: what
// fsync makes durable.
func (c *cache) flush(f *os.File) error {
	if err := f.Truncate(c.valid); err != nil {
		return err
	}
	for i, p := range c.pages {
		start := i * pageSize
		if n := min(pageSize, c.size-start); n > 0 {
			if _, err := f.WriteAt(p[:n], start); err != nil {
				return err
			}
		}
	}
	return f.Truncate(c.size)
}

// bytes is the memory the cache holds.
func (c *cache) bytes() int64 { return int64(len(c.pages)) * pageSize }

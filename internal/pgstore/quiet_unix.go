//go:build linux || darwin || freebsd || netbsd || openbsd

package pgstore

import (
	"errors"
	"syscall"
)

// quiet reports whether nothing waits to be read on an idle connection's
// socket, without reading it (a non-blocking peek, one system call; the
// check go-sql-driver/mysql makes before reusing a connection). A server
// that closed the connection left an end of file there, and one that
// terminated the session its FATAL error; an idle session is sent nothing
// else in this store's use.
func quiet(nc quietConn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	var (
		buf  [1]byte
		peek error
	)
	// Control, not Read: pgx may have a reader of its own parked on the
	// socket, and a peek consumes nothing.
	err = rc.Control(func(fd uintptr) {
		_, _, peek = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		if peek == nil {
			peek = errors.New("readable") // data, or the end of the stream
		}
	})
	return err == nil && (errors.Is(peek, syscall.EAGAIN) || errors.Is(peek, syscall.EWOULDBLOCK))
}

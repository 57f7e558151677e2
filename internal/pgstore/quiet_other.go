//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package pgstore

// quiet cannot peek here: every connection passes.
func quiet(quietConn) bool { return true }

//go:build !unix

package apitest

import (
	"net"
	"testing"
)

// RefusedAddr returns a loopback host:port that refused connections when it
// was made: a listener's port, freed. Unlike the unix version it does not
// hold the port, so another listener may take it later.
func RefusedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("apitest: %v", err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

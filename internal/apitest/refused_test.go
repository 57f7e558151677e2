//go:build unix

package apitest_test

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/apitest"
)

// TestRefusedAddr checks that the address refuses connections and that no
// listener on an ephemeral port can take it while the test holds it.
func TestRefusedAddr(t *testing.T) {
	addr := apitest.RefusedAddr(t)
	if _, err := net.DialTimeout("tcp", addr, 5*time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s: got %v, want connection refused", addr, err)
	}
	if ln, err := net.Listen("tcp", addr); err == nil {
		ln.Close()
		t.Fatalf("listen on %s succeeded; want the port held", addr)
	}
}

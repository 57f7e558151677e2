package deploy

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/ratelimit"
)

// TestHAProxyThrottlesEachClient: behind the recommended balancer
// (option forwardfor) and a server that trusts it, one client's wrong keys
// throttle that client only; without the trust every client shares the
// balancer's address and a valid key is throttled with the guesser's.
func TestHAProxyThrottlesEachClient(t *testing.T) {
	bin := haproxyBin(t)
	const key = "forwardfor-key-0123456789abcdef0123456789"
	for _, trust := range []bool{true, false} {
		limit, err := ratelimit.Parse("1/s,burst=5")
		if err != nil {
			t.Fatal(err)
		}
		cfg := httpapi.Config{Store: memstore.New(), Keys: apikey.NewSet(apikey.Hash(key)), AuthFailures: &limit}
		if trust {
			cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
		}
		app, err := httpapi.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(app)
		t.Cleanup(srv.Close)
		servers := []lbServer{{Name: "r1", Addr: srv.Listener.Addr().String()}}
		dir := t.TempDir()
		ctx := context.Background()
		p, err := startHAProxy(ctx, bin, dir, filepath.Join(dir, "haproxy.log"), defaultLB, servers)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.stop)
		if _, err := p.waitStatus(ctx, "r1", "UP", 10*time.Second); err != nil {
			t.Fatal(err)
		}
		guesser, client := from(t, "127.0.0.2"), from(t, "127.0.0.3")
		get := func(c *http.Client, k string) int {
			req, _ := http.NewRequest(http.MethodGet, "http://"+p.addr+apitest.Path("/pets"), nil)
			req.Header.Set("Authorization", "Bearer "+k)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		throttled := false
		for range 20 {
			if get(guesser, "wrong-key-0123456789abcdef0123456789") == http.StatusTooManyRequests {
				throttled = true
				break
			}
		}
		if !throttled {
			t.Fatalf("trust %v: 20 wrong keys from one client were never throttled", trust)
		}
		got := get(client, key)
		switch {
		case trust && got != http.StatusOK:
			t.Errorf("behind option forwardfor and a trusted balancer: another client's valid key got %d, want 200", got)
		case !trust && got != http.StatusTooManyRequests:
			t.Errorf("balancer not trusted: another client's valid key got %d, want 429 (every client shares the balancer's address)", got)
		}
	}
}

// from is an HTTP client whose connections come from the loopback address
// local.
func from(t *testing.T, local string) *http.Client {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 2 * time.Second}
	return &http.Client{Transport: &http.Transport{Proxy: nil, DialContext: d.DialContext}}
}

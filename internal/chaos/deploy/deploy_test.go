package deploy

import (
	"context"
	"flag"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/chaos/workload"
	"github.com/petstore/petstore/internal/check"
	"github.com/petstore/petstore/internal/history"
)

// TestFinals: an operation fails when its final outcome, after the
// client's own retries, is not the contract's success; what the end of the
// load canceled is cut short, not failed.
func TestFinals(t *testing.T) {
	const end = 100
	pet := &history.Pet{ID: 1}
	ops := []history.Op{
		// A key answered 502, then 201 on its retry: ok.
		{Kind: history.Create, Key: "a", Attempt: 1, Outcome: history.Indeterminate, Status: 502},
		{Kind: history.Create, Key: "a", Attempt: 2, Outcome: history.OK, Status: 201, Pet: pet},
		// A key never answered 201: failed, however many attempts.
		{Kind: history.Create, Key: "b", Attempt: 1, Outcome: history.Indeterminate, Status: 503},
		{Kind: history.Create, Key: "b", Attempt: 2, Outcome: history.Indeterminate, Error: "EOF"},
		// A key whose last attempt the end of the run canceled: cut.
		{Kind: history.Create, Key: "c", Attempt: 1, Outcome: history.Indeterminate, Complete: end + 1, Error: "context canceled"},
		// Keyless: sent once.
		{Kind: history.Create, Outcome: history.OK, Status: 201, Pet: pet},
		{Kind: history.Create, Outcome: history.Indeterminate, Error: "EOF"},
		// Gets: 200 and 404 are answers (the getters also ask for ids above
		// the last acknowledged; a 404 after an ack is the audit's); a 503 failed.
		{Kind: history.Get, Outcome: history.OK, Status: 200, Pet: pet},
		{Kind: history.Get, Outcome: history.OK, Status: 404},
		{Kind: history.Get, Outcome: history.Failed, Status: 503},
		// Walks: a canceled one before the end failed; after it, cut.
		{Kind: history.Walk, Outcome: history.OK},
		{Kind: history.Walk, Outcome: history.Failed, Complete: end - 1, Error: "context canceled"},
		{Kind: history.Walk, Outcome: history.Failed, Complete: end + 1, Error: "context canceled"},
		// One stopped by the end of the load between two pages: cut; one
		// refused a page after the end: failed.
		{Kind: history.Walk, Outcome: history.Failed, Complete: end + 1, Pages: []history.Page{{Status: 200, Next: apitest.Path("/pets?after=2")}}},
		{Kind: history.Walk, Outcome: history.Failed, Complete: end + 1, Pages: []history.Page{{Status: 200, Next: apitest.Path("/pets?after=2")}, {Status: 500}}},
		{Kind: history.Fault, Fault: faultDeploy},
	}
	got := finals(ops, end)
	want := map[string]final{
		check.RowKeyed:   {ok: 1, failed: 1, cut: 1},
		check.RowKeyless: {ok: 1, failed: 1},
		check.RowGet:     {ok: 2, failed: 1},
		check.RowWalk:    {ok: 1, failed: 2, cut: 2},
	}
	for row, w := range want {
		if *got[row] != w {
			t.Errorf("%s: got %+v, want %+v", row, *got[row], w)
		}
	}
	if n := failedTotal(got); n != 5 {
		t.Errorf("failed in all: got %d, want 5", n)
	}
}

// TestByPhase: a phase of several spans counts the requests begun inside
// any of them, over their summed length; cut-short requests are left out.
func TestByPhase(t *testing.T) {
	t0 := time.Now()
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	all := []workload.Sent{
		{Kind: workload.ReqGet, Start: at(0.5), End: at(0.6), Status: 200},
		{Kind: workload.ReqGet, Start: at(1.5), End: at(1.6), Status: 503},
		{Kind: workload.ReqGet, Start: at(2.5), End: at(2.6), Status: 200},
		{Kind: workload.ReqGet, Start: at(2.7), End: at(2.8), Status: workload.CutShort},
		{Kind: workload.ReqKeyed, Start: at(3.5), End: at(3.9), Status: 201},
		// A get answered 404 is answered (an id above the last
		// acknowledged); a page answered 404 is not.
		{Kind: workload.ReqGet, Start: at(3.0), End: at(3.1), Status: 404},
		{Kind: workload.ReqPage, Start: at(3.2), End: at(3.3), Status: 404},
	}
	steady := phase{name: "steady", spans: []span{{at(0), at(1)}, {at(2), at(4)}}}
	rounds := phase{name: "rounds", spans: []span{{at(1), at(2)}}}
	ps := byPhase(all, []phase{steady, rounds})
	if s := ps[0]; s.requests != 5 || s.notOK != 1 || s.rps() != 5.0/3 || s.max != 400*time.Millisecond {
		t.Errorf("steady: got %d requests, %d not ok, %.2f rps, max %v; want 5, 1, 1.67, 400ms", s.requests, s.notOK, s.rps(), s.max)
	}
	if s := ps[1]; s.requests != 1 || s.notOK != 1 || s.rps() != 1 {
		t.Errorf("rounds: got %d requests, %d not ok, %.2f rps; want 1, 1, 1.00", s.requests, s.notOK, s.rps())
	}
}

// TestRoundRatios: a round is set against the steady stretches either
// side of it, so that a load rising through the run reads as no change.
func TestRoundRatios(t *testing.T) {
	st := func(requests int) phaseStats {
		t0 := time.Now()
		return phaseStats{phase: phase{spans: []span{{t0, t0.Add(time.Second)}}}, requests: requests}
	}
	// steady 0, round 1, steady 1, round 2, steady 2, and the two totals.
	ps := []phaseStats{st(100), st(150), st(200), st(150), st(300), st(600), st(300)}
	got := roundRatios(ps)
	if len(got) != 2 || got[0] != 1 || got[1] != 0.6 {
		t.Errorf("got %v, want [1 0.6]", got)
	}
}

func TestCheckVersion(t *testing.T) {
	log := filepath.Join(t.TempDir(), "r1.log")
	lines := `{"msg":"listening","version":"deploy-0"}
{"msg":"request","version":"deploy-9"}
{"msg":"stopped"}
{"msg":"listening","version":"deploy-1"}
`
	if err := os.WriteFile(log, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkVersion(log, "deploy-1"); err != nil {
		t.Errorf("the last start: %v", err)
	}
	if err := checkVersion(log, "deploy-0"); err == nil {
		t.Error("an earlier start passed for the last")
	}
}

// parse is deploy's command line: the flags Register declares, parsed,
// then validated.
func parse(args []string) (Config, error) {
	var c Config
	fs := flag.NewFlagSet("petstore-chaos deploy", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.Register(fs)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	return c, c.Validate()
}

func TestParseDeploy(t *testing.T) {
	c, err := parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.opt.MinFaults != c.rounds*c.replicas || c.lb != defaultLB {
		t.Errorf("defaults: min faults %d for %d rounds of %d replicas; lb %+v", c.opt.MinFaults, c.rounds, c.replicas, c.lb)
	}
	if c, _ := parse([]string{"-create-rate", "0"}); c.CreateRate <= 1e300 {
		t.Errorf("create-rate 0: got %v, want no limit", c.CreateRate)
	}
	for _, args := range [][]string{
		{"-replicas", "1"}, {"-rounds", "0"}, {"-steady", "0s"}, {"-shutdown-delay", "-1s"},
		{"-check-fall", "0"}, {"-retry-on", "conn-failure everything"}, {"-http-reuse", "sometimes"},
		{"-create-rate", "-1"},
	} {
		if _, err := parse(args); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// haproxyBin is HAProxy's path, or the test is skipped (failed with
// CI=true, where .ci/run installs it).
func haproxyBin(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("haproxy")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("haproxy is not installed (.ci/run installs it)")
		}
		t.Skip("haproxy is not installed: apt-get install haproxy")
	}
	return p
}

// TestHAProxyConfigValid: HAProxy itself accepts the generated
// configuration, which listens on loopback only and, unless asked, keeps
// POSTs from being retried on anything but a connection failure.
func TestHAProxyConfigValid(t *testing.T) {
	bin := haproxyBin(t)
	for _, lb := range []lbConfig{defaultLB, func() lbConfig {
		c := defaultLB
		c.Retries, c.RetryOn, c.Redispatch, c.PostL7Retry, c.FastInter, c.DownInter = 0, "none", false, true, 0, 0
		return c
	}()} {
		text, err := haproxyConfig(lb, "127.0.0.1:1", filepath.Join(t.TempDir(), "s.sock"), []lbServer{{"r1", "127.0.0.1:2"}, {"r2", "127.0.0.1:3"}})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "haproxy.cfg")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(bin, "-c", "-f", path).CombinedOutput(); err != nil {
			t.Errorf("haproxy -c: %v\n%s\n%s", err, out, text)
		}
		if !strings.Contains(text, "bind 127.0.0.1:1\n") || strings.Count(text, "bind ") != 1 {
			t.Errorf("binds other than loopback:\n%s", text)
		}
		if got := strings.Contains(text, "disable-l7-retry if METH_POST"); got == lb.PostL7Retry {
			t.Errorf("PostL7Retry %v, disable-l7-retry for POST %v:\n%s", lb.PostL7Retry, got, text)
		}
	}
}

// TestHAProxyTakesOutDraining: a server whose /readyz turns 503 is taken
// out of rotation by the recommended checks well inside the recommended
// drain, requests go to the other, and it is put back once /readyz answers
// 200 again; the stats socket shows each state.
func TestHAProxyTakesOutDraining(t *testing.T) {
	bin := haproxyBin(t)
	var draining atomic.Bool
	served := [2]atomic.Int64{}
	servers := make([]lbServer, 2)
	for i := range servers {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/readyz" {
				if i == 0 && draining.Load() {
					w.WriteHeader(http.StatusServiceUnavailable)
				}
				return
			}
			served[i].Add(1)
		}))
		s.Listener.Close()
		s.Listener = ln
		s.Start()
		t.Cleanup(s.Close)
		servers[i] = lbServer{Name: []string{"r1", "r2"}[i], Addr: ln.Addr().String()}
	}
	dir := t.TempDir()
	ctx := context.Background()
	p, err := startHAProxy(ctx, bin, dir, filepath.Join(dir, "haproxy.log"), defaultLB, servers)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.stop)
	for _, s := range servers {
		if _, err := p.waitStatus(ctx, s.Name, "UP", 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	draining.Store(true)
	t0 := time.Now()
	down, err := p.waitStatus(ctx, "r1", "DOWN", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Taken out with a quarter of the drain to spare (HAProxy's default
	// checks, inter 2s and fall 3, take 4 to 6 s).
	if d, bound := down.Sub(t0), recommendedDrain*3/4; d > bound {
		t.Errorf("taken out after %v, want within %v", d, bound)
	}
	before := served[0].Load()
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	for range 20 {
		resp, err := client.Get("http://" + p.addr + apitest.Path("/pets"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("through the balancer: %d", resp.StatusCode)
		}
	}
	if n := served[0].Load() - before; n != 0 {
		t.Errorf("the server out of rotation got %d requests", n)
	}
	draining.Store(false)
	if _, err := p.waitStatus(ctx, "r1", "UP", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	st, err := p.stats()
	if err != nil {
		t.Fatal(err)
	}
	if be := st[lbBackend+"/BACKEND"]; be["stot"] == "" || be["status"] != "UP" {
		t.Errorf("backend row: %v", be)
	}
}

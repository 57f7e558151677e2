package nemesis

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/history"
	"github.com/petstore/petstore/internal/pgtest"
)

// Shuffles for the schedule: none, reversed, and a seeded random one.
func noShuffle(int, func(i, j int)) {}

func reverse(n int, swap func(i, j int)) {
	for i := 0; i < n/2; i++ {
		swap(i, n-1-i)
	}
}

func seeded(seed uint64) func(int, func(i, j int)) {
	return rand.New(rand.NewPCG(seed, seed)).Shuffle
}

// The schedule plays every fault once a round and power cuts twice, in
// each round a new order, the first round beginning with a power cut.
func TestSchedule(t *testing.T) {
	for _, tc := range []struct {
		name     string
		faults   []string
		shuffle  func(int, func(i, j int))
		shuffled bool // the rounds come in more than one order
	}{
		{"all, unshuffled", All, noShuffle, false},
		{"all, reversed", All, reverse, false},
		{"all, seeded 1", All, seeded(1), true},
		{"all, seeded 2", All, seeded(2), true},
		{"pause alone (memory store)", []string{Pause}, seeded(3), false},
		{"power cut alone", []string{PowerCut}, seeded(4), false},
		{"no power cut", []string{Kill, Latency, Terminate}, seeded(5), true},
		{"power cut last, unshuffled", []string{Kill, Pause, PowerCut}, noShuffle, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &schedule{faults: tc.faults, shuffle: tc.shuffle}
			want := map[string]int{}
			for _, f := range tc.faults {
				want[f]++
			}
			if want[PowerCut] > 0 {
				want[PowerCut]++
			}
			size := len(tc.faults) + want[PowerCut]/2
			orders := map[string]bool{}
			for round := range 6 {
				var played []string
				for range size {
					played = append(played, s.next())
				}
				got := map[string]int{}
				for _, f := range played {
					got[f]++
				}
				if !maps.Equal(got, want) {
					t.Errorf("round %d played %v, want each of %v as often as %v", round, played, tc.faults, want)
				}
				if round == 0 && want[PowerCut] > 0 && played[0] != PowerCut {
					t.Errorf("the first round begins with %s, want %s: %v", played[0], PowerCut, played)
				}
				orders[strings.Join(played, ",")] = true
			}
			if tc.shuffled && len(orders) < 2 {
				t.Errorf("6 rounds in %d order, want a new order in each: %v", len(orders), slices.Collect(maps.Keys(orders)))
			}
		})
	}
}

// Every fault -faults may name plays on something: a name in All that
// inject does not route would stop a chaos run at its turn.
func TestEveryFaultPlays(t *testing.T) {
	if got := slices.Sorted(maps.Keys(playsOn)); !slices.Equal(got, slices.Sorted(slices.Values(All))) {
		t.Errorf("faults that play on something: %v, want All: %v", got, All)
	}
	if len(slices.Compact(slices.Sorted(slices.Values(All)))) != len(All) {
		t.Errorf("All names a fault twice: %v", All)
	}
	n := &Nemesis{}
	if target, err := n.inject("flood", time.Millisecond); err == nil || err.Error() != `unknown fault "flood"` || target != "" {
		t.Errorf(`inject("flood"): got %q, %v, want "", unknown fault "flood"`, target, err)
	}
}

// play records each fault in the history with its start before the
// injection and its end after the healing, its target and its error, logs
// it, and says whether the run can go on: a database left down is
// Unrecovered, any other error the fault's.
func TestPlay(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		kind, target string
		err          error  // what the injection returns
		want         string // play's error; "" for none
		unrecovered  bool
	}{
		{Kill, "replica-2", nil, "", false},
		{Latency, "proxy", nil, "", false},
		{Restart, "replica-1", boom, "fault restart on replica-1: boom", false},
		{PowerCut, "postgres", boom, "PostgreSQL did not start again after powercut: boom", true},
		{PGCrash, "postgres", boom, "PostgreSQL did not start again after pgcrash: boom", true},
		{"flood", "", errors.New(`unknown fault "flood"`), `fault flood on : unknown fault "flood"`, false},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			var buf bytes.Buffer
			var logged []string
			n := &Nemesis{H: history.NewWriter(&buf, time.Now()), Log: func(format string, a ...any) { logged = append(logged, fmt.Sprintf(format, a...)) }}
			var during int64
			err := n.play(tc.kind, func(kind string) (string, error) {
				if kind != tc.kind {
					t.Errorf("injected %s, want %s", kind, tc.kind)
				}
				during = n.H.Now()
				return tc.target, tc.err
			})
			if got := fmt.Sprint(err); tc.want == "" && err != nil || tc.want != "" && got != tc.want {
				t.Errorf("play: got %v, want %q", err, tc.want)
			}
			if errors.As(err, new(*Unrecovered)) != tc.unrecovered || !errors.Is(err, tc.err) {
				t.Errorf("play: got %#v, want Unrecovered %v, wrapping %v", err, tc.unrecovered, tc.err)
			}
			if err := n.H.Close(); err != nil {
				t.Fatal(err)
			}
			ops, err := history.Read(&buf)
			if err != nil || len(ops) != 1 {
				t.Fatalf("history: got %d ops, %v, want 1:\n%s", len(ops), err, buf.String())
			}
			op, wantErr := ops[0], ""
			if tc.err != nil {
				wantErr = tc.err.Error()
			}
			if op.Kind != history.Fault || op.Fault != tc.kind || op.Target != tc.target || op.Error != wantErr {
				t.Errorf("recorded %+v, want a %s fault %s on %q, error %q", op, history.Fault, tc.kind, tc.target, wantErr)
			}
			if !(op.Invoke <= during && during <= op.Complete) {
				t.Errorf("recorded from %d to %d, want a span around the injection at %d", op.Invoke, op.Complete, during)
			}
			if len(logged) != 1 || !strings.Contains(logged[0], tc.kind) || !strings.Contains(logged[0], tc.target) {
				t.Errorf("logged %q, want one line naming %s and %q", logged, tc.kind, tc.target)
			}
		})
	}
}

// The faults at the proxy end healed: once inject returns, connections
// through the proxy carry traffic again, a create's marker included. A
// cut also closes the connections open when it began.
func TestProxyFaultsEndHealed(t *testing.T) {
	echo := echoServer(t)
	for _, kind := range []string{Cut, CommitLost} {
		t.Run(kind, func(t *testing.T) {
			proxy, err := pgtest.StartProxy(echo)
			if err != nil {
				t.Fatal(err)
			}
			defer proxy.Close()
			n := &Nemesis{Proxy: proxy, Marker: "chaos-"}
			before := dial(t, proxy.Addr())
			roundTrip(t, before, "hello")
			if target, err := n.inject(kind, time.Millisecond); target != "proxy" || err != nil {
				t.Fatalf("inject %s: got %q, %v, want proxy, no error", kind, target, err)
			}
			if kind == Cut {
				before.SetDeadline(time.Now().Add(10 * time.Second))
				if _, err := before.Read(make([]byte, 1)); err == nil {
					t.Errorf("a connection open before the cut still reads")
				}
			}
			roundTrip(t, dial(t, proxy.Addr()), "create chaos-rex")
		})
	}
}

// echoServer answers on loopback each connection with what it reads.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip sends msg on c and wants it back within 10 s.
func roundTrip(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, msg); err != nil {
		t.Fatalf("write %q: %v", msg, err)
	}
	got := make([]byte, len(msg))
	if n, err := io.ReadFull(c, got); err != nil || string(got) != msg {
		t.Fatalf("through the proxy: got %q, %v, want %q back", got[:n], err, msg)
	}
}

package deploy

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/petstore/petstore/internal/chaos/workload"
	"github.com/petstore/petstore/internal/check"
	"github.com/petstore/petstore/internal/history"
)

// final is one row's count: ok when the operation ended in the success the
// contract promises (201 for a create, 200 for a get of an acknowledged
// pet, every page 200 for a walk), failed otherwise, and cut short when the
// end of the load canceled it (not counted either way).
type final struct{ ok, failed, cut int }

// finals counts the operations of a history by their final outcome, in
// the rows of the audit's table (check.Rows): one a logical operation,
// after the client's own retries (a keyed create is resent with its key
// until it is answered; a walk resends a page that failed; a keyless
// create and a get are sent once). loadEnd is when the load was stopped
// (history time).
func finals(ops []history.Op, loadEnd int64) map[string]*final {
	m := map[string]*final{}
	for _, row := range check.Rows {
		m[row] = &final{}
	}
	keyOK := map[string]bool{}
	keyCut := map[string]bool{}
	var keys []string
	for _, op := range ops {
		row := check.RowOf(&op)
		if row == "" {
			continue
		}
		cut := op.Status == 0 && op.Complete >= loadEnd && strings.Contains(op.Error, "context canceled")
		switch row {
		case check.RowKeyed:
			if _, seen := keyOK[op.Key]; !seen {
				keys = append(keys, op.Key)
			}
			keyOK[op.Key] = keyOK[op.Key] || op.Outcome == history.OK
			keyCut[op.Key] = cut // the last attempt's
			continue
		case check.RowKeyless:
			cut = false // sent once, whatever its end
		case check.RowWalk:
			cut = cut || op.Complete >= loadEnd && stoppedOnTheWay(op)
		}
		// The load marks ok only the contract's success: a create's 201, a
		// get's 200 or 404 (the getters also ask for ids above the last
		// acknowledged; a 404 for an acknowledged pet is the audit's "get
		// 404 after ack"), a walk's last page.
		f := m[row]
		switch {
		case op.Outcome == history.OK:
			f.ok++
		case cut:
			f.cut++
		default:
			f.failed++
		}
	}
	f := m[check.RowKeyed]
	for _, k := range keys {
		switch {
		case keyOK[k]:
			f.ok++
		case keyCut[k]:
			f.cut++
		default:
			f.failed++
		}
	}
	return m
}

// stoppedOnTheWay reports whether a walk that did not reach its last page
// ended with every page it asked for answered 200 and a next link to
// follow: the end of the load stopped it, nothing refused it.
func stoppedOnTheWay(op history.Op) bool {
	if len(op.Pages) == 0 {
		return true
	}
	last := op.Pages[len(op.Pages)-1]
	return last.Status == 200 && last.Next != ""
}

// failedTotal is the number of operations that failed in the end.
func failedTotal(m map[string]*final) int {
	n := 0
	for _, f := range m {
		n += f.failed
	}
	return n
}

func printFinals(w io.Writer, m map[string]*final) {
	fmt.Fprintf(w, "%-22s %8s %8s %8s %8s\n", "final outcomes", "total", "ok", "failed", "cut")
	for _, row := range check.Rows {
		f := m[row]
		fmt.Fprintf(w, "%-22s %8d %8d %8d %8d\n", row, f.ok+f.failed, f.ok, f.failed, f.cut)
	}
}

// span is a stretch of time.
type span struct{ start, end time.Time }

// phase is one or more spans of the run whose requests are summed up
// together.
type phase struct {
	name  string
	spans []span
}

func (p phase) seconds() float64 {
	var d time.Duration
	for _, s := range p.spans {
		d += s.end.Sub(s.start)
	}
	return d.Seconds()
}

func (p phase) holds(t time.Time) bool {
	for _, s := range p.spans {
		if !t.Before(s.start) && t.Before(s.end) {
			return true
		}
	}
	return false
}

// phaseStats is the throughput and latency of the requests begun in a phase.
type phaseStats struct {
	phase
	requests, notOK int
	p50, p99, max   time.Duration
}

func (s phaseStats) rps() float64 {
	if d := s.seconds(); d > 0 {
		return float64(s.requests) / d
	}
	return 0
}

// byPhase sums up the requests begun in each phase (cut-short ones aside).
func byPhase(all []workload.Sent, phases []phase) []phaseStats {
	out := make([]phaseStats, len(phases))
	for i, p := range phases {
		out[i].phase = p
		var lat []time.Duration
		for _, s := range all {
			if s.Status == workload.CutShort || !p.holds(s.Start) {
				continue
			}
			out[i].requests++
			if !workload.Answered(s.Kind, s.Status) {
				out[i].notOK++
			}
			lat = append(lat, s.End.Sub(s.Start))
		}
		if len(lat) > 0 {
			slices.Sort(lat)
			out[i].p50, out[i].p99, out[i].max = lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
		}
	}
	return out
}

// printPhases writes each stretch, then every steady stretch and every
// round together. ps alternates steady stretches and rounds (steady 0,
// round 1, steady 1, …), then holds the two totals. A round's rps is set
// against the mean of the steady stretches either side of it, which takes
// out a trend across the run (walks grow longer as pets are created).
func printPhases(w io.Writer, ps []phaseStats) {
	fmt.Fprintf(w, "%-22s %8s %8s %8s %8s %8s %8s %8s %8s\n", "through the balancer", "seconds", "requests", "rps", "vs around", "not ok", "p50 ms", "p99 ms", "max ms")
	ratios := roundRatios(ps)
	sum := 0.0
	for _, r := range ratios {
		sum += r
	}
	for i, p := range ps {
		vs := ""
		switch {
		case i < len(ps)-2 && i%2 == 1:
			vs = fmt.Sprintf("%.2f", ratios[i/2])
		case i == len(ps)-1 && len(ratios) > 0:
			vs = fmt.Sprintf("%.2f", sum/float64(len(ratios)))
		}
		fmt.Fprintf(w, "%-22s %8.1f %8d %8.1f %8s %8d %8.1f %8.1f %8.1f\n", p.name, p.seconds(), p.requests, p.rps(), vs, p.notOK,
			msf(p.p50), msf(p.p99), msf(p.max))
	}
}

// roundRatios is each round's rps over the mean rps of the steady
// stretches before and after it.
func roundRatios(ps []phaseStats) []float64 {
	var out []float64
	for i := 1; i+1 < len(ps)-2; i += 2 {
		out = append(out, ps[i].rps()/((ps[i-1].rps()+ps[i+1].rps())/2))
	}
	return out
}

func msf(d time.Duration) float64 { return float64(d) / 1e6 }

// step is one replica's turn in a round: times since its SIGTERM.
type step struct {
	round   int
	replica string
	version string
	// out: HAProxy took it out of rotation (DOWN); exited: the old process
	// ended; ready: the new one answered /readyz; in: HAProxy put it back
	// (UP). out is 0 when HAProxy never saw it down (it was back first).
	out, exited, ready, in time.Duration
}

func printSteps(w io.Writer, steps []step, delay time.Duration) {
	fmt.Fprintf(w, "%-6s %-8s %-10s %12s %12s %12s %12s   (ms after SIGTERM; drain %v)\n", "round", "replica", "version", "out", "exited", "ready", "back in", delay)
	for _, s := range steps {
		out := "never"
		if s.out > 0 {
			out = strconv.FormatFloat(msf(s.out), 'f', 0, 64)
		}
		fmt.Fprintf(w, "%-6d %-8s %-10s %12s %12.0f %12.0f %12.0f\n", s.round, s.replica, s.version, out, msf(s.exited), msf(s.ready), msf(s.in))
	}
}

// lbCounters are the backend's totals from HAProxy's stats, as named there.
var lbCounters = []struct{ col, name string }{
	{"wretr", "retries"}, {"wredis", "redispatches"}, {"econ", "connection errors"},
	{"eresp", "response errors"}, {"hrsp_5xx", "5xx answered"},
}

func printLB(w io.Writer, backend map[string]string) {
	parts := make([]string, len(lbCounters))
	for i, c := range lbCounters {
		parts[i] = fmt.Sprintf("%s %s", c.name, cmp.Or(backend[c.col], "0"))
	}
	fmt.Fprintf(w, "%-22s %s\n", "balancer (backend)", strings.Join(parts, ", "))
}

package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The kinds of HTTP request the workload sends, as the tally names them.
const (
	reqKeyed      = "create, keyed"
	reqKeyedRetry = "create, keyed, resent"
	reqKeyless    = "create, keyless"
	reqGet        = "get"
	reqPage       = "list page"
)

var reqKinds = []string{reqKeyed, reqKeyedRetry, reqKeyless, reqGet, reqPage}

// success is the status the contract promises each kind, when it works.
func success(kind string) int {
	if strings.HasPrefix(kind, "create") {
		return http.StatusCreated
	}
	return http.StatusOK
}

// answered reports whether status is a right answer to a request of kind:
// its success, or for a get a 404 (the getters also ask for ids above the
// last acknowledged; a 404 for an acknowledged pet is the audit's).
func answered(kind string, status int) bool {
	return status == success(kind) || kind == reqGet && status == http.StatusNotFound
}

// Outcome columns besides the statuses.
const (
	noAnswer = -1 // a transport error: no status came back
	cutShort = -2 // canceled by the end of the load: not counted
)

// sent is one HTTP request the workload made and what came of it.
type sent struct {
	kind       string
	start, end time.Time
	status     int // or noAnswer, cutShort
}

// tally records every request the workload sends (load.do): the
// client's view, retries included.
type tally struct {
	mu  sync.Mutex
	all []sent
}

func (t *tally) add(s sent) {
	t.mu.Lock()
	t.all = append(t.all, s)
	t.mu.Unlock()
}

// requests returns what was recorded so far.
func (t *tally) requests() []sent {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.all)
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
func byPhase(all []sent, phases []phase) []phaseStats {
	out := make([]phaseStats, len(phases))
	for i, p := range phases {
		out[i].phase = p
		var lat []time.Duration
		for _, s := range all {
			if s.status == cutShort || !p.holds(s.start) {
				continue
			}
			out[i].requests++
			if !answered(s.kind, s.status) {
				out[i].notOK++
			}
			lat = append(lat, s.end.Sub(s.start))
		}
		if len(lat) > 0 {
			slices.Sort(lat)
			out[i].p50, out[i].p99, out[i].max = lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
		}
	}
	return out
}

// printByStatus writes every request sent, by kind and outcome: the
// statuses seen, "none" for no answer, and the not-ok count.
func printByStatus(w io.Writer, all []sent) {
	counts := map[string]map[int]int{}
	cols := map[int]bool{}
	for _, s := range all {
		if counts[s.kind] == nil {
			counts[s.kind] = map[int]int{}
		}
		counts[s.kind][s.status]++
		cols[s.status] = true
	}
	order := slices.SortedFunc(maps.Keys(cols), func(a, b int) int {
		// Statuses ascending, then no answer, then cut short.
		return cmp.Compare(uint(a), uint(b))
	})
	fmt.Fprintf(w, "%-22s %8s", "requests sent", "total")
	for _, c := range order {
		fmt.Fprintf(w, " %7s", statusName(c))
	}
	fmt.Fprintf(w, " %7s\n", "not ok")
	for _, kind := range reqKinds {
		m := counts[kind]
		total, bad := 0, 0
		for st, n := range m {
			if st != cutShort {
				total += n
				if !answered(kind, st) {
					bad += n
				}
			}
		}
		fmt.Fprintf(w, "%-22s %8d", kind, total)
		for _, c := range order {
			fmt.Fprintf(w, " %7d", m[c])
		}
		fmt.Fprintf(w, " %7d\n", bad)
	}
}

func statusName(st int) string {
	switch st {
	case noAnswer:
		return "none"
	case cutShort:
		return "cut"
	}
	return strconv.Itoa(st)
}

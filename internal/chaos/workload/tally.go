package workload

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
	ReqKeyed      = "create, keyed"
	ReqKeyedRetry = "create, keyed, resent"
	ReqKeyless    = "create, keyless"
	ReqGet        = "get"
	ReqPage       = "list page"
)

var reqKinds = []string{ReqKeyed, ReqKeyedRetry, ReqKeyless, ReqGet, ReqPage}

// success is the status the contract promises each kind, when it works.
func success(kind string) int {
	if strings.HasPrefix(kind, "create") {
		return http.StatusCreated
	}
	return http.StatusOK
}

// Answered reports whether status is a right answer to a request of kind:
// its success, or for a get a 404 (the getters also ask for ids above the
// last acknowledged; a 404 for an acknowledged pet is the audit's).
func Answered(kind string, status int) bool {
	return status == success(kind) || kind == ReqGet && status == http.StatusNotFound
}

// Outcome columns besides the statuses.
const (
	NoAnswer = -1 // a transport error: no status came back
	CutShort = -2 // canceled by the end of the load: not counted
)

// Sent is one HTTP request the workload made and what came of it.
type Sent struct {
	Kind       string
	Start, End time.Time
	Status     int // or NoAnswer, CutShort
}

// Tally records every request the workload sends (Load.do): the
// client's view, retries included.
type Tally struct {
	mu  sync.Mutex
	all []Sent
}

func (t *Tally) add(s Sent) {
	t.mu.Lock()
	t.all = append(t.all, s)
	t.mu.Unlock()
}

// Requests returns what was recorded so far.
func (t *Tally) Requests() []Sent {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.all)
}

// PrintByStatus writes every request sent, by kind and outcome: the
// statuses seen, "none" for no answer, and the not-ok count.
func PrintByStatus(w io.Writer, all []Sent) {
	counts := map[string]map[int]int{}
	cols := map[int]bool{}
	for _, s := range all {
		if counts[s.Kind] == nil {
			counts[s.Kind] = map[int]int{}
		}
		counts[s.Kind][s.Status]++
		cols[s.Status] = true
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
			if st != CutShort {
				total += n
				if !Answered(kind, st) {
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
	case NoAnswer:
		return "none"
	case CutShort:
		return "cut"
	}
	return strconv.Itoa(st)
}

package conform

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/petstore/petstore/internal/conform/cases"
	"github.com/petstore/petstore/internal/conform/judge"
	"github.com/petstore/petstore/internal/conform/wire"
	"github.com/petstore/petstore/internal/history"
)

// -examples N: N random sequences of operations (creates, keyed retries,
// reuses of a key, gets, walks of the listing, filtered or not), drawn from
// the seed, each run against a model of its own and judged by it, as
// Hypothesis's rule-based state machines and QuickCheck's state-machine
// tests do. The first sequence that fails is shrunk (steps deleted, then
// values simplified, re-running it each time, a bounded number of times)
// and reported with one curl line a request, in order.

// Budgets of the -examples mode: the requests a sequence may send at most
// (and what MaxRequests grows by a sequence), the sequences shrinking may
// run and the requests it may send.
const (
	ExamplesBudget = 40
	maxSteps       = 12
	maxShrinkRuns  = 60
	ShrinkBudget   = maxShrinkRuns * ExamplesBudget
)

type stepKind int

const (
	stepCreate stepKind = iota
	stepRetry           // a keyed create sent again, in some equivalent form
	stepReuse           // a keyed create's key with another pet
	stepGet
	stepList
)

func (k stepKind) String() string {
	return [...]string{"create", "retry", "reuse", "get", "list"}[k]
}

// step is one operation of a sequence. Its values are indices, so that a
// sequence replays against any target and shrinks toward index 0, the
// simplest value; a pet is named by the create step that made it (of),
// never by the id a target gave.
type step struct {
	kind   stepKind
	tenant int   // 1, or 2 with -key2
	keyed  bool  // a create with an Idempotency-Key
	values []int // a create: one index a member, into exampleValues
	of     int   // the create step this one refers to; -1: none
	form   int   // a retry: 0 as sent, 1 reordered and escaped, 2 the key quoted
	limit  int   // a list: the limit, 0 for its default
	filter int   // a list: 0 none, else the filter's value filter-1
	after  int   // a list: 0 from the start of the sequence's pets, 1 after the pet of of, 2 before it
	pages  int   // a list: pages to follow, 1 to 3
}

// examples runs the -examples mode.
func (r *run) examples(ctx context.Context) error {
	if r.roles.Create == nil || r.roles.List == nil {
		return nil
	}
	for i := range r.cfg.Examples {
		seq := r.generate(i)
		fails, lines, err := r.execute(ctx, seq, false)
		if err != nil {
			return err
		}
		r.mu.Lock()
		r.sequences++
		r.mu.Unlock()
		if len(fails) > 0 {
			return r.shrink(ctx, i, seq, fails[0], lines)
		}
	}
	return nil
}

// exampleValues are the values a create step may give each member: index
// 0 the simplest; an optional member's 0 leaves it out.
func (r *run) exampleValues() map[string][]any {
	out := map[string][]any{}
	body := r.roles.Create.Body
	for _, name := range sortedKeys(body.Properties) {
		s := cases.Flat(body.Properties[name].Value)
		var vs []any
		if !slices.Contains(body.Required, name) {
			vs = append(vs, cases.Absent)
		}
		switch {
		case name == r.NameMember():
			vs = append(vs, "", " spaced ", " \u200fשלום\u200f", " 👩\u200d🚀", " é\u0301", " \u00a0")
		case len(s.Enum) > 0:
			vs = append(vs, s.Enum...)
		case cases.IsType(s, "integer"):
			lo, hi := cases.IntBounds(s)
			vs = append(vs, intNumber(lo))
			for _, n := range cases.WholeRange(s.Format) {
				if n.Cmp(lo) > 0 && n.Cmp(hi) <= 0 {
					vs = append(vs, intNumber(n))
				}
			}
			vs = append(vs, intNumber(new(big.Int).Add(lo, big.NewInt(6))))
		default:
			for _, v := range r.Valid(s) {
				vs = append(vs, v.JSON)
			}
		}
		out[name] = vs
	}
	return out
}

// generate draws sequence i from the seed.
func (r *run) generate(i int) []step {
	rng := rand.New(rand.NewPCG(r.cfg.Seed, uint64(i)+1))
	values := r.exampleValues()
	members := sortedKeys(values)
	n := 3 + rng.IntN(maxSteps-2)
	var seq []step
	var creates []int
	for len(seq) < n {
		s := step{kind: stepKind(rng.IntN(5)), tenant: 1, of: -1}
		if r.cfg.Key2 != "" && rng.IntN(4) == 0 {
			s.tenant = 2
		}
		if len(creates) > 0 {
			s.of = creates[rng.IntN(len(creates))]
		}
		if (s.kind == stepRetry || s.kind == stepReuse) && (s.of < 0 || !seq[s.of].keyed) || s.kind == stepGet && s.of < 0 {
			s.kind = stepCreate
		}
		switch s.kind {
		case stepCreate:
			s.keyed = rng.IntN(2) == 0
			for _, m := range members {
				s.values = append(s.values, rng.IntN(len(values[m])))
			}
			creates = append(creates, len(seq))
		case stepRetry:
			s.form, s.tenant = rng.IntN(3), seq[s.of].tenant
		case stepReuse:
			s.tenant = seq[s.of].tenant
		case stepList:
			s.limit, s.filter, s.after, s.pages = rng.IntN(r.bounds.LimitMax+1), rng.IntN(len(r.statuses())+1), rng.IntN(3), 1+rng.IntN(3)
		}
		seq = append(seq, s)
	}
	return seq
}

// execution is one run of a sequence: what its steps learnt.
type execution struct {
	r      *run
	n      int // the run's count of executions: in its names and keys
	seq    []step
	ids    []int64  // the pet each create step made, 0 if none
	bodies [][]byte // the body each create step sent
	keys   []string // the key each keyed create step sent
	values map[string][]any
}

// execute runs seq against a model of its own, and returns the failures of
// the first step that failed, and the curl lines of every request up to
// it, in order.
func (r *run) execute(ctx context.Context, seq []step, quiet bool) ([]Failure, []string, error) {
	r.mu.Lock()
	r.executions++
	n := r.executions
	r.mu.Unlock()
	prefix := fmt.Sprintf("conform-ex%d-%s.", n, r.tag)
	sc := &judge.Scope{Sink: r, Own: true, Quiet: quiet, Trace: true, Process: n}
	r.hist.Note(&history.Op{Kind: history.Scope, Process: n, Kit: history.Kit{Names: prefix}})
	defer r.hist.Note(&history.Op{Kind: history.Merge, Process: n})
	ctx = judge.WithScope(ctx, sc)
	e := &execution{r: r, n: n, seq: seq, ids: make([]int64, len(seq)), bodies: make([][]byte, len(seq)), keys: make([]string, len(seq)), values: r.exampleValues()}
	for i := range seq {
		if err := e.do(ctx, i, prefix); err != nil {
			return nil, nil, err
		}
		if fails := sc.Failures(); len(fails) > 0 {
			return fails, sc.Lines(), nil
		}
	}
	return nil, sc.Lines(), nil
}

// do runs step i.
func (e *execution) do(ctx context.Context, i int, prefix string) error {
	r, s := e.r, e.seq[i]
	switch s.kind {
	case stepCreate:
		return e.create(ctx, i, prefix)
	case stepRetry:
		body, key := e.bodies[s.of], e.keys[s.of]
		switch s.form {
		case 1:
			if m, ok := judge.DecodeObject(body); ok {
				body = cases.Spaced(m)
			}
		case 2:
			key = `"` + key + `"`
		}
		_, _, _, err := r.Post(ctx, body, cases.KeyHeader(key), s.tenant)
		return err
	case stepReuse:
		body := r.reqs.BaseBodyNamed(r.roles.Create.Body, fmt.Sprintf("%s%d-other", prefix, i))
		_, _, _, err := r.Post(ctx, cases.MustJSON(body), cases.KeyHeader(e.keys[s.of]), s.tenant)
		return err
	case stepGet:
		if e.ids[s.of] == 0 || r.roles.Get == nil {
			return nil
		}
		_, err := r.Send(ctx, wire.Request{Method: http.MethodGet, Target: r.reqs.GetTarget(e.ids[s.of]), Tenant: s.tenant})
		return err
	}
	return e.list(ctx, s)
}

func (e *execution) create(ctx context.Context, i int, prefix string) error {
	r, s := e.r, e.seq[i]
	body := map[string]any{}
	for j, m := range sortedKeys(e.values) {
		v := e.values[m][s.values[j]%len(e.values[m])]
		if m == r.NameMember() {
			v = prefix + strconv.Itoa(i) + v.(string)
		}
		if v != cases.Absent {
			body[m] = v
		}
	}
	e.bodies[i] = cases.MustJSON(body)
	var h http.Header
	if s.keyed {
		e.keys[i] = prefix + "k" + strconv.Itoa(i)
		h = cases.KeyHeader(e.keys[i])
	}
	x, id, ok, err := r.Post(ctx, e.bodies[i], h, s.tenant)
	if err != nil {
		return err
	}
	r.Expect("positive_data_acceptance", x, ok, "201 for a valid create")
	if ok {
		e.ids[i] = id
	}
	return nil
}

func (e *execution) list(ctx context.Context, s step) error {
	r := e.r
	var q []string
	switch {
	case s.after == 1 && s.of >= 0 && e.ids[s.of] > 0:
		q = append(q, "after="+strconv.FormatInt(e.ids[s.of], 10))
	case s.after == 2 && s.of >= 0 && e.ids[s.of] > 0:
		q = append(q, "after="+strconv.FormatInt(e.ids[s.of]-1, 10))
	default:
		q = append(q, "after="+strconv.FormatInt(e.first()-1, 10))
	}
	if s.limit > 0 {
		q = append(q, "limit="+strconv.Itoa(min(s.limit, r.bounds.LimitMax)))
	}
	if ss := r.statuses(); s.filter > 0 && s.filter <= len(ss) {
		q = append(q, r.roles.Filter+"="+ss[s.filter-1])
	}
	_, _, err := r.walkPages(ctx, strings.Join(q, "&"), 0, s.pages)
	return err
}

// first is the smallest id the sequence's creates got so far, or the run's
// first pet's.
func (e *execution) first() int64 {
	first := e.r.FirstID()
	for _, id := range e.ids {
		if id > 0 && (first == 0 || id < first) {
			first = id
		}
	}
	return max(first, 1)
}

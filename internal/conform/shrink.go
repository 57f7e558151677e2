package conform

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// shrink makes a failing sequence as short and simple as it can while it
// still fails the same check: first it deletes steps, then it simplifies
// the values of those left, re-running the sequence each time, at most
// maxShrinkRuns times. It records the failure of the last sequence that
// failed, with the curl lines of all its requests, in order.
func (r *run) shrink(ctx context.Context, example int, seq []step, first Failure, lines []string) error {
	sh := &shrinker{r: r, check: first.Check, best: seq, fail: first, lines: lines}
	for changed := true; changed && sh.runs < maxShrinkRuns; {
		changed = false
		for j := len(sh.best) - 1; j >= 0 && sh.runs < maxShrinkRuns; j-- {
			if j >= len(sh.best) {
				continue
			}
			ok, err := sh.tryKeep(ctx, without(sh.best, j))
			if err != nil {
				return err
			}
			changed = changed || ok
		}
	}
	for j := 0; j < len(sh.best) && sh.runs < maxShrinkRuns; j++ {
		for kind := 0; kind < simplerKinds+len(sh.best[j].values); kind++ {
			if simpler, ok := simplified(sh.best, j, kind); ok {
				if _, err := sh.tryKeep(ctx, simpler); err != nil {
					return err
				}
			}
		}
	}
	f := sh.fail
	f.Want = fmt.Sprintf("%s (in example %d of seed %d, shrunk to %d steps in %d re-runs: the curl lines replay it, in order)", f.Want, example, r.cfg.Seed, len(sh.best), sh.runs)
	f.Curl = strings.Join(sh.lines, "\n")
	r.Record(f.Check, f.Operation, &f)
	return nil
}

type shrinker struct {
	r     *run
	check string
	best  []step
	fail  Failure
	lines []string
	runs  int
}

func (sh *shrinker) tryKeep(ctx context.Context, seq []step) (bool, error) {
	if len(seq) == 0 || sh.runs >= maxShrinkRuns {
		return false, nil
	}
	sh.runs++
	fails, lines, err := sh.r.execute(ctx, seq, true)
	if err != nil {
		return false, err
	}
	for _, f := range fails {
		if f.Check == sh.check {
			sh.best, sh.fail, sh.lines = seq, f, lines
			return true, nil
		}
	}
	return false, nil
}

// without is seq less step j, and less the steps that refer to it: a
// retry, a reuse or a get of the create it names. A create or a listing
// only carries the field; it loses it with the step it named.
func without(seq []step, j int) []step {
	out := make([]step, 0, len(seq))
	index := make([]int, len(seq)) // old index → new, -1 dropped
	for i, s := range seq {
		refers := s.kind == stepRetry || s.kind == stepReuse || s.kind == stepGet
		if i == j || refers && s.of >= 0 && (s.of == j || index[s.of] < 0) {
			index[i] = -1
			continue
		}
		if s.of >= 0 {
			if s.of == j || index[s.of] < 0 {
				s.of = -1
			} else {
				s.of = index[s.of]
			}
		}
		index[i] = len(out)
		out = append(out, s)
	}
	return out
}

// simplerKinds are the values of a step simplified besides its members':
// tenant, form, filter, after, pages, limit, and a key left out.
const simplerKinds = 7

// simplified is a copy of seq with one value of step j simpler: kind
// names which (a member's index after simplerKinds); ok is false when it
// is as simple as it gets.
func simplified(seq []step, j, kind int) ([]step, bool) {
	c := append([]step(nil), seq...)
	s := &c[j]
	s.values = append([]int(nil), s.values...)
	if kind == 6 { // a create without its key, unless a retry or a reuse needs it
		needed := slices.ContainsFunc(seq, func(t step) bool { return t.of == j && (t.kind == stepRetry || t.kind == stepReuse) })
		s.keyed = false
		return c, seq[j].keyed && !needed
	}
	field := []*int{&s.tenant, &s.form, &s.filter, &s.after, &s.pages, &s.limit}
	simplest := []int{1, 0, 0, 0, 1, 0}
	if kind >= simplerKinds {
		field, simplest = []*int{&s.values[kind-simplerKinds]}, []int{0}
		kind = 0
	}
	if *field[kind] == simplest[kind] || kind == 4 && *field[kind] < 1 {
		return nil, false
	}
	*field[kind] = simplest[kind]
	return c, true
}

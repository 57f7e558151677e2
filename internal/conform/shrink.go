package conform

import (
	"context"
	"fmt"
	"strings"
)

// shrink makes a failing sequence as short and simple as it can while it
// still fails the same check: first it deletes steps, then it simplifies
// the values of those left, re-running the sequence each time, at most
// maxShrinkRuns times. It records the failure of the last sequence that
// failed, with the curl lines of all its requests, in order.
func (r *run) shrink(ctx context.Context, example int, seq []step, first Failure) error {
	sh := &shrinker{r: r, check: first.Check, best: seq, fail: first}
	// The failing run's lines; a re-run gives them as well, quietly.
	if err := sh.try(ctx, seq); err != nil {
		return err
	}
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
		for _, simpler := range simplifications(sh.best, j) {
			if _, err := sh.tryKeep(ctx, simpler); err != nil {
				return err
			}
		}
	}
	f := sh.fail
	f.Want = fmt.Sprintf("%s (in example %d of seed %d, shrunk to %d steps in %d re-runs: the curl lines replay it, in order)", f.Want, example, r.cfg.Seed, len(sh.best), sh.runs)
	f.Curl = strings.Join(sh.lines, "\n")
	r.record(f.Check, f.Operation, &f)
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

// try runs seq and keeps it as the best when it fails the check.
func (sh *shrinker) try(ctx context.Context, seq []step) error {
	_, err := sh.tryKeep(ctx, seq)
	return err
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

// without is seq less step j, and less the steps that refer to it.
func without(seq []step, j int) []step {
	out := make([]step, 0, len(seq))
	index := make([]int, len(seq)) // old index → new, -1 dropped
	for i, s := range seq {
		if i == j || s.of >= 0 && (s.of == j || index[s.of] < 0) && s.kind != stepList {
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

// simplifications are copies of seq with one value of step j simpler.
func simplifications(seq []step, j int) [][]step {
	var out [][]step
	vary := func(f func(*step) bool) {
		c := append([]step(nil), seq...)
		c[j].values = append([]int(nil), c[j].values...)
		if f(&c[j]) {
			out = append(out, c)
		}
	}
	s := seq[j]
	for k := range s.values {
		vary(func(s *step) bool { changed := s.values[k] != 0; s.values[k] = 0; return changed })
	}
	vary(func(s *step) bool { changed := s.tenant != 1; s.tenant = 1; return changed })
	vary(func(s *step) bool { changed := s.form != 0; s.form = 0; return changed })
	vary(func(s *step) bool { changed := s.filter != 0; s.filter = 0; return changed })
	vary(func(s *step) bool { changed := s.after != 0; s.after = 0; return changed })
	vary(func(s *step) bool { changed := s.pages > 1; s.pages = 1; return changed })
	vary(func(s *step) bool { changed := s.limit != 0; s.limit = 0; return changed })
	return out
}

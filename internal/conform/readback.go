package conform

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"

	"github.com/petstore/petstore/internal/conform/judge"
	"github.com/petstore/petstore/internal/conform/wire"
	"github.com/petstore/petstore/internal/history"
)

// readBack reads every pet the run created, at the end: by its id (the
// model judges each answer: 404 fails durability, another pet
// stored_as_sent) and in one walk of the listing from the run's first pet,
// where each must be found once. A store that loses or alters data during
// the run fails here. The walk goes on until it has passed the run's last
// pet, however many pages that takes: only the budget cuts it short, and
// then the run is incomplete, never a pet lost.
func (r *run) readBack(ctx context.Context) error {
	pets := r.hist.Confirmed()
	if len(pets) == 0 || r.roles.List == nil {
		return nil
	}
	if r.roles.Get != nil {
		for _, p := range pets {
			x, err := r.Send(ctx, wire.Request{Method: "GET", Target: r.reqs.GetTarget(p)})
			if err != nil {
				return err
			}
			x.In.Record("durability", x.Op, nil)
		}
	}
	from := pets[0] - 1
	if first := r.FirstID(); first > 0 && first <= pets[len(pets)-1] {
		from = first - 1 // pets before the run's first are read by id only
	}
	query := "after=" + strconv.FormatInt(from, 10) + "&limit=" + strconv.Itoa(r.bounds.LimitMax)
	seen, last, err := r.walk(ctx, query, pets[len(pets)-1])
	if errors.Is(err, wire.ErrBudget) {
		r.Incomplete("durability", "the read-back's walk", r.cutShort()+" before the walk of the listing passed the run's last pet: the pets it did not reach are neither found nor lost")
	}
	if err != nil || last == nil {
		return err
	}
	// The checker judges the walk (check.Model: every pet found once), at
	// its last page.
	op := &history.Op{Kind: history.ReadBack, Kit: history.Kit{After: from, Want: pets}}
	for _, id := range slices.Sorted(maps.Keys(seen)) {
		for range seen[id] {
			op.IDs = append(op.IDs, id)
		}
	}
	r.judgeWalk(op, last, "durability")
	return nil
}

// judgeWalk has the checker judge op, a walk whose last page is last, and
// records what it found at that page; a walk it finds whole passes check.
func (r *run) judgeWalk(op *history.Op, last *judge.Exchange, check string) {
	r.hist.Invoke(op)
	found := r.hist.Complete(op)
	for _, a := range found {
		f := r.Fail(last, a.Want, a.Got)
		f.Kind = a.Kind
		last.In.Record(a.Check, last.Op, f)
	}
	if len(found) == 0 {
		last.In.Record(check, last.Op, nil)
	}
	r.hist.Write(op)
}

// FirstID is the id of the run's first pet, from its tag; 0 without one.
func (r *run) FirstID() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.tag) < 2 {
		return 0
	}
	id, _ := strconv.ParseInt(r.tag[1:], 36, 64)
	return id
}

package conform

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/petstore/petstore/internal/conform/cases"
	"github.com/petstore/petstore/internal/conform/judge"
	"github.com/petstore/petstore/internal/conform/wire"
	"github.com/petstore/petstore/internal/history"
)

// Post creates body (with header's fields, as tenant) and returns the
// exchange and the id of the created pet (ok only for a 201 with an id).
func (r *run) Post(ctx context.Context, body []byte, header http.Header, tenant int) (x *judge.Exchange, id int64, ok bool, err error) {
	req := r.reqs.CreateReq(body, header)
	req.Tenant = tenant
	if x, err = r.Send(ctx, req); err != nil {
		return nil, 0, false, err
	}
	id, ok = x.CreatedID()
	return x, id, ok, nil
}

// stateCases checks what the contract says of the store: a created pet is
// there to read and list; defaults; paging.
func (r *run) stateCases(ctx context.Context) error {
	if r.roles.Create == nil || r.roles.List == nil {
		return nil
	}
	for _, step := range []func(context.Context) error{r.useAfterCreate, r.defaultStatus, r.paging} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// statuses are the values of the listing's filter, the default first.
func (r *run) statuses() []string {
	s := r.roles.Create.Created.Properties[r.roles.Filter]
	if r.roles.Filter == "" || s == nil || s.Value == nil {
		return nil
	}
	var out []string
	def, _ := strconv.Unquote(r.Defaults()[r.roles.Filter])
	for _, v := range cases.Flat(s.Value).Enum {
		if v := fmt.Sprint(v); v == def {
			out = append([]string{v}, out...)
		} else {
			out = append(out, v)
		}
	}
	return out
}

// useAfterCreate sends what makes a created pet used: read at its
// Location and by its id, listed under its status and not. The case wants
// of each answer only its status; the checker judges what each shows (the
// model: the pet as created, stored_as_sent; a Location naming it,
// use_after_create; on the page that must hold it, pagination).
func (r *run) useAfterCreate(ctx context.Context) error {
	extra := map[string]any{}
	var st string
	if ss := r.statuses(); len(ss) > 1 {
		st = ss[1] // not the default
		extra[r.roles.Filter] = st
	}
	x, id, ok, err := r.Post(ctx, cases.MustJSON(r.reqs.NewPet("conform-read", extra)), nil, 1)
	if err != nil {
		return err
	}
	if !ok {
		r.Expect("use_after_create", x, false, "201 with the created pet")
		return nil
	}
	if target, err := r.Resolve(x.Header.Get("Location")); x.Header.Get("Location") == "" || err != nil {
		r.Expect("use_after_create", x, false, "a Location header naming the created pet on BASE_URL's host")
	} else if err := r.readAt(ctx, target, "200 at the Location"); err != nil {
		return err
	}
	if r.roles.Get != nil {
		if err := r.readAt(ctx, r.reqs.GetTarget(id), "200 by its id"); err != nil {
			return err
		}
	}
	// Listed, filtered by its status and not, right after the pet before it.
	for _, filter := range []string{st, ""} {
		q := fmt.Sprintf("after=%d&limit=1", id-1)
		if filter != "" {
			q += "&" + r.roles.Filter + "=" + url.QueryEscape(filter)
		}
		y, err := r.Send(ctx, wire.Request{Method: http.MethodGet, Target: r.reqs.ListTarget(q)})
		if err != nil {
			return err
		}
		r.Expect("use_after_create", y, y.Status == http.StatusOK, "200 for the listing after the id before the pet created")
	}
	return nil
}

// readAt gets target: 200.
func (r *run) readAt(ctx context.Context, target string, want string) error {
	y, err := r.Send(ctx, wire.Request{Method: http.MethodGet, Target: target})
	if err != nil {
		return err
	}
	r.Expect("use_after_create", y, y.Status == http.StatusOK, want)
	return nil
}

// defaultStatus: a create without the filter member is answered 201, and
// its pet read 200; the checker judges that both show the default
// (default_status: the create left it out, history.Kit.Left).
func (r *run) defaultStatus(ctx context.Context) error {
	def, ok := r.Defaults()[r.roles.Filter]
	if !ok || !r.Stated("default-status") {
		return nil
	}
	x, id, ok, err := r.Post(ctx, cases.MustJSON(r.reqs.NewPet("conform-default", nil)), nil, 1)
	if err != nil {
		return err
	}
	r.Expect("default_status", x, ok, fmt.Sprintf("201 for a create that leaves %s out (its default: %s)", r.roles.Filter, def))
	if !ok || r.roles.Get == nil {
		return nil
	}
	y, err := r.Send(ctx, wire.Request{Method: http.MethodGet, Target: r.reqs.GetTarget(id)})
	if err != nil {
		return err
	}
	r.Expect("default_status", y, y.Status == http.StatusOK, "200 for the pet created without "+r.roles.Filter)
	return nil
}

// paging creates pets of each status, then walks the listing by Link
// rel="next" from the page before them, unfiltered and filtered: every pet
// once; the model judges each page.
func (r *run) paging(ctx context.Context) error {
	ss := r.statuses()
	if len(ss) == 0 {
		return nil
	}
	var ids []int64
	byStatus := map[string][]int64{}
	for i := range 6 {
		st := ss[[]int{0, 1, 2, 1, 0, 1}[i]%len(ss)]
		x, id, ok, err := r.Post(ctx, cases.MustJSON(r.reqs.NewPet("conform-page", map[string]any{r.roles.Filter: st})), nil, 1)
		if err != nil {
			return err
		}
		if !ok {
			r.Expect("pagination", x, false, "201 for a pet to page through")
			return nil
		}
		ids = append(ids, id)
		byStatus[st] = append(byStatus[st], id)
	}
	// The first page: with a next link (more pets exist). A page may hold
	// fewer pets than its limit: limit is a maximum.
	first, err := r.Send(ctx, wire.Request{Method: http.MethodGet, Target: r.reqs.ListTarget("limit=2")})
	if err != nil {
		return err
	}
	// The checker judges the page (at most 2 pets, a next link only after
	// a pet); the case wants its status, and a next link.
	r.Expect("pagination", first, first.Status == http.StatusOK && judge.NextLink(first.Header) != "",
		"the first page of limit=2 with a Link rel=\"next\" (at least 6 pets exist)")
	from := strconv.FormatInt(ids[0]-1, 10)
	walks := []struct {
		query string
		want  []int64
	}{
		{"after=" + from + "&limit=" + strconv.Itoa(min(2, r.bounds.LimitMax)), ids},
		{"after=" + from, ids}, // limit's default
		{"after=" + from + "&limit=1&" + r.roles.Filter + "=" + ss[1%len(ss)], byStatus[ss[1%len(ss)]]},
		{"after=" + from + "&limit=" + strconv.Itoa(min(3, r.bounds.LimitMax)) + "&" + r.roles.Filter + "=" + ss[0], byStatus[ss[0]]},
	}
	for _, w := range walks {
		if err := r.walkOnce(ctx, w.query, w.want); err != nil {
			return err
		}
	}
	return nil
}

// walkOnce walks the listing from query by its next links until it has
// passed every id of want: each must be seen once. A walk that the budget
// cuts short has judged nothing of what it did not reach: the run is
// incomplete, never a pet reported missed.
func (r *run) walkOnce(ctx context.Context, query string, want []int64) error {
	seen, last, err := r.walk(ctx, query, slices.Max(want))
	if errors.Is(err, wire.ErrBudget) {
		r.Incomplete("pagination", "the walk "+strconv.Quote(query), r.cutShort()+" before the walk passed the pets it looks for")
	}
	if err != nil || last == nil {
		return err
	}
	// The checker judges the walk (check.Model: every pet of want visited
	// once), at its last page.
	op := &history.Op{Kind: history.Paging, Kit: history.Kit{Query: query, Want: want}}
	for _, id := range slices.Sorted(maps.Keys(seen)) {
		for range seen[id] {
			op.IDs = append(op.IDs, id)
		}
	}
	r.judgeWalk(op, last, "pagination")
	return nil
}

// walk follows a listing from query by Link rel="next" until a page ends
// at or past the id until (0: until the listing ends), and counts the ids
// it saw; last is the last page's exchange, nil when the walk stopped on a
// page the model already failed. It goes on for as many pages as that
// takes: a target may answer fewer pets a page than the limit, and others
// may write between the pets a walk looks for. Only the budget stops it
// (wire.ErrBudget), or a next link that does not move on (the model fails the
// page that has it).
func (r *run) walk(ctx context.Context, query string, until int64) (seen map[int64]int, last *judge.Exchange, err error) {
	return r.walkPages(ctx, query, until, -1)
}

// walkPages is walk, at most pages pages (-1: no bound).
func (r *run) walkPages(ctx context.Context, query string, until int64, pages int) (seen map[int64]int, last *judge.Exchange, err error) {
	seen = map[int64]int{}
	target := r.reqs.ListTarget(query)
	end := int64(-1) // the last id so far
	for n := 0; target != "" && n != pages; n++ {
		if last, err = r.Send(ctx, wire.Request{Method: http.MethodGet, Target: target}); err != nil {
			return nil, nil, err
		}
		ids, ok := last.ListedIDs()
		if last.Status != http.StatusOK || !ok {
			r.Expect("pagination", last, false, "200 and a page of pets")
			return seen, nil, nil
		}
		prev := end
		for _, id := range ids {
			seen[id]++
			end = max(end, id)
		}
		next := judge.NextLink(last.Header)
		switch {
		case next == "" || until > 0 && end >= until:
			return seen, last, nil
		case end <= prev: // an empty page, or one that does not move on, with a next link
			return seen, nil, nil
		}
		if target, err = r.Resolve(next); err != nil {
			r.Expect("pagination", last, false, "a Link rel=\"next\" on BASE_URL's host")
			return seen, nil, nil
		}
	}
	return seen, last, nil
}

package conform

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/petstore/petstore/gen"
)

// typed makes one call of the typed client and returns its exchange. A
// body the client cannot decode is the checks' business, not an error.
func (r *run) typed(ctx context.Context, call func(context.Context) error) (*exchange, error) {
	var x *exchange
	err := call(context.WithValue(ctx, exchangeKey{}, &x))
	if x != nil && x.status == 0 {
		return r.noAnswer(ctx, x, err)
	}
	if x != nil {
		return x, nil
	}
	return nil, err
}

func (r *run) create(ctx context.Context, body gen.NewPet) (*exchange, *gen.Pet, error) {
	var res *gen.CreatePetResponse
	x, err := r.typed(ctx, func(ctx context.Context) (err error) {
		res, err = r.client.CreatePetWithResponse(ctx, nil, body)
		return err
	})
	if err != nil || res == nil || res.JSON201 == nil || x.status != http.StatusCreated {
		return x, nil, err
	}
	return x, res.JSON201, nil
}

// stateCases checks what the contract says of the store: a created pet is
// there to read and list; defaults; paging; concurrent creates; retries
// with an Idempotency-Key.
func (r *run) stateCases(ctx context.Context) error {
	for _, step := range []func(context.Context) error{r.useAfterCreate, r.defaultStatus, r.paging, r.uniqueIDs, r.idempotentReplay} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (r *run) useAfterCreate(ctx context.Context) error {
	status := gen.Pending
	x, pet, err := r.create(ctx, gen.NewPet{Name: r.name("conform-read"), CategoryId: 7, Status: &status})
	if err != nil || x == nil {
		return err
	}
	if pet == nil {
		r.expect("use_after_create", x, false, "201 with the created pet")
		return nil
	}
	created := string(x.body)
	// At its Location.
	loc := x.header.Get("Location")
	if target, err := r.resolve(loc); loc == "" || err != nil {
		r.expect("use_after_create", x, false, "a Location header naming the created pet on BASE_URL's host")
	} else {
		y, err := r.send(ctx, request{method: http.MethodGet, target: target})
		if err != nil {
			return err
		}
		r.expect("use_after_create", y, y.status == http.StatusOK && sameJSON(y.body, x.body), "200 at the Location, with the 201 body: "+created)
	}
	// By its id.
	y, got, err := r.getPet(ctx, pet.Id)
	if err != nil {
		return err
	}
	r.expect("use_after_create", y, got != nil && got.JSON200 != nil && *got.JSON200 == *pet, "200 by its id, with the 201 body: "+created)
	// Listed, filtered by its status and not, right after the pet before it.
	for _, st := range []*gen.PetStatus{&status, nil} {
		after, limit := pet.Id-1, gen.Limit(1)
		var list *gen.ListPetsResponse
		z, err := r.typed(ctx, func(ctx context.Context) (err error) {
			list, err = r.client.ListPetsWithResponse(ctx, &gen.ListPetsParams{After: &after, Limit: &limit, Status: st})
			return err
		})
		if err != nil {
			return err
		}
		ok := list != nil && list.JSON200 != nil && len(*list.JSON200) == 1 && (*list.JSON200)[0] == *pet
		r.expect("use_after_create", z, ok, "the pet first in the listing after the id before it: "+created)
	}
	return nil
}

// getPet reads a pet by its id through the typed client.
func (r *run) getPet(ctx context.Context, id int64) (*exchange, *gen.GetPetResponse, error) {
	var got *gen.GetPetResponse
	x, err := r.typed(ctx, func(ctx context.Context) (err error) {
		//lint:ignore SA1019 the kit holds the deprecated getPet to the contract too
		got, err = r.client.GetPetWithResponse(ctx, id)
		return err
	})
	return x, got, err
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a, b []byte) bool {
	var va, vb any
	return json.Unmarshal(a, &va) == nil && json.Unmarshal(b, &vb) == nil && reflect.DeepEqual(va, vb)
}

func (r *run) defaultStatus(ctx context.Context) error {
	x, pet, err := r.create(ctx, gen.NewPet{Name: r.name("conform-default"), CategoryId: 8})
	if err != nil || x == nil {
		return err
	}
	r.expect("default_status", x, pet != nil && pet.Status == gen.Available, "status left out: available, the contract's default")
	if pet == nil {
		return nil
	}
	y, got, err := r.getPet(ctx, pet.Id)
	if err != nil {
		return err
	}
	r.expect("default_status", y, got != nil && got.JSON200 != nil && got.JSON200.Status == gen.Available, "stored with status available")
	return nil
}

// paging creates pets of each status, then walks the listing by Link
// rel="next" from the page before them, unfiltered and filtered: every pet
// once, pages no longer than limit, ids ascending.
func (r *run) paging(ctx context.Context) error {
	statuses := []gen.PetStatus{gen.Available, gen.Pending, gen.Sold, gen.Pending, gen.Available, gen.Pending}
	var ids []int64
	byStatus := map[gen.PetStatus][]int64{}
	for _, st := range statuses {
		x, pet, err := r.create(ctx, gen.NewPet{Name: r.name("conform-page"), CategoryId: 9, Status: &st})
		if err != nil || x == nil {
			return err
		}
		if pet == nil {
			r.expect("pagination", x, false, "201 for a pet to page through")
			return nil
		}
		ids = append(ids, pet.Id)
		byStatus[st] = append(byStatus[st], pet.Id)
	}
	// The first page: full, ascending, with a next link (more pets exist).
	first, err := r.send(ctx, request{method: http.MethodGet, target: "/pets?limit=2"})
	if err != nil {
		return err
	}
	var page []gen.Pet
	if json.Unmarshal(first.body, &page) == nil {
		r.expect("pagination", first, len(page) == 2 && nextLink(first.header) != "", "the first page of limit=2 full, with a Link rel=\"next\" (at least 6 pets exist)")
		r.expect("ordering", first, ascending(page, 0), "ids in ascending order")
	}
	for _, walk := range []struct {
		query string
		want  []int64
	}{
		{fmt.Sprintf("after=%d&limit=2", ids[0]-1), ids},
		{fmt.Sprintf("after=%d&limit=1&status=pending", ids[0]-1), byStatus[gen.Pending]},
		{fmt.Sprintf("after=%d&limit=3&status=available", ids[0]-1), byStatus[gen.Available]},
	} {
		if err := r.walk(ctx, walk.query, walk.want); err != nil {
			return err
		}
	}
	return nil
}

// maxPages bounds a walk: the target may hold, or be given, many pets.
const maxPages = 40

func (r *run) walk(ctx context.Context, query string, want []int64) error {
	q, _ := url.ParseQuery(query)
	limit, _ := strconv.Atoi(q.Get("limit"))
	status := q.Get("status")
	seen := map[int64]int{}
	last := int64(-1)
	target := "/pets?" + query
	var x *exchange
	for pages := 0; target != "" && pages < maxPages; pages++ {
		var err error
		if x, err = r.send(ctx, request{method: http.MethodGet, target: target}); err != nil {
			return err
		}
		var page []gen.Pet
		if x.status != http.StatusOK || json.Unmarshal(x.body, &page) != nil {
			r.expect("pagination", x, false, "200 and a page of pets")
			return nil
		}
		r.expect("pagination", x, len(page) <= limit, fmt.Sprintf("at most limit=%d pets a page", limit))
		r.expect("ordering", x, ascending(page, last), fmt.Sprintf("ids in ascending order, after %d", last))
		filtered := true
		for _, p := range page {
			seen[p.Id]++
			filtered = filtered && (status == "" || string(p.Status) == status)
		}
		if status != "" {
			r.expect("pagination", x, filtered, "only pets with status="+status)
		}
		if len(page) > 0 {
			last = page[len(page)-1].Id
		}
		next := nextLink(x.header)
		if next != "" {
			nq := url.Values{}
			if u, err := url.Parse(next); err == nil {
				nq = u.Query()
			}
			ok := nq.Get("limit") == strconv.Itoa(limit) && nq.Get("status") == status && nq.Get("after") == strconv.FormatInt(last, 10)
			r.expect("pagination", x, ok, fmt.Sprintf("Link rel=\"next\" with the same query and after=%d (the page's last id)", last))
			if target, err = r.resolve(next); err != nil {
				r.expect("pagination", x, false, "a Link rel=\"next\" on BASE_URL's host")
				return nil
			}
		} else {
			target = ""
		}
	}
	var missing, repeated []int64
	for _, id := range want {
		switch seen[id] {
		case 0:
			missing = append(missing, id)
		case 1:
		default:
			repeated = append(repeated, id)
		}
	}
	for id, n := range seen {
		if n > 1 && !slices.Contains(repeated, id) {
			repeated = append(repeated, id)
		}
	}
	if x != nil {
		r.expect("pagination", x, len(missing) == 0 && len(repeated) == 0,
			fmt.Sprintf("walking %q by Link visits pets %v once each (missed %v, repeated %v)", query, want, missing, repeated))
	}
	return nil
}

func ascending(page []gen.Pet, after int64) bool {
	for _, p := range page {
		if p.Id <= after {
			return false
		}
		after = p.Id
	}
	return true
}

// uniqueIDs creates pets concurrently: every id distinct.
func (r *run) uniqueIDs(ctx context.Context) error {
	const n = 8
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		ids  = map[int64]bool{}
		dups []int64
		last *exchange
		errs []error
	)
	for range n {
		wg.Go(func() {
			x, pet, err := r.create(ctx, gen.NewPet{Name: r.name("conform-concurrent"), CategoryId: 10})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				errs = append(errs, err)
			case pet == nil:
				r.expect("unique_ids", x, false, "201 for each of concurrent creates")
			case ids[pet.Id]:
				dups = append(dups, pet.Id)
				last = x
			default:
				ids[pet.Id] = true
				last = x
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return errs[0]
	}
	if last != nil {
		r.expect("unique_ids", last, len(dups) == 0, fmt.Sprintf("%d concurrent creates, %d distinct ids (duplicated: %v)", n, n, dups))
	}
	return nil
}

// protocolCases: methods a path does not support, paths that name nothing.
func (r *run) protocolCases(ctx context.Context) error {
	paths := map[string][]string{}
	var order []string
	for _, op := range r.ops {
		if paths[op.path] == nil {
			order = append(order, op.path)
		}
		paths[op.path] = append(paths[op.path], op.method)
	}
	for _, path := range order {
		op := r.operation(r.opAt(path))
		target := op.target(r.pathValues(op, "1"), "")
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			if slices.Contains(paths[path], m) {
				continue
			}
			x, err := r.send(ctx, request{method: m, target: target})
			if err != nil {
				return err
			}
			allow := splitList(x.header.Values("Allow"))
			ok := x.status == http.StatusMethodNotAllowed && !slices.Contains(allow, m)
			for _, want := range paths[path] {
				ok = ok && slices.Contains(allow, want)
			}
			r.expect("unsupported_method", x, ok, fmt.Sprintf("405 with Allow listing %v", paths[path]))
		}
		x, err := r.send(ctx, request{method: http.MethodGet, target: r.unrouted(target)})
		if err != nil {
			return err
		}
		r.expect("unknown_path", x, x.status == http.StatusNotFound, "404 for a path that names no resource")
	}
	x, err := r.send(ctx, request{method: http.MethodGet, target: "/conform-no-such-collection"})
	if err != nil {
		return err
	}
	r.expect("unknown_path", x, x.status == http.StatusNotFound, "404 for a path that names no resource")
	return nil
}

// unrouted extends target until it names no operation of the spec.
func (r *run) unrouted(target string) string {
	for range 3 {
		target += "/conform-no-such-resource"
		req, err := http.NewRequest(http.MethodGet, r.base.String()+target, nil)
		if err != nil {
			break
		}
		if _, _, err := r.contract.Route(req); err != nil {
			break
		}
	}
	return target
}

func (r *run) opAt(path string) string {
	for _, op := range r.ops {
		if op.path == path {
			return op.id
		}
	}
	return ""
}

func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, m := range strings.Split(v, ",") {
			out = append(out, strings.TrimSpace(m))
		}
	}
	return out
}

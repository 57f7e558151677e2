// Package storetest is the behaviour suite every pets.Store must pass, in the
// manner of testing/fstest: an implementation's tests call Run with a function
// that returns a new, empty store.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/petstore/petstore/internal/pets"
)

// Run runs the suite. newStore must return an empty store each time it is
// called; it may register cleanups on the test it is given.
func Run(t *testing.T, newStore func(t *testing.T) pets.Store) {
	t.Helper()
	for _, tc := range []struct {
		name string
		test func(*testing.T, pets.Store)
	}{
		{"CreateThenGet", testCreateThenGet},
		{"CreateDefaultsStatus", testCreateDefaultsStatus},
		{"CreateRejectsInvalid", testCreateRejectsInvalid},
		{"Names", testNames},
		{"GetUnknown", testGetUnknown},
		{"ListEmpty", testListEmpty},
		{"ListOrderAndLimit", testListOrderAndLimit},
		{"ListStatusFilter", testListStatusFilter},
		{"ListAfterCursor", testListAfterCursor},
		{"ListRejectsBadQuery", testListRejectsBadQuery},
		{"WalkVisitsEveryPetOnce", testWalk},
		{"ConcurrentCreates", testConcurrentCreates},
		{"FollowWhileCreating", testFollow},
		{"Count", testCount},
		{"IdempotentCreate", testIdempotentCreate},
		{"IdempotentKeyReused", testIdempotentKeyReused},
		{"IdempotentOwners", testIdempotentOwners},
		{"IdempotentExpiry", testIdempotentExpiry},
		{"IdempotentConcurrent", testIdempotentConcurrent},
		{"RoundTrip", testRoundTrip},
		{"Operations", testOperations},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, newStore(t)) })
	}
}

func mustCreate(t *testing.T, s pets.Store, n pets.NewPet) pets.Pet {
	t.Helper()
	p, err := s.Create(context.Background(), n)
	if err != nil {
		t.Fatalf("Create(%+v): %v", n, err)
	}
	return p
}

func mustList(t *testing.T, s pets.Store, q pets.Query) pets.Page {
	t.Helper()
	page, err := s.List(context.Background(), q)
	if err != nil {
		t.Fatalf("List(%+v): %v", q, err)
	}
	return page
}

// seed creates n pets whose statuses cycle through pets.Statuses.
func seed(t *testing.T, s pets.Store, n int) []pets.Pet {
	t.Helper()
	out := make([]pets.Pet, n)
	for i := range n {
		out[i] = mustCreate(t, s, pets.NewPet{
			Name:       fmt.Sprintf("pet-%d", i),
			CategoryID: int64(i%7 + 1),
			Status:     pets.Statuses[i%len(pets.Statuses)],
		})
	}
	return out
}

func ids(ps []pets.Pet) []int64 {
	out := make([]int64, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

func testCreateThenGet(t *testing.T, s pets.Store) {
	in := pets.NewPet{Name: "Rex — 🐕", CategoryID: 9223372036854775807, Status: pets.Sold}
	created := mustCreate(t, s, in)
	if created.ID < 1 {
		t.Fatalf("Create: got id %d, want >= 1", created.ID)
	}
	want := pets.Pet{ID: created.ID, Name: in.Name, CategoryID: in.CategoryID, Status: in.Status}
	if created != want {
		t.Fatalf("Create: got %+v, want %+v", created, want)
	}
	got, err := s.Get(context.Background(), created.ID)
	if err != nil {
		t.Fatalf("Get(%d): %v", created.ID, err)
	}
	if got != want {
		t.Fatalf("Get(%d): got %+v, want %+v", created.ID, got, want)
	}
	second := mustCreate(t, s, in)
	if second.ID <= created.ID {
		t.Fatalf("second Create: got id %d, want > %d", second.ID, created.ID)
	}
}

func testCreateDefaultsStatus(t *testing.T, s pets.Store) {
	p := mustCreate(t, s, pets.NewPet{Name: "Tom", CategoryID: 1})
	if p.Status != pets.Available {
		t.Fatalf("Create without status: got %q, want %q", p.Status, pets.Available)
	}
}

func testCreateRejectsInvalid(t *testing.T, s pets.Store) {
	for _, n := range []pets.NewPet{
		{Name: "", CategoryID: 1},
		{Name: "   ", CategoryID: 1},
		{Name: "a\x00b", CategoryID: 1},
		{Name: "\xff", CategoryID: 1},
		{Name: string(make([]rune, 101)), CategoryID: 1},
		{Name: "ok", CategoryID: 0},
		{Name: "ok", CategoryID: -1},
		{Name: "ok", CategoryID: 1, Status: "lost"},
	} {
		_, err := s.Create(context.Background(), n)
		var verr *pets.ValidationError
		if !errors.As(err, &verr) {
			t.Errorf("Create(%#v): got error %v, want a *pets.ValidationError", n, err)
		}
	}
	if page := mustList(t, s, pets.Query{Limit: pets.MaxLimit}); len(page.Pets) != 0 {
		t.Fatalf("after refused creates: got %d pets listed, want 0", len(page.Pets))
	}
}

// testNames checks the rule on a name's characters: no control character
// (C1 included), no explicit bidirectional override or isolate, not only
// white space; marks and the zero-width joiner kept as they are.
func testNames(t *testing.T, s pets.Store) {
	for _, name := range []string{
		"Rex\u0085",         // NEL, a C1 control
		"a\u0080b",          // the first C1 control
		"evil\u202egnp.exe", // right-to-left override
		"a\u202ab",          // left-to-right embedding
		"a\u2066b",          // left-to-right isolate
		"a\u2069b",          // pop directional isolate
		"\u00a0",            // only a no-break space
		"\u3000\u3000",      // only ideographic spaces
		"\u2028",            // only a line separator
		"\u0085",            // only NEL
	} {
		_, err := s.Create(context.Background(), pets.NewPet{Name: name, CategoryID: 1})
		var verr *pets.ValidationError
		if !errors.As(err, &verr) || verr.Field != "name" {
			t.Errorf("Create(name %+q): got error %v, want a *pets.ValidationError on name", name, err)
		}
	}
	if page := mustList(t, s, pets.Query{Limit: pets.MaxLimit}); len(page.Pets) != 0 {
		t.Fatalf("after refused creates: got %d pets listed, want 0", len(page.Pets))
	}
	for _, name := range []string{
		"\u05e8\u05e7\u05e1\u200f", // right-to-left mark
		"Rex\u200e",                // left-to-right mark
		"\u0631\u0643\u0633\u061c", // Arabic letter mark
		"🐈\u200d⬛",                 // zero-width joiner
		"Rex\u00a0II",              // white space inside a name
		"\u3000Rex\u3000",
	} {
		p := mustCreate(t, s, pets.NewPet{Name: name, CategoryID: 1})
		got, err := s.Get(context.Background(), p.ID)
		if err != nil || got.Name != name {
			t.Errorf("Get(%d): got %+q, %v; want name %+q", p.ID, got.Name, err, name)
		}
	}
}

func testGetUnknown(t *testing.T, s pets.Store) {
	p := mustCreate(t, s, pets.NewPet{Name: "only", CategoryID: 1})
	for _, id := range []int64{0, -1, p.ID + 1, 9223372036854775807} {
		if _, err := s.Get(context.Background(), id); !errors.Is(err, pets.ErrNotFound) {
			t.Errorf("Get(%d): got %v, want ErrNotFound", id, err)
		}
	}
}

func testListEmpty(t *testing.T, s pets.Store) {
	page := mustList(t, s, pets.Query{Limit: 20})
	if page.Pets == nil || len(page.Pets) != 0 || page.More {
		t.Fatalf("List on empty store: got %#v, want an empty non-nil page without More", page)
	}
}

func testListOrderAndLimit(t *testing.T, s pets.Store) {
	all := seed(t, s, 25)
	page := mustList(t, s, pets.Query{Limit: 20})
	if got, want := ids(page.Pets), ids(all[:20]); !slices.Equal(got, want) {
		t.Fatalf("List limit 20: got ids %v, want %v", got, want)
	}
	if !page.More {
		t.Fatalf("List limit 20 of 25: got More false, want true")
	}
	if !slices.Equal(page.Pets, all[:20]) {
		t.Fatalf("List: pets differ from those created:\n got %+v\nwant %+v", page.Pets, all[:20])
	}
	page = mustList(t, s, pets.Query{Limit: 25})
	if len(page.Pets) != 25 || page.More {
		t.Fatalf("List limit 25 of 25: got %d pets, More %v; want 25, false", len(page.Pets), page.More)
	}
	page = mustList(t, s, pets.Query{Limit: 1})
	if len(page.Pets) != 1 || page.Pets[0].ID != all[0].ID || !page.More {
		t.Fatalf("List limit 1: got %+v, want first pet and More", page)
	}
}

func testListStatusFilter(t *testing.T, s pets.Store) {
	all := seed(t, s, 30)
	for _, st := range pets.Statuses {
		var want []int64
		for _, p := range all {
			if p.Status == st {
				want = append(want, p.ID)
			}
		}
		page := mustList(t, s, pets.Query{Status: st, Limit: 100})
		if got := ids(page.Pets); !slices.Equal(got, want) {
			t.Errorf("List status %s: got ids %v, want %v", st, got, want)
		}
		for _, p := range page.Pets {
			if p.Status != st {
				t.Errorf("List status %s: got a pet with status %s", st, p.Status)
			}
		}
		page = mustList(t, s, pets.Query{Status: st, Limit: 3})
		if got := ids(page.Pets); !slices.Equal(got, want[:3]) || !page.More {
			t.Errorf("List status %s limit 3: got ids %v More %v, want %v and More", st, got, page.More, want[:3])
		}
	}
}

func testListAfterCursor(t *testing.T, s pets.Store) {
	all := seed(t, s, 10)
	page := mustList(t, s, pets.Query{After: all[4].ID, Limit: 3})
	if got, want := ids(page.Pets), ids(all[5:8]); !slices.Equal(got, want) || !page.More {
		t.Fatalf("List after %d limit 3: got %v More %v, want %v and More", all[4].ID, got, page.More, want)
	}
	page = mustList(t, s, pets.Query{After: all[6].ID, Limit: 3})
	if got, want := ids(page.Pets), ids(all[7:]); !slices.Equal(got, want) || page.More {
		t.Fatalf("List after %d limit 3: got %v More %v, want %v and no More", all[6].ID, got, page.More, want)
	}
	for _, after := range []int64{all[9].ID, 9223372036854775807} {
		page = mustList(t, s, pets.Query{After: after, Limit: 100})
		if len(page.Pets) != 0 || page.More {
			t.Fatalf("List after %d: got %v More %v, want nothing", after, ids(page.Pets), page.More)
		}
	}
	sold := mustList(t, s, pets.Query{After: all[2].ID, Status: pets.Sold, Limit: 100})
	var want []int64
	for _, p := range all[3:] {
		if p.Status == pets.Sold {
			want = append(want, p.ID)
		}
	}
	if got := ids(sold.Pets); !slices.Equal(got, want) {
		t.Fatalf("List sold after %d: got %v, want %v", all[2].ID, got, want)
	}
}

func testListRejectsBadQuery(t *testing.T, s pets.Store) {
	for _, q := range []pets.Query{
		{Limit: 0}, {Limit: 101}, {Limit: 10, After: -1}, {Limit: 10, Status: "lost"},
	} {
		_, err := s.List(context.Background(), q)
		var verr *pets.ValidationError
		if !errors.As(err, &verr) {
			t.Errorf("List(%+v): got %v, want a *pets.ValidationError", q, err)
		}
	}
}

// testWalk follows the cursor from the start, with and without a filter,
// while other goroutines create pets, and checks each pet that existed before
// the walk began is seen exactly once, in ascending order.
func testWalk(t *testing.T, s pets.Store) {
	before := seed(t, s, 250)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 200 && ctx.Err() == nil; i++ {
			if _, err := s.Create(ctx, pets.NewPet{Name: "late", CategoryID: 1, Status: pets.Pending}); err != nil && ctx.Err() == nil {
				t.Errorf("concurrent Create: %v", err)
				return
			}
		}
	}()
	defer func() { cancel(); wg.Wait() }()
	for _, st := range []pets.Status{"", pets.Pending} {
		seen := map[int64]bool{}
		var last int64
		q := pets.Query{Status: st, Limit: 7}
		for {
			page := mustList(t, s, q)
			for _, p := range page.Pets {
				if p.ID <= last {
					t.Fatalf("walk %q: id %d after %d: not ascending", st, p.ID, last)
				}
				if st != "" && p.Status != st {
					t.Fatalf("walk %q: got status %s", st, p.Status)
				}
				last = p.ID
				seen[p.ID] = true
			}
			if !page.More {
				break
			}
			q.After = last
		}
		for _, p := range before {
			if (st == "" || p.Status == st) && !seen[p.ID] {
				t.Fatalf("walk %q: pet %d never seen", st, p.ID)
			}
		}
	}
}

func testConcurrentCreates(t *testing.T, s pets.Store) {
	const workers, each = 8, 50
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		created []pets.Pet
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				p, err := s.Create(context.Background(), pets.NewPet{Name: fmt.Sprintf("w%d-%d", w, i), CategoryID: 1})
				if err != nil {
					t.Errorf("Create: %v", err)
					return
				}
				mu.Lock()
				created = append(created, p)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(created) != workers*each {
		t.Fatalf("got %d acknowledged creates, want %d", len(created), workers*each)
	}
	unique := map[int64]bool{}
	for _, p := range created {
		if unique[p.ID] {
			t.Fatalf("id %d assigned twice", p.ID)
		}
		unique[p.ID] = true
		got, err := s.Get(context.Background(), p.ID)
		if err != nil || got != p {
			t.Fatalf("Get(%d): got %+v, %v; want %+v", p.ID, got, err, p)
		}
	}
	var listed []int64
	q := pets.Query{Limit: pets.MaxLimit}
	for {
		page := mustList(t, s, q)
		listed = append(listed, ids(page.Pets)...)
		if !page.More {
			break
		}
		q.After = page.Pets[len(page.Pets)-1].ID
	}
	if len(listed) != len(created) || !slices.IsSorted(listed) {
		t.Fatalf("listing after concurrent creates: got %d ids (sorted %v), want %d sorted", len(listed), slices.IsSorted(listed), len(created))
	}
}

// counter is the optional Count a store may offer for the pet gauge of
// /metrics.
type counter interface {
	Count(ctx context.Context) (int64, error)
}

func testCount(t *testing.T, s pets.Store) {
	c, ok := s.(counter)
	if !ok {
		t.Skip("the store has no Count (optional)")
	}
	count := func() int64 {
		t.Helper()
		n, err := c.Count(context.Background())
		if err != nil {
			t.Fatalf("Count: %v", err)
		}
		return n
	}
	if n := count(); n != 0 {
		t.Fatalf("Count of an empty store: got %d, want 0", n)
	}
	seed(t, s, 7)
	if _, err := s.Create(context.Background(), pets.NewPet{Name: "", CategoryID: 1}); err == nil {
		t.Fatal("Create of an invalid pet: got nil error")
	}
	if n := count(); n != 7 {
		t.Fatalf("Count after 7 creates and a refused one: got %d, want 7", n)
	}
}

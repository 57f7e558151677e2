package memstore

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/petstore/petstore/gen/shape"
	"github.com/petstore/petstore/internal/cputime"
	"github.com/petstore/petstore/internal/pets"
)

// benchSizes are the catalogue sizes the store benchmarks run at.
var benchSizes = []int{1_000, 100_000, 1_000_000}

// seeded caches one filled store per size for the list benchmarks, which
// only read: filling a million pets once per benchmark would dwarf them.
var seeded = map[int]*Store{}

// fill creates n pets in s, statuses cycling through pets.Statuses, each
// with its own name string "pet <i>". It returns the bytes of the names.
func fill(tb testing.TB, s *Store, n int) (nameBytes int) {
	tb.Helper()
	ctx := context.Background()
	for i := range n {
		name := "pet " + strconv.Itoa(i)
		nameBytes += len(name)
		if _, err := s.Create(ctx, pets.NewPet{Name: name, CategoryID: int64(i%7 + 1), Status: pets.Statuses[i%len(pets.Statuses)]}); err != nil {
			tb.Fatal(err)
		}
	}
	return nameBytes
}

func seededStore(b *testing.B, n int) *Store {
	if s, ok := seeded[n]; ok {
		return s
	}
	s := New()
	fill(b, s, n)
	seeded[n] = s
	return s
}

// cursors returns 1024 cursors spread over a catalogue of n pets, each at
// least a full filtered page from its end, so a benchmark visits the whole
// index rather than one warm corner of it.
func cursors(n int) []int64 {
	out := make([]int64, 1024)
	x := uint64(0x9E3779B97F4A7C15)
	for i := range out {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		out[i] = int64(x % uint64(n-100))
	}
	return out
}

// BenchmarkList lists a page of 20 after a cursor spread over the catalogue,
// without and with a status filter. Like the other benchmarks it reports
// cpu-ns/op, the process's CPU time per operation, beside the wall time.
func BenchmarkList(b *testing.B) {
	for _, n := range benchSizes {
		for _, filter := range []struct {
			name   string
			status pets.Status
		}{{"all", ""}, {"filtered", pets.Sold}} {
			b.Run("n="+strconv.Itoa(n)+"/"+filter.name, func(b *testing.B) {
				s := seededStore(b, n)
				after := cursors(n)
				ctx := context.Background()
				b.ReportAllocs()
				cpu := cputime.Used()
				i := 0
				for b.Loop() {
					q := pets.Query{After: after[i%len(after)], Status: filter.status, Limit: 20}
					i++
					page, err := s.List(ctx, q)
					if err != nil || len(page.Pets) == 0 {
						b.Fatalf("List(%+v): %d pets, %v", q, len(page.Pets), err)
					}
				}
				b.ReportMetric(float64(cputime.Since(cpu))/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// BenchmarkCreate creates pets in a store that holds n. Every 1024 creates
// the store is cut back to n pets (outside the timer), so the size stays n
// whatever b.N is; the slices keep their capacity, so the figure holds the
// appends but not the amortised cost of growing them.
func BenchmarkCreate(b *testing.B) {
	for _, n := range benchSizes {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			s := New()
			fill(b, s, n)
			var base [len(pets.Statuses)]int
			for i := range base {
				base[i] = len(s.byStatus[i])
			}
			names := make([]string, 1024)
			for i := range names {
				names[i] = "new pet " + strconv.Itoa(i)
			}
			ctx := context.Background()
			b.ReportAllocs()
			cpu := cputime.Used()
			i := 0
			for b.Loop() {
				if i == len(names) {
					b.StopTimer()
					s.pets = s.pets[:n]
					for j := range base {
						s.byStatus[j] = s.byStatus[j][:base[j]]
					}
					i = 0
					b.StartTimer()
				}
				if _, err := s.Create(ctx, pets.NewPet{Name: names[i], CategoryID: 3, Status: pets.Statuses[i%len(pets.Statuses)]}); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(cputime.Since(cpu))/float64(b.N), "cpu-ns/op")
		})
	}
}

// TestMemoryPerPet measures the heap a stored pet costs beyond its name's
// bytes, at a million pets, and holds it under the 256 bytes the scale issue
// allows. The figure is in BENCHMARKS.md.
func TestMemoryPerPet(t *testing.T) {
	const n = 1_000_000
	before := heapAfterGC()
	s := New()
	nameBytes := fill(t, s, n)
	after := heapAfterGC()
	runtime.KeepAlive(s)
	perPet := (float64(after) - float64(before) - float64(nameBytes)) / n
	t.Logf("%d pets: heap %d B, names %d B: %.1f B/pet beyond the name's bytes", n, after-before, nameBytes, perPet)
	if perPet >= 256 {
		t.Errorf("got %.1f B of heap per pet beyond its name, want < 256", perPet)
	}
}

func heapAfterGC() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestWorstCaseSizes measures the heap of a pet with the longest name the
// contract allows (MaxNameLength four-byte characters) and the longest
// members without behaviour (shape.MaxExtraBytes of canonical JSON), and
// of an outcome with the longest Idempotency-Key, and holds them under the
// figures computed from the schema (PetBytes, OutcomeBytes), from which
// docs/operating.md sizes the bounds. A pet with 2 000 bytes of members
// more checks that the computation follows a larger pet.
func TestWorstCaseSizes(t *testing.T) {
	perPet, ok := PetBytes()
	if !ok {
		t.Skipf("a member of NewPet is unbounded (%s): no worst case to measure", shape.Unbounded)
	}
	perPetMeasured := measurePets(t, shape.MaxExtraBytes)
	bigger := sizeClass(shape.MaxNameBytes+shape.MaxExtraBytes+2000) + petOverhead
	biggerMeasured := measurePets(t, shape.MaxExtraBytes+2000)

	const n = 50_000
	ctx := context.Background()
	before := heapAfterGC()
	s := New()
	owner := strings.Repeat("f", 64)
	for i := range n {
		k := pets.IdempotencyKey{Owner: strings.Clone(owner), Key: fmt.Sprintf("%0*d", pets.MaxKeyLength, i), TTL: time.Hour}
		if _, _, err := s.CreateOnce(ctx, pets.NewPet{Name: "x", CategoryID: 1}, k); err != nil {
			t.Fatal(err)
		}
	}
	perKey := float64(heapAfterGC()-before)/n - 50 // less its pet's record, id and one-byte name
	runtime.KeepAlive(s)
	t.Logf("heap: %.0f B a pet (computed %d), %.0f B with 2 000 B more members (computed %d), %.0f B an outcome with a %d-character key (computed %d)",
		perPetMeasured, perPet, biggerMeasured, bigger, perKey, pets.MaxKeyLength, OutcomeBytes())
	if perPetMeasured > float64(perPet) || biggerMeasured > float64(bigger) || perKey > float64(OutcomeBytes()) {
		t.Errorf("got %.0f B a pet, %.0f B a bigger one, %.0f B an outcome; want at most the computed %d, %d and %d",
			perPetMeasured, biggerMeasured, perKey, perPet, bigger, OutcomeBytes())
	}
}

// measurePets is the heap a stored pet takes, with the longest name and
// members of extraBytes of canonical JSON, each pet its own strings.
func measurePets(t *testing.T, extraBytes int) float64 {
	const n = 20_000
	ctx := context.Background()
	name := strings.Repeat("\U0001D513", shape.MaxNameLength-1)
	var extra string
	if extraBytes > 0 {
		extra = `{"a":"` + strings.Repeat("x", max(extraBytes-len(`{"a":""}`), 0)) + `"}`
	}
	before := heapAfterGC()
	s := New()
	for i := range n {
		p := pets.NewPet{Name: name + string(rune('a'+i%26)), CategoryID: 1, Extra: pets.Extra(extra)}
		if _, err := s.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	perPet := float64(heapAfterGC()-before) / n
	runtime.KeepAlive(s)
	return perPet
}

package pgstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/pgstore"
	"github.com/petstore/petstore/internal/pgtest"
)

// seeded is how many pets the read benchmarks find in the store.
const seeded = 10000

// benchStores are the stores the benchmarks compare, in one run: memory,
// PostgreSQL, and PostgreSQL without the create lock (to price the lock).
func benchStores(b *testing.B) []struct {
	name string
	open func(b *testing.B, seed bool) pets.Store
} {
	pg := func(serialise bool) func(*testing.B, bool) pets.Store {
		return func(b *testing.B, seed bool) pets.Store {
			dbURL := pgtest.Schema(b)
			var opts []pgstore.Option
			if !serialise {
				opts = append(opts, pgstore.Unserialised())
			}
			s := pgtest.Open(b, dbURL, opts...)
			if err := s.Ping(context.Background()); err != nil { // dial before timing
				b.Fatal(err)
			}
			if seed {
				pgtest.Seed(b, dbURL, seeded)
			}
			return s
		}
	}
	pgtest.URL(b) // skip all, not only the PostgreSQL half, without a database
	return []struct {
		name string
		open func(b *testing.B, seed bool) pets.Store
	}{
		{"memory", func(b *testing.B, seed bool) pets.Store {
			s := memstore.New()
			for i := range seeded * boolInt(seed) {
				s.Create(context.Background(), pets.NewPet{Name: fmt.Sprintf("pet %d", i), CategoryID: int64(1 + i%7), Status: pets.Statuses[i%3]})
			}
			return s
		}},
		{"postgres", pg(true)},
		{"postgres-nolock", pg(false)},
	}
}

func boolInt(v bool) int {
	if v {
		return 1
	}
	return 0
}

// BenchmarkPostgresStore measures the stores through pets.Store, without
// HTTP: create one at a time and from 16 goroutines, get by id, and list a
// page of 20 from a random cursor, with and without a status filter.
func BenchmarkPostgresStore(b *testing.B) {
	ctx := context.Background()
	for _, st := range benchStores(b) {
		b.Run("op=create/store="+st.name, func(b *testing.B) {
			s := st.open(b, false)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Create(ctx, pets.NewPet{Name: "Rex", CategoryID: 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
		// A create with a new Idempotency-Key each time, and the replay of
		// one: what the key costs over a plain create.
		b.Run("op=create-once/store="+st.name, func(b *testing.B) {
			s := st.open(b, false)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				k := pets.IdempotencyKey{Owner: "bench", Key: "k-" + strconv.Itoa(i), TTL: time.Hour}
				if _, _, err := s.CreateOnce(ctx, pets.NewPet{Name: "Rex", CategoryID: 1}, k); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("op=create-once-replay/store="+st.name, func(b *testing.B) {
			s := st.open(b, false)
			k := pets.IdempotencyKey{Owner: "bench", Key: "replayed", TTL: time.Hour}
			if _, _, err := s.CreateOnce(ctx, pets.NewPet{Name: "Rex", CategoryID: 1}, k); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, replayed, err := s.CreateOnce(ctx, pets.NewPet{Name: "Rex", CategoryID: 1}, k); err != nil || !replayed {
					b.Fatalf("replay: %v, replayed %v", err, replayed)
				}
			}
		})
		b.Run("op=create-parallel16/store="+st.name, func(b *testing.B) {
			s := st.open(b, false)
			b.ReportAllocs()
			b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
			b.ResetTimer() // not the schema and migration of open
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := s.Create(ctx, pets.NewPet{Name: "Rex", CategoryID: 1}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		if st.name == "postgres-nolock" {
			continue // reads are the same with or without the create lock
		}
		b.Run("op=get/store="+st.name, func(b *testing.B) {
			s := st.open(b, true)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Get(ctx, 1+rand.Int64N(seeded)); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, status := range []pets.Status{"", pets.Sold} {
			name := "op=list20"
			if status != "" {
				name += "-" + string(status)
			}
			b.Run(name+"/store="+st.name, func(b *testing.B) {
				s := st.open(b, true)
				b.ReportAllocs()
				for b.Loop() {
					page, err := s.List(ctx, pets.Query{After: rand.Int64N(seeded - 100), Status: status, Limit: 20})
					if err != nil || len(page.Pets) != 20 {
						b.Fatalf("List: %d pets, %v", len(page.Pets), err)
					}
				}
			})
		}
	}
}

package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/pgstore"
)

// openTimeout bounds connecting to PostgreSQL and migrating at start,
// waiting for another replica's migration included.
const openTimeout = 30 * time.Second

// plant returns the chaos run's planted defect the environment names
// (cmd/petstore/broken.go): set only in a build with the chaosbroken tag,
// which links internal/chaos/broken.
var plant func(getenv func(string) string) (planted, error)

// planted is a defect planted from outside the store: in the database URL
// it opens, in its Options, or around it.
type planted interface {
	URL(url string) (string, error)
	Options() []pgstore.Option
	Store(url string, s pets.Store) pets.Store
}

// openStore returns the store the configuration selects: PostgreSQL when
// databaseURL is set, memory otherwise. Its name goes into the start-up log
// line; the URL never does (it may hold a password). source names the flag
// or variable the URL came from, for errors. mem configures the memory store.
func openStore(ctx context.Context, getenv func(string) string, databaseURL, source string, mem []memstore.Option, opts ...pgstore.Option) (store pets.Store, name string, closeStore func(), err error) {
	if plant != nil {
		var p planted
		if p, err = plant(getenv); err != nil {
			return nil, "", nil, err
		}
		if databaseURL, err = p.URL(databaseURL); err != nil {
			return nil, "", nil, err
		}
		opts = append(opts, p.Options()...)
		defer func() {
			if err == nil {
				store = p.Store(databaseURL, store)
			}
		}()
	}
	if databaseURL == "" {
		return memstore.New(mem...), "memory", func() {}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	s, err := pgstore.Open(ctx, databaseURL, opts...)
	if err != nil {
		// One line: pgx joins the errors of several addresses with newlines.
		return nil, "", nil, fmt.Errorf("%s: %s", source, strings.NewReplacer("\n\t", "; ", "\n", "; ").Replace(err.Error()))
	}
	return s, "postgres", s.Close, nil
}

// memBounds returns the memory store's bounds the configuration sets.
func memBounds(cfg config) []memstore.Option {
	return []memstore.Option{memstore.WithMaxPets(cfg.maxPets), memstore.WithMaxKeys(cfg.maxIdempotencyKeys)}
}

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

// The chaos run's planted defects (cmd/petstore/broken.go): set only in a
// build with the chaosbroken tag, which links internal/chaos/broken.
var (
	plantEnv     string // the variable naming the defect
	plantURL     func(kind, url string) (string, error)
	plantStore   func(kind, url string, s pets.Store) pets.Store
	plantOptions func(kind string) []pgstore.Option
)

// openStore returns the store the configuration selects: PostgreSQL when
// databaseURL is set, memory otherwise. Its name goes into the start-up log
// line; the URL never does (it may hold a password). source names the flag
// or variable the URL came from, for errors. mem configures the memory store.
func openStore(ctx context.Context, getenv func(string) string, databaseURL, source string, mem []memstore.Option, opts ...pgstore.Option) (store pets.Store, name string, closeStore func(), err error) {
	if plantEnv != "" {
		kind := getenv(plantEnv)
		if databaseURL, err = plantURL(kind, databaseURL); err != nil {
			return nil, "", nil, err
		}
		opts = append(opts, plantOptions(kind)...)
		defer func() {
			if err == nil {
				store = plantStore(kind, databaseURL, store)
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

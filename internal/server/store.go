package server

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/pgstore"
	"github.com/petstore/petstore/internal/telemetry"
)

// openTimeout bounds connecting to PostgreSQL and migrating at start,
// waiting for another replica's migration included.
const openTimeout = 30 * time.Second

// Plant plants one of the chaos run's defects (internal/chaos/broken) into
// the store: set only by a build with the chaosbroken tag
// (cmd/petstore/broken.go). The zero value plants nothing.
type Plant struct {
	Kind    string // the defect, as the chaos run names it
	URL     func(kind, url string) (string, error)
	Store   func(kind, url string, s pets.Store) pets.Store
	Options func(kind string) []pgstore.Option
}

// openedStore is the store Run serves from: its name goes into the
// listening line; the URL never does (it may hold a password).
type openedStore struct {
	pets.Store
	name  string
	close func()
}

// openStore opens the store the configuration selects: PostgreSQL when
// DatabaseURL is set, its queries traced when tracing is on; memory
// otherwise, within its bounds.
func openStore(ctx context.Context, cfg Config, tracing *telemetry.Tracing) (openedStore, error) {
	url, p := cfg.DatabaseURL, cfg.Plant
	var opts []pgstore.Option
	if t := tracing.PgxTracer(); t != nil {
		opts = append(opts, pgstore.WithTracer(t))
	}
	if p.URL != nil {
		var err error
		if url, err = p.URL(p.Kind, url); err != nil {
			return openedStore{}, err
		}
		opts = append(opts, p.Options(p.Kind)...)
	}
	s, err := open(ctx, cfg, url, opts)
	if err == nil && p.Store != nil {
		s.Store = p.Store(p.Kind, url, s.Store)
	}
	return s, err
}

func open(ctx context.Context, cfg Config, url string, opts []pgstore.Option) (openedStore, error) {
	if url == "" {
		mem := memstore.New(memstore.WithMaxPets(cfg.MaxPets), memstore.WithMaxKeys(cfg.MaxIdempotencyKeys))
		return openedStore{mem, "memory", func() {}}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	s, err := pgstore.Open(ctx, url, opts...)
	if err != nil {
		// One line: pgx joins the errors of several addresses with newlines.
		return openedStore{}, fmt.Errorf("%s: %s", cfg.Sources["database-url"], strings.NewReplacer("\n\t", "; ", "\n", "; ").Replace(err.Error()))
	}
	return openedStore{s, "postgres", s.Close}, nil
}

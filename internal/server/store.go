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
// the store from outside: in the database URL it opens, in its Options, or
// around it. Set only by a build with the chaosbroken tag
// (cmd/petstore/broken.go); nil plants nothing.
type Plant interface {
	URL(url string) (string, error)
	Options() []pgstore.Option
	Store(url string, s pets.Store) pets.Store
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
	if p != nil {
		var err error
		if url, err = p.URL(url); err != nil {
			return openedStore{}, err
		}
		opts = append(opts, p.Options()...)
	}
	s, err := open(ctx, cfg, url, opts)
	if err == nil && p != nil {
		s.Store = p.Store(url, s.Store)
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

package conform_test

import (
	"net/http"
	"testing"

	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/pgtest"
	"github.com/petstore/petstore/internal/schemagen/schematest"
)

// TestRealAppEvolved on PostgreSQL: every member of the evolved spec,
// stored in a fresh schema, comes back as sent to the kit, seed after seed.
func TestPostgresRealAppEvolved(t *testing.T) {
	spec, err := schematest.Evolved()
	if err != nil {
		t.Fatal(err)
	}
	cfg := kitConfig(serveApp(t, httpapi.Config{Spec: spec, Store: pgtest.NewStore(t)}, spec, func(h http.Handler) http.Handler { return h }))
	cfg.Spec = spec
	for seed := range uint64(3) {
		cfg.Seed, cfg.Examples = seed+1, 10
		passes(t, cfg, "the reference app on PostgreSQL, on the evolved spec,")
	}
}

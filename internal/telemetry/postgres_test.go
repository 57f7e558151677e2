package telemetry_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/pgstore"
	"github.com/petstore/petstore/internal/pgtest"
	"github.com/petstore/petstore/internal/telemetry"
)

// postgres opens a PostgreSQL store in a fresh schema with the pgx tracer.
func postgres(t *testing.T, tr *telemetry.Tracing) pets.Store {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := pgstore.Open(ctx, pgtest.Schema(t), pgstore.WithTracer(tr.PgxTracer()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestPostgresTraces: on PostgreSQL, the store spans have otelpgx's query
// spans as children, named by the SQL operation, with the statement text
// (placeholders only: no argument, so no pet's name, in any span).
func TestPostgresTraces(t *testing.T) {
	pgtest.URL(t)
	s := serveTraced(t, postgres, telemetry.New)
	checkTraces(t, s, "store create", "store get")
	spans := s.spans.GetSpans()
	byID := map[string]tracetest.SpanStub{}
	for _, sp := range spans {
		byID[sp.SpanContext.SpanID().String()] = sp
	}
	// under reports whether sp descends from a span named name.
	under := func(sp tracetest.SpanStub, name string) bool {
		for p, ok := byID[sp.Parent.SpanID().String()]; ok; p, ok = byID[p.Parent.SpanID().String()] {
			if p.Name == name {
				return true
			}
		}
		return false
	}
	var insert, selectByID bool
	storeGet := s.span(t, "store get").SpanContext.SpanID()
	for _, sp := range spans {
		q := attrs(sp)["db.query.text"].AsString()
		switch {
		case strings.Contains(q, "insert into pets") && under(sp, "store create") && under(sp, "createPet"):
			insert = true
		case strings.Contains(q, "from pets where id = $1") && sp.Name == "SELECT" && sp.Parent.SpanID() == storeGet:
			selectByID = true
		}
	}
	if !insert || !selectByID {
		var names []string
		for _, sp := range spans {
			names = append(names, sp.Name+": "+attrs(sp)["db.query.text"].AsString())
		}
		t.Errorf("pgx spans: insert under store create %v, select by id under store get %v; spans:\n%s", insert, selectByID, strings.Join(names, "\n"))
	}
}

package conform_test

import (
	"context"
	"testing"

	"github.com/petstore/petstore/internal/conform"
)

// The real app passes idempotent_replay having been judged on its cases
// (the mutants "Idempotency-Key ignored" and "replay not marked" fail it).
func TestIdempotentReplayRuns(t *testing.T) {
	t.Parallel()
	rep, err := conform.Run(context.Background(), conform.Config{BaseURL: serve(t, nil), Key: testKey, Checks: []string{"idempotent_replay"}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	cases := 0
	for _, res := range rep.Results {
		if res.Check == "idempotent_replay" {
			cases += res.Cases
		}
	}
	if cases < 3 || rep.Failed("idempotent_replay") {
		t.Fatalf("idempotent_replay: %d cases (want at least 3), failed %v: %+v", cases, rep.Failed("idempotent_replay"), rep.Failures)
	}
}

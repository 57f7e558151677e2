package conform_test

import (
	"context"
	"testing"

	"github.com/petstore/petstore/internal/conform"
)

// -checks narrows what is sent: only the phases that judge the named checks.
func TestChecksNarrowRequests(t *testing.T) {
	t.Parallel()
	all, _ := referenceRun(t)
	some, err := conform.Run(context.Background(), conform.Config{BaseURL: serve(t, nil), Key: testKey, Seed: 1, Checks: []string{"unknown_path"}})
	if err != nil {
		t.Fatal(err)
	}
	if !some.OK() || some.Requests >= all.Requests/4 {
		t.Fatalf("-checks unknown_path sent %d requests of %d (ok %v)", some.Requests, all.Requests, some.OK())
	}
	for _, res := range some.Results {
		if res.Check != "unknown_path" {
			t.Errorf("result for %s, which was not asked for", res.Check)
		}
	}
}

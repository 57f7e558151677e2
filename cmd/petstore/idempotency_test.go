package main

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/petstore/petstore/internal/apitest"
)

// TestServeIdempotencyTTL: PETSTORE_IDEMPOTENCY_TTL reaches the app: a retry
// within it replays, and after it the key may name a new create.
func TestServeIdempotencyTTL(t *testing.T) {
	c := serveSetting(t, "PETSTORE_IDEMPOTENCY_TTL", "1s", `"idempotency_ttl":"1s"`)
	first := c.Do(t, "POST", "/v1/pets", `{"name":"Rex","categoryId":3}`, "Idempotency-Key", "ttl")
	retry := c.Do(t, "POST", "/v1/pets", `{"name":"Rex","categoryId":3}`, "Idempotency-Key", "ttl")
	if first.Status != http.StatusCreated || retry.Status != http.StatusCreated || retry.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(first.Body, retry.Body) {
		t.Fatalf("create and retry: got %d %s and %d %s (Idempotent-Replayed %q); want the same 201 replayed", first.Status, first.Body, retry.Status, retry.Body, retry.Header.Get("Idempotent-Replayed"))
	}
	apitest.Eventually(t, "the key to expire", func() bool {
		res := c.Do(t, "POST", "/v1/pets", `{"name":"Tom","categoryId":3}`, "Idempotency-Key", "ttl")
		if res.Status != http.StatusCreated && res.Status != http.StatusUnprocessableEntity {
			t.Fatalf("create with the key: got %d %s, want 201 or 422", res.Status, res.Body)
		}
		return res.Status == http.StatusCreated
	})
}

package server

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/apitest"
)

// TestServeIdempotencyTTL: PETSTORE_IDEMPOTENCY_TTL reaches the app: a retry
// within it replays, and after it the key may name a new create.
//
// The server keeps a key from some moment after the first request was sent,
// so a retry answered less than the TTL after that send must replay. A pair
// slower than that (a loaded machine, the race detector) proves nothing
// either way: the test tries again with a fresh key, a bounded number of
// times, rather than fail on the clock.
func TestServeIdempotencyTTL(t *testing.T) {
	const ttl = 2 * time.Second
	c := serveSetting(t, "PETSTORE_IDEMPOTENCY_TTL", ttl.String(), `"idempotency_ttl":"2s"`)
	var key string
	for attempt := 1; ; attempt++ {
		key = fmt.Sprintf("ttl-%d", attempt)
		sent := time.Now()
		first := c.Do(t, "POST", apitest.Path("/pets"), apitest.Body(`{"name":"Rex","categoryId":3}`), "Idempotency-Key", key)
		retry := c.Do(t, "POST", apitest.Path("/pets"), apitest.Body(`{"name":"Rex","categoryId":3}`), "Idempotency-Key", key)
		if took := time.Since(sent); took >= ttl {
			if attempt == 5 {
				t.Fatalf("no create and retry within the TTL of %s in %d attempts (the last took %s)", ttl, attempt, took)
			}
			t.Logf("attempt %d: create and retry took %s, not within the TTL of %s; trying a fresh key", attempt, took, ttl)
			continue
		}
		if first.Status != http.StatusCreated || retry.Status != http.StatusCreated || retry.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(first.Body, retry.Body) {
			t.Fatalf("create and retry: got %d %s and %d %s (Idempotent-Replayed %q); want the same 201 replayed", first.Status, first.Body, retry.Status, retry.Body, retry.Header.Get("Idempotent-Replayed"))
		}
		break
	}
	apitest.Eventually(t, "the key to expire", func() bool {
		res := c.Do(t, "POST", apitest.Path("/pets"), apitest.Body(`{"name":"Tom","categoryId":3}`), "Idempotency-Key", key)
		if res.Status != http.StatusCreated && res.Status != http.StatusUnprocessableEntity {
			t.Fatalf("create with the key: got %d %s, want 201 or 422", res.Status, res.Body)
		}
		return res.Status == http.StatusCreated
	})
}

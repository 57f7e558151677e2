package server

import (
	"testing"

	"github.com/petstore/petstore/internal/pgtest"
)

// TestPostgresDrain is TestDrain over PostgreSQL: the store keeps serving
// through the delay.
func TestPostgresDrain(t *testing.T) {
	testDrain(t, map[string]string{"PETSTORE_DATABASE_URL": pgtest.Schema(t)})
}

package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/pgstore"
)

// TestClassifyCanceled: a call its caller canceled (a client that hung up)
// is context.Canceled and not pets.ErrUnavailable, as pgx reports it while
// acquiring a connection, sending or reading; the database's own failures
// stay unavailable. No database needed: classify sees only the error.
func TestClassifyCanceled(t *testing.T) {
	for _, tc := range []struct {
		name              string
		err               error
		canceled, unavail bool
	}{
		{"canceled while acquiring", context.Canceled, true, false},
		{"canceled while reading", fmt.Errorf("timeout: %w", context.Canceled), true, false},
		{"deadline", fmt.Errorf("timeout: %w", context.DeadlineExceeded), false, true},
		{"connection lost", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), false, true},
		{"server shutting down", &pgconn.PgError{Code: "57P01"}, false, true},
	} {
		err := pgstore.Classify("list", tc.err)
		if got := errors.Is(err, context.Canceled); got != tc.canceled {
			t.Errorf("%s: %v is context.Canceled: %v, want %v", tc.name, err, got, tc.canceled)
		}
		if got := errors.Is(err, pets.ErrUnavailable); got != tc.unavail {
			t.Errorf("%s: %v is ErrUnavailable: %v, want %v", tc.name, err, got, tc.unavail)
		}
	}
}

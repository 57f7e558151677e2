package main

import (
	"errors"
	"net"
	"testing"

	"github.com/petstore/petstore/internal/chaos/history"
)

// TestCreateOutcome: only an answer that rules the create out is failed;
// whatever leaves it possible is indeterminate, so that the audit never
// blames the server for a pet a create may have made.
func TestCreateOutcome(t *testing.T) {
	body := func(msg string) []byte { return []byte(`{"code":"unavailable","message":"` + msg + `","status":503}`) }
	for _, c := range []struct {
		name string
		a    answer
		want string
	}{
		{"201", answer{status: 201}, history.OK},
		{"never connected", answer{err: &net.OpError{Op: "dial", Err: errors.New("connection refused")}}, history.Failed},
		{"connection lost", answer{err: &net.OpError{Op: "read", Err: errors.New("connection reset")}}, history.Indeterminate},
		{"409 in flight", answer{status: 409}, history.Failed},
		{"422 reused", answer{status: 422}, history.Failed},
		{"503 nothing written", answer{status: 503, body: body("the store is unavailable; nothing was written, retry later")}, history.Failed},
		{"503 may have been created", answer{status: 503, body: body("the store failed after the create was sent: the pet may have been created")}, history.Indeterminate},
		{"503 of another kind", answer{status: 503, body: body("the service is unavailable; retry later")}, history.Indeterminate},
		{"500", answer{status: 500}, history.Indeterminate},
	} {
		if got := createOutcome(c.a); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

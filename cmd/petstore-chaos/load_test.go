package main

import (
	"errors"
	"net"
	"testing"

	"github.com/petstore/petstore/internal/chaos/history"
)

// TestCreateOutcome: only an answer that rules the create out is failed;
// whatever leaves it possible is indeterminate, so that the audit never
// blames the server for a pet a create may have made. A 503 is judged by
// its code, never by its message's words.
func TestCreateOutcome(t *testing.T) {
	body := func(code, msg string) []byte {
		return []byte(`{"code":"` + code + `","message":"` + msg + `","status":503}`)
	}
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
		{"503 unavailable", answer{status: 503, body: body("unavailable", "the store is unavailable; nothing was written, retry later")}, history.Failed},
		{"503 unavailable, whatever it says", answer{status: 503, body: body("unavailable", "the pet may have been created")}, history.Failed},
		{"503 outcome_unknown", answer{status: 503, body: body("outcome_unknown", "the store failed after the create was sent: the pet may have been created")}, history.Indeterminate},
		{"503 outcome_unknown, whatever it says", answer{status: 503, body: body("outcome_unknown", "nothing was written")}, history.Indeterminate},
		{"503 of another code", answer{status: 503, body: body("internal", "nothing was written")}, history.Indeterminate},
		{"503 unreadable", answer{status: 503, body: []byte("nothing was written")}, history.Indeterminate},
		{"500", answer{status: 500}, history.Indeterminate},
	} {
		if got := createOutcome(c.a); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

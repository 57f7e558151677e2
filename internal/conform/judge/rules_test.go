package judge

import (
	"net/http"
	"testing"

	"github.com/petstore/petstore/internal/conform/wire"
)

// A 507 says when to retry exactly when time lifts its bound.
func TestStorageRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		status      int
		code        string
		retryAfter  []string
		applies, ok bool
	}{
		{507, "idempotency_keys_full", []string{"30"}, true, true},
		{507, "idempotency_keys_full", nil, true, false},
		{507, "idempotency_keys_full", []string{"30", "30"}, true, false},
		{507, "store_full", nil, true, true},
		{507, "store_full", []string{"30"}, true, false},
		{429, "rate_limited", []string{"1"}, false, true},
		{201, "", nil, false, true},
	} {
		x := &Exchange{Exchange: &wire.Exchange{Status: tc.status, Header: http.Header{}, Body: []byte(`{"code":"` + tc.code + `","message":"m","status":507}`)}}
		if tc.retryAfter != nil {
			x.Header["Retry-After"] = tc.retryAfter
		}
		applies, want := judgeStorageRetryAfter(nil, x)
		if applies != tc.applies || (want == "") != tc.ok {
			t.Errorf("%d %s, Retry-After %q: applies %v, want %q; expected applies %v, ok %v", tc.status, tc.code, tc.retryAfter, applies, want, tc.applies, tc.ok)
		}
	}
}

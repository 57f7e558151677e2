package httpapi

import (
	"net/url"
	"strconv"
	"testing"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/pets"
)

// TestNextLink checks the hand-built link against url.Values' encoding.
func TestNextLink(t *testing.T) {
	for _, st := range append([]pets.Status{""}, pets.Statuses[:]...) {
		for _, last := range []int64{1, 20, 9223372036854775807} {
			q := pets.Query{Status: st, Limit: 37}
			v := url.Values{}
			v.Set("after", strconv.FormatInt(last, 10))
			v.Set("limit", strconv.Itoa(q.Limit))
			if st != "" {
				v.Set("status", string(st))
			}
			want := "<" + apitest.Base() + "/pets?" + v.Encode() + `>; rel="next"`
			if got := nextLink(apitest.Base(), q, last); got != want {
				t.Errorf("nextLink(%+v, %d): got %q, want %q", q, last, got, want)
			}
		}
	}
}

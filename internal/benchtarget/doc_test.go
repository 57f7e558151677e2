package benchtarget_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/benchtarget"
	"github.com/petstore/petstore/internal/memstore"
)

// TestBareServes: the baseline answers what the load run sends it; a
// baseline that answers errors would make every ratio meaningless.
func TestBareServes(t *testing.T) {
	e, err := benchtarget.Bare(memstore.New())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		method, path, body string
		want               int
	}{
		{"POST", apitest.Path("/pets"), apitest.Body(`{"name":"Rex","categoryId":1,"status":"available"}`), http.StatusCreated},
		{"GET", apitest.Path("/pets?limit=20"), "", http.StatusOK},
		{"GET", apitest.Path("/pets?status=available"), "", http.StatusOK},
		{"GET", apitest.Path("/pets/1"), "", http.StatusOK},
	} {
		req := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body))
		if tt.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != tt.want {
			t.Errorf("%s %s: %d %s, want %d", tt.method, tt.path, rec.Code, rec.Body, tt.want)
		}
	}
}

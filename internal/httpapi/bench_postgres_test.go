package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/pgtest"
)

// BenchmarkPostgresLoopback measures the whole app (validator, auth, error
// mapper) over real HTTP on 127.0.0.1, on the memory store and on
// PostgreSQL, in one run: creates and pages of 20 from a random cursor, from
// 16 concurrent keep-alive clients.
func BenchmarkPostgresLoopback(b *testing.B) {
	pgtest.URL(b) // skip both halves without a database, so runs compare
	const seeded = 10000
	stores := []struct {
		name string
		open func(b *testing.B, seed int) pets.Store
	}{
		{"memory", func(b *testing.B, seed int) pets.Store {
			s := memstore.New()
			for i := range seed {
				if _, err := s.Create(context.Background(), pets.NewPet{Name: fmt.Sprintf("pet %d", i), CategoryID: 1, Extra: pets.Extra(apitest.Extra())}); err != nil {
					b.Fatal(err)
				}
			}
			return s
		}},
		{"postgres", func(b *testing.B, seed int) pets.Store {
			dbURL := pgtest.Schema(b)
			s := pgtest.Open(b, dbURL)
			if seed > 0 {
				pgtest.Seed(b, dbURL, seed)
			}
			return s
		}},
	}
	for _, st := range stores {
		for _, op := range []string{"create", "list20"} {
			b.Run("op="+op+"/store="+st.name, func(b *testing.B) {
				store := st.open(b, seeded*boolInt(op == "list20"))
				app, err := httpapi.New(httpapi.Config{Store: store, Keys: apikey.NewSet(apikey.Hash(testKey))})
				if err != nil {
					b.Fatal(err)
				}
				srv := httptest.NewServer(app) // 127.0.0.1
				defer srv.Close()
				client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
				defer client.CloseIdleConnections()
				b.ReportAllocs()
				b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						var req *http.Request
						want := http.StatusOK
						if op == "create" {
							req, _ = http.NewRequest("POST", srv.URL+apitest.Path("/pets"), strings.NewReader(apitest.Body(`{"name":"Rex","categoryId":1}`)))
							req.Header.Set("Content-Type", "application/json")
							want = http.StatusCreated
						} else {
							req, _ = http.NewRequest("GET", srv.URL+apitest.Path(fmt.Sprintf("/pets?after=%d", rand.IntN(seeded-100))), nil)
						}
						req.Header.Set("Authorization", "Bearer "+testKey)
						res, err := client.Do(req)
						if err != nil {
							b.Error(err)
							return
						}
						io.Copy(io.Discard, res.Body)
						res.Body.Close()
						if res.StatusCode != want {
							b.Errorf("%s %s: got %d, want %d", req.Method, req.URL.Path, res.StatusCode, want)
							return
						}
					}
				})
			})
		}
	}
}

func boolInt(v bool) int {
	if v {
		return 1
	}
	return 0
}

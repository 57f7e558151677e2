package httpapi_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/benchtarget"
	"github.com/petstore/petstore/internal/cputime"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/memstore"
)

// benchPets is the size of the catalogue the API benchmarks run over.
const benchPets = 1000

// BenchmarkAPI measures each operation through the whole Echo app in
// process: full is the app as served (its JSON access log written to
// io.Discard), novalidate the same app built without the OpenAPI request
// validator, so that the validator's cost is the ratio of the two within one
// run, and bare the load run's bare baseline (package benchtarget; with
// httpapi's JSON body decoder, registered process-wide) (see BENCHMARKS.md). Beside the wall time it
// reports cpu-ns/op, the process's CPU time per operation, which other work
// on a shared machine disturbs far less.
func BenchmarkAPI(b *testing.B) {
	for _, op := range []struct {
		name, method, target, body string
		want                       int
	}{
		{"listPets", "GET", apitest.Path("/pets?limit=20&after=100"), "", http.StatusOK},
		{"listPetsFiltered", "GET", apitest.Path("/pets?status=sold&limit=20&after=100"), "", http.StatusOK},
		{"createPet", "POST", apitest.Path("/pets"), apitest.Body(`{"name":"Rex","categoryId":7,"status":"pending"}`), http.StatusCreated},
		{"getPet", "GET", apitest.Path("/pets/500"), "", http.StatusOK},
	} {
		for _, mode := range []string{"full", "novalidate", "bare"} {
			b.Run(op.name+"/"+mode, func(b *testing.B) {
				// A store of its own: creates grow it, and a larger heap
				// would slow the benchmarks that run after them.
				store := memstore.New()
				seedStore(b, store, benchPets)
				var app http.Handler
				var err error
				if mode == "bare" {
					app, err = benchtarget.Bare(store)
				} else {
					app, err = httpapi.New(httpapi.Config{Store: store, Keys: apikey.NewSet(apikey.Hash(testKey)), Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)), AccessLog: io.Discard, NoValidation: mode == "novalidate"})
				}
				if err != nil {
					b.Fatal(err)
				}
				tmpl := httptest.NewRequest(op.method, op.target, nil)
				tmpl.Header.Set("Authorization", "Bearer "+testKey)
				if op.body != "" {
					tmpl.Header.Set("Content-Type", "application/json")
					tmpl.ContentLength = int64(len(op.body))
				}
				body := []byte(op.body)
				w := &discardWriter{header: http.Header{}}
				b.ReportAllocs()
				cpu := cputime.Used()
				for b.Loop() {
					req := *tmpl
					if op.body != "" {
						req.Body = io.NopCloser(bytes.NewReader(body))
					}
					clear(w.header)
					w.status = 0
					app.ServeHTTP(w, &req)
					if w.status != op.want {
						b.Fatalf("%s %s: got status %d, want %d", op.method, op.target, w.status, op.want)
					}
				}
				b.ReportMetric(float64(cputime.Since(cpu))/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// discardWriter is an http.ResponseWriter that keeps only the status, so the
// benchmarks measure the app and not a recorder.
type discardWriter struct {
	header http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.header }

func (w *discardWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *discardWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return len(p), nil
}

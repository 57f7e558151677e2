// Command floor is the net/http floor of `make bench` (see package
// benchtarget): the three measured operations on net/http alone, over the
// memory store, answering the same JSON shapes with encoding/json; no
// framework, no validation, no auth. Never serve it.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"log"
	"net/http"
	"strconv"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/contract"
	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/pets"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18082", "listen address (loopback)")
	flag.Parse()
	store := memstore.New()
	base := basePath() // where the real server serves: the spec's servers' base path
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+base+"/pets", func(w http.ResponseWriter, r *http.Request) {
		q := pets.Query{Limit: pets.DefaultLimit}
		v := r.URL.Query()
		var err error
		if s := v.Get("limit"); s != "" {
			q.Limit, err = strconv.Atoi(s)
		}
		if s := v.Get("after"); s != "" && err == nil {
			q.After, err = strconv.ParseInt(s, 10, 64)
		}
		q.Status = pets.Status(v.Get("status"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		page, err := store.List(r.Context(), q)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out := make(gen.Pets, len(page.Pets))
		for i, p := range page.Pets {
			out[i] = toGen(p)
		}
		write(w, http.StatusOK, out)
	})
	mux.HandleFunc("POST "+base+"/pets", func(w http.ResponseWriter, r *http.Request) {
		var body gen.NewPet
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n := pets.NewPet{Name: body.Name, CategoryID: body.CategoryId}
		if body.Status != nil {
			n.Status = pets.Status(*body.Status)
		}
		p, err := store.Create(r.Context(), n)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Location", base+"/pets/"+strconv.FormatInt(p.ID, 10))
		write(w, http.StatusCreated, toGen(p))
	})
	mux.HandleFunc("GET "+base+"/pets/{petId}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(r.PathValue("petId"), 10, 64)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p, err := store.Get(r.Context(), id)
		if errors.Is(err, pets.ErrNotFound) {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		write(w, http.StatusOK, toGen(p))
	})
	log.Fatal(http.ListenAndServe(*addr, mux))
}

// basePath is the base path the embedded spec's servers name.
func basePath() string {
	spec, err := gen.GetSpec()
	if err != nil {
		log.Fatal(err)
	}
	base, err := contract.BasePath(spec)
	if err != nil {
		log.Fatal(err)
	}
	return base
}

func toGen(p pets.Pet) gen.Pet {
	return gen.Pet{Id: p.ID, Name: p.Name, CategoryId: p.CategoryID, Status: gen.PetStatus(p.Status)}
}

func write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

package gen_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/pets"
)

// serve starts the reference server on store at a loopback port, and
// returns a client of it and the server's stop.
func serve(store pets.Store) (*gen.ClientWithResponses, func()) {
	key, digest, err := apikey.Generate()
	if err != nil {
		log.Fatal(err)
	}
	app, err := httpapi.New(httpapi.Config{Store: store, Keys: apikey.NewSet(digest)})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(app)
	// Every request carries the key; the server serves under the path of
	// the spec's servers URL, its base path.
	client, err := gen.NewClientWithResponses(srv.URL+basePath(), gen.WithRequestEditorFn(
		func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+key)
			return nil
		}))
	if err != nil {
		log.Fatal(err)
	}
	return client, srv.Close
}

// basePath is the path of the embedded spec's servers URL.
func basePath() string {
	spec, err := gen.GetSpec()
	if err != nil {
		log.Fatal(err)
	}
	u, err := url.Parse(spec.Servers[0].URL)
	if err != nil {
		log.Fatal(err)
	}
	return u.Path
}

// A consumer adds two animals and lists those still available, with the
// typed client generated from openapi.yaml. The server is the reference
// implementation on a loopback port.
func ExampleClientWithResponses() {
	client, stop := serve(memstore.New())
	defer stop()
	ctx := context.Background()

	sold := gen.Sold
	for _, p := range []gen.NewPet{
		{Name: "Rex", CategoryId: 1},
		{Name: "Tom", CategoryId: 2, Status: &sold},
	} {
		created, err := client.CreatePetWithResponse(ctx, nil, p)
		if err != nil {
			log.Fatal(err)
		}
		if created.JSON201 == nil {
			log.Fatalf("create %s: %s %s", p.Name, created.Status(), created.Body)
		}
		// Location: where the pet lives, under the base path.
		where := strings.TrimPrefix(created.HTTPResponse.Header.Get("Location"), basePath())
		fmt.Printf("created %d %s at …%s\n", created.JSON201.Id, created.JSON201.Name, where)
	}

	limit, available := gen.Limit(10), gen.Available
	page, err := client.ListPetsWithResponse(ctx, &gen.ListPetsParams{Limit: &limit, Status: &available})
	if err != nil {
		log.Fatal(err)
	}
	if page.JSON200 == nil {
		log.Fatalf("list: %s %s", page.Status(), page.Body)
	}
	for _, p := range *page.JSON200 {
		fmt.Printf("available: %d %s (category %d)\n", p.Id, p.Name, p.CategoryId)
	}
	// Output:
	// created 1 Rex at …/pets/1
	// created 2 Tom at …/pets/2
	// available: 1 Rex (category 1)
}

// lostCommit stores the first create sent with a key, then fails as a
// store does when its connection drops after the commit was sent.
type lostCommit struct {
	pets.Store
	failed bool
}

func (s *lostCommit) CreateOnce(ctx context.Context, n pets.NewPet, k pets.IdempotencyKey) (pets.Pet, bool, error) {
	p, replayed, err := s.Store.CreateOnce(ctx, n, k)
	if err == nil && !s.failed {
		s.failed = true
		return pets.Pet{}, false, fmt.Errorf("commit: %w", pets.ErrOutcomeUnknown)
	}
	return p, replayed, err
}

// A create sent with an Idempotency-Key is retried with the same key until
// it is answered. What a 503 means is in its code, never in its message:
// outcome_unknown says the pet may have been created, unavailable that
// nothing was written. Either way the same key makes the retry safe; a
// create sent without a key that gets outcome_unknown cannot be retried
// blindly (list the pets first).
func ExampleClientWithResponses_retry() {
	client, stop := serve(&lostCommit{Store: memstore.New()})
	defer stop()

	idem := "7d4c0f0e-rex" // one key for this one pet, sent with every retry
	for attempt := 1; attempt <= 5; attempt++ {
		created, err := client.CreatePetWithResponse(context.Background(), &gen.CreatePetParams{IdempotencyKey: &idem}, gen.NewPet{Name: "Rex", CategoryId: 1})
		switch {
		case err != nil:
			fmt.Println("no answer: retry with the same key") // the pet may have been created
		case created.JSON201 != nil:
			fmt.Printf("created %d %s (replayed: %s)\n", created.JSON201.Id, created.JSON201.Name, created.HTTPResponse.Header.Get("Idempotent-Replayed"))
			return
		case created.JSON503 != nil && created.JSON503.Code == gen.ErrorCodeOutcomeUnknown:
			fmt.Println("503 outcome_unknown: it may have been created; retry with the same key")
		case created.JSON503 != nil && created.JSON503.Code == gen.ErrorCodeUnavailable:
			fmt.Println("503 unavailable: nothing was written; retry with the same key")
		case created.JSON409 != nil:
			fmt.Println("409: an earlier attempt is still being processed; retry later")
		default:
			log.Fatalf("create: %s %s", created.Status(), created.Body)
		}
	}
	// Output:
	// 503 outcome_unknown: it may have been created; retry with the same key
	// created 1 Rex (replayed: true)
}

package gen_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/memstore"
)

// A consumer adds two animals and lists those still available, with the
// typed client generated from openapi.yaml. The server is the reference
// implementation on a loopback port.
func ExampleClientWithResponses() {
	key, digest, err := apikey.Generate()
	if err != nil {
		log.Fatal(err)
	}
	app, err := httpapi.New(httpapi.Config{Store: memstore.New(), Keys: apikey.NewSet(digest)})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(app)
	defer srv.Close()

	// Every request carries the key; the server's base path is /v1.
	client, err := gen.NewClientWithResponses(srv.URL+"/v1", gen.WithRequestEditorFn(
		func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+key)
			return nil
		}))
	if err != nil {
		log.Fatal(err)
	}
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
		fmt.Printf("created %d %s at %s\n", created.JSON201.Id, created.JSON201.Name, created.HTTPResponse.Header.Get("Location"))
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
	// created 1 Rex at /v1/pets/1
	// created 2 Tom at /v1/pets/2
	// available: 1 Rex (category 1)
}

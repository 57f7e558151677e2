package main

import (
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/pgstore"
	"github.com/petstore/petstore/internal/server"
)

// The chaos run's planted defects (cmd/petstore/broken.go): set only in a
// build with the chaosbroken tag, which links internal/chaos/broken.
var (
	plantEnv     string // the variable naming the defect
	plantURL     func(kind, url string) (string, error)
	plantStore   func(kind, url string, s pets.Store) pets.Store
	plantOptions func(kind string) []pgstore.Option
)

// plant is the defect the environment names, in a build that has them.
func plant(getenv func(string) string) server.Plant {
	if plantEnv == "" {
		return server.Plant{}
	}
	return server.Plant{Kind: getenv(plantEnv), URL: plantURL, Store: plantStore, Options: plantOptions}
}

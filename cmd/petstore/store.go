package main

import "github.com/petstore/petstore/internal/server"

// newPlant returns the chaos run's planted defect the environment names
// (cmd/petstore/broken.go): set only in a build with the chaosbroken tag,
// which links internal/chaos/broken.
var newPlant func(getenv func(string) string) (server.Plant, error)

// plant is the defect the environment names, in a build that has them; nil
// otherwise.
func plant(getenv func(string) string) (server.Plant, error) {
	if newPlant == nil {
		return nil, nil
	}
	return newPlant(getenv)
}

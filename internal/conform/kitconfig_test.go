package conform_test

import "github.com/petstore/petstore/internal/conform"

// kitConfig is the kit's configuration against a mutant at base: both
// tenants' keys, seed 1. (.ci/kit-mutants.sh puts one of its own in its
// place to run the mutants with an older kit.)
func kitConfig(base string) conform.Config {
	return conform.Config{BaseURL: base, Key: testKey, Key2: testKey2, Seed: 1}
}

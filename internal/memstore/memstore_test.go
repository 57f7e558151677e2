package memstore_test

import (
	"testing"

	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/storetest"
)

func TestStore(t *testing.T) {
	storetest.Run(t, func(*testing.T) pets.Store { return memstore.New() })
}

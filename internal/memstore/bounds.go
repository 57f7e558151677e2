package memstore

import (
	"github.com/petstore/petstore/gen/shape"
	"github.com/petstore/petstore/internal/pets"
)

// The worst case of the store, computed from openapi.yaml's bounds
// (gen/shape, which make generate writes) and the store's layout, so that
// a member added to the spec moves every figure derived from it: the docs'
// (tools/docbounds writes them at make generate, and fails make test when
// they disagree), TestWorstCaseSizes' and make bench-bounds'.
const (
	// petOverhead is a stored pet beyond its text: its 32-byte record and
	// its 8-byte id in its status's index, with room for the two slices'
	// growth (up to a quarter more than they hold, Go's growth for large
	// slices, and rounding).
	petOverhead = 64
	// outcomeOverhead is a kept outcome beyond its key: its map entry (the
	// key's header and the interned owner's handle, the fingerprint, id
	// and expiry) and its expiry heap entry, with the map's and the heap's
	// growth, as TestWorstCaseSizes measures them.
	outcomeOverhead = 204
	// mib is a mebibyte.
	mib = 1 << 20
	// runtimeMiB is what the server takes beside the store's heap and the
	// collector's headroom: the runtime, stacks, buffers, the binary.
	runtimeMiB = 64
	// connectionsMiB is what slow clients may hold at the connection bound
	// (docs/operating.md, "Connections").
	connectionsMiB = 80
)

// sizeClass is the bytes the allocator gives an object of n bytes: append
// rounds a slice's capacity up to it, as a string's allocation is.
func sizeClass(n int) int {
	if n == 0 {
		return 0
	}
	return cap(append([]byte(nil), make([]byte, n)...))
}

// PetBytes is the most heap one stored pet takes: its text (the longest
// name in UTF-8 and the longest members in canonical JSON, one string) and
// its overhead. ok is false when the schema leaves a member unbounded
// (shape.Unbounded says which): then only the request body bounds a pet.
func PetBytes() (n int, ok bool) {
	if shape.MaxExtraBytes < 0 {
		return 0, false
	}
	return sizeClass(shape.MaxNameBytes+shape.MaxExtraBytes) + petOverhead, true
}

// OutcomeBytes is the most heap one kept outcome takes: the longest key,
// and its overhead.
func OutcomeBytes() int {
	return sizeClass(pets.MaxKeyLength) + outcomeOverhead
}

// Worst is the store and the server at the store's bounds, in the worst
// case the schema allows.
type Worst struct {
	MaxPets, MaxKeys int
	PetBytes         int  // PetBytes
	OutcomeBytes     int  // OutcomeBytes
	Bounded          bool // false: a member is unbounded (PetBytes is 0)
	HeapBytes        int  // the store's heap, full
	// PeakMiB is the server's expected peak resident memory: the heap and
	// as much again, the collector's headroom at GOGC=100.
	PeakMiB int
	// BoundMiB is the bound make bench-bounds holds the real binary's peak
	// under: PeakMiB rounded up to 64 MiB, plus runtimeMiB.
	BoundMiB int
	// ContainerMiB is the memory to give a container of the server: the
	// bound, and what slow clients may hold, rounded up to 128 MiB.
	ContainerMiB int
}

// WorstAt is Worst at the given bounds.
func WorstAt(maxPets, maxKeys int) Worst {
	w := Worst{MaxPets: maxPets, MaxKeys: maxKeys, OutcomeBytes: OutcomeBytes()}
	w.PetBytes, w.Bounded = PetBytes()
	w.HeapBytes = maxPets*w.PetBytes + maxKeys*w.OutcomeBytes
	w.PeakMiB = (2*w.HeapBytes + mib - 1) / mib
	w.BoundMiB = roundUp(w.PeakMiB, 64) + runtimeMiB
	w.ContainerMiB = roundUp(w.BoundMiB+connectionsMiB, 128)
	return w
}

func roundUp(n, to int) int { return (n + to - 1) / to * to }

package schemagen

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/petstore/petstore/internal/canon"
)

// Canonical writes v, a JSON-ready value, in one form (internal/canon): the
// JSON Canonicalization Scheme (RFC 8785), but for integers, which are
// written exactly, never rounded to a double. Two values are the same JSON
// value exactly when their canonical forms are equal. v may hold the values
// encoding/json decodes (float64 or json.Number numbers, []any,
// map[string]any) and int, int64; a string must be valid UTF-8.
func Canonical(v any) ([]byte, error) { return canon.Append(nil, v) }

// CanonicalJSON is Canonical of the JSON text data, its numbers read
// exactly.
func CanonicalJSON(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("schemagen: trailing data after the JSON value")
	}
	return Canonical(v)
}

// Package breach breaks each rule of TestOneMeaning once, and keeps what
// the rules allow: TestOneMeaningFinds loads it.
package breach

import (
	"encoding/json"
	"reflect"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/value/canon"
)

func Default(s *openapi3.Schema) any { return s.Default }

func Same(a, b any) bool { return reflect.DeepEqual(a, b) }

func Float(n json.Number) float64 {
	f, _ := n.Float64()
	g, _ := strconv.ParseFloat(string(n), 64)
	return f + g
}

func Write(v any) []byte {
	b, _ := canon.Append(nil, v)
	return b
}

// Allowed: a string, a member name's order, a schema's other fields.
func Allowed(s *openapi3.Schema, name string) ([]byte, int, uint64) {
	return canon.AppendString(nil, name), canon.Compare(name, "a"), s.MinLength
}

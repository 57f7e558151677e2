// Package gen holds the code oapi-codegen generates from openapi.yaml: the
// Echo server interface, the typed client (ClientWithResponses), the models
// and the embedded spec; and openapi.yaml itself, copied here to be embedded
// byte for byte, and its JSON form (tools/specjson); and package shape
// (gen/shape, by tools/shapegen): the facts of the spec that the domain and
// the stores need, without Echo. Nothing here is written by hand but this
// file, config.yaml and example_test.go, the client's runnable example.
package gen

import _ "embed" // SpecYAML, SpecJSON

// make generate writes the files here. make check-generate and make
// check-compat set GEN_OUT to another directory (with its trailing slash)
// to generate a fresh copy there and compare it with the files here.
//
// shapegen comes first: it refuses a spec that leaves a member of a pet
// unbounded, naming each, and then nothing here is written.
//
//go:generate go run ../tools/shapegen -in ../openapi.yaml -out ${GEN_OUT}shape/shape.go
//go:generate cp ../openapi.yaml ${GEN_OUT}openapi.yaml
//go:generate go run ../tools/specjson -in ../openapi.yaml -out ${GEN_OUT}openapi.json
//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen --config=config.yaml -o ${GEN_OUT}petstore.gen.go ../openapi.yaml

// SpecYAML is openapi.yaml byte for byte, as served: the embedded spec of
// GetSpecJSON has been through kin-openapi, whose float64 bounds turn
// 9223372036854775807 into 9223372036854776000. make generate copies the
// file; make check-generate fails when the copy drifts.
//
//go:embed openapi.yaml
var SpecYAML []byte

// SpecJSON is openapi.yaml in JSON, as served: the same members in the same
// order, integers exact, written by tools/specjson at make generate.
//
//go:embed openapi.json
var SpecJSON []byte

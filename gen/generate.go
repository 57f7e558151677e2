// Package gen holds the code oapi-codegen generates from openapi.yaml: the
// Echo server interface, the typed client (ClientWithResponses), the models
// and the embedded spec. Nothing here is written by hand but this file and
// example_test.go, the client's runnable example.
package gen

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen --config=config.yaml ../openapi.yaml

//go:build tools

// Package tools pins the versions of the tools the Makefile runs with
// `go run`, so that go.mod and go.sum decide them.
package tools

import (
	_ "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen"
	_ "golang.org/x/perf/cmd/benchstat"
	_ "honnef.co/go/tools/cmd/staticcheck"
)

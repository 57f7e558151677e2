package apitest

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/contract"
)

// The base path and the operations below come from the spec the server
// embeds (gen), so that no test writes the base path or a list of the
// operations: a tree that `make new-major` moved to the next major passes
// the same tests, and an added operation is in every list a test takes
// from here.

// spec is the embedded spec and its base path, decoded once a test binary.
var spec = sync.OnceValues(func() (*specInfo, error) {
	doc, err := gen.GetSpec()
	if err != nil {
		return nil, fmt.Errorf("apitest: the embedded spec: %w", err)
	}
	base, err := contract.BasePath(doc)
	if err != nil {
		return nil, fmt.Errorf("apitest: the embedded spec: %w", err)
	}
	return &specInfo{base: base, ops: operations(doc, base)}, nil
})

type specInfo struct {
	base string
	ops  []Operation
}

func mustSpec() *specInfo {
	s, err := spec()
	if err != nil {
		panic(err) // the embedded spec is generated and validated by make generate
	}
	return s
}

// Base returns the base path the spec's servers name, without a trailing
// slash: "/vN" at major N (make new-major moves it).
func Base() string { return mustSpec().base }

// Path returns p, a path under the base path ("/pets/7", "/pets?limit=1"),
// with the base path before it: "/vN/pets/7" at major N.
func Path(p string) string { return mustSpec().base + p }

// Operation is one operation of the spec.
type Operation struct {
	ID         string // its operationId: "getPet"
	Method     string // "GET"
	Path       string // its path template, base path included: "/vN/pets/{petId}"
	Deprecated bool
}

// Operations returns every operation of the spec, ordered by path, then
// method.
func Operations() []Operation { return slices.Clone(mustSpec().ops) }

// Op returns the spec's operation whose operationId is id. An id the spec
// does not name panics: the test names an operation that does not exist.
func Op(id string) Operation {
	for _, op := range mustSpec().ops {
		if op.ID == id {
			return op
		}
	}
	panic(fmt.Sprintf("apitest: the spec has no operation %q", id))
}

// OpOn returns the first operation of the spec on path (a path template
// under the base path: "/pets/{petId}"), in Operations' order. A path the
// spec does not have panics.
func OpOn(path string) Operation {
	for _, op := range mustSpec().ops {
		if op.Path == Path(path) {
			return op
		}
	}
	panic(fmt.Sprintf("apitest: the spec has no path %q", path))
}

// Target is the operation's path with every path parameter written v:
// "/vN/pets/7" for "/vN/pets/{petId}" and "7".
func (op Operation) Target(v string) string { return pathParam.ReplaceAllLiteralString(op.Path, v) }

var pathParam = regexp.MustCompile(`\{[^{}]+\}`)

// Methods returns the methods of the spec's operations on path (a path
// template, base path included), sorted: what Allow lists for it.
func Methods(path string) []string {
	var out []string
	for _, op := range mustSpec().ops {
		if op.Path == path {
			out = append(out, op.Method)
		}
	}
	slices.Sort(out)
	return out
}

func operations(doc *openapi3.T, base string) []Operation {
	var ops []Operation
	for _, path := range doc.Paths.InMatchingOrder() {
		for method, o := range doc.Paths.Value(path).Operations() {
			ops = append(ops, Operation{ID: o.OperationID, Method: method, Path: base + path, Deprecated: o.Deprecated})
		}
	}
	slices.SortFunc(ops, func(a, b Operation) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Method, b.Method)
	})
	return ops
}

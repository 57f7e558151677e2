package httpapi

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"

	"github.com/petstore/petstore/internal/contract"
)

// operation is one operation of the spec the app serves, with what the app
// derives from it. The table of them (operationsOf) is the only map from
// the spec to the app: routing and each operation's chain (registerAPI),
// the metrics labels (addRoutes), the span names (RouteOf) and the
// authentication check (requireOperations) all read it.
type operation struct {
	id     string // operationId: the metrics label and the span name
	method string
	route  string // Echo's path: the base path, then the spec's with {p} written :p
	// auth tells whether the operation requires the bearer key: its
	// security requirement (requireBearer), the spec's when it has none.
	auth bool
	// spec is the operation as the validator routes it (under base).
	spec *routers.Route
	// bind hands the decoded body to the handler, typed (bodyBinders,
	// made for the operation's body schema); nil for an operation without
	// a request body.
	bind bindFunc
}

// key names an operation as Echo names its route: "METHOD route".
func (op *operation) key() string { return op.method + " " + op.route }

// operations is the table of a spec's operations under base.
type operations struct {
	base string
	list []*operation // by route, then method
	// contract routes a request as the validator does (gorillamux: each
	// parameter [^/]+ of the escaped path); inContract asks it.
	contract *contract.Contract
}

// echoPath writes a spec path's parameters as Echo's: {petId} as :petId.
var echoPath = strings.NewReplacer("{", ":", "}", "")

// operationsOf builds the table of spec's operations under base. It fails
// on an operation whose security requirement the server does not enforce
// (anything but the bearer key alone, or none), and on a request body no
// binder takes, so that no operation is served with a rule it does not keep.
func operationsOf(spec *openapi3.T, base string, binders map[string]bodyBinder) (*operations, error) {
	c, err := contract.New(spec, base) // the validator's view: by path under base on any host
	if err != nil {
		return nil, err
	}
	routed := c.Spec()
	t := &operations{base: base, contract: c}
	var errs []error
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			o := &operation{
				id: op.OperationID, method: method, route: base + echoPath.Replace(path),
				spec: &routers.Route{Spec: routed, Path: path, PathItem: item, Method: method, Operation: op},
			}
			if o.auth, err = requireBearer(spec, op); err != nil {
				errs = append(errs, fmt.Errorf("%s %s: %w", method, path, err))
			}
			if op.RequestBody != nil {
				if binder := binders[op.OperationID]; binder == nil {
					errs = append(errs, fmt.Errorf("%s %s (%s): a request body no handler takes: add its binder", method, path, op.OperationID))
				} else if o.bind, err = binder(bodySchema(op.RequestBody.Value)); err != nil {
					errs = append(errs, fmt.Errorf("%s %s (%s): %w", method, path, op.OperationID, err))
				}
			}
			t.list = append(t.list, o)
		}
	}
	slices.SortFunc(t.list, func(a, b *operation) int {
		return cmp.Or(strings.Compare(a.route, b.route), strings.Compare(a.method, b.method))
	})
	return t, errors.Join(errs...)
}

// under reports whether an Echo route path is the base path or below it.
func (t *operations) under(path string) bool {
	return path == t.base || strings.HasPrefix(path, t.base+"/")
}

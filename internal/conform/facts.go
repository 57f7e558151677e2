package conform

import (
	"net/url"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/conform/cases"
	"github.com/petstore/petstore/internal/contract"
)

// The run answers the judge's questions (judge.Facts) from its spec and
// roles.

// Contract is the contract every answer is checked against.
func (r *run) Contract() *contract.Contract { return r.contract }

// Operation is the spec's operation with id, or nil.
func (r *run) Operation(id string) *openapi3.Operation {
	if op := r.operation(id); op != nil {
		return op.Op
	}
	return nil
}

// CreateOp is the create's operation id, or "".
func (r *run) CreateOp() string { return roleID(r.roles.Create) }

// GetOp is the get's operation id, or "".
func (r *run) GetOp() string { return roleID(r.roles.Get) }

func roleID(op *cases.Operation) string {
	if op == nil {
		return ""
	}
	return op.ID
}

// GetPath is the get's path of pet id.
func (r *run) GetPath(id int64) string { return r.reqs.GetTarget(id) }

// Base is BASE_URL, without a trailing slash.
func (r *run) Base() *url.URL { return r.base }

// Resolve turns a Location or Link target into an absolute URL on the
// target's host.
func (r *run) Resolve(ref string) (string, error) { return r.wire.Resolve(ref) }

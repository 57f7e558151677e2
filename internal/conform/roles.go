package conform

import (
	"github.com/petstore/petstore/internal/conform/cases"
)

// roles are the operations the model follows (cases.Roles).
type roles = cases.Roles

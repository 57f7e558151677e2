package conform

import (
	"github.com/petstore/petstore/internal/conform/judge"
	"github.com/petstore/petstore/internal/history"
)

// The kit's history (judge.History): every exchange is an op of
// internal/history, fed to the checker's model (internal/check) and
// written to Config.History when one is given. The run answers what the
// history asks of the spec's pets (judge.Pets) here and in observe.go.

// newHistory is the run's history, written to w (nil: none), and the
// checker's model of the target: its first line says what the checker
// knows of the contract.
func (r *run) newHistory(w *history.Writer) *judge.History {
	c := history.Contract{Filter: r.roles.Filter, Defaults: r.Defaults(), Request: []string{}}
	if r.roles.Create != nil {
		c.Name = r.NameMember()
		c.Request = sortedKeys(r.roles.Create.Body.Properties)
	}
	return judge.NewHistory(c, w, r)
}

// ListOp is the listing's operation id, or "" (judge.Pets).
func (r *run) ListOp() string { return roleID(r.roles.List) }

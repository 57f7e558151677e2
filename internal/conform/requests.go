package conform

import (
	"encoding/json"
	"maps"
	"math/big"
	"slices"

	"github.com/petstore/petstore/internal/conform/cases"
	"github.com/petstore/petstore/internal/value"
)

// Defaults are the defaults of the created resource's members, as canonical
// JSON (value.Defaults).
func (r *run) Defaults() map[string]string {
	d := map[string]string{}
	if r.roles.Create == nil {
		return d
	}
	for name, v := range value.Defaults(r.roles.Create.Body) {
		d[name] = value.NormalText(v)
	}
	return d
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// intNumber is n as a JSON number.
func intNumber(n *big.Int) json.Number { return json.Number(n.String()) }

// NameMember is the member of the created resource that the kit names: the
// first required string without an enum.
func (r *run) NameMember() string {
	s := r.roles.Create.Body
	for _, m := range s.Required {
		if ps := cases.Flat(s.Properties[m].Value); ps != nil && cases.IsType(ps, "string") && len(ps.Enum) == 0 {
			return m
		}
	}
	return s.Required[0]
}

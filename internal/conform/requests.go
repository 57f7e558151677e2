package conform

import (
	"encoding/json"
	"maps"
	"math/big"
	"net/http"
	"slices"

	"github.com/petstore/petstore/internal/conform/cases"
	"github.com/petstore/petstore/internal/conform/judge"
)

// bounds are the limits the spec being checked sets (cases.Bounds).
type bounds = cases.Bounds

// defaults are the defaults of the created resource's members, as canonical
// JSON.
func (r *run) defaults() map[string]string {
	d := map[string]string{}
	if r.roles.Create == nil {
		return d
	}
	for name, ref := range r.roles.Create.Body.Properties {
		if s := cases.Flat(ref.Value); s != nil && s.Default != nil {
			d[name] = canonical(s.Default)
		}
	}
	return d
}

// mustJSON is v as JSON (cases.MustJSON).
func mustJSON(v any) []byte { return cases.MustJSON(v) }

// absent is the marker of a member left out (cases.Absent).
var absent = cases.Absent

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// intNumber is n as a JSON number.
func intNumber(n *big.Int) json.Number { return json.Number(n.String()) }

// nextLink returns the target of a Link rel="next", or "" (judge.NextLink).
func nextLink(h http.Header) string { return judge.NextLink(h) }

// nameMember is the member of the created resource that the kit names: the
// first required string without an enum.
func (r *run) nameMember() string {
	s := r.roles.Create.Body
	for _, m := range s.Required {
		if ps := cases.Flat(s.Properties[m].Value); ps != nil && cases.IsType(ps, "string") && len(ps.Enum) == 0 {
			return m
		}
	}
	return s.Required[0]
}

// spaced writes body as JSON in a legal but uncommon form (cases.Spaced).
func spaced(body map[string]any) []byte { return cases.Spaced(body) }

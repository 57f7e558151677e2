package check

import (
	"encoding/json"
	"maps"
	"strings"

	"github.com/petstore/petstore/internal/history"
	"github.com/petstore/petstore/internal/schemagen"
)

// sameAsSent reports whether p is the pet b describes: every member b sent,
// and the default of every member it left out, and no other member.
func (a *audit) sameAsSent(p history.Pet, b history.Body) bool {
	p.ID = 0
	return p == a.asSent(b)
}

// asSent is the pet (without an id) that b describes: its members, and the
// defaults of those it left out.
func (a *audit) asSent(b history.Body) history.Pet {
	p := history.Pet{Name: b.Name, CategoryID: b.CategoryID, Status: b.Status, Rest: b.Rest}
	if s, ok := a.defaults["status"].(string); ok && p.Status == "" {
		p.Status = s
	}
	rest := map[string]any{}
	for k, v := range a.defaults {
		switch k {
		case "name", "categoryId", "status":
		default:
			rest[k] = v
		}
	}
	if len(rest) == 0 {
		return p
	}
	if b.Rest != "" {
		var sent map[string]any
		dec := json.NewDecoder(strings.NewReader(b.Rest))
		dec.UseNumber()
		if err := dec.Decode(&sent); err != nil {
			return p // not an object: it cannot match a pet's members anyway
		}
		maps.Copy(rest, sent)
	}
	if c, err := schemagen.Canonical(rest); err == nil {
		p.Rest = string(c)
	}
	return p
}

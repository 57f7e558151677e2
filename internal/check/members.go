package check

import (
	"encoding/json"
	"strconv"

	"github.com/petstore/petstore/internal/history"
	"github.com/petstore/petstore/internal/value"
)

// sameAsSent reports whether p is the pet b describes: every member b sent,
// and the default of every member it left out, at every depth, and no
// other member; each value compared by the contract's rules (package
// value: a float as its float32, a date-time as its instant, a number
// whatever its spelling). It is the model's rule (memberRules.alters),
// over the same members: one rule of "stored as it was sent".
func (a *audit) sameAsSent(p history.Pet, b history.Body) bool {
	want, ok := a.asSent(b)
	got, ok2 := a.asStored(p)
	return ok && ok2 && memberRules{}.alters(want, got) == ""
}

// samePet reports whether x and y are the same pet: the same id and every
// member the same value (asStored), by the model's rule.
func (a *audit) samePet(x, y history.Pet) bool {
	if x == y {
		return true
	}
	if x.ID != y.ID {
		return false
	}
	mx, ok := a.asStored(x)
	my, ok2 := a.asStored(y)
	return ok && ok2 && memberRules{}.alters(mx, my) == ""
}

// asSent are the members (but the id) of the pet b describes by the
// request's schema (Options.NewPet), normalised: its members, and the
// defaults of those it left out, each as canonical text (package value),
// as the kit's history records a create's (history.Kit.Sent). ok is false
// for a body the schema refuses: no pet is what it describes.
func (a *audit) asSent(b history.Body) (history.Members, bool) {
	obj, ok := members(b.Name, b.CategoryID, b.Status, b.Rest)
	if !ok {
		return nil, false
	}
	n, err := value.Normalize(obj, a.newPet)
	if err != nil {
		return nil, false
	}
	return texts(n)
}

// asStored are the members of p, a stored or answered pet, but its id, in
// the form an answer's are compared in (value.Answered), as the kit's
// history records an answer's (history.Kit.Got).
func (a *audit) asStored(p history.Pet) (history.Members, bool) {
	obj, ok := members(p.Name, p.CategoryID, p.Status, p.Rest)
	if !ok {
		return nil, false
	}
	return texts(value.Answered(obj, a.newPet))
}

// texts are the members of v, a normalised object, as canonical text.
func texts(v any) (history.Members, bool) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	out := make(history.Members, len(obj))
	for k, x := range obj {
		out[k] = value.NormalText(x)
	}
	return out, true
}

// members is a pet's or a body's members as one decoded object; a status
// "" is left out.
func members(name string, categoryID int64, status, rest string) (map[string]any, bool) {
	obj := map[string]any{}
	if rest != "" {
		v, err := value.Decode([]byte(rest))
		m, ok := v.(map[string]any)
		if err != nil || !ok {
			return nil, false
		}
		obj = m
	}
	obj["name"], obj["categoryId"] = name, json.Number(strconv.FormatInt(categoryID, 10))
	if status != "" {
		obj["status"] = status
	}
	return obj, true
}

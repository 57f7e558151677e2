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
// whatever its spelling).
func (a *audit) sameAsSent(p history.Pet, b history.Body) bool {
	want, ok := a.asSent(b)
	p.ID = 0
	return ok && a.asStored(p) == want
}

// samePet reports whether x and y are the same pet: the same id and every
// member the same value (asStored).
func (a *audit) samePet(x, y history.Pet) bool {
	if x == y {
		return true
	}
	if x.ID != y.ID {
		return false
	}
	x.ID, y.ID = 0, 0
	return a.asStored(x) == a.asStored(y)
}

// asSent is the pet (without an id) that b describes by the request's
// schema (Options.NewPet), normalised: its members, and the defaults of
// those it left out. ok is false for a body the schema refuses: no pet is
// what it describes.
func (a *audit) asSent(b history.Body) (history.Pet, bool) {
	obj, ok := members(b.Name, b.CategoryID, b.Status, b.Rest)
	if !ok {
		return history.Pet{}, false
	}
	n, err := value.Normalize(obj, a.newPet)
	if err != nil {
		return history.Pet{}, false
	}
	return petOf(n)
}

// asStored is p, a stored or answered pet without an id, in the form
// asSent's are compared in (value.Answered).
func (a *audit) asStored(p history.Pet) history.Pet {
	obj, ok := members(p.Name, p.CategoryID, p.Status, p.Rest)
	if !ok {
		return p
	}
	if q, ok := petOf(value.Answered(obj, a.newPet)); ok {
		return q
	}
	return p
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

// petOf is the pet of v, a normalised object: its typed members, every
// other one in Rest.
func petOf(v any) (history.Pet, bool) {
	obj, _ := v.(map[string]any)
	var p history.Pet
	var ok bool
	if p.Name, ok = obj["name"].(string); !ok {
		return p, false
	}
	n, _ := obj["categoryId"].(json.Number)
	if p.CategoryID, ok = parseID(n); !ok {
		return p, false
	}
	p.Status, _ = obj["status"].(string)
	delete(obj, "name")
	delete(obj, "categoryId")
	delete(obj, "status")
	if len(obj) > 0 {
		b, err := value.Append(nil, obj)
		if err != nil {
			return p, false
		}
		p.Rest = string(b)
	}
	return p, true
}

func parseID(n json.Number) (int64, bool) {
	i, err := strconv.ParseInt(string(n), 10, 64)
	return i, err == nil
}

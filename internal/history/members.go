package history

import (
	"encoding/json"
	"fmt"
	"strconv"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/petstore/petstore/internal/value"
)

// Pet is a stored or acknowledged pet: every member of it, the ones the
// audit reads typed (a name names its create; status is what a walk
// filters on) and every other one in Rest, so that two versions of a pet
// compare whole, whatever members the spec adds. Its JSON form is the
// pet's own, one flat object, as the API answers it; a history or state
// written before Rest existed reads as pets without other members.
type Pet struct {
	ID         int64
	Name       string
	CategoryID int64
	Status     string
	// Rest is every other member, as one canonical JSON object, schema-free
	// (package value: members sorted, numbers exact); "" for none. The
	// audit compares two Rests by the schema's rules (a float as its
	// float32, a date-time as its instant).
	Rest string
}

// Body is a create's request body: every member it sent, as Pet holds
// them; Status is "" when the create left it out (the contract's default
// applies).
type Body struct {
	Name       string
	CategoryID int64
	Status     string
	Rest       string
}

// members is the JSON form of a Pet or a Body: the typed members, and the
// others gathered from and spread into the same object.
type members struct {
	ID         int64          `json:"id,omitzero"`
	Name       string         `json:"name"`
	CategoryID int64          `json:"categoryId"`
	Status     string         `json:"status,omitempty"`
	Rest       jsontext.Value `json:",embed"` // an embedded fallback: every other member
}

// MarshalJSON writes the pet as one object, its other members beside the
// typed ones.
func (p Pet) MarshalJSON() ([]byte, error) {
	return jsonv2.Marshal(members{p.ID, p.Name, p.CategoryID, p.Status, restValue(p.Rest)})
}

// UnmarshalJSON reads a pet, its members but the typed ones into Rest.
func (p *Pet) UnmarshalJSON(b []byte) error {
	var m members
	if err := jsonv2.Unmarshal(b, &m); err != nil {
		return err
	}
	rest, err := canonicalRest(m.Rest)
	*p = Pet{m.ID, m.Name, m.CategoryID, m.Status, rest}
	return err
}

// MarshalJSON writes the body as it was sent: its typed members (status
// only if it was sent) and the others, in one object.
func (b Body) MarshalJSON() ([]byte, error) {
	return jsonv2.Marshal(members{0, b.Name, b.CategoryID, b.Status, restValue(b.Rest)})
}

// UnmarshalJSON reads a body, as Pet.UnmarshalJSON a pet.
func (b *Body) UnmarshalJSON(data []byte) error {
	var m members
	if err := jsonv2.Unmarshal(data, &m); err != nil {
		return err
	}
	rest, err := canonicalRest(m.Rest)
	*b = Body{m.Name, m.CategoryID, m.Status, rest}
	return err
}

// restValue is Rest as the object's unknown members: none for "".
func restValue(rest string) jsontext.Value {
	if rest == "" {
		return nil
	}
	return jsontext.Value(rest)
}

// canonicalRest is the other members as Rest holds them.
func canonicalRest(v jsontext.Value) (string, error) {
	if len(v) == 0 {
		return "", nil
	}
	c, err := value.TextOf(v)
	if err != nil || string(c) == "{}" {
		return "", err
	}
	return string(c), nil
}

// String is the pet as an anomaly's line shows it.
func (p Pet) String() string {
	s := fmt.Sprintf("{ID:%d Name:%s CategoryID:%d Status:%s", p.ID, p.Name, p.CategoryID, p.Status)
	if p.Rest != "" {
		s += " " + p.Rest
	}
	return s + "}"
}

// String is the body as an anomaly's line shows it.
func (b Body) String() string {
	s := fmt.Sprintf("{Name:%s CategoryID:%d Status:%s", b.Name, b.CategoryID, b.Status)
	if b.Rest != "" {
		s += " " + b.Rest
	}
	return s + "}"
}

// NewBody is the body of the JSON object v (as encoding/json decodes one,
// numbers as json.Number): its name, categoryId and status typed, every
// other member in Rest.
func NewBody(v map[string]any) (Body, error) {
	var b Body
	rest := map[string]any{}
	for k, m := range v {
		var ok bool
		switch k {
		case "name":
			b.Name, ok = m.(string)
		case "categoryId":
			var n json.Number
			if n, ok = m.(json.Number); ok {
				b.CategoryID, ok = parseInt(n)
			}
		case "status":
			b.Status, ok = m.(string)
		default:
			rest[k], ok = m, true
		}
		if !ok {
			return Body{}, fmt.Errorf("history: member %s: %v is not what a body holds", k, m)
		}
	}
	if len(rest) > 0 {
		c, err := value.Canonical(rest, nil)
		if err != nil {
			return Body{}, err
		}
		b.Rest = string(c)
	}
	return b, nil
}

func parseInt(n json.Number) (int64, bool) {
	i, err := strconv.ParseInt(string(n), 10, 64)
	return i, err == nil
}

package cases

import (
	"encoding/json"
	"fmt"
)

// ValueRules are the values sentence's cases (info.x-rules values: what
// "stored and answered as it was sent" means for each kind, package value):
// for each member of the create's body whose value is not its text, a
// spelling that is the same value taken (the model judges that the pet
// comes back as that value, in whatever spelling), and each value the rule
// refuses refused: a float past float32's range; a date-time that names no
// instant (a leap second, a day its month lacks). A number without a
// format is sent in the spellings of one value by the equivalence cases
// (key-reused).
func ValueRules(t T) []Case {
	reqs := t.Requests()
	op := reqs.Roles.Create
	if op == nil {
		return nil
	}
	var ks []Case
	add := func(name, label string, v any, ok bool) {
		body := MustJSON(reqs.NewPet("conform-value", map[string]any{name: v}))
		if s := op.Body.Properties[name].Value; ok && s.VisitJSON(v) != nil {
			return // the schema's bounds leave the value out
		}
		if ok {
			ks = append(ks, Positive(fmt.Sprintf("body %s: %s", name, label), reqs.CreateReq(body, nil), Created()))
		} else {
			ks = append(ks, Negative(fmt.Sprintf("body %s: %s", name, label), reqs.CreateReq(body, nil)))
		}
	}
	for _, name := range sortedKeys(op.Body.Properties) {
		s := Flat(op.Body.Properties[name].Value)
		switch {
		case s == nil:
		case IsType(s, "number") && s.Format == "float":
			add(name, "float32's largest value in a double's digits", json.Number("3.4028234663852886e+38"), true)
			add(name, "past float32's range", json.Number("3.5e+38"), false)
		case IsType(s, "string") && s.Format == "date-time" && len(s.Enum) == 0 && s.Pattern == "":
			add(name, "an offset of -00:00 and a fraction with trailing zeros", "2020-02-29T23:59:59.500-00:00", true)
			add(name, "a leap second", "2016-12-31T23:59:60Z", false)
			add(name, "a day its month lacks", "2021-02-30T00:00:00Z", false)
		}
	}
	return ks
}

package value

import "github.com/getkin/kin-openapi/openapi3"

// strip is v, a normalised value of ss, without the members at their
// defaults, at every depth.
func (w walker) strip(v any, ss []*openapi3.Schema) any {
	facets := w.facets(v, ss)
	switch x := v.(type) {
	case map[string]any:
		names := propertyNames(facets)
		for _, name := range names {
			ms := memberSchemas(facets, name)
			mv, ok := x[name]
			if !ok {
				continue
			}
			if d, ok := defaultOf(ms); ok && sameText(mv, d) {
				delete(x, name)
				continue
			}
			x[name] = w.strip(mv, ms)
		}
		more := additionalSchemas(facets)
		for name, mv := range x {
			if !containsSorted(names, name) {
				x[name] = w.strip(mv, more)
			}
		}
	case []any:
		items := itemSchemas(facets)
		for i, e := range x {
			x[i] = w.strip(e, items)
		}
	}
	return v
}

// sameText reports whether a and b, normalised, are the same canonical
// JSON.
func sameText(a, b any) bool {
	ta, err1 := Append(nil, a)
	tb, err2 := Append(nil, b)
	return err1 == nil && err2 == nil && string(ta) == string(tb)
}

package strict

import (
	"net/url"
	"slices"
	"strings"
)

// Query is the rules of an operation's query parameters: each parameter it
// defines, with its range when it is an integer, nil when it is not.
type Query map[string]*Int

// Check holds a raw query to the rules: each parameter defined, given once
// (a misspelt parameter silently ignored is a client bug hidden, and a
// validator may read only the first of repeated values), an integer
// canonical and in range. The query is parsed by url.ParseQuery, which
// refuses a pair it cannot decode (a framework's query reader may drop it:
// "limit=%zz" would pass as no limit at all). The parameters are checked in
// the order they first appear, so a query with two faults is always
// answered about the same one.
func (q Query) Check(raw string) error {
	_, err := q.Values(raw)
	return err
}

// Values is Check that also returns the query it parsed (nil for an empty
// one), for the readers after it: parsed once, not once a reader.
func (q Query) Values(raw string) (url.Values, error) {
	if raw == "" {
		return nil, nil
	}
	values, err := url.ParseQuery(raw)
	if err != nil {
		return nil, refuse("query: %v", err)
	}
	var buf [8]string
	seen := buf[:0] // the names checked: values stays whole for the readers after
	for pair := range strings.SplitSeq(raw, "&") {
		name, _, _ := strings.Cut(pair, "=")
		name, _ = url.QueryUnescape(name) // as ParseQuery did, without error
		vs, ok := values[name]
		if !ok || slices.Contains(seen, name) {
			continue // an empty pair, or a name already checked
		}
		seen = append(seen, name)
		rule, defined := q[name]
		switch {
		case !defined:
			return nil, refuse("%.64q: unknown query parameter", name)
		case len(vs) > 1:
			return nil, refuse("%s: must be given once", name)
		case rule != nil:
			if err := rule.Check(name, vs[0]); err != nil {
				return nil, err
			}
		}
	}
	return values, nil
}

package pgstore

import (
	"fmt"
	"strings"

	"github.com/petstore/petstore/internal/pets"
)

// petColumns are what a pet is stored as, beside its id: the one list of
// them. Every statement that writes or reads pets names these columns, in
// this order (expand), takes its arguments from them (columnArgs,
// columnArrays) and scans into them (petDest). A member of the spec
// without behaviour of its own is in extra (migration 005), the pet's
// Extra byte for byte, never a column of its own: only a member that a
// query or a constraint needs is.
var petColumns = []petColumn{
	{"name", "text", "''", column(func(n *pets.NewPet) string { return n.Name }), func(p *pets.Pet) any { return &p.Name }},
	{"category_id", "bigint", "0", column(func(n *pets.NewPet) int64 { return n.CategoryID }), func(p *pets.Pet) any { return &p.CategoryID }},
	{"status", "text", "''", column(func(n *pets.NewPet) string { return string(n.Status) }), func(p *pets.Pet) any { return &p.Status }},
	{"extra", "text", "''", column(func(n *pets.NewPet) string { return string(n.Extra) }), func(p *pets.Pet) any { return &p.Extra }},
}

// petColumn is one column of pets.
type petColumn struct {
	name, typ string
	zero      string // a literal of the type, for a row that has none
	values    values
	dest      func(p *pets.Pet) any
}

// values are a column's arguments: one pet's value, and a batch's array.
type values struct {
	one   func(n *pets.NewPet) any
	batch func(ms []*member) any
}

// column is the values of a column whose value f takes from a pet.
func column[T any](f func(n *pets.NewPet) T) values {
	return values{
		one: func(n *pets.NewPet) any { return f(n) },
		batch: func(ms []*member) any {
			out := make([]T, len(ms))
			for i, m := range ms {
				out[i] = f(&m.pet)
			}
			return out
		},
	}
}

// columnArgs are the arguments of one pet's columns, in order.
func columnArgs(n *pets.NewPet) []any {
	args := make([]any, len(petColumns))
	for i, c := range petColumns {
		args[i] = c.values.one(n)
	}
	return args
}

// columnArrays are the arguments of a batch's columns, one array each.
func columnArrays(batch []*member) []any {
	args := make([]any, len(petColumns))
	for i, c := range petColumns {
		args[i] = c.values.batch(batch)
	}
	return args
}

// petDest are where a row's columns are scanned into p.
func petDest(p *pets.Pet) []any {
	dest := make([]any, len(petColumns))
	for i, c := range petColumns {
		dest[i] = c.dest(p)
	}
	return dest
}

// expand writes the columns into a statement: {cols} their names,
// {params} $1… for each, {arrays} $1::type[]… for each, {r.cols} each as
// r's and, where r is NULL, its zero; and {keys} the arrays of the keyed
// members' keys after them (keyArgs).
func expand(sql string) string {
	var cols, params, arrays, rcols []string
	for i, c := range petColumns {
		cols = append(cols, c.name)
		params = append(params, fmt.Sprintf("$%d", i+1))
		arrays = append(arrays, fmt.Sprintf("$%d::%s[]", i+1, c.typ))
		rcols = append(rcols, fmt.Sprintf("coalesce(r.%s, %s)", c.name, c.zero))
	}
	var keys []string
	for i, typ := range []string{"text", "text", "bytea", "float8"} { // owner, key, fingerprint, ttl
		keys = append(keys, fmt.Sprintf("$%d::%s[]", len(petColumns)+1+i, typ))
	}
	return strings.NewReplacer(
		"{cols}", strings.Join(cols, ", "),
		"{params}", strings.Join(params, ", "),
		"{arrays}", strings.Join(arrays, ", "),
		"{r.cols}", strings.Join(rcols, ", "),
		"{keys}", strings.Join(keys, ", "),
	).Replace(sql)
}

package cases

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf16"
)

// Spaced writes body as JSON in a legal but uncommon form: white space
// around every token, the members in reverse order, every character of its
// strings escaped (\u00XX, surrogate pairs, \/).
func Spaced(body map[string]any) []byte {
	keys := sortedKeys(body)
	slices.Reverse(keys)
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(" ,\r\n")
		}
		fmt.Fprintf(&b, "\t%q :  ", k)
		writeSpaced(&b, body[k])
	}
	b.WriteString("\n}\n")
	return b.Bytes()
}

func escaped(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '/':
			b.WriteString(`\/`)
		case c > 0xffff:
			hi, lo := utf16.EncodeRune(c)
			fmt.Fprintf(&b, `\u%04x\u%04X`, hi, lo)
		default:
			fmt.Fprintf(&b, `\u%04x`, c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// writeSpaced writes v, a JSON value, in a legal but uncommon form, as
// Spaced writes a body: white space around every token, an object's members
// in reverse order, every character of every string escaped, at every
// depth.
func writeSpaced(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case string:
		b.WriteString(escaped(v))
	case []any:
		b.WriteString("[ ")
		for i, e := range v {
			if i > 0 {
				b.WriteString(" ,\n ")
			}
			writeSpaced(b, e)
		}
		b.WriteString(" ]")
	case map[string]any:
		keys := sortedKeys(v)
		slices.Reverse(keys)
		b.WriteString("{ ")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(" ,\t")
			}
			b.WriteString(escaped(k) + " :\r\n")
			writeSpaced(b, v[k])
		}
		b.WriteString(" }")
	default:
		b.Write(MustJSON(v))
	}
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// With returns a copy of body with member name set to v (left out when v
// is Absent).
func With(body map[string]any, name string, v any) map[string]any {
	c := maps.Clone(body)
	if v == Absent {
		delete(c, name)
	} else {
		c[name] = v
	}
	return c
}

package httpapi

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/value/canon"
)

// petJSON is Echo's JSONSerializer: a pets.Pet or a list of them, the
// bodies of every 2xx operation response, is appended by hand, with no
// reflection (encoding/json's was a large part of listPets's CPU;
// BENCHMARKS.md); any other value goes to Echo's default. A pet's typed
// members are written as encoding/json writes gen.Pet's (TestPetJSON): the
// same escaping (HTML characters, U+2028, U+2029, invalid UTF-8), and the
// newline its Encoder ends a value with; its Extra's members, kept in
// canonical JSON (package value), are spliced in as they are stored, in
// canonical order among the others. So a pet without Extra is the bytes
// encoding/json writes for gen.Pet, and one with Extra is the same members
// in the same order, its other members as canonical JSON writes them.
type petJSON struct{ echo.DefaultJSONSerializer }

// bufs holds the buffers of petJSON and the access log, as encoding/json
// pools its own; poolLimit is the largest that goes back, so that the pool
// does not keep the largest.
var bufs = sync.Pool{New: func() any { return new([]byte) }}

const poolLimit = 64 << 10

func (s petJSON) Serialize(c echo.Context, v any, indent string) error {
	buf := bufs.Get().(*[]byte)
	defer func() {
		if cap(*buf) <= poolLimit {
			bufs.Put(buf)
		}
	}()
	var b []byte
	switch v := v.(type) {
	case pets.Pet:
		b = appendPet((*buf)[:0], v)
	case []pets.Pet:
		b = append((*buf)[:0], '[')
		for i, p := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendPet(b, p)
		}
		b = append(b, ']')
	default:
		return s.DefaultJSONSerializer.Serialize(c, v, indent)
	}
	if indent != "" {
		var out bytes.Buffer
		if err := json.Indent(&out, b, "", indent); err != nil {
			return err
		}
		b = append(out.Bytes(), '\n')
	} else {
		b = append(b, '\n')
	}
	*buf = b
	_, err := c.Response().Write(b)
	return err
}

// appendPet appends p: its members in order, the typed ones as
// encoding/json encodes a gen.Pet's, its Extra's as they are stored.
// Each member is followed by a comma; the last one becomes the brace.
func appendPet(b []byte, p pets.Pet) []byte {
	m := canon.MembersOf(string(p.Extra))
	b = append(b, '{')
	b = m.AppendBefore(b, "categoryId")
	b = append(b, `"categoryId":`...)
	b = strconv.AppendInt(b, p.CategoryID, 10)
	b = append(b, ',')
	b = m.AppendBefore(b, "id")
	b = append(b, `"id":`...)
	b = strconv.AppendInt(b, p.ID, 10)
	b = append(b, ',')
	b = m.AppendBefore(b, "name")
	b = append(b, `"name":`...)
	b = appendString(b, p.Name, encodingJSON)
	b = append(b, ',')
	b = m.AppendBefore(b, "status")
	b = append(b, `"status":`...)
	b = appendString(b, string(p.Status), encodingJSON)
	b = append(b, ',')
	b = m.AppendRest(b)
	b[len(b)-1] = '}'
	return b
}

// jsonStyle is a way of quoting a string in JSON.
type jsonStyle bool

const (
	// encodingJSON is encoding/json's with HTML escaping on (its default,
	// and Echo's): <, > and & escaped, \b and \f written short.
	encodingJSON jsonStyle = false
	// slogJSON is log/slog's JSONHandler's: <, > and & as they are, every
	// control character but \n, \r and \t as \u00XX.
	slogJSON jsonStyle = true
)

// appendString appends s quoted in style. Both escape " and \, control
// characters, U+2028 and U+2029, and write invalid UTF-8 as \ufffd. Runs of
// bytes that need no escape are appended whole, as encoding/json does.
func appendString(b []byte, s string, style jsonStyle) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (style == slogJSON || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\b' && style == encodingJSON:
				b = append(b, `\b`...)
			case c == '\f' && style == encodingJSON:
				b = append(b, `\f`...)
			case c == '\n':
				b = append(b, `\n`...)
			case c == '\r':
				b = append(b, `\r`...)
			case c == '\t':
				b = append(b, `\t`...)
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			start = i + size
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			start = i + size
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

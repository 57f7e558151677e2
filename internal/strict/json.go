package strict

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// DecodeJSON decodes a request body that must be exactly one JSON value
// (RFC 8259), in valid UTF-8, with unique member names (RFC 7493), into what
// encoding/json with UseNumber makes of it, the form an OpenAPI schema
// validator takes: map[string]any, []any, string, json.Number (exact), bool
// or nil. Its error is the client's message: "body: invalid JSON: " and
// what is wrong where.
func DecodeJSON(data []byte) (any, error) {
	dec := decoders.Get().(*jsontext.Decoder)
	// From a bytes.Buffer jsontext reads the whole body in place: no copy,
	// and an error quotes the same text whatever buffer the pooled decoder
	// grew before (from a Reader, a snippet at the body's end follows the
	// read sizes).
	dec.Reset(bytes.NewBuffer(data))
	v, err := readValue(dec)
	if err == nil {
		if _, err = dec.ReadToken(); errors.Is(err, io.EOF) {
			err = nil
		} else {
			err = errTrailingData
		}
	}
	dec.Reset(noInput)
	if len(data) <= poolLimit {
		decoders.Put(dec)
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, refuse("body: invalid JSON: %s", strings.TrimPrefix(err.Error(), "jsontext: "))
	}
	return v, nil
}

var errTrailingData = errors.New("trailing data after the JSON value")

// decoders holds jsontext.Decoders for DecodeJSON: a new one costs more than
// the rest of the decoding of a small body. poolLimit is the largest body
// whose decoder goes back, which would otherwise keep the largest buffers.
var decoders = sync.Pool{New: func() any { return new(jsontext.Decoder) }}

const poolLimit = 64 << 10

var noInput = bytes.NewReader(nil)

func readValue(dec *jsontext.Decoder) (any, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case 'n':
		return nil, nil
	case 't', 'f':
		return tok.Bool(), nil
	case '"':
		return tok.String(), nil
	case '0':
		return json.Number(tok.String()), nil
	case '{':
		m := map[string]any{}
		for dec.PeekKind() != '}' {
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			name := tok.String() // before the next read voids tok
			v, err := readValue(dec)
			if err != nil {
				return nil, err
			}
			m[name] = v
		}
		_, err := dec.ReadToken()
		return m, err
	default: // '['
		a := []any{}
		for dec.PeekKind() != ']' {
			v, err := readValue(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.ReadToken()
		return a, err
	}
}

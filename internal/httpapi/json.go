package httpapi

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"reflect"
	"strconv"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

func init() {
	// kin-openapi's JSON decoder reads one value with encoding/json: it
	// ignores trailing data, keeps the last of duplicate member names and
	// turns invalid UTF-8 into U+FFFD. The contract says all three are 400,
	// so bodies are checked strictly first. The registry is kin-openapi's,
	// process-wide; this package owns the process's HTTP API.
	openapi3filter.RegisterBodyDecoder("application/json", strictJSONDecoder)
}

func strictJSONDecoder(body io.Reader, h http.Header, schema *openapi3.SchemaRef, enc openapi3filter.EncodingFn) (any, error) {
	// kin-openapi hands over the body it has read as a *bytes.Reader. Decode
	// it in one strict pass; if that fails, read it again the slow way below,
	// whose errors are the ones clients are told.
	if rd, ok := body.(*bytes.Reader); ok {
		if v, err := decodeAny(rd); err == nil {
			return v, nil
		}
		if _, err := rd.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
	}
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	if err := checkJSON(data); err != nil {
		return nil, &openapi3filter.ParseError{Kind: openapi3filter.KindInvalidFormat, Cause: err}
	}
	return openapi3filter.JSONBodyDecoder(bytes.NewReader(data), h, schema, enc)
}

var errTrailingData = errors.New("trailing data after the JSON value")

// decoders holds jsontext.Decoders for decodeAny: a new one costs more
// than the rest of the decoding of a small body.
var decoders = sync.Pool{New: func() any { return new(jsontext.Decoder) }}

// poolLimit is the largest body whose decoder goes back to the pool, which
// would otherwise keep the buffers of the largest bodies.
const poolLimit = 64 << 10

// decodeAny decodes exactly one JSON value from rd, strictly (as checkJSON
// checks), into what encoding/json with UseNumber makes of it for
// kin-openapi: map[string]any, []any, string, json.Number, bool or nil. It
// replaces checkJSON followed by kin-openapi's decoder: one pass, not two.
func decodeAny(rd *bytes.Reader) (any, error) {
	dec := decoders.Get().(*jsontext.Decoder)
	dec.Reset(rd)
	v, err := readAny(dec)
	if err == nil {
		if _, err = dec.ReadToken(); errors.Is(err, io.EOF) {
			err = nil
		} else {
			err = errTrailingData
		}
	}
	dec.Reset(noInput)
	if rd.Size() <= poolLimit {
		decoders.Put(dec)
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}

var noInput = bytes.NewReader(nil)

func readAny(dec *jsontext.Decoder) (any, error) {
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
		return stdjson.Number(tok.String()), nil
	case '{':
		m := map[string]any{}
		for dec.PeekKind() != '}' {
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			name := tok.String() // before the next read voids tok
			v, err := readAny(dec)
			if err != nil {
				return nil, err
			}
			m[name] = v
		}
		_, err := dec.ReadToken()
		return m, err
	case '[':
		a := []any{}
		for dec.PeekKind() != ']' {
			v, err := readAny(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.ReadToken()
		return a, err
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// checkJSON reports whether data is exactly one JSON value (RFC 8259) in
// valid UTF-8, with unique member names (RFC 7493).
func checkJSON(data []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	if err := dec.SkipValue(); err != nil {
		if errors.Is(err, io.EOF) {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return errTrailingData
	}
	return nil
}

// decodeStrict decodes one JSON value into v: unknown members, duplicate
// names, invalid UTF-8, numbers out of range and trailing data are errors.
func decodeStrict(data []byte, v any) error {
	return json.Unmarshal(data, v, json.RejectUnknownMembers(true))
}

// jsonError words a decodeStrict error for a client: where, and what is wrong.
func jsonError(err error) string {
	var (
		sem *json.SemanticError
		syn *jsontext.SyntacticError
	)
	switch {
	case errors.As(err, &sem):
		field := string(sem.JSONPointer)
		if len(field) > 1 {
			field = field[1:] // "/categoryId" -> "categoryId"
		}
		if errors.Is(err, json.ErrUnknownName) {
			return fmt.Sprintf("%.64q: unknown member", field)
		}
		if field == "" {
			return "body: must be a JSON object"
		}
		if sem.JSONKind == '0' && sem.GoType != nil && sem.GoType.Kind() == reflect.Int64 {
			// kin-openapi holds numbers as float64, in which 2^63 passes
			// maximum 9223372036854775807 and 1.0 is an integer: the
			// strict decoding has the last word.
			switch {
			case errors.Is(err, strconv.ErrRange) && bytes.HasPrefix(sem.JSONValue, []byte("-")):
				return fmt.Sprintf("%.64s: number must be at least %d", field, math.MinInt64)
			case errors.Is(err, strconv.ErrRange):
				return fmt.Sprintf("%.64s: number must be at most %d", field, math.MaxInt64)
			}
			return fmt.Sprintf("%.64s: must be an integer, without fraction or exponent", field)
		}
		return fmt.Sprintf("%.64s: wrong type or out of range", field)
	case errors.As(err, &syn):
		return fmt.Sprintf("body: invalid JSON at byte %d: %v", syn.ByteOffset, syn.Err)
	}
	return "body: invalid JSON"
}

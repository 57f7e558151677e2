package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"

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
		return fmt.Sprintf("%.64s: wrong type or out of range", field)
	case errors.As(err, &syn):
		return fmt.Sprintf("body: invalid JSON at byte %d: %v", syn.ByteOffset, syn.Err)
	}
	return "body: invalid JSON"
}

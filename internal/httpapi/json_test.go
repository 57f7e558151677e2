package httpapi

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"
)

// TestDecodeAny checks that the one-pass body decoder accepts exactly what
// checkJSON followed by kin-openapi's JSON decoder accepts, and makes the
// same value of it.
func TestDecodeAny(t *testing.T) {
	for _, body := range []string{
		`{"name":"Rex","categoryId":1,"status":"sold"}`,
		`{"a":[1,true,false,null,{"x":[]},[]],"s":"\u00e9\n\ud83d\ude00\"","n":-1.5e400,"big":9223372036854775808,"z":0.0}`,
		`[]`, `{}`, `"x"`, `1`, `null`, " \t\n{\"a\":1}\r\n ",
		`{"a":1}{`, `{"a":1} {}`, `{"a":1,"a":2}`, "\"\xff\"", `"\ud800"`, `{"a":`, `{"a" 1}`, `[1,]`, ``, ` `, `nul`,
	} {
		got, err := decodeAny(bytes.NewReader([]byte(body)))
		var want any
		wantErr := checkJSON([]byte(body))
		if wantErr == nil {
			want, wantErr = openapi3filter.JSONBodyDecoder(bytes.NewReader([]byte(body)), nil, nil, nil)
		}
		if (err == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %#v, %v; want %#v, %v", body, got, err, want, wantErr)
		}
	}
}

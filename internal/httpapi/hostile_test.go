package httpapi_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/memstore"
)

// hostile is a request built to hurt, and the documented answer it must get.
type hostile struct {
	name         string
	method, path string
	body         string
	header       []string // pairs, as apitest.Client.Do takes them
	anon         bool     // send no key
	chunked      bool     // send the body without a Content-Length
	status       int
	msg          string // a part of the Error message, when it matters
}

// codeOf is the Error code openapi.yaml documents for each status.
var codeOf = map[int]gen.ErrorCode{
	400: gen.ErrorCodeInvalidRequest,
	401: gen.ErrorCodeUnauthorized,
	404: gen.ErrorCodeNotFound,
	405: gen.ErrorCodeMethodNotAllowed,
	406: gen.ErrorCodeNotAcceptable,
	413: gen.ErrorCodePayloadTooLarge,
}

// nest returns s wrapped in n levels of open and close.
func nest(open, s, close string, n int) string {
	return strings.Repeat(open, n) + s + strings.Repeat(close, n)
}

// manyHeaders returns n distinct junk header pairs.
func manyHeaders(n int) []string {
	h := make([]string, 0, 2*n)
	for i := range n {
		h = append(h, fmt.Sprintf("X-Junk-%d", i), strings.Repeat("j", 20))
	}
	return h
}

// hostileRequests are the abuse cases that the table in api_test.go does not
// already cover. Each is answered by a 4xx documented for its operation (or
// 404/405 where there is none) with an Error body.
func hostileRequests() []hostile {
	const ok = `"name":"Rex","categoryId":1`
	mib := 1 << 20
	rows := []hostile{
		// Malformed and truncated JSON.
		{name: "lone brace", body: `{`, msg: "body: invalid JSON"},
		{name: "truncated after member name", body: `{"name"`, msg: "body: invalid JSON"},
		{name: "truncated after colon", body: `{"name":`, msg: "body: invalid JSON"},
		{name: "truncated before close", body: `{` + ok, msg: "body: invalid JSON"},
		{name: "unterminated string", body: `{"name":"Rex`, msg: "body: invalid JSON"},
		{name: "single quotes", body: `{'name':'Rex','categoryId':1}`, msg: "body: invalid JSON"},
		{name: "unquoted names", body: `{name:"Rex",categoryId:1}`, msg: "body: invalid JSON"},
		{name: "trailing comma", body: `{` + ok + `,}`, msg: "body: invalid JSON"},
		{name: "missing comma", body: `{"name":"Rex" "categoryId":1}`, msg: "body: invalid JSON"},
		{name: "comment", body: "// pet\n{" + ok + "}", msg: "body: invalid JSON"},
		{name: "byte order mark", body: "\xef\xbb\xbf{" + ok + "}", msg: "body: invalid JSON"},
		{name: "extra close brace", body: `{` + ok + `}}`, msg: "body: invalid JSON"},
		{name: "whitespace only", body: " \n\t ", msg: "body: invalid JSON"},
		{name: "leading zero", body: `{"name":"Rex","categoryId":01}`, msg: "body: invalid JSON"},
		{name: "hex number", body: `{"name":"Rex","categoryId":0x10}`, msg: "body: invalid JSON"},
		{name: "two objects", body: `{` + ok + `}{` + ok + `}`, msg: "trailing data"},

		// Wrong types.
		{name: "boolean categoryId", body: `{"name":"Rex","categoryId":true}`, msg: "categoryId: value must be an integer"},
		{name: "array categoryId", body: `{"name":"Rex","categoryId":[1]}`, msg: "categoryId: value must be an integer"},
		{name: "object categoryId", body: `{"name":"Rex","categoryId":{"id":1}}`, msg: "categoryId: value must be an integer"},
		{name: "null categoryId", body: `{"name":"Rex","categoryId":null}`, msg: "categoryId: value must be an integer"},
		{name: "null name", body: `{"name":null,"categoryId":1}`, msg: "name: value must be a string"},
		{name: "null status", body: `{` + ok + `,"status":null}`, msg: "status: value is not one of the allowed values"},
		{name: "null body", body: `null`, msg: "body: value must be an object"},
		{name: "array name", body: `{"name":["Rex"],"categoryId":1}`, msg: "name: value must be a string"},
		{name: "object name", body: `{"name":{"first":"Rex"},"categoryId":1}`, msg: "name: value must be a string"},
		{name: "boolean name", body: `{"name":true,"categoryId":1}`, msg: "name: value must be a string"},
		{name: "number status", body: `{` + ok + `,"status":1}`, msg: "status"},
		{name: "array status", body: `{` + ok + `,"status":["sold"]}`, msg: "status"},
		{name: "true body", body: `true`, msg: "body: value must be an object"},
		{name: "number body", body: `42`, msg: "body: value must be an object"},
		{name: "empty array body", body: `[]`, msg: "body: value must be an object"},

		// Huge, negative and overflowing numbers.
		{name: "min int64 categoryId", body: `{"name":"Rex","categoryId":-9223372036854775808}`, msg: "categoryId: number must be at least 1"},
		{name: "below min int64", body: `{"name":"Rex","categoryId":-9223372036854775809}`, msg: "categoryId"},
		{name: "2^64 categoryId", body: `{"name":"Rex","categoryId":18446744073709551616}`, msg: "categoryId"},
		{name: "40-digit categoryId", body: `{"name":"Rex","categoryId":` + strings.Repeat("9", 40) + `}`, msg: "categoryId"},
		{name: "1e19 categoryId", body: `{"name":"Rex","categoryId":1e19}`, msg: "categoryId"},
		{name: "1e400 categoryId", body: `{"name":"Rex","categoryId":1e400}`, msg: "categoryId: number must be at most 9223372036854775807"},
		{name: "-1e400 categoryId", body: `{"name":"Rex","categoryId":-1e400}`, msg: "categoryId: number must be at least 1"},
		{name: "1e400 name", body: `{"name":1e400,"categoryId":1}`, msg: "name: value must be a string"},
		{name: "minus zero categoryId", body: `{"name":"Rex","categoryId":-0}`, msg: "categoryId: number must be at least 1"},
		{name: "tiny fraction categoryId", body: `{"name":"Rex","categoryId":1.0000000000000002}`, msg: "categoryId"},
		{name: "5000-digit categoryId", body: `{"name":"Rex","categoryId":` + strings.Repeat("7", 5000) + `}`, msg: "categoryId"},

		// NaN and Infinity, as literals and as strings.
		{name: "NaN literal", body: `{"name":"Rex","categoryId":NaN}`, msg: "body: invalid JSON"},
		{name: "Infinity literal", body: `{"name":"Rex","categoryId":Infinity}`, msg: "body: invalid JSON"},
		{name: "-Infinity literal", body: `{"name":"Rex","categoryId":-Infinity}`, msg: "body: invalid JSON"},
		{name: "NaN string", body: `{"name":"Rex","categoryId":"NaN"}`, msg: "categoryId: value must be an integer"},
		{name: "Infinity string", body: `{"name":"Rex","categoryId":"Infinity"}`, msg: "categoryId: value must be an integer"},
		{name: "NaN status", body: `{` + ok + `,"status":"NaN"}`, msg: "status: value is not one of the allowed values"},

		// Deep nesting.
		{name: "10 000 nested arrays", body: nest("[", "", "]", 10_000), msg: "body"},
		{name: "10 000 nested objects", body: nest(`{"a":`, "1", "}", 10_000), msg: "body"},
		{name: "10 000 nested arrays as name", body: `{"name":` + nest("[", "", "]", 10_000) + `,"categoryId":1}`, msg: "body"},
		{name: "100 000 unclosed arrays", body: strings.Repeat("[", 100_000), msg: "body: invalid JSON"},

		// Duplicate member names.
		{name: "duplicate categoryId", body: `{` + ok + `,"categoryId":2}`, msg: "duplicate"},
		{name: "duplicate by escape", body: `{` + ok + `,"n\u0061me":"Max"}`, msg: "duplicate"},
		{name: "duplicate status", body: `{` + ok + `,"status":"sold","status":"sold"}`, msg: "duplicate"},

		// Null bytes and invalid UTF-8.
		{name: "raw NUL in string", body: "{\"name\":\"a\x00b\",\"categoryId\":1}", msg: "body: invalid JSON"},
		{name: "NUL after object", body: "{" + ok + "}\x00", msg: "body: invalid JSON"},
		{name: "invalid UTF-8 member name", body: "{\"n\xffame\":\"Rex\",\"categoryId\":1}", msg: "invalid UTF-8"},
		{name: "overlong NUL", body: "{\"name\":\"a\xc0\x80b\",\"categoryId\":1}", msg: "invalid UTF-8"},
		{name: "lone surrogate escape", body: `{"name":"\ud800","categoryId":1}`, msg: "body: invalid JSON"},
		{name: "UTF-16 body", body: "\xff\xfe{\x00}\x00", msg: "body: invalid JSON"},
		{name: "DEL in name", body: `{"name":"Rex\u007f","categoryId":1}`, msg: "name: must not contain control characters"},
		{name: "C1 control (NEL) in name", body: `{"name":"Rex\u0085","categoryId":1}`, msg: "name: must not contain control characters or explicit bidirectional formatting characters, and must not be only white space"},
		{name: "C1 control, raw UTF-8, in name", body: "{\"name\":\"Rex\u0085\",\"categoryId\":1}", msg: "name: must not contain control characters or explicit bidirectional formatting characters, and must not be only white space"},
		{name: "right-to-left override in name", body: `{"name":"evil\u202Egnp.exe","categoryId":1}`, msg: "name: must not contain control characters or explicit bidirectional formatting characters, and must not be only white space"},
		{name: "left-to-right embedding in name", body: `{"name":"a\u202Ab","categoryId":1}`, msg: "name: must not contain control characters or explicit bidirectional formatting characters, and must not be only white space"},
		{name: "first isolate in name", body: `{"name":"a\u2066b","categoryId":1}`, msg: "name: must not contain control characters or explicit bidirectional formatting characters, and must not be only white space"},
		{name: "pop isolate in name", body: `{"name":"a\u2069b","categoryId":1}`, msg: "name: must not contain control characters or explicit bidirectional formatting characters, and must not be only white space"},
		{name: "name of a no-break space", body: `{"name":"\u00a0","categoryId":1}`, msg: "name: must not contain control characters or explicit bidirectional formatting characters, and must not be only white space"},
		{name: "name of ideographic spaces", body: `{"name":"\u3000\u3000","categoryId":1}`, msg: "name: must not contain control characters or explicit bidirectional formatting characters, and must not be only white space"},
		{name: "name of a line separator", body: `{"name":"\u2028","categoryId":1}`, msg: "name: must not contain control characters or explicit bidirectional formatting characters, and must not be only white space"},
		{name: "name of NEL", body: `{"name":"\u0085","categoryId":1}`, msg: "name: must not contain control characters or explicit bidirectional formatting characters, and must not be only white space"},

		// Long names.
		{name: "10 000-character name", body: `{"name":"` + strings.Repeat("a", 10_000) + `","categoryId":1}`, msg: "name: maximum string length is 100"},
		{name: "10 000 emoji name", body: `{"name":"` + strings.Repeat("🐈", 10_000) + `","categoryId":1}`, msg: "name: maximum string length is 100"},
		{name: "101 two-byte characters", body: `{"name":"` + strings.Repeat("é", 101) + `","categoryId":1}`, msg: "name: maximum string length is 100"},
		{name: "10 000-character member name", body: `{"` + strings.Repeat("x", 10_000) + `":1,` + ok + `}`, msg: "is unsupported"},

		// Big bodies.
		{name: "2 MiB of whitespace", body: strings.Repeat(" ", 2*mib) + `{` + ok + `}`, status: 413},
		// Refused on its Content-Type before a byte of it is read.
		{name: "2 MiB as text/plain", body: strings.Repeat(" ", 2*mib), header: []string{"Content-Type", "text/plain"}, msg: "Content-Type: must be application/json"},
		{name: "2 MiB chunked", body: `{"name":"` + strings.Repeat("a", 2*mib) + `","categoryId":1}`, chunked: true, status: 413},
		{name: "1 MiB and a byte", body: strings.Repeat(" ", mib-len(ok)-2+1) + `{` + ok + `}`, status: 413},
		{name: "2 MiB nested arrays", body: nest("[", "", "]", mib), status: 413},
		{name: "2 MiB on list", method: "GET", body: strings.Repeat(" ", 2*mib), msg: "takes no request body"},
		{name: "2 MiB on get", method: "GET", path: apitest.Path("/pets/1"), body: strings.Repeat(" ", 2*mib), msg: "takes no request body"},
		{name: "chunked body on list", method: "GET", body: `{}`, chunked: true, msg: "takes no request body"},

		// Wrong content types.
		{name: "application/xml", body: `{` + ok + `}`, header: []string{"Content-Type", "application/xml"}, msg: "Content-Type"},
		{name: "application/jsonx", body: `{` + ok + `}`, header: []string{"Content-Type", "application/jsonx"}, msg: "Content-Type"},
		{name: "bare json", body: `{` + ok + `}`, header: []string{"Content-Type", "json"}, msg: "Content-Type"},
		{name: "form encoded", body: `name=Rex&categoryId=1`, header: []string{"Content-Type", "application/x-www-form-urlencoded"}, msg: "Content-Type"},
		{name: "multipart", body: "--x\r\n\r\n{" + ok + "}\r\n--x--", header: []string{"Content-Type", "multipart/form-data; boundary=x"}, msg: "Content-Type"},
		{name: "content type list", body: `{` + ok + `}`, header: []string{"Content-Type", "text/plain, application/json"}, msg: "Content-Type"},
		{name: "garbage content type", body: `{` + ok + `}`, header: []string{"Content-Type", "\x01\x02;;=="}, msg: "Content-Type"},

		// Content-Type to the letter: one header, one media type, a UTF-8 charset
		// or none, no other parameter.
		{name: "charset latin1", body: `{` + ok + `}`, header: []string{"Content-Type", "application/json; charset=latin1"}, msg: `Content-Type: charset must be utf-8, not "latin1"`},
		{name: "charset ISO-8859-1", body: `{` + ok + `}`, header: []string{"Content-Type", "application/json; charset=ISO-8859-1"}, msg: "Content-Type: charset must be utf-8"},
		{name: "charset utf-16", body: `{` + ok + `}`, header: []string{"Content-Type", "application/json; charset=utf-16"}, msg: "Content-Type: charset must be utf-8"},
		{name: "charset utf8", body: `{` + ok + `}`, header: []string{"Content-Type", "application/json; charset=utf8"}, msg: "Content-Type: charset must be utf-8"},
		{name: "quoted charset latin1", body: `{` + ok + `}`, header: []string{"Content-Type", `application/json; charset="latin1"`}, msg: "Content-Type: charset must be utf-8"},
		{name: "empty charset", body: `{` + ok + `}`, header: []string{"Content-Type", `application/json; charset=""`}, msg: "Content-Type: charset must be utf-8"},
		{name: "two different charsets", body: `{` + ok + `}`, header: []string{"Content-Type", "application/json; charset=utf-8; charset=latin1"}, msg: "Content-Type: must be application/json"},
		{name: "unknown parameter", body: `{` + ok + `}`, header: []string{"Content-Type", "application/json; foo=bar"}, msg: `Content-Type: "foo": unknown parameter`},
		{name: "RFC 2231 parameter", body: `{` + ok + `}`, header: []string{"Content-Type", "application/json;C*00000=00"}, msg: `Content-Type: "c*00000": unknown parameter`},
		{name: "RFC 2231 charset", body: `{` + ok + `}`, header: []string{"Content-Type", "application/json; charset*=utf-8''utf-8"}, msg: `Content-Type: "charset*": unknown parameter`},
		{name: "RFC 2231 charset continued", body: `{` + ok + `}`, header: []string{"Content-Type", "application/json; charset*0=utf; charset*1=-8"}, msg: `Content-Type: "charset*0": unknown parameter`},
		{name: "q parameter", body: `{` + ok + `}`, header: []string{"Content-Type", "application/json; charset=utf-8; q=1"}, msg: `Content-Type: "q": unknown parameter`},
		{name: "two Content-Type headers", body: `{` + ok + `}`, header: []string{"Content-Type", "application/json", "Content-Type", "application/json"}, msg: "Content-Type: must be given once"},
		{name: "JSON then text Content-Type", body: `{` + ok + `}`, header: []string{"Content-Type", "application/json", "Content-Type", "text/plain"}, msg: "Content-Type: must be given once"},
		{name: "text then JSON Content-Type", body: `{` + ok + `}`, header: []string{"Content-Type", "text/plain", "Content-Type", "application/json"}, msg: "Content-Type: must be given once"},
		{name: "JSON listed twice", body: `{` + ok + `}`, header: []string{"Content-Type", "application/json, application/json"}, msg: "Content-Type: must be application/json"},
		{name: "JSON then text listed", body: `{` + ok + `}`, header: []string{"Content-Type", "application/json, text/plain"}, msg: "Content-Type: must be application/json"},
		{name: "JSON suffix type", body: `{` + ok + `}`, header: []string{"Content-Type", "application/merge-patch+json"}, msg: "Content-Type: must be application/json"},
		{name: "charset latin1, no key", body: `{` + ok + `}`, header: []string{"Content-Type", "application/json; charset=latin1"}, anon: true, status: 401},
		{name: "two Content-Type headers, no key", body: `{` + ok + `}`, header: []string{"Content-Type", "application/json", "Content-Type", "text/plain"}, anon: true, status: 401},

		// Content codings and Accept: the contract's answers, not a body read
		// as if plain or a JSON 200 to a client that wants XML.
		{name: "gzip body", body: "\x1f\x8b\x08\x00\x00\x00\x00\x00", header: []string{"Content-Encoding", "gzip"}, msg: `Content-Encoding: "gzip" is not supported`},
		{name: "plain body labelled gzip", body: `{` + ok + `}`, header: []string{"Content-Encoding", "gzip"}, msg: "Content-Encoding"},
		{name: "identity then br", body: `{` + ok + `}`, header: []string{"Content-Encoding", "identity, br"}, msg: `Content-Encoding: "br"`},
		{name: "identity coding", body: `{"name":"Rex","categoryId":1,"status":"sold","id":1}`, header: []string{"Content-Encoding", "identity"}, msg: `property "id" is unsupported`},
		{name: "gzip body, no key", body: `{` + ok + `}`, header: []string{"Content-Encoding", "gzip"}, anon: true, status: 401},
		{name: "Accept XML", method: "GET", header: []string{"Accept", "application/xml"}, status: 406, msg: "admits no application/json"},
		{name: "Accept JSON at q=0", method: "GET", path: apitest.Path("/pets/1"), header: []string{"Accept", "application/json;q=0, */*"}, status: 406},
		{name: "Accept XML on create", body: `{` + ok + `}`, header: []string{"Accept", "text/xml"}, status: 406},
		{name: "Accept malformed", method: "GET", header: []string{"Accept", "json"}, msg: `Accept: "json" is not a media range`},
		{name: "Accept XML, no key", method: "GET", header: []string{"Accept", "application/xml"}, anon: true, status: 401},

		// Integers to the letter: one spelling per number, within int64.
		{name: "plus petId", method: "GET", path: apitest.Path("/pets/+1"), msg: `petId: must be a base-10 integer, without "+"`},
		{name: "encoded plus petId", method: "GET", path: apitest.Path("/pets/%2B1"), msg: `petId: must be a base-10 integer, without "+"`},
		{name: "leading zeros petId", method: "GET", path: apitest.Path("/pets/007"), msg: "petId: must be a base-10 integer"},
		{name: "double zero petId", method: "GET", path: apitest.Path("/pets/00"), msg: "petId: must be a base-10 integer"},
		{name: "minus zero petId", method: "GET", path: apitest.Path("/pets/-0"), msg: "petId: must be a base-10 integer"},
		{name: "minus leading zero petId", method: "GET", path: apitest.Path("/pets/-01"), msg: "petId: must be a base-10 integer"},
		{name: "plus plus petId", method: "GET", path: apitest.Path("/pets/++1"), msg: "petId: must be a base-10 integer"},
		{name: "minus alone petId", method: "GET", path: apitest.Path("/pets/-"), msg: "petId: must be a base-10 integer"},
		{name: "2^63 petId", method: "GET", path: apitest.Path("/pets/9223372036854775808"), msg: "petId: number must be at most 9223372036854775807"},
		{name: "plus petId, no key", method: "GET", path: apitest.Path("/pets/+1"), anon: true, status: 401},
		{name: "encoded plus limit", method: "GET", path: apitest.Path("/pets?limit=%2B5"), msg: `limit: must be a base-10 integer, without "+"`},
		{name: "plus as space limit", method: "GET", path: apitest.Path("/pets?limit=+5"), msg: "limit: must be a base-10 integer"},
		{name: "leading zero limit", method: "GET", path: apitest.Path("/pets?limit=05"), msg: "limit: must be a base-10 integer"},
		{name: "minus zero limit", method: "GET", path: apitest.Path("/pets?limit=-0"), msg: "limit: must be a base-10 integer"},
		{name: "empty limit", method: "GET", path: apitest.Path("/pets?limit="), msg: "limit: must be a base-10 integer"},
		{name: "2^31 limit", method: "GET", path: apitest.Path("/pets?limit=2147483648"), msg: "limit: number must be at most 100"},
		{name: "minus zero after", method: "GET", path: apitest.Path("/pets?after=-0"), msg: "after: must be a base-10 integer"},
		{name: "double zero after", method: "GET", path: apitest.Path("/pets?after=00"), msg: "after: must be a base-10 integer"},
		{name: "encoded plus after", method: "GET", path: apitest.Path("/pets?after=%2B0"), msg: "after: must be a base-10 integer"},
		{name: "empty after", method: "GET", path: apitest.Path("/pets?after="), msg: "after: must be a base-10 integer"},
		{name: "2^63 after", method: "GET", path: apitest.Path("/pets?after=9223372036854775808"), msg: "after: number must be at most 9223372036854775807"},
		{name: "leading zero after, no key", method: "GET", path: apitest.Path("/pets?after=007"), anon: true, status: 401},
		{name: "2^63 categoryId", body: `{"name":"Rex","categoryId":9223372036854775808}`, msg: "categoryId: number must be at most 9223372036854775807"},
		{name: "2^63 rounded categoryId", body: `{"name":"Rex","categoryId":9223372036854776000}`, msg: "categoryId: number must be at most 9223372036854775807"},
		{name: "2^64-1 categoryId", body: `{"name":"Rex","categoryId":18446744073709551615}`, msg: "9223372036854775807"},
		{name: "fraction categoryId", body: `{"name":"Rex","categoryId":1.0}`, msg: "categoryId: must be an integer, without fraction or exponent"},
		{name: "exponent categoryId", body: `{"name":"Rex","categoryId":1e0}`, msg: "categoryId: must be an integer, without fraction or exponent"},

		// Odd methods.
		{name: "TRACE list", method: "TRACE", status: 405},
		{name: "CONNECT list", method: "CONNECT", status: 405},
		{name: "HEAD list", method: "HEAD", status: 405}, // HEAD is not served: openapi.yaml says why
		{name: "HEAD one", method: "HEAD", path: apitest.Path("/pets/1"), status: 405},
		{name: "lower-case get", method: "get", status: 405},
		{name: "garbage method", method: "XYZZY", status: 405},
		{name: "PUT one", method: "PUT", path: apitest.Path("/pets/1"), body: `{` + ok + `}`, status: 405},
		{name: "OPTIONS one", method: "OPTIONS", path: apitest.Path("/pets/1"), status: 405},
		{name: "TRACE one", method: "TRACE", path: apitest.Path("/pets/1"), status: 405},
		{name: "PROPFIND one", method: "PROPFIND", path: apitest.Path("/pets/1"), status: 405},
		{name: "MKCOL unknown", method: "MKCOL", path: apitest.Path("/cages"), status: 404},
		{name: "DELETE base", method: "DELETE", path: apitest.Base(), status: 404},

		// Path tricks.
		{name: "dot dot", method: "GET", path: apitest.Path("/pets/.."), msg: "petId"},
		{name: "dot", method: "GET", path: apitest.Path("/pets/%2e"), msg: "petId"},
		{name: "upper-case encoded dots", method: "GET", path: apitest.Path("/pets/%2E%2E"), msg: "petId"},
		{name: "dot dot encoded slash", method: "GET", path: apitest.Path("/pets/..%2f"), msg: "petId"},
		{name: "encoded slash", method: "GET", path: apitest.Path("/pets/%2F"), msg: "petId"},
		{name: "id encoded slash id", method: "GET", path: apitest.Path("/pets/1%2f2"), msg: "petId"},
		{name: "dot segments to list", method: "GET", path: apitest.Path("/pets/../pets"), status: 404},
		{name: "dot segment in base", method: "GET", path: apitest.Path("/./pets"), status: 404},
		{name: "double slash inside", method: "GET", path: apitest.Path("//pets"), status: 404},
		{name: "trailing double slash", method: "GET", path: apitest.Path("/pets//"), status: 404},
		{name: "trailing slash after id", method: "GET", path: apitest.Path("/pets/1/"), status: 404},
		{name: "trailing slash after id, no key", method: "GET", path: apitest.Path("/pets/1/"), anon: true, status: 404},
		{name: "two segments after pets, no key", method: "GET", path: apitest.Path("/pets/a/b"), anon: true, status: 404},
		{name: "trailing double slash and query", method: "GET", path: apitest.Path("/pets//?limit=5"), status: 404},
		{name: "encoded slash and raw quote, no key", method: "GET", path: apitest.Path(`/pets/%2f"`), anon: true, status: 404},
		{name: "encoded slash and raw quote, query", method: "GET", path: apitest.Path(`/pets/%2f"?limit=5`), status: 404},
		{name: "double slashes everywhere", method: "GET", path: "/" + apitest.Base() + "//pets//1", status: 404},
		{name: "upper-case path", method: "GET", path: "/V1/PETS", status: 404},
		{name: "path parameter", method: "GET", path: apitest.Path("/pets/1;jsessionid=x"), msg: "petId"},
		{name: "encoded space", method: "GET", path: apitest.Path("/pets/%201"), msg: "petId"},
		{name: "encoded NUL", method: "GET", path: apitest.Path("/pets/1%00"), msg: "petId"},
		{name: "encoded invalid UTF-8", method: "GET", path: apitest.Path("/pets/%ff"), msg: "petId"},
		{name: "hex id", method: "GET", path: apitest.Path("/pets/0x10"), msg: "petId"},
		{name: "exponent id", method: "GET", path: apitest.Path("/pets/1e3"), msg: "petId"},
		{name: "min int64 id", method: "GET", path: apitest.Path("/pets/-9223372036854775808"), msg: "petId: number must be at least 1"},
		{name: "10 000-digit id", method: "GET", path: apitest.Path("/pets/") + strings.Repeat("1", 10_000), msg: "petId"},
		{name: "max int64 id, none stored", method: "GET", path: apitest.Path("/pets/9223372036854775807"), status: 404},
		{name: "60 000-character path", method: "GET", path: apitest.Path("/") + strings.Repeat("a", 60_000), status: 404},
		{name: "1000 segments", method: "GET", path: apitest.Path("/pets") + strings.Repeat("/1", 1000), status: 404},

		// Query tricks.
		{name: "same limit twice", method: "GET", path: apitest.Path("/pets?limit=1&limit=1"), msg: "limit: must be given once"},
		{name: "same status twice", method: "GET", path: apitest.Path("/pets?status=sold&status=sold"), msg: "status: must be given once"},
		{name: "upper-case name", method: "GET", path: apitest.Path("/pets?LIMIT=5"), msg: `"LIMIT": unknown query parameter`},
		{name: "bad escape", method: "GET", path: apitest.Path("/pets?limit=%zz"), msg: "query: invalid URL escape"},
		{name: "truncated escape", method: "GET", path: apitest.Path("/pets?limit=5%"), msg: "query: invalid URL escape"},
		{name: "bad escape in name", method: "GET", path: apitest.Path("/pets?%zz=5"), msg: "query: invalid URL escape"},
		{name: "semicolon separator", method: "GET", path: apitest.Path("/pets?limit=5;status=sold"), msg: "query: invalid semicolon separator"},
		{name: "exponent limit", method: "GET", path: apitest.Path("/pets?limit=1e1"), msg: "limit: must be a base-10 integer"},
		{name: "hex limit", method: "GET", path: apitest.Path("/pets?limit=0x10"), msg: "limit: must be a base-10 integer"},
		{name: "space before limit", method: "GET", path: apitest.Path("/pets?limit=%205"), msg: "limit: must be a base-10 integer"},
		{name: "NUL after limit", method: "GET", path: apitest.Path("/pets?limit=5%00"), msg: "limit: must be a base-10 integer"},
		{name: "10 000-digit limit", method: "GET", path: apitest.Path("/pets?limit=") + strings.Repeat("9", 10_000), msg: "limit: number must be at most 100"},
		{name: "NUL after status", method: "GET", path: apitest.Path("/pets?status=sold%00"), msg: "status: value is not one of the allowed values"},
		{name: "invalid UTF-8 status", method: "GET", path: apitest.Path("/pets?status=%ff"), msg: "status: value is not one of the allowed values"},
		{name: "after below min int64", method: "GET", path: apitest.Path("/pets?after=-9223372036854775809"), msg: "after: number must be at least 0"},
		{name: "array-style name", method: "GET", path: apitest.Path("/pets?status[]=sold"), msg: "unknown query parameter"},
		{name: "empty name", method: "GET", path: apitest.Path("/pets?=5"), msg: `"": unknown query parameter`},
		{name: "10 000-character name", method: "GET", path: apitest.Path("/pets?") + strings.Repeat("x", 10_000) + "=1", msg: "unknown query parameter"},
		{name: "1000 unknown parameters", method: "GET", path: apitest.Path("/pets?") + strings.Repeat("a=1&", 999) + "a=1", msg: `"a": unknown query parameter`},
		{name: "query on get", method: "GET", path: apitest.Path("/pets/1?limit=5"), msg: `"limit": unknown query parameter`},

		// Header abuse.
		{name: "60 KB bearer", method: "GET", header: []string{"Authorization", "Bearer " + strings.Repeat("k", 60_000)}, anon: true, status: 401},
		{name: "tab after Bearer", method: "GET", header: []string{"Authorization", "Bearer\t" + testKey}, anon: true, status: 401},
		{name: "Token scheme", method: "GET", header: []string{"Authorization", "Token " + testKey}, anon: true, status: 401},
		{name: "Bearer alone", method: "GET", header: []string{"Authorization", "Bearer"}, anon: true, status: 401},
		{name: "NUL in key", method: "GET", header: []string{"Authorization", "Bearer " + testKey + "\x00"}, anon: true, status: 401},
		{name: "CRLF after key", method: "GET", header: []string{"Authorization", "Bearer " + testKey + "\r\n"}, anon: true, status: 401},
		{name: "non-ASCII key", method: "GET", header: []string{"Authorization", "Bearer ключ-0123456789abcdef"}, anon: true, status: 401},
		{name: "good then bad Authorization", method: "GET", header: []string{"Authorization", "Bearer " + testKey, "Authorization", "Bearer nope"}, anon: true, status: 401},
		{name: "100 Authorization headers", method: "GET", header: repeatHeader("Authorization", "Bearer "+testKey, 100), anon: true, status: 401},
		{name: "3000 headers, no key", method: "GET", header: manyHeaders(3000), anon: true, status: 401},
		{name: "3000 headers, bad limit", method: "GET", path: apitest.Path("/pets?limit=0"), header: manyHeaders(3000), msg: "limit"},

		// Idempotency-Key in bad forms: none of them creates a pet.
		{name: "idempotency key too long", body: `{` + ok + `}`, header: []string{"Idempotency-Key", strings.Repeat("k", 256)}, msg: "Idempotency-Key"},
		{name: "idempotency key too long, quoted", body: `{` + ok + `}`, header: []string{"Idempotency-Key", `"` + strings.Repeat("k", 256) + `"`}, msg: "Idempotency-Key"},
		{name: "idempotency key 10 KiB", body: `{` + ok + `}`, header: []string{"Idempotency-Key", strings.Repeat("k", 10<<10)}, msg: "Idempotency-Key"},
		{name: "idempotency key empty", body: `{` + ok + `}`, header: []string{"Idempotency-Key", " "}, msg: "Idempotency-Key"},
		{name: "idempotency key empty quotes", body: `{` + ok + `}`, header: []string{"Idempotency-Key", `""`}, msg: "Idempotency-Key"},
		{name: "idempotency key one quote", body: `{` + ok + `}`, header: []string{"Idempotency-Key", `"abc`}, msg: "Idempotency-Key"},
		{name: "idempotency key with a space", body: `{` + ok + `}`, header: []string{"Idempotency-Key", "a b"}, msg: "Idempotency-Key"},
		{name: "idempotency key with a comma", body: `{` + ok + `}`, header: []string{"Idempotency-Key", "a,b"}, msg: "Idempotency-Key"},
		{name: "idempotency key with a semicolon", body: `{` + ok + `}`, header: []string{"Idempotency-Key", "a;b"}, msg: "Idempotency-Key"},
		{name: "idempotency key not ASCII", body: `{` + ok + `}`, header: []string{"Idempotency-Key", "clé"}, msg: "Idempotency-Key"},
		{name: "idempotency key control character", body: `{` + ok + `}`, header: []string{"Idempotency-Key", "a\x01b"}, msg: "Idempotency-Key"},
		{name: "idempotency key given twice", body: `{` + ok + `}`, header: []string{"Idempotency-Key", "a", "Idempotency-Key", "a"}, msg: "Idempotency-Key: must be given once"},
		{name: "idempotency key given twice, differently", body: `{` + ok + `}`, header: []string{"Idempotency-Key", "a", "Idempotency-Key", "b"}, msg: "Idempotency-Key: must be given once"},
		{name: "idempotency key and a bad body", body: `{"name":""}`, header: []string{"Idempotency-Key", "fine"}, msg: "name"},
		{name: "idempotency key without a key", body: `{` + ok + `}`, header: []string{"Idempotency-Key", "fine"}, anon: true, status: 401},
	}
	for i := range rows {
		r := &rows[i]
		if r.method == "" {
			r.method = "POST"
		}
		if r.path == "" {
			r.path = apitest.Path("/pets")
		}
		if r.status == 0 {
			r.status = 400
		}
	}
	return rows
}

// repeatHeader returns n pairs of the same header.
func repeatHeader(name, value string, n int) []string {
	h := make([]string, 0, 2*n)
	for range n {
		h = append(h, name, value)
	}
	return h
}

func TestHostileRequests(t *testing.T) {
	store := memstore.New()
	c := newClient(t, store)
	anon := *c
	anon.Key = ""
	rows := hostileRequests()
	if len(rows) < 80 {
		t.Fatalf("%d hostile requests, want at least 80", len(rows))
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			client := c
			if r.anon {
				client = &anon
			}
			var res apitest.Response
			if r.chunked {
				res = doChunked(t, client, r.method, r.path, apitest.Body(r.body))
			} else {
				// The members the spec requires beside those the case is about.
				res = client.Do(t, r.method, r.path, apitest.Body(r.body), r.header...)
			}
			if res.Status != r.status {
				t.Fatalf("%s %.80s: got %d %.300s, want %d", r.method, r.path, res.Status, res.Body, r.status)
			}
			if r.method == "HEAD" {
				return // no body; the contract check saw the status and Allow
			}
			wantError(t, res, r.status, codeOf[r.status], r.msg)
		})
	}
	// Not one of them wrote anything.
	res := c.Do(t, "GET", apitest.Path("/pets"), "")
	if strings.TrimSpace(string(res.Body)) != "[]" {
		t.Fatalf("after the hostile requests: GET /pets got %s, want []", res.Body)
	}
}

// doChunked sends body with no declared length, as a chunked upload arrives,
// through the client's handler, and checks the answer against the contract.
func doChunked(t *testing.T, c *apitest.Client, method, path, body string) apitest.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, io.MultiReader(bytes.NewReader([]byte(body))))
	req.ContentLength = -1
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.Key)
	rec := httptest.NewRecorder()
	c.Handler.ServeHTTP(rec, req)
	res := apitest.Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	c.Contract.Check(t, httptest.NewRequest(method, path, nil), res.Status, res.Header, res.Body)
	return res
}

// TestDeepNestingIsCheap bounds the memory a small, deeply nested body costs.
// kin-openapi's default error text dumps the value, indented: for 10 000
// nested arrays (20 KB) that was some 100 MB and, under load, 24 s of CPU.
func TestDeepNestingIsCheap(t *testing.T) {
	c := newClient(t, memstore.New())
	for _, body := range []string{
		nest("[", "", "]", 10_000),
		nest(`{"a":`, "1", "}", 10_000),
		`{"name":` + nest("[", "", "]", 10_000) + `,"categoryId":1}`,
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		res := c.Do(t, "POST", apitest.Path("/pets"), body)
		runtime.ReadMemStats(&after)
		if res.Status != 400 {
			t.Fatalf("%.20s…: got %d, want 400", body, res.Status)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 32<<20 {
			t.Errorf("%.20s… (%d bytes): allocated %d MB, want at most 32", body, len(body), n>>20)
		} else {
			t.Logf("%.20s… (%d bytes): allocated %.1f MB", body, len(body), float64(n)/(1<<20))
		}
	}
}

package strict

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"mime"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// listQuery is listPets's query rules, as httpapi derives them from the spec.
var listQuery = Query{"limit": &Int{Bits: 32, Min: 1, Max: 100}, "after": &Int{Bits: 64, Min: 0, Max: math.MaxInt64}, "status": nil}

// queryVerdicts is what Check may answer for raw, as url.ParseQuery reads
// it: nil for a query the rules accept, otherwise the message of each
// parameter at fault.
func queryVerdicts(q Query, raw string) []string {
	values, err := url.ParseQuery(raw)
	if err != nil {
		return []string{"query: " + err.Error()}
	}
	var faults []string
	for name, vs := range values {
		rule, ok := q[name]
		switch {
		case !ok:
			faults = append(faults, refuse("%.64q: unknown query parameter", name).Message)
		case len(vs) > 1:
			faults = append(faults, name+": must be given once")
		case rule != nil:
			if err := rule.Check(name, vs[0]); err != nil {
				faults = append(faults, err.Error())
			}
		}
	}
	return faults
}

// FuzzQuery: Check accepts what ParseQuery's reading accepts, and refuses
// the rest naming one of the parameters at fault: the first to appear.
func FuzzQuery(f *testing.F) {
	for _, q := range []string{
		"limit=20", "limit=20&after=1000", "status=pending&limit=20&after=1000",
		"limit=20&limit=21", "limit=abc", "limit=+1", "limit=007", "limit=-0", "limit=",
		"limit", "=1", "&&limit=5&&", "lim%69t=5", "limit=%zz", "limit=1;after=2", "a+b=1",
		"status=sold&status=sold", "nope=1&limit=5", "limit=5&nope=1", "after=9223372036854775808",
		"a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&i=9", strings.Repeat("limit=1&", 20), "limit=5&limit=x",
		strings.Repeat("limit=1&", 10001), // beyond ParseQuery's limit on pairs
	} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		want := queryVerdicts(listQuery, raw)
		err := listQuery.Check(raw)
		switch {
		case len(want) == 0 && err != nil:
			t.Fatalf("Check(%q) = %v; ParseQuery's reading accepts it", raw, err)
		case len(want) > 0 && err == nil:
			t.Fatalf("Check(%q) accepts it; ParseQuery's reading refuses it: %q", raw, want)
		case err != nil && !slices.Contains(want, err.Error()):
			t.Fatalf("Check(%q) = %q; want one of %q", raw, err, want)
		}
		if err != nil && listQuery.Check(raw).Error() != err.Error() {
			t.Fatalf("Check(%q): two answers", raw)
		}
	})
}

func TestQueryFirstFault(t *testing.T) {
	for raw, want := range map[string]string{
		"nope=1&limit=0x":         `"nope": unknown query parameter`,
		"limit=0x&nope=1":         `limit: must be a base-10 integer, without "+", leading zeros or "-0"`,
		"after=1&after=2&limit=x": "after: must be given once",
		"limit=%zz&nope=1":        `query: invalid URL escape "%zz"`,
	} {
		if err := listQuery.Check(raw); err == nil || err.Error() != want {
			t.Errorf("Check(%q) = %v, want %q", raw, err, want)
		}
	}
}

// FuzzInt: an integer parameter is accepted exactly when it is the one
// spelling strconv.FormatInt gives a number of its format; a JSON integer
// exactly when it has no fraction or exponent and fits the format.
func FuzzInt(f *testing.F) {
	for _, v := range []string{"0", "1", "-1", "+1", "007", "-0", "00", "", "-", "1e3", "1.0", "0x10", " 1",
		"2147483647", "2147483648", "-2147483649", "9223372036854775807", "9223372036854775808", "-9223372036854775809", "1e400"} {
		f.Add(v, true)
		f.Add(v, false)
	}
	f.Fuzz(func(t *testing.T, v string, is32 bool) {
		r := Int64
		if is32 {
			r = Int32
		}
		n, perr := strconv.ParseInt(v, 10, r.Bits)
		canonical := perr == nil && strconv.FormatInt(n, 10) == v
		if err := r.Check("p", v); (err == nil) != canonical {
			t.Fatalf("Check(%q) = %v; canonical %v", v, err, canonical)
		}
		if !jsontext.Value(v).IsValid() || jsontext.Value(v).Kind() != '0' {
			return
		}
		got, err := r.JSON("m", json.Number(v))
		if (err == nil) != (perr == nil) || got != n && perr == nil {
			t.Fatalf("JSON(%q) = %d, %v; strconv.ParseInt: %d, %v", v, got, err, n, perr)
		}
	})
}

func TestIntMessages(t *testing.T) {
	limit := Int{Bits: 32, Min: 1, Max: 100}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{limit.Check("limit", "+5"), `limit: must be a base-10 integer, without "+", leading zeros or "-0"`},
		{limit.Check("limit", "2147483648"), "limit: number must be at most 100"},
		{limit.Check("limit", "-2147483649"), "limit: number must be at least 1"},
		{second(Int64.JSON("categoryId", "1.0")), "categoryId: must be an integer, without fraction or exponent"},
		{second(Int64.JSON("categoryId", "1e0")), "categoryId: must be an integer, without fraction or exponent"},
		{second(Int64.JSON("categoryId", "9223372036854775808")), "categoryId: number must be at most 9223372036854775807"},
		{second(Int64.JSON("categoryId", "-9223372036854775809")), "categoryId: number must be at least -9223372036854775808"},
	} {
		if tc.err == nil || tc.err.Error() != tc.want {
			t.Errorf("got %v, want %q", tc.err, tc.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// FuzzContentType: an accepted Content-Type is application/json with no
// parameter but charset=utf-8, and no parameter name in RFC 2231's form;
// a refusal names the header.
func FuzzContentType(f *testing.F) {
	for _, ct := range []string{
		"application/json", "application/json; charset=utf-8", `application/json; charset="UTF-8"`, "APPLICATION/JSON",
		"application/json; charset=latin1", "application/json; foo=bar", "application/json;C*00000=00",
		"application/json; charset*=utf-8''utf-8", "application/json; charset*0=utf; charset*1=-8", "text/plain",
		"application/json, text/plain", "application/json; charset=utf-8; charset=latin1", "", "json", `application/json; charset="a;b*=c"`,
	} {
		f.Add(ct, "")
	}
	f.Add("application/json", "application/json")
	f.Fuzz(func(t *testing.T, ct, second string) {
		values := []string{ct}
		if second != "" {
			values = append(values, second)
		}
		err := JSONContentType(values)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "Content-Type: ") {
				t.Fatalf("%q: refused with %q, which does not name Content-Type", values, err)
			}
			return
		}
		mt, params, perr := mime.ParseMediaType(ct)
		if len(values) != 1 || perr != nil || mt != "application/json" {
			t.Fatalf("%q: accepted; ParseMediaType: %q, %v", values, mt, perr)
		}
		for name, v := range params {
			if name != "charset" || !strings.EqualFold(v, "utf-8") {
				t.Fatalf("%q: accepted with parameter %s=%q", ct, name, v)
			}
		}
		_, rest, _ := strings.Cut(ct, ";")
		for p := range strings.SplitSeq(rest, ";") {
			if name, _, _ := strings.Cut(p, "="); strings.Contains(name, "*") {
				t.Fatalf("%q: accepted with the RFC 2231 parameter %q", ct, name)
			}
		}
	})
}

func TestContentTypeMessages(t *testing.T) {
	for ct, want := range map[string]string{
		"application/json;C*00000=00":             `Content-Type: "c*00000": unknown parameter; application/json takes only charset=utf-8`,
		"application/json; charset*=utf-8''utf-8": `Content-Type: "charset*": unknown parameter; application/json takes only charset=utf-8`,
		"application/json; foo=bar":               `Content-Type: "foo": unknown parameter; application/json takes only charset=utf-8`,
		"application/json; charset=latin1":        `Content-Type: charset must be utf-8, not "latin1"`,
		"text/plain":                              MsgJSONType,
	} {
		if err := JSONContentType([]string{ct}); err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %q", ct, err, want)
		}
	}
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", `Application/JSON ; Charset="UTF-8"`} {
		if err := JSONContentType([]string{ct}); err != nil {
			t.Errorf("%q: %v", ct, err)
		}
	}
	if err := JSONContentType(nil); err == nil || err.Error() != MsgJSONType {
		t.Errorf("no Content-Type: got %v", err)
	}
}

// checkJSON is the reference reading of a body: one JSON value skipped
// whole by jsontext, then nothing but white space.
func checkJSON(data []byte) error {
	dec := jsontext.NewDecoder(bytes.NewBuffer(data))
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

// FuzzDecodeJSON: DecodeJSON accepts exactly what jsontext's reading of one
// whole value accepts, says what it says when it refuses, and makes of a
// body what encoding/json with UseNumber makes of it.
func FuzzDecodeJSON(f *testing.F) {
	for _, body := range []string{
		`{"name":"Rex","categoryId":1,"status":"sold"}`,
		`{"a":[1,true,false,null,{"x":[]},[]],"s":"\u00e9\n\ud83d\ude00\"","n":-1.5e400,"big":9223372036854775808,"z":0.0}`,
		`[]`, `{}`, `"x"`, `1`, `null`, " \t\n{\"a\":1}\r\n ",
		`{"a":1}{`, `{"a":1} {}`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, "\"\xff\"", `"\ud800"`, `{"a":`, `{"a" 1}`, `[1,]`, ``, ` `, `nul`,
		"\xef\xbb\xbf{}", "{\"a\":\"a\x00b\"}", `{"a":01}`, `{"a":NaN}`, strings.Repeat("[", 1000),
	} {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := DecodeJSON(body)
		if ref := checkJSON(body); ref != nil {
			want := "body: invalid JSON: " + strings.TrimPrefix(ref.Error(), "jsontext: ")
			if err == nil || err.Error() != want {
				t.Fatalf("%q: got %v, want %q", body, err, want)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q: %v; jsontext accepts it", body, err)
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("%q: encoding/json: %v", body, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: got %#v, want %#v", body, got, want)
		}
	})
}

// TestJSONMessageIgnoresHistory: a body's message is the same whatever the
// pooled decoders read before it. From an io.Reader, jsontext quotes the
// text at the end of its buffer, so the surrogate below was quoted with one
// byte fewer by a fresh decoder than by one a large body had grown (found by
// FuzzDecodeJSON).
func TestJSONMessageIgnoresHistory(t *testing.T) {
	// 65 bytes: past a fresh decoder's first read.
	body := []byte(`{"0":[0,true,false,null,{"x":[]},[]],"s":"\u0000\b000\ud800000000`)
	want := "body: invalid JSON: invalid surrogate pair `\\ud800000000` in string within \"/s\" after offset 53"
	large := []byte(`{"a":"` + strings.Repeat("x", 60<<10) + `"}`)
	for i := range 20 {
		if _, err := DecodeJSON(body); err == nil || err.Error() != want {
			t.Fatalf("round %d: got %v, want %q", i, err, want)
		}
		if _, err := DecodeJSON(large); err != nil {
			t.Fatal(err)
		}
		decoders.Put(new(jsontext.Decoder)) // and a fresh one next
	}
}

func TestAcceptsJSON(t *testing.T) {
	for _, tc := range []struct {
		values []string
		want   bool
		err    string // a part of the refusal, when it is one
	}{
		{nil, true, ""},
		{[]string{"*/*"}, true, ""},
		{[]string{"application/json"}, true, ""},
		{[]string{"Application/JSON"}, true, ""},
		{[]string{"application/*"}, true, ""},
		{[]string{"application/json; charset=utf-8"}, true, ""},
		{[]string{`application/json;charset="UTF-8"`}, true, ""},
		{[]string{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}, true, ""}, // a browser's
		{[]string{"application/xml", "application/json"}, true, ""},
		{[]string{""}, true, ""},
		{[]string{" , ,"}, true, ""},
		{[]string{"application/json;q=0.001"}, true, ""},
		{[]string{"application/json;q=1.000"}, true, ""},
		{[]string{"application/json;q=0."}, false, ""},
		{[]string{"application/xml"}, false, ""},
		{[]string{"text/plain, text/html"}, false, ""},
		{[]string{"application/json;q=0"}, false, ""},
		{[]string{"application/json;q=0, */*"}, false, ""}, // the most specific range decides
		{[]string{"*/*;q=0, application/json;q=0.5"}, true, ""},
		{[]string{"application/*;q=0, */*"}, false, ""},
		{[]string{"application/json;version=2"}, false, ""},
		{[]string{"application/json;version=2, application/*;q=0.1"}, true, ""},
		{[]string{"application/json;charset=latin1"}, false, ""},
		{[]string{`text/html;a="x,y", application/json`}, true, ""},
		{[]string{"application/json;q=0;x=1"}, false, ""},
		{[]string{"json"}, false, `"json" is not a media range`},
		{[]string{"*/json"}, false, "is not a media range"},
		{[]string{"application/json;q=2"}, false, "q must be a number from 0 to 1"},
		{[]string{"application/json;q=0.0001"}, false, "q must be"},
		{[]string{"application/json;q=1.5"}, false, "q must be"},
		{[]string{"application/json;q="}, false, "not name=value"},
		{[]string{"application/json;"}, false, "not name=value"},
		{[]string{"appli cation/json"}, false, "is not a media range"},
	} {
		got, err := AcceptsJSON(tc.values)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("AcceptsJSON(%q): got %v, %v; want a refusal with %q", tc.values, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("AcceptsJSON(%q): got %v, %v; want %v", tc.values, got, err, tc.want)
		}
	}
}

func FuzzAccept(f *testing.F) {
	for _, s := range []string{"*/*", "application/json;q=0.5, text/html", `a/b;c="d,e";q=1`, "application/*;q=0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		ok, err := AcceptsJSON([]string{v})
		if err != nil && ok {
			t.Fatalf("AcceptsJSON(%q): admitted and refused", v)
		}
		if err != nil && (!utf8.ValidString(err.Error()) || len(err.Error()) > 1024) {
			t.Fatalf("AcceptsJSON(%q): message %q is not a line of UTF-8 within Error.message's 1024 bytes", v, err)
		}
	})
}

func TestIdentityEncoding(t *testing.T) {
	for _, ok := range [][]string{nil, {"identity"}, {"Identity"}, {""}, {"identity, identity"}} {
		if err := IdentityEncoding(ok); err != nil {
			t.Errorf("IdentityEncoding(%q): %v", ok, err)
		}
	}
	for _, bad := range [][]string{{"gzip"}, {"identity", "br"}, {"identity, deflate"}, {"x-gzip"}} {
		if err := IdentityEncoding(bad); err == nil || !strings.Contains(err.Error(), "Content-Encoding:") {
			t.Errorf("IdentityEncoding(%q): got %v, want a refusal", bad, err)
		}
	}
}

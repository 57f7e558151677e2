package cases

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/conform/wire"
)

// The cases of the sentences on request bodies, names and keys.

// JSONObject: a request body is one JSON object, sent with a JSON
// Content-Type; a legal but uncommon spelling of one is taken.
func JSONObject(t T) []Case {
	reqs := t.Requests()
	if t.Requests().Roles.Create == nil {
		return nil
	}
	valid := MustJSON(reqs.NewPet("conform-json", nil))
	name := t.Requests().Roles.Create.Body.Required[0]
	var ks []Case
	for _, raw := range []struct{ label, body string }{
		{"not an object (array)", "[]"},
		{"not an object (string)", `"pet"`},
		{"not an object (null)", "null"},
		{"malformed JSON", string(valid[:len(valid)-1])},
		{"trailing data", string(valid) + " {}"},
		{"duplicate member", `{"` + name + `":1,` + string(valid[1:])},
		{"empty", ""},
		{"invalid UTF-8 in a string", strings.Replace(string(valid), `":"`, "\":\"\xff", 1)},
		{"invalid UTF-8 after the object", string(valid) + "\xff"},
	} {
		ks = append(ks, Negative("body: "+raw.label, reqs.CreateReq([]byte(raw.body), nil)))
	}
	bare := wire.Request{Method: t.Requests().Roles.Create.Method, Target: t.Requests().Roles.Create.Path, Header: http.Header{}, Body: valid}
	ks = append(ks, Negative("Content-Type: missing", bare))
	ks = append(ks, Negative("Content-Type: text/plain", reqs.CreateReq(valid, http.Header{"Content-Type": {"text/plain"}})))
	// Legal forms: white space around every token, members in another
	// order, every character of the strings escaped, a surrogate pair.
	body := reqs.NewPet("conform-spaced", nil)
	body[t.NameMember()] = body[t.NameMember()].(string) + " \U0001F408/"
	ks = append(ks, Positive("body: white space, members reordered, escapes", reqs.CreateReq(Spaced(body), nil), Created()))
	return ks
}

// nameSchema is the schema of the member the kit names (T.NameMember).
func nameSchema(t T) *openapi3.Schema {
	return Flat(t.Requests().Roles.Create.Body.Properties[t.NameMember()].Value)
}

// BodySize: a body of exactly the size the contract allows is taken,
// one byte more is answered 413.
func BodySize(t T) []Case {
	reqs := t.Requests()
	n := t.Bounds().BodyMax
	if t.Requests().Roles.Create == nil || n == 0 {
		return nil
	}
	at := MustJSON(reqs.NewPet("conform-size", nil))
	over := MustJSON(reqs.NewPet("conform-size", nil))
	return []Case{
		Positive(fmt.Sprintf("body of %d bytes, the most allowed", n), reqs.CreateReq(Padded(at, n), nil), Created()),
		{Label: fmt.Sprintf("body of %d bytes", n+1), Check: "negative_data_rejection", Req: reqs.CreateReq(Padded(over, n+1), nil), Want: Refused(http.StatusRequestEntityTooLarge, "payload_too_large")},
	}
}

// Padded is a copy of b, a JSON text, padded with spaces to size bytes.
func Padded(b []byte, size int64) []byte {
	return append(slices.Clip(b), bytes.Repeat([]byte(" "), int(size)-len(b))...)
}

// ContentType: application/json in any case, with a charset of utf-8
// in any case, quoted or not, is taken; another charset, another
// parameter, two headers or a list are refused.
func ContentType(t T) []Case {
	reqs := t.Requests()
	if t.Requests().Roles.Create == nil {
		return nil
	}
	var ks []Case
	for _, ct := range []string{"APPLICATION/JSON", "Application/Json; charset=UTF-8", "application/json;charset=utf-8", `application/json; charset="utf-8"`, `application/json; charset="UTF-8"`} {
		ks = append(ks, Positive("Content-Type: "+ct, reqs.CreateReq(MustJSON(reqs.NewPet("conform-ct", nil)), http.Header{"Content-Type": {ct}}), Created()))
	}
	valid := MustJSON(reqs.NewPet("conform-ct", nil))
	charsets := t.RuleStrings("content-type", "refusedCharsets")
	if len(charsets) == 0 {
		charsets = []string{"latin1"}
	}
	for _, cs := range charsets {
		ks = append(ks, Negative("Content-Type: charset "+cs, reqs.CreateReq(valid, http.Header{"Content-Type": {"application/json; charset=" + cs}})))
	}
	for _, c := range []struct {
		label  string
		values []string
	}{
		{"unknown parameter", []string{"application/json; conform=1"}},
		{"given twice", []string{"application/json", "application/json"}},
		{"a list", []string{"application/json, text/plain"}},
	} {
		ks = append(ks, Negative("Content-Type: "+c.label, reqs.CreateReq(valid, http.Header{"Content-Type": c.values})))
	}
	return ks
}

// WholeRange are integers a narrower type than the format loses: past
// int16, int32 and uint32, past 2^53 (a JavaScript number), the largest.
func WholeRange(format string) []*big.Int {
	var out []*big.Int
	for _, s := range []string{"32768", "2147483647", "2147483648", "4294967296", "9007199254740993", "9223372036854775807"} {
		n, _ := new(big.Int).SetString(s, 10)
		if format == "int32" && !n.IsInt64() || format == "int32" && n.Int64() > 1<<31-1 {
			continue
		}
		out = append(out, n)
	}
	return out
}

// integerCases: every integer a parameter or member's format and bounds
// allow is taken, the ones a narrower type would lose included; a created
// pet keeps it exactly (the model).
// IntegerSentence are the integers sentence's cases: every integer
// the formats allow, accepted (integerCases), and each spelling of one
// that is not base-10 ASCII digits alone, refused (IntegerSpellings).
func IntegerSentence(t T) []Case {
	return append(integerCases(t), IntegerSpellings(t)...)
}

func integerCases(t T) []Case {
	reqs := t.Requests()
	var ks []Case
	inRange := func(s *openapi3.Schema) []*big.Int {
		lo, hi := IntBounds(s)
		var out []*big.Int
		for _, n := range WholeRange(s.Format) {
			if n.Cmp(lo) >= 0 && n.Cmp(hi) <= 0 {
				out = append(out, n)
			}
		}
		return out
	}
	for _, op := range t.Operations() {
		for _, p := range append(slices.Clone(op.InPath), op.Query...) {
			if s := Flat(p.Schema.Value); s != nil && IsType(s, "integer") {
				for _, n := range inRange(s) {
					req := reqs.ValidRequest(op, "1")
					if p.In == openapi3.ParameterInPath {
						req.Target = op.Target(map[string]string{p.Name: n.String()}, "")
					} else {
						req.Target = op.Target(reqs.PathValues(op, "1"), p.Name+"="+n.String())
					}
					ks = append(ks, Positive(fmt.Sprintf("%s %s: %s", p.In, p.Name, n), req, t.AcceptedBy(op)))
				}
			}
		}
	}
	if op := t.Requests().Roles.Create; op != nil {
		for _, name := range sortedKeys(op.Body.Properties) {
			if s := Flat(op.Body.Properties[name].Value); s != nil && IsType(s, "integer") {
				for _, n := range inRange(s) {
					body := reqs.NewPet("conform-int", map[string]any{name: json.Number(n.String())})
					ks = append(ks, Positive(fmt.Sprintf("body %s: %s", name, n), reqs.CreateReq(MustJSON(body), nil), Created()))
				}
			}
		}
	}
	return ks
}

// Assigned: a body naming a member the service assigns, or one NewPet
// does not have, is refused.
func Assigned(t T) []Case {
	reqs := t.Requests()
	op := t.Requests().Roles.Create
	if op == nil {
		return nil
	}
	ks := []Case{Negative("body: unknown member", reqs.CreateReq(MustJSON(reqs.NewPet("conform-assigned", map[string]any{"conformUnknown": 1})), nil))}
	for _, name := range sortedKeys(op.Created.Properties) {
		if _, ok := op.Body.Properties[name]; ok {
			continue
		}
		if vs := t.Valid(op.Created.Properties[name].Value); len(vs) > 0 {
			body := reqs.NewPet("conform-assigned", map[string]any{name: vs[0].JSON})
			ks = append(ks, Negative(fmt.Sprintf("body: %s, which the service assigns", name), reqs.CreateReq(MustJSON(body), nil)))
		}
	}
	return ks
}

// namedCases creates a pet for each name the schema accepts, made of a
// name of the run and a sample: it must be taken and stored as sent.
func namedCases(t T, what string, samples []string, join func(name, sample string) string) []Case {
	reqs := t.Requests()
	if t.Requests().Roles.Create == nil {
		return nil
	}
	var ks []Case
	for _, sample := range samples {
		name := join(t.Name("conform-"+what), sample)
		if !StringOK(nameSchema(t), name) {
			continue
		}
		body := reqs.NewPet("conform", map[string]any{t.NameMember(): name})
		ks = append(ks, Positive(fmt.Sprintf("body %s: %s %s", t.NameMember(), what, strconv.Quote(sample)), reqs.CreateReq(MustJSON(body), nil), Created()))
	}
	return ks
}

// NameMarks: names with marks of direction and joiners are taken.
func NameMarks(t T) []Case {
	return namedCases(t, "marks", []string{"\u200fשלום\u200f", "\u200eabc\u200e", "\u061cمرحبا", "👩\u200d🚀", "👨\u200d👩\u200d👧"},
		func(name, s string) string { return name + " " + s })
}

// NameSpace: names with white space at either end or inside are taken.
func NameSpace(t T) []Case {
	return namedCases(t, "space", []string{" leading and trailing ", "\u00a0inner\u00a0", "\u3000ideographic"},
		func(name, s string) string { return s[:len(s)/2] + name + s[len(s)/2:] })
}

// NameLength: the longest name, in characters outside the Basic
// Multilingual Plane (two UTF-16 units, four bytes each).
func NameLength(t T) []Case {
	if t.Requests().Roles.Create == nil || nameSchema(t).MaxLength == nil {
		return nil
	}
	n := int(*nameSchema(t).MaxLength)
	return namedCases(t, "longest", []string{"🐈"}, func(name, s string) string {
		if k := n - len([]rune(name)) - 1; k > 0 {
			return name + " " + strings.Repeat(s, k)
		}
		return name
	})
}

// KeySyntax: keys in every mark the syntax allows, and in the
// structured-field form (in double quotes), are taken.
func KeySyntax(t T) []Case {
	reqs := t.Requests()
	op := t.Requests().Roles.Create
	if op == nil {
		return nil
	}
	var p *openapi3.Parameter
	for _, h := range op.Header {
		if http.CanonicalHeaderKey(h.Name) == "Idempotency-Key" {
			p = h
		}
	}
	if p == nil {
		return nil
	}
	s := Flat(p.Schema.Value)
	var ks []Case
	for _, key := range []string{t.Name("conform-key") + "~:+/=_", `"` + t.Name("conform-key") + `"`, `"` + t.Name("conform-key") + `=/+:~"`} {
		if StringOK(s, key) {
			req := reqs.CreateReq(MustJSON(reqs.NewPet("conform-keyed", nil)), http.Header{"Idempotency-Key": {key}})
			ks = append(ks, Positive("Idempotency-Key: "+key, req, Created()))
		}
	}
	req := reqs.CreateReq(MustJSON(reqs.NewPet("conform-keyed", nil)), http.Header{"Idempotency-Key": {`""`}})
	return append(ks, Negative(`Idempotency-Key: "" (quotes around nothing)`, req))
}

// NoBody: a body, of any length, to an operation that takes none.
func NoBody(t T) []Case {
	reqs := t.Requests()
	var ks []Case
	for _, op := range t.Operations() {
		if op.Body != nil {
			continue
		}
		target := op.Target(reqs.PathValues(op, "1"), "")
		ks = append(ks,
			Negative("a JSON body where none is taken", wire.Request{Method: op.Method, Target: target, Header: JSONHeader, Body: []byte("{}")}),
			Negative("a one-byte body without Content-Type where none is taken", wire.Request{Method: op.Method, Target: target, Header: http.Header{}, Body: []byte("x")}))
	}
	return ks
}

package conform

import (
	"bytes"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/conform/cases"
)

// The cases of the sentences on request bodies, names and keys.

func jsonObjectCases(r *run) []kase {
	if r.roles.Create == nil {
		return nil
	}
	valid := mustJSON(r.reqs.NewPet("conform-json", nil))
	name := r.roles.Create.Body.Required[0]
	var ks []kase
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
		ks = append(ks, negCase("body: "+raw.label, r.reqs.CreateReq([]byte(raw.body), nil)))
	}
	bare := request{Method: r.roles.Create.Method, Target: r.roles.Create.Path, Header: http.Header{}, Body: valid}
	ks = append(ks, negCase("Content-Type: missing", bare))
	ks = append(ks, negCase("Content-Type: text/plain", r.reqs.CreateReq(valid, http.Header{"Content-Type": {"text/plain"}})))
	// Legal forms: white space around every token, members in another
	// order, every character of the strings escaped, a surrogate pair.
	body := r.reqs.NewPet("conform-spaced", nil)
	body[r.nameMember()] = body[r.nameMember()].(string) + " \U0001F408/"
	ks = append(ks, posCase("body: white space, members reordered, escapes", r.reqs.CreateReq(spaced(body), nil), created()))
	return ks
}

// nameMember is the member of the created resource that the kit names: the
// first required string without an enum.
func (r *run) nameMember() string {
	s := r.roles.Create.Body
	for _, m := range s.Required {
		if ps := cases.Flat(s.Properties[m].Value); ps != nil && cases.IsType(ps, "string") && len(ps.Enum) == 0 {
			return m
		}
	}
	return s.Required[0]
}

// nameSchema is the schema of that member.
func (r *run) nameSchema() *openapi3.Schema {
	return cases.Flat(r.roles.Create.Body.Properties[r.nameMember()].Value)
}

// spaced writes body as JSON in a legal but uncommon form (cases.Spaced).
func spaced(body map[string]any) []byte { return cases.Spaced(body) }

// bodySizeCases: a body of exactly the size the contract allows is taken,
// one byte more is answered 413.
func bodySizeCases(r *run) []kase {
	n := r.bounds.BodyMax
	if r.roles.Create == nil || n == 0 {
		return nil
	}
	at := mustJSON(r.reqs.NewPet("conform-size", nil))
	over := mustJSON(r.reqs.NewPet("conform-size", nil))
	return []kase{
		posCase(fmt.Sprintf("body of %d bytes, the most allowed", n), r.reqs.CreateReq(padded(at, n), nil), created()),
		{Label: fmt.Sprintf("body of %d bytes", n+1), Check: "negative_data_rejection", Req: r.reqs.CreateReq(padded(over, n+1), nil), Want: refused(http.StatusRequestEntityTooLarge, "payload_too_large")},
	}
}

// padded is a copy of b, a JSON text, padded with spaces to size bytes.
func padded(b []byte, size int64) []byte {
	return append(slices.Clip(b), bytes.Repeat([]byte(" "), int(size)-len(b))...)
}

// contentTypeCases: application/json in any case, with a charset of utf-8
// in any case, quoted or not, is taken; another charset, another
// parameter, two headers or a list are refused.
func contentTypeCases(r *run) []kase {
	if r.roles.Create == nil {
		return nil
	}
	var ks []kase
	for _, ct := range []string{"APPLICATION/JSON", "Application/Json; charset=UTF-8", "application/json;charset=utf-8", `application/json; charset="utf-8"`, `application/json; charset="UTF-8"`} {
		ks = append(ks, posCase("Content-Type: "+ct, r.reqs.CreateReq(mustJSON(r.reqs.NewPet("conform-ct", nil)), http.Header{"Content-Type": {ct}}), created()))
	}
	valid := mustJSON(r.reqs.NewPet("conform-ct", nil))
	charsets := r.RuleStrings("content-type", "refusedCharsets")
	if len(charsets) == 0 {
		charsets = []string{"latin1"}
	}
	for _, cs := range charsets {
		ks = append(ks, negCase("Content-Type: charset "+cs, r.reqs.CreateReq(valid, http.Header{"Content-Type": {"application/json; charset=" + cs}})))
	}
	for _, c := range []struct {
		label  string
		values []string
	}{
		{"unknown parameter", []string{"application/json; conform=1"}},
		{"given twice", []string{"application/json", "application/json"}},
		{"a list", []string{"application/json, text/plain"}},
	} {
		ks = append(ks, negCase("Content-Type: "+c.label, r.reqs.CreateReq(valid, http.Header{"Content-Type": c.values})))
	}
	return ks
}

// wholeRange are integers a narrower type than the format loses: past
// int16, int32 and uint32, past 2^53 (a JavaScript number), the largest.
func wholeRange(format string) []*big.Int {
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
// integerSentenceCases are the integers sentence's cases: every integer
// the formats allow, accepted (integerCases), and each spelling of one
// that is not base-10 ASCII digits alone, refused (cases.IntegerSpellings).
func integerSentenceCases(r *run) []kase {
	return append(integerCases(r), cases.IntegerSpellings(r)...)
}

func integerCases(r *run) []kase {
	var ks []kase
	inRange := func(s *openapi3.Schema) []*big.Int {
		lo, hi := cases.IntBounds(s)
		var out []*big.Int
		for _, n := range wholeRange(s.Format) {
			if n.Cmp(lo) >= 0 && n.Cmp(hi) <= 0 {
				out = append(out, n)
			}
		}
		return out
	}
	for _, op := range r.ops {
		for _, p := range append(slices.Clone(op.InPath), op.Query...) {
			if s := cases.Flat(p.Schema.Value); s != nil && cases.IsType(s, "integer") {
				for _, n := range inRange(s) {
					req := r.reqs.ValidRequest(op, "1")
					if p.In == openapi3.ParameterInPath {
						req.Target = op.Target(map[string]string{p.Name: n.String()}, "")
					} else {
						req.Target = op.Target(r.reqs.PathValues(op, "1"), p.Name+"="+n.String())
					}
					ks = append(ks, posCase(fmt.Sprintf("%s %s: %s", p.In, p.Name, n), req, r.acceptedBy(op)))
				}
			}
		}
	}
	if op := r.roles.Create; op != nil {
		for _, name := range sortedKeys(op.Body.Properties) {
			if s := cases.Flat(op.Body.Properties[name].Value); s != nil && cases.IsType(s, "integer") {
				for _, n := range inRange(s) {
					body := r.reqs.NewPet("conform-int", map[string]any{name: intNumber(n)})
					ks = append(ks, posCase(fmt.Sprintf("body %s: %s", name, n), r.reqs.CreateReq(mustJSON(body), nil), created()))
				}
			}
		}
	}
	return ks
}

// assignedCases: a body naming a member the service assigns, or one NewPet
// does not have, is refused.
func assignedCases(r *run) []kase {
	op := r.roles.Create
	if op == nil {
		return nil
	}
	ks := []kase{negCase("body: unknown member", r.reqs.CreateReq(mustJSON(r.reqs.NewPet("conform-assigned", map[string]any{"conformUnknown": 1})), nil))}
	for _, name := range sortedKeys(op.Created.Properties) {
		if _, ok := op.Body.Properties[name]; ok {
			continue
		}
		if vs := r.valid(op.Created.Properties[name].Value); len(vs) > 0 {
			body := r.reqs.NewPet("conform-assigned", map[string]any{name: vs[0].JSON})
			ks = append(ks, negCase(fmt.Sprintf("body: %s, which the service assigns", name), r.reqs.CreateReq(mustJSON(body), nil)))
		}
	}
	return ks
}

// namedCases creates a pet for each name the schema accepts, made of a
// name of the run and a sample: it must be taken and stored as sent.
func namedCases(r *run, what string, samples []string, join func(name, sample string) string) []kase {
	if r.roles.Create == nil {
		return nil
	}
	var ks []kase
	for _, sample := range samples {
		name := join(r.Name("conform-"+what), sample)
		if !cases.StringOK(r.nameSchema(), name) {
			continue
		}
		body := r.reqs.NewPet("conform", map[string]any{r.nameMember(): name})
		ks = append(ks, posCase(fmt.Sprintf("body %s: %s %s", r.nameMember(), what, strconv.Quote(sample)), r.reqs.CreateReq(mustJSON(body), nil), created()))
	}
	return ks
}

func nameMarkCases(r *run) []kase {
	return namedCases(r, "marks", []string{"\u200fשלום\u200f", "\u200eabc\u200e", "\u061cمرحبا", "👩\u200d🚀", "👨\u200d👩\u200d👧"},
		func(name, s string) string { return name + " " + s })
}

func nameSpaceCases(r *run) []kase {
	return namedCases(r, "space", []string{" leading and trailing ", "\u00a0inner\u00a0", "\u3000ideographic"},
		func(name, s string) string { return s[:len(s)/2] + name + s[len(s)/2:] })
}

// nameLengthCases: the longest name, in characters outside the Basic
// Multilingual Plane (two UTF-16 units, four bytes each).
func nameLengthCases(r *run) []kase {
	if r.roles.Create == nil || r.nameSchema().MaxLength == nil {
		return nil
	}
	n := int(*r.nameSchema().MaxLength)
	return namedCases(r, "longest", []string{"🐈"}, func(name, s string) string {
		if k := n - len([]rune(name)) - 1; k > 0 {
			return name + " " + strings.Repeat(s, k)
		}
		return name
	})
}

// keySyntaxCases: keys in every mark the syntax allows, and in the
// structured-field form (in double quotes), are taken.
func keySyntaxCases(r *run) []kase {
	op := r.roles.Create
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
	s := cases.Flat(p.Schema.Value)
	var ks []kase
	for _, key := range []string{r.Name("conform-key") + "~:+/=_", `"` + r.Name("conform-key") + `"`, `"` + r.Name("conform-key") + `=/+:~"`} {
		if cases.StringOK(s, key) {
			req := r.reqs.CreateReq(mustJSON(r.reqs.NewPet("conform-keyed", nil)), http.Header{"Idempotency-Key": {key}})
			ks = append(ks, posCase("Idempotency-Key: "+key, req, created()))
		}
	}
	req := r.reqs.CreateReq(mustJSON(r.reqs.NewPet("conform-keyed", nil)), http.Header{"Idempotency-Key": {`""`}})
	return append(ks, negCase(`Idempotency-Key: "" (quotes around nothing)`, req))
}

// noBodyCases: a body, of any length, to an operation that takes none.
func noBodyCases(r *run) []kase {
	var ks []kase
	for _, op := range r.ops {
		if op.Body != nil {
			continue
		}
		target := op.Target(r.reqs.PathValues(op, "1"), "")
		ks = append(ks,
			negCase("a JSON body where none is taken", request{Method: op.Method, Target: target, Header: jsonHeader, Body: []byte("{}")}),
			negCase("a one-byte body without Content-Type where none is taken", request{Method: op.Method, Target: target, Header: http.Header{}, Body: []byte("x")}))
	}
	return ks
}

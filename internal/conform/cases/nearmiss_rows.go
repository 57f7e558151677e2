package cases

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/petstore/petstore/internal/conform/wire"
)

// The rows of the catalogue of near misses (nearmiss.go) beyond the API
// key's.

// keyed is a create of body with the Idempotency-Key header's values.
func (n *nearMisser) keyed(body []byte, keys ...string) wire.Request {
	return n.t.Requests().CreateReq(body, http.Header{"Idempotency-Key": keys})
}

// otherPet is a create body of another pet than the kept one.
func (n *nearMisser) otherPet() []byte { return MustJSON(n.t.Requests().NewPet("conform-near", nil)) }

// idempotencyKeyRows come near a kept Idempotency-Key, its value and its
// header's name.
func idempotencyKeyRows() []nearMiss {
	const v = "Idempotency-Key"
	another := func(miss string, f func(string) string) nearMiss {
		return nearMiss{value: v, miss: miss, want: "201, a pet of its own for another pet: another key, not the kept one's 422", rule: "key-exact", cases: func(n *nearMisser) []Case {
			return []Case{{Label: "with another pet", Check: "idempotent_replay", Req: n.keyed(n.otherPet(), f(n.key)), Want: NewPetOf(n.pet)}}
		}}
	}
	return []nearMiss{
		{value: v, miss: missCase, want: "201, a new pet, for the kept key's own request and for another: a key differing in case is another key", rule: "key-exact", cases: func(n *nearMisser) []Case {
			return []Case{
				{Label: "the kept request", Check: "idempotent_replay", Req: n.keyed(n.body, flipCase(n.key)), Want: NewPetOf(n.pet)},
				{Label: "another pet, under the key's first letter in another case", Check: "idempotent_replay", Req: n.keyed(n.otherPet(), flipFirst(n.key)), Want: NewPetOf(n.pet)},
			}
		}},
		another(missPrefix, cutLast),
		another(missExtend, func(k string) string { return k + "x" }),
		another(missOne, changeOne),
		{value: v, miss: missSpace, want: "the kept answer replayed: a field's value has no white space around it", rule: "replay", cases: func(n *nearMisser) []Case {
			return []Case{{Label: "Idempotency-Key:   KEY  ", Check: "idempotent_replay", Req: wireField(n.t.Requests().CreateReq(n.body, nil), "Idempotency-Key:   "+n.key+"  "), Want: ReplayOf(n.pet)}}
		}},
		{value: v, miss: missPercent, want: "400: % is outside the key's syntax", rule: "key-syntax", cases: func(n *nearMisser) []Case {
			return []Case{Negative("the kept key, a letter percent-encoded", n.keyed(n.body, percentFirst(n.key)))}
		}},
		{value: v, miss: missTwice, want: "400: sent at most once, even the same key twice", rule: "key-syntax", cases: func(n *nearMisser) []Case {
			return []Case{Negative("the kept key twice, the kept request", n.keyed(n.body, n.key, n.key))}
		}},
		{value: v, miss: missPlace, want: "400 in the query string (an unknown parameter); in a cookie it is no key: a new pet", rule: "no-key", cases: func(n *nearMisser) []Case {
			q := n.t.Requests().CreateReq(n.body, nil)
			q.Target += "?Idempotency-Key=" + url.QueryEscape(n.key)
			return []Case{
				Negative("the kept key in the query string", q),
				{Label: "the kept key in a cookie", Check: "idempotent_replay", Req: n.t.Requests().CreateReq(n.body, http.Header{"Cookie": {"Idempotency-Key=" + n.key}}), Want: NewPetOf(n.pet)},
			}
		}},
		headerNameRow(missCase, "idempotency-key", "the kept answer replayed: a header's name is compared in any case", "replay", true),
		headerNameRow(missPrefix, "Idempotency-Ke", "no key: a new pet", "no-key", false),
		headerNameRow(missExtend, "Idempotency-Keys", "no key: a new pet", "no-key", false),
		headerNameRow(missOne, "Idempotency_Key", "no key: a new pet", "no-key", false),
	}
}

// headerNameRow sends the kept key and request under name, a near miss of
// the header's name: the same header (replay), or another (no key).
func headerNameRow(miss, name, want, rule string, same bool) nearMiss {
	return nearMiss{value: "Idempotency-Key's name", miss: miss, want: want, rule: rule, cases: func(n *nearMisser) []Case {
		o := NewPetOf(n.pet)
		if same {
			o = ReplayOf(n.pet)
		}
		return []Case{{Label: name + ": KEY, the kept request", Check: "idempotent_replay", Req: wireField(n.t.Requests().CreateReq(n.body, nil), name+": "+n.key), Want: o}}
	}}
}

// paramCases are a case of each query parameter of each operation: query
// makes the query from the parameter's name and a valid value of it.
func (n *nearMisser) paramCases(enumOnly bool, make func(op *Operation, name, value string) []Case) []Case {
	var ks []Case
	for _, op := range n.t.Operations() {
		for _, p := range op.Query {
			s := Flat(p.Schema.Value)
			vs := n.t.Valid(p.Schema.Value)
			if len(vs) == 0 || enumOnly && (s == nil || len(s.Enum) == 0) {
				continue
			}
			ks = append(ks, make(op, p.Name, vs[0].Text)...)
		}
	}
	return ks
}

// queried is a valid request to op with query as its query.
func (n *nearMisser) queried(op *Operation, query string) wire.Request {
	req := n.t.Requests().ValidRequest(op, "1")
	req.Target = op.Target(n.t.Requests().PathValues(op, "1"), query)
	return req
}

// queryNameRows come near each query parameter's name.
func queryNameRows() []nearMiss {
	const v = "a query parameter's name"
	unknown := func(miss string, f func(string) string) nearMiss {
		return nearMiss{value: v, miss: miss, want: "400: an unknown parameter", rule: "exact-names", cases: func(n *nearMisser) []Case {
			return n.paramCases(false, func(op *Operation, name, value string) []Case {
				if other := f(name); other != name && other != "" {
					return []Case{Negative(other+"="+value, n.queried(op, other+"="+url.QueryEscape(value)))}
				}
				return nil
			})
		}}
	}
	return []nearMiss{
		unknown(missCase, flipCase),
		unknown(missPrefix, cutLast),
		unknown(missExtend, func(s string) string { return s + "x" }),
		unknown(missOne, changeOne),
		unknown(missSpace, func(s string) string { return "%20" + s }),
		{value: v, miss: missPercent, want: "the parameter itself, once percent-decoded (the model judges the answer)", rule: "exact-names", cases: func(n *nearMisser) []Case {
			return n.paramCases(false, func(op *Operation, name, value string) []Case {
				q := percentFirst(name) + "=" + url.QueryEscape(value)
				return []Case{Positive(q, n.queried(op, q), n.t.AcceptedBy(op))}
			})
		}},
		{value: v, miss: missTwice, want: "400", rule: "query-strict"}, // query-strict's cases
		{value: v, miss: missPlace, want: "served as without it: a header of its name is no parameter (the model judges the answer by the defaults)", rule: "exact-names", cases: func(n *nearMisser) []Case {
			return n.paramCases(false, func(op *Operation, name, value string) []Case {
				return []Case{Positive("a header "+name+": "+value, WithHeader(n.t.Requests().ValidRequest(op, "1"), name, value), n.t.AcceptedBy(op))}
			})
		}},
	}
}

// enumRows come near each enum value a query parameter takes, and each a
// create's member takes.
func enumRows() []nearMiss {
	const v = "an enum value in the query"
	refused := func(miss string, fs ...func(string) string) nearMiss {
		return nearMiss{value: v, miss: miss, want: "400: no value of the enum", rule: "exact-names", cases: func(n *nearMisser) []Case {
			return n.paramCases(true, func(op *Operation, name, value string) []Case {
				var ks []Case
				for _, f := range fs {
					q := name + "=" + f(value)
					ks = append(ks, Negative(q, n.queried(op, q)))
				}
				return ks
			})
		}}
	}
	return append([]nearMiss{
		refused(missCase, flipCase, func(s string) string { return strings.ToUpper(s[:1]) + s[1:] }),
		refused(missPrefix, cutLast),
		refused(missExtend, func(s string) string { return s + "x" }),
		refused(missOne, changeOne),
		refused(missSpace, func(s string) string { return "%20" + s }, func(s string) string { return s + "%09" }),
		{value: v, miss: missPercent, want: "the value itself, once percent-decoded (the model judges the page by it)", rule: "exact-names", cases: func(n *nearMisser) []Case {
			return n.paramCases(true, func(op *Operation, name, value string) []Case {
				q := name + "=" + percentFirst(value)
				return []Case{Positive(q, n.queried(op, q), n.t.AcceptedBy(op))}
			})
		}},
		{value: v, miss: missTwice, want: "400", rule: "query-strict"}, // query-strict's cases
		{value: v, miss: missPlace, want: "served unfiltered: a header is no parameter (the model judges the page)", rule: "exact-names", cases: func(n *nearMisser) []Case {
			return n.paramCases(true, func(op *Operation, name, value string) []Case {
				return []Case{Positive("a header "+name+": "+value, WithHeader(n.t.Requests().ValidRequest(op, "1"), name, value), n.t.AcceptedBy(op))}
			})
		}},
	}, bodyEnumRows()...)
}

// memberCases are a case of each enum member of a create: make makes the
// body's JSON text from the member's name and its first value.
func (n *nearMisser) memberCases(make func(name, value string) []Case) []Case {
	op := n.t.Requests().Roles.Create
	if op == nil {
		return nil
	}
	var ks []Case
	for _, name := range sortedKeys(op.Body.Properties) {
		if s := Flat(op.Body.Properties[name].Value); s != nil && IsType(s, "string") && len(s.Enum) > 0 {
			ks = append(ks, make(name, fmt.Sprint(s.Enum[0]))...)
		}
	}
	return ks
}

// withMember is a create body of a new pet with the JSON text member: value
// as the member name's value, written as it is.
func (n *nearMisser) withMember(name, raw string) []byte {
	body := MustJSON(With(n.t.Requests().NewPet("conform-near", nil), name, Absent))
	return fmt.Appendf(body[:len(body)-1:len(body)-1], ",%q:%s}", name, raw)
}

// bodyEnumRows come near each enum value a create's member takes.
func bodyEnumRows() []nearMiss {
	const v = "an enum value in a body"
	refused := func(miss, want, rule string, fs ...func(string) string) nearMiss {
		return nearMiss{value: v, miss: miss, want: want, rule: rule, cases: func(n *nearMisser) []Case {
			return n.memberCases(func(name, value string) []Case {
				var ks []Case
				for _, f := range fs {
					raw := f(value)
					ks = append(ks, Negative(name+": "+raw, n.t.Requests().CreateReq(n.withMember(name, raw), nil)))
				}
				return ks
			})
		}}
	}
	quote := func(f func(string) string) func(string) string {
		return func(s string) string { return strconv.Quote(f(s)) }
	}
	return []nearMiss{
		refused(missCase, "400: no value of the enum", "", quote(flipCase)),
		refused(missPrefix, "400: no value of the enum", "", quote(cutLast)),
		refused(missExtend, "400: no value of the enum", "", quote(func(s string) string { return s + "x" })),
		refused(missOne, "400: no value of the enum", "", quote(changeOne)),
		refused(missSpace, "400: no value of the enum", "", quote(func(s string) string { return " " + s }), quote(func(s string) string { return s + "\t" })),
		refused(missPercent, "400: a body is not percent-decoded", "", quote(percentFirst)),
		{value: v, miss: missPercent + " as a JSON escape", want: "201, the value itself: an escape is the character (stored as sent, the model judges)", rule: "json-object", cases: func(n *nearMisser) []Case {
			return n.memberCases(func(name, value string) []Case {
				raw := `"` + fmt.Sprintf(`\u%04x`, value[0]) + value[1:] + `"`
				return []Case{Positive(name+": "+raw, n.t.Requests().CreateReq(n.withMember(name, raw), nil), Created())}
			})
		}},
		{value: v, miss: missTwice, want: "400: a duplicate member", rule: "json-object", cases: func(n *nearMisser) []Case {
			return n.memberCases(func(name, value string) []Case {
				raw := fmt.Sprintf("%q,%q:%q", value, name, value)
				return []Case{Negative(name+" twice", n.t.Requests().CreateReq(n.withMember(name, raw), nil))}
			})
		}},
		{value: v, miss: missPlace, want: "400: in the create's query string it is an unknown parameter", rule: "query-strict", cases: func(n *nearMisser) []Case {
			return n.memberCases(func(name, value string) []Case {
				req := n.t.Requests().CreateReq(MustJSON(n.t.Requests().NewPet("conform-near", nil)), nil)
				req.Target += "?" + name + "=" + url.QueryEscape(value)
				return []Case{Negative(name+" in the query string", req)}
			})
		}},
	}
}

// contentTyped is a create of a new pet with the Content-Type values.
func (n *nearMisser) contentTyped(values ...string) wire.Request {
	req := n.t.Requests().CreateReq(MustJSON(n.t.Requests().NewPet("conform-near", nil)), nil)
	req.Header = CloneWith(req.Header, "Content-Type", values...)
	return req
}

// mediaTypeRows come near the media type a create's Content-Type names,
// and the one Accept admits, and their charset.
func mediaTypeRows() []nearMiss {
	const ct, acc = "Content-Type", "Accept"
	refusedCT := func(miss string, values ...string) nearMiss {
		return nearMiss{value: ct, miss: miss, want: "400: not application/json with at most a utf-8 charset", rule: "content-type", cases: func(n *nearMisser) []Case {
			var ks []Case
			for _, v := range values {
				ks = append(ks, Negative("Content-Type: "+v, n.contentTyped(v)))
			}
			return ks
		}}
	}
	notAcceptableRow := func(miss string, values ...string) nearMiss {
		return nearMiss{value: acc, miss: miss, want: "406: admits no application/json", rule: "accept", cases: func(n *nearMisser) []Case {
			req, _ := n.listReq()
			var ks []Case
			for _, v := range values {
				ks = append(ks, NotAcceptable("Accept: "+v, WithHeader(req, "Accept", v)))
			}
			return ks
		}}
	}
	return []nearMiss{
		{value: ct, miss: missCase, want: "201: a media type and its parameter's name in any case", rule: "content-type", cases: func(n *nearMisser) []Case {
			return []Case{Positive("Content-Type: Application/Json; CHARSET=UTF-8", n.contentTyped("Application/Json; CHARSET=UTF-8"), Created())}
		}},
		refusedCT(missPrefix, "application/jso", "application/json; charset=utf-"),
		refusedCT(missExtend, "application/jsonx", "application/json; charset=utf-8x"),
		refusedCT(missOne, "application/jsom", "applicatiom/json", "application/json; charset=utf-9"),
		{value: ct, miss: missSpace, want: "201 with white space around the value and before a parameter (RFC 9110); 400 inside the media type", rule: "content-type", cases: func(n *nearMisser) []Case {
			raw := n.contentTyped()
			raw.Header.Del("Content-Type")
			return []Case{
				Positive("Content-Type:   application/json  ", wireField(raw, "Content-Type:   application/json  "), Created()),
				Positive("Content-Type: application/json ; charset=utf-8", n.contentTyped("application/json ; charset=utf-8"), Created()),
				Negative("Content-Type: application / json", n.contentTyped("application / json")),
			}
		}},
		refusedCT(missPercent, "application%2Fjson", "application/json; charset=utf%2D8"),
		{value: ct, miss: missTwice, want: "400", rule: "content-type"}, // content-type's cases
		{value: ct, miss: missPlace, want: "400: in the query string it is an unknown parameter, and the body has no Content-Type", rule: "content-type", cases: func(n *nearMisser) []Case {
			req := n.contentTyped()
			req.Header.Del("Content-Type")
			req.Target += "?Content-Type=" + url.QueryEscape("application/json")
			return []Case{Negative("Content-Type in the query string", req)}
		}},
		{value: acc, miss: missCase, want: "served in any case; q=0 in any case admits nothing (406)", rule: "accept", cases: func(n *nearMisser) []Case {
			req, op := n.listReq()
			return []Case{
				Positive("Accept: APPLICATION/JSON", WithHeader(req, "Accept", "APPLICATION/JSON"), n.t.AcceptedBy(op)),
				NotAcceptable("Accept: application/json;Q=0", WithHeader(req, "Accept", "application/json;Q=0")),
			}
		}},
		notAcceptableRow(missPrefix, "application/jso"),
		notAcceptableRow(missExtend, "application/jsonx"),
		notAcceptableRow(missOne, "application/jsom", "application/json; charset=utf-9"),
		{value: acc, miss: missSpace, want: "served: white space around the value and before a parameter (RFC 9110)", rule: "accept", cases: func(n *nearMisser) []Case {
			req, op := n.listReq()
			return []Case{
				Positive("Accept:   application/json  ", wireField(req, "Accept:   application/json  "), n.t.AcceptedBy(op)),
				Positive("Accept: application/json ; q=0.5", WithHeader(req, "Accept", "application/json ; q=0.5"), n.t.AcceptedBy(op)),
			}
		}},
		{value: acc, miss: missPercent, want: "400: does not parse as a media range", rule: "accept-syntax", last: true, cases: func(n *nearMisser) []Case {
			req, _ := n.listReq()
			return []Case{Negative("Accept: application%2Fjson", WithHeader(req, "Accept", "application%2Fjson"))}
		}},
		{value: acc, miss: missTwice, want: "served: two Accept lines are one list", rule: "accept"}, // accept's cases
		{value: acc, miss: missPlace, want: "400: in the query string it is an unknown parameter", rule: "query-strict", cases: func(n *nearMisser) []Case {
			_, op := n.listReq()
			return []Case{Negative("Accept in the query string", n.queried(op, "Accept="+url.QueryEscape("application/json")))}
		}},
	}
}

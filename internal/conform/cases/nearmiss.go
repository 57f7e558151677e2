package cases

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode"

	"github.com/petstore/petstore/internal/conform/judge"
	"github.com/petstore/petstore/internal/conform/wire"
)

// The catalogue of near misses: every value the server compares or looks
// up (the API key, the Idempotency-Key and the header's name, each query
// parameter's name, each enum value, each media type and its parameters)
// is sent not only valid and as a stranger, but as its near misses:
// another case, a prefix, the value extended, one character changed, white
// space around it, percent-encoded, sent twice, and sent in another place.
// Each row says what the contract requires of the answer, and the sentence
// (x-rules name) it rests on: from the spec, never from what a server
// does. A near miss that names the same value (a header's name in another
// case, a query name percent-encoded, white space around a header's value,
// which HTTP strips) must be taken as the value; one that names another
// value must be taken as that other value (an unknown parameter, another
// Idempotency-Key, no key at all), never as the one it resembles.
// docs/conformance-kit.md lists the catalogue (TestNearMissTableInDocs).

// A nearMiss is a row of the catalogue: the value, how the near miss
// differs from it, what the contract requires, the sentence that says so,
// and the cases that send it (none: another sentence's cases send it, as
// the words say). A row marked last is sent with the malformed requests,
// after every other phase.
type nearMiss struct {
	value string
	miss  string
	want  string
	rule  string
	cases func(n *nearMisser) []Case
	last  bool
}

// nearMisser is what the rows' cases need: the run (a T), and the outcome of one
// kept Idempotency-Key (its key, its body and its pet) the rows on keys
// come near.
type nearMisser struct {
	t    T
	key  string
	body []byte
	pet  int64
}

// The near misses, in the order of the catalogue's columns.
const (
	missCase    = "another case"
	missPrefix  = "a prefix"
	missExtend  = "extended"
	missOne     = "one character changed"
	missSpace   = "white space around"
	missPercent = "percent-encoded"
	missTwice   = "sent twice"
	missPlace   = "in another place"
)

// flipCase is s with each letter's case changed.
func flipCase(s string) string {
	return strings.Map(func(c rune) rune {
		if unicode.IsUpper(c) {
			return unicode.ToLower(c)
		}
		return unicode.ToUpper(c)
	}, s)
}

// flipFirst is s with its first letter's case changed.
func flipFirst(s string) string {
	for i, c := range s {
		if unicode.IsLetter(c) && c < 0x80 {
			return s[:i] + flipCase(string(c)) + s[i+1:]
		}
	}
	return s
}

// cutLast is s without its last byte (the values are ASCII).
func cutLast(s string) string { return s[:len(s)-1] }

// changeOne is s with one character changed for another of its kind, at
// its middle letter or digit.
func changeOne(s string) string { out, _ := changeOneAt(s); return out }

// changeOneAt is changeOne, and the index of the character changed (-1:
// none, s extended instead).
func changeOneAt(s string) (string, int) {
	b := []byte(s)
	for i := len(b) / 2; i < len(b)+len(b)/2; i++ {
		j := i % len(b)
		switch c := b[j]; {
		case c >= 'a' && c <= 'y', c >= 'A' && c <= 'Y', c >= '0' && c <= '8':
			b[j]++
			return string(b), j
		case c == 'z', c == 'Z', c == '9':
			b[j]--
			return string(b), j
		}
	}
	return s + "x", -1
}

// percentFirst is s with its first ASCII letter percent-encoded.
func percentFirst(s string) string { out, _ := percentAt(s); return out }

// percentAt is percentFirst, and the index of the letter encoded (-1: none).
func percentAt(s string) (string, int) {
	for i, c := range s {
		if unicode.IsLetter(c) && c < 0x80 {
			return s[:i] + fmt.Sprintf("%%%02X", c) + s[i+1:], i
		}
	}
	return s, -1
}

// A keyMiss is a near miss of the run's key, and the shell expression that
// makes it from $PETSTORE_KEY: a curl line never shows the key, nor most
// of it.
type keyMiss struct{ key, shell string }

// keyMisses are the near misses of key by the catalogue's names.
func keyMisses(key string) map[string]keyMiss {
	const v = "PETSTORE_KEY"
	out := map[string]keyMiss{
		missCase:   {flipCase(key), `$(printf %s "$` + v + `" | tr a-zA-Z A-Za-z)`},
		missPrefix: {cutLast(key), fmt.Sprintf("${%s:0:%d}", v, len(key)-1)},
		missExtend: {key + "x", "${" + v + "}x"},
	}
	if k, i := changeOneAt(key); i >= 0 {
		out[missOne] = keyMiss{k, fmt.Sprintf("${%s:0:%d}%c${%s:%d}", v, i, k[i], v, i+1)}
	}
	if k, i := percentAt(key); i >= 0 {
		out[missPercent] = keyMiss{k, fmt.Sprintf("${%s:0:%d}%s${%s:%d}", v, i, k[i:i+3], v, i+1)}
	}
	return out
}

// NearMissCases sends the rows of the catalogue whose sentence the spec
// states (a sentence it does not state is named incomplete by the
// sentences' phase): last says which, the ones sent last or the others.
func NearMissCases(ctx context.Context, t T, last bool) error {
	n := &nearMisser{t: t}
	if !last && t.Requests().Roles.Create != nil && t.Stated("key-exact") {
		if err := n.keep(ctx); err != nil {
			return err
		}
	}
	for _, row := range nearMisses {
		if row.cases == nil || row.last != last || row.rule != "" && !t.Stated(row.rule) {
			continue
		}
		if strings.HasPrefix(row.value, "Idempotency-Key") && n.pet == 0 {
			continue // no kept outcome to come near
		}
		for i, k := range row.cases(n) {
			k.Label = fmt.Sprintf("%s, %s (%d): %s", row.value, row.miss, i+1, k.Label)
			if err := Send(ctx, t, []Case{k}); err != nil {
				return err
			}
		}
	}
	return nil
}

// keep creates the pet whose Idempotency-Key the rows on keys come near.
func (n *nearMisser) keep(ctx context.Context) error {
	n.key = n.t.Name("conform-near")
	n.body = MustJSON(n.t.Requests().NewPet("conform-near", nil))
	x, id, ok, err := n.t.Post(ctx, n.body, KeyHeader(n.key), 1)
	if err != nil {
		return err
	}
	n.t.Expect("idempotent_replay", x, ok, "201 for a create with an Idempotency-Key")
	if ok {
		n.pet = id
	}
	return nil
}

// listReq is a valid request to the listing (or the first operation that
// takes no parameter).
func (n *nearMisser) listReq() (wire.Request, *Operation) {
	op := n.t.Requests().Roles.List
	if op == nil {
		op = n.t.Operations()[0]
	}
	return n.t.Requests().ValidRequest(op, "1"), op
}

// wireField is req with the header line field written as it is (after the
// request's own), on a connection of the kit's: what no HTTP client writes
// (white space around a value, a name in another case).
func wireField(req wire.Request, field string) wire.Request {
	if strings.HasPrefix(strings.ToLower(field), "authorization:") {
		req.NoKey = true
	}
	req.Raw = &wire.Raw{Fields: []string{field}}
	return req
}

// unauthorized is the answer to a request whose key is not the key: 401.
func unauthorizedCase(label string, req wire.Request) Case {
	return Case{Label: label, Check: "ignored_auth", Req: req, Want: Refused(http.StatusUnauthorized, "unauthorized")}
}

// withKey is req with Authorization: Bearer key.
func withKey(req wire.Request, key string) wire.Request {
	return WithHeader(req, "Authorization", "Bearer "+key)
}

// keyRows are the near misses of the API key, on the listing.
func keyRows() []nearMiss {
	strange := func(miss, want string) nearMiss {
		return nearMiss{value: "API key", miss: miss, want: want, rule: "key-exact-auth", cases: func(n *nearMisser) []Case {
			req, _ := n.listReq()
			m, ok := keyMisses(n.t.Key())[miss]
			if !ok || m.key == n.t.Key() {
				return nil
			}
			n.t.NearKey(m.key, m.shell)
			return []Case{unauthorizedCase("Bearer "+m.shell, withKey(req, m.key))}
		}}
	}
	return []nearMiss{
		strange(missCase, "401: another key"),
		strange(missPrefix, "401: another key"),
		strange(missExtend, "401: another key"),
		strange(missOne, "401: another key"),
		{value: "API key", miss: missSpace, want: "served: a field's value has no white space around it, and one space or more may follow the scheme (RFC 9110)", rule: "bearer", cases: func(n *nearMisser) []Case {
			req, op := n.listReq()
			return []Case{
				Positive("Authorization:  Bearer  KEY  ", wireField(req, "Authorization:  Bearer  "+n.t.Key()+"  "), n.t.AcceptedBy(op)),
			}
		}},
		strange(missPercent, "401: a header's value is not percent-decoded"),
		{value: "API key", miss: missTwice, want: "401 or 400, never served: Authorization is one field", rule: "bearer", cases: func(n *nearMisser) []Case {
			req, _ := n.listReq()
			req = WithHeader(req, "Authorization", "Bearer "+n.t.Key(), "Bearer "+n.t.Key())
			return []Case{{Label: "two Authorization headers, the key in each", Check: "ignored_auth", Req: req, Want: judge.Outcome{Status: []int{http.StatusUnauthorized, http.StatusBadRequest}}}}
		}},
		{value: "API key", miss: missPlace, want: "401: a key in the query string, a cookie or another header authenticates nothing", rule: "key-exact-auth", cases: func(n *nearMisser) []Case {
			req, op := n.listReq()
			req.NoKey = true
			q := req
			q.Target = op.Target(n.t.Requests().PathValues(op, "1"), "access_token="+url.QueryEscape(n.t.Key()))
			return []Case{
				unauthorizedCase("the key in the query string", q),
				unauthorizedCase("the key in a cookie", WithHeader(req, "Cookie", "access_token="+n.t.Key())),
				unauthorizedCase("the key in X-API-Key", WithHeader(req, "X-API-Key", n.t.Key())),
				unauthorizedCase("the key without its scheme", WithHeader(req, "Authorization", n.t.Key())),
			}
		}},
	}
}

// NearMisses is the catalogue of near misses, a row each: the value, the
// near miss, the answer the contract requires, and the sentence it rests
// on ("" for the value's schema itself). docs/conformance-kit.md lists it.
func NearMisses() [][4]string {
	var out [][4]string
	for _, row := range nearMisses {
		out = append(out, [4]string{row.value, row.miss, row.want, row.rule})
	}
	return out
}

// nearMisses is the catalogue.
var nearMisses = concatRows(keyRows(), idempotencyKeyRows(), queryNameRows(), enumRows(), mediaTypeRows())

func concatRows(rows ...[]nearMiss) []nearMiss {
	var out []nearMiss
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}

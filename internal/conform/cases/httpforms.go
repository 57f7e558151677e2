package cases

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/conform/judge"
	"github.com/petstore/petstore/internal/conform/wire"
)

// The request forms of HTTP/1.1 the contract takes, and the integer
// spellings it refuses: a request-target in absolute form is taken as its
// origin form (RFC 9112 section 3.2.2); an integer parameter with white
// space or a tab around its digits, or digits of another script, is
// refused.

// AbsoluteForm: a listing, a get and a create whose request-target
// is in absolute form, naming the target's own host, are served as their
// origin form; the scheme is case-insensitive (RFC 3986).
func AbsoluteForm(t T) []Case {
	reqs, scheme := t.Requests(), t.Scheme()
	var ks []Case
	absolute := func(label string, req wire.Request, scheme string, want judge.Outcome) {
		req.Raw = &wire.Raw{Scheme: scheme}
		ks = append(ks, Case{Label: "absolute form (" + scheme + "://host…): " + label, Check: "http_framing", Req: req, Want: want})
	}
	if op := reqs.Roles.List; op != nil {
		absolute("the listing", wire.Request{Method: op.Method, Target: op.Target(nil, "limit=1")}, scheme, Accepted())
		absolute("the listing", wire.Request{Method: op.Method, Target: op.Path}, strings.ToUpper(scheme), Accepted())
	}
	if op, id := reqs.Roles.Get, t.FirstID(); op != nil && id > 0 {
		absolute("a pet that exists", wire.Request{Method: op.Method, Target: reqs.GetTarget(id)}, scheme, judge.Outcome{Status: []int{200}})
	}
	if op := reqs.Roles.Create; op != nil {
		absolute("a create", reqs.CreateReq(MustJSON(reqs.NewPet("conform-absolute", nil)), nil), scheme, Created())
	}
	return ks
}

// integerSpellings are an integer's spellings the contract refuses:
// white space and a tab around the digits, and digits of other scripts,
// percent-encoded as a query or a path carries them.
var integerSpellings = []struct{ label, text string }{
	{"a space before", "%20N"},
	{"a space after", "N%20"},
	{"a tab before", "%09N"},
	{"a tab after", "N%09"},
	{"Arabic-Indic digits", "arabic"},
	{"fullwidth digits", "fullwidth"},
}

// otherScript writes n's digits in the script: ١٢ (U+0661…), １２ (U+FF11…),
// percent-encoded.
func otherScript(n, script string) string {
	base := map[string]rune{"arabic": 0x0660, "fullwidth": 0xFF10}[script]
	var b []rune
	for _, c := range n {
		b = append(b, base+c-'0')
	}
	return url.PathEscape(string(b))
}

// IntegerSpellings: each integer parameter, spelt each way of
// integerSpellings, refused 400.
func IntegerSpellings(t T) []Case {
	reqs := t.Requests()
	var ks []Case
	for _, op := range t.Operations() {
		for _, p := range append(slices.Clone(op.InPath), op.Query...) {
			s := Flat(p.Schema.Value)
			if s == nil || !IsType(s, "integer") {
				continue
			}
			lo, _ := IntBounds(s)
			n := strconv.FormatInt(max(lo.Int64(), 1), 10)
			for _, sp := range integerSpellings {
				text := sp.text
				switch text {
				case "arabic", "fullwidth":
					text = otherScript(n, text)
				default:
					text = strings.Replace(text, "N", n, 1)
				}
				req := reqs.ValidRequest(op, "1")
				if p.In == openapi3.ParameterInPath {
					req.Target = replaceParam(op.Path, p.Name, text)
				} else {
					req.Target = op.Target(reqs.PathValues(op, "1"), url.QueryEscape(p.Name)+"="+text)
				}
				ks = append(ks, Negative(fmt.Sprintf("%s %s: %s", p.In, p.Name, sp.label), req))
			}
		}
	}
	return ks
}

// replaceParam fills path's parameter name with text as it is (already
// percent-encoded), and any other parameter with 1.
func replaceParam(path, name, text string) string {
	out := path
	for {
		i := strings.IndexByte(out, '{')
		if i < 0 {
			return out
		}
		j := i + strings.IndexByte(out[i:], '}')
		v := "1"
		if out[i+1:j] == name {
			v = text
		}
		out = out[:i] + v + out[j+1:]
	}
}

// Positive is a case of a request the contract accepts, wanting want.
func Positive(label string, req wire.Request, want judge.Outcome) Case {
	return Case{Label: label, Check: "positive_data_acceptance", Req: req, Want: want}
}

// AuthFirst is req without a key: invalid and unauthenticated, it is
// answered 401, authentication decided first.
func AuthFirst(label string, req wire.Request) Case {
	req.NoKey = true
	return Case{Label: "no key, and " + label, Check: "auth_before_validation", Req: req, Want: Refused(http.StatusUnauthorized, "unauthorized")}
}

// Negative is a case of a request the contract refuses for its form: 400
// invalid_request.
func Negative(label string, req wire.Request) Case {
	return Case{Label: label, Check: "negative_data_rejection", Req: req, Want: Refused(400, "invalid_request")}
}

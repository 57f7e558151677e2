// Package transform holds legal transformations of a server's answers: each
// one another form of the same answer that the contract and HTTP allow (its
// members in another order, escaped, with white space, a member of the
// server's own; its headers' names in another case; its body chunked; the
// connection closed after it). The conformance kit must fail a correct
// server under none of them (issue 59: held out, not written for the kit).
package transform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"
	"unicode/utf16"
)

// Names are the transformations, in the order they are applied when
// several are ("all": every one).
var Names = []string{"order", "escapes", "space", "member", "case", "chunked", "close"}

// Wrap returns h with the transformations named (comma-separated, or
// "all") applied to every answer.
func Wrap(names string, h http.Handler) (http.Handler, error) {
	on := map[string]bool{}
	for _, n := range strings.Split(names, ",") {
		switch {
		case n == "all":
			for _, m := range Names {
				on[m] = true
			}
		case strings.Contains(","+strings.Join(Names, ",")+",", ","+n+","):
			on[n] = true
		default:
			return nil, fmt.Errorf("transform: no transformation %q (%s, all)", n, strings.Join(Names, ", "))
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") && len(bytes.TrimSpace(body)) > 0 {
			if b, err := rewrite(body, on); err == nil {
				body = b
			}
		}
		write(w, rec, body, on)
	}), nil
}

// write sends the answer: its headers (their names in lower case with
// "case"), its body in pieces of a few bytes ("chunked"), and Connection:
// close ("close").
func write(w http.ResponseWriter, rec *httptest.ResponseRecorder, body []byte, on map[string]bool) {
	out := w.Header()
	for k, v := range rec.Header() {
		switch {
		case k == "Content-Length":
			if !on["chunked"] {
				out.Set(k, fmt.Sprint(len(body)))
			}
		case on["case"] && k != "Connection":
			out[strings.ToLower(k)] = v
		default:
			out[k] = v
		}
	}
	if on["case"] { // net/http adds these under their canonical names unless told not to
		out["Content-Type"], out["Date"] = nil, nil
		out["date"] = []string{time.Now().UTC().Format(http.TimeFormat)}
	}
	if on["close"] {
		out.Set("Connection", "close")
	}
	w.WriteHeader(rec.Code)
	if !on["chunked"] {
		w.Write(body)
		return
	}
	f, _ := w.(http.Flusher)
	for len(body) > 0 {
		n := min(len(body), 7)
		w.Write(body[:n])
		if f != nil {
			f.Flush()
		}
		body = body[n:]
	}
}

// node is a JSON value with its objects' members in order.
type node struct {
	members []member // an object's
	items   []node   // an array's
	kind    byte     // '{', '[', or 0 for a scalar
	scalar  any      // string, json.Number, bool or nil
}

type member struct {
	name  string
	value node
}

func rewrite(body []byte, on map[string]bool) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	n, err := parse(dec)
	if err != nil {
		return nil, err
	}
	if on["member"] { // responses are open: the top object, each item of a top array
		n = withOwn(n)
	}
	var b bytes.Buffer
	e := encoder{b: &b, on: on}
	if on["space"] {
		b.WriteString("\n \t")
	}
	e.node(n, 0)
	if on["space"] {
		b.WriteString(" \r\n\n")
	} else {
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

func withOwn(n node) node {
	own := member{"servedBy", node{scalar: "a transformed server"}}
	switch n.kind {
	case '{':
		n.members = append(n.members, own)
	case '[':
		for i := range n.items {
			if n.items[i].kind == '{' {
				n.items[i].members = append(n.items[i].members, own)
			}
		}
	}
	return n
}

func parse(dec *json.Decoder) (node, error) {
	tok, err := dec.Token()
	if err != nil {
		return node{}, err
	}
	switch tok {
	case json.Delim('{'):
		n := node{kind: '{'}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return node{}, err
			}
			v, err := parse(dec)
			if err != nil {
				return node{}, err
			}
			n.members = append(n.members, member{k.(string), v})
		}
		_, err := dec.Token()
		return n, err
	case json.Delim('['):
		n := node{kind: '['}
		for dec.More() {
			v, err := parse(dec)
			if err != nil {
				return node{}, err
			}
			n.items = append(n.items, v)
		}
		_, err := dec.Token()
		return n, err
	}
	return node{scalar: tok}, nil
}

// encoder writes a node: its members in reverse ("order"), every string
// escaped as far as JSON allows ("escapes"), indented ("space").
type encoder struct {
	b  *bytes.Buffer
	on map[string]bool
}

func (e encoder) node(n node, depth int) {
	switch n.kind {
	case '{':
		e.b.WriteByte('{')
		for i := range n.members {
			m := n.members[i]
			if e.on["order"] {
				m = n.members[len(n.members)-1-i]
			}
			e.sep(i, depth+1)
			e.str(m.name)
			e.b.WriteByte(':')
			if e.on["space"] {
				e.b.WriteString(" ")
			}
			e.node(m.value, depth+1)
		}
		e.end(len(n.members), depth, '}')
	case '[':
		e.b.WriteByte('[')
		for i, it := range n.items {
			e.sep(i, depth+1)
			e.node(it, depth+1)
		}
		e.end(len(n.items), depth, ']')
	default:
		if s, ok := n.scalar.(string); ok {
			e.str(s)
			return
		}
		b, _ := json.Marshal(n.scalar)
		e.b.Write(b)
	}
}

func (e encoder) sep(i, depth int) {
	if i > 0 {
		e.b.WriteByte(',')
	}
	if e.on["space"] {
		e.b.WriteString("\n" + strings.Repeat("  ", depth))
	}
}

func (e encoder) end(n, depth int, c byte) {
	if e.on["space"] && n > 0 {
		e.b.WriteString("\n" + strings.Repeat("  ", depth))
	}
	e.b.WriteByte(c)
}

// str writes s as a JSON string; with "escapes", every character but
// digits as an escape: \uXXXX (a surrogate pair outside the BMP), and
// the short forms \/ and \" \\ where JSON has them.
func (e encoder) str(s string) {
	if !e.on["escapes"] {
		b, _ := json.Marshal(s)
		e.b.Write(b)
		return
	}
	e.b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '/':
			e.b.WriteString(`\/`)
		case r == '"' || r == '\\':
			e.b.WriteString(`\` + string(r))
		case r >= '0' && r <= '9':
			e.b.WriteRune(r)
		case r > 0xFFFF:
			a, b := utf16.EncodeRune(r)
			fmt.Fprintf(e.b, `\u%04X\u%04x`, a, b)
		default:
			fmt.Fprintf(e.b, `\u%04x`, r)
		}
	}
	e.b.WriteByte('"')
}

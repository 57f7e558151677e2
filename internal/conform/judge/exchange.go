// Package judge is what the conformance kit holds an answer to, whichever
// case drew it: the exchange as the judge knows it (the operation the
// contract routes it to, its tenant, where its judgments go, its op in the
// history), the scope that collects those judgments, and the outcome a
// case wants of its own answer. The rules on every answer of a kind and
// the checker's model (internal/check) are fed from the runner
// (internal/conform: rules.go, history.go) through these types.
package judge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/petstore/petstore/internal/conform/wire"
	"github.com/petstore/petstore/internal/history"
)

// Exchange is one request the kit sent and what came back, and what the
// judge knows of it.
type Exchange struct {
	*wire.Exchange
	Op     string      // the operation the contract routes the request to, or NoOperation
	Tenant int         // 1 for -key, 2 for -key2, 0 for no key of the kit's
	In     *Scope      // where its judgments go
	Hop    *history.Op // its op in the history
	// Retried counts the earlier attempts of this request answered 503
	// outcome_unknown, which the kit sent again with the same
	// Idempotency-Key to learn the outcome: a replay is then the
	// request's own answer.
	Retried int
	// Page are the ids of a listing's 200, in order, as the history read
	// them (PageRead: it read as pets).
	Page     []int64
	PageRead bool
}

// CreatedID is the id of the pet a 201 to a create names, as the history
// read it (Hop): a case drives on with it (the pet to read, the key's pet),
// and judges nothing of it; the checker judges the answer.
func (x *Exchange) CreatedID() (int64, bool) {
	if x.Status != http.StatusCreated || x.Hop == nil || x.Hop.Got == nil {
		return 0, false
	}
	return x.Hop.GotID, true
}

// ListedIDs are the ids of a page of the listing, as the history read them:
// a walk follows them; the checker judges the page.
func (x *Exchange) ListedIDs() ([]int64, bool) { return x.Page, x.PageRead }

// NoOperation is the Op of a request the contract routes to none.
const NoOperation = "(no operation)"

// Describe says what came back, briefly: at most 300 bytes of the body,
// cut on a character boundary, invalid UTF-8 replaced by U+FFFD.
func Describe(x *Exchange) string {
	body := strings.ToValidUTF8(string(x.Body), "\uFFFD")
	if len(body) > 300 {
		cut := 300
		for !utf8.RuneStart(body[cut]) {
			cut--
		}
		body = body[:cut] + "…"
	}
	return fmt.Sprintf("%d %s", x.Status, body)
}

// Unimplemented reports whether x is one of the two 5xx the contract
// gives, as RFC 9112 asks, for what the server does not implement: 501 to
// a Transfer-Encoding other than chunked, 505 to a protocol version other
// than HTTP/1.x.
func Unimplemented(x *Exchange) bool {
	switch x.Status {
	case http.StatusNotImplemented:
		te := x.Req.Header.Values("Transfer-Encoding")
		return len(te) > 0 && !slices.Equal(te, []string{"chunked"})
	case http.StatusHTTPVersionNotSupported:
		return x.Raw != nil && x.Raw.Proto != "" && !strings.HasPrefix(x.Raw.Proto, "HTTP/1.")
	}
	return false
}

// PetID is the id of body, a pet.
func PetID(body []byte) (int64, bool) {
	pet, ok := DecodeObject(body)
	if !ok {
		return 0, false
	}
	n, ok := pet["id"].(json.Number)
	if !ok {
		return 0, false
	}
	id, err := n.Int64()
	return id, err == nil
}

// DecodeObject decodes one JSON object, its numbers exact.
func DecodeObject(b []byte) (map[string]any, bool) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

// AllowsOrigin wants Access-Control-Allow-Origin: *, alone.
func AllowsOrigin(x *Exchange) string {
	if v := x.Header.Values("Access-Control-Allow-Origin"); len(v) != 1 || v[0] != "*" {
		return "with Access-Control-Allow-Origin: * (an Origin was sent)"
	}
	return ""
}

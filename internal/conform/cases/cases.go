// Package cases is what the conformance kit sends: a case is a request and
// the answer the contract wants of it (a judge.Outcome), of one check. The
// runner (internal/conform) derives the cases from the spec and sends
// them through a T, the narrow view of it a case needs, as testing.T is a
// test's: send a request, judge its answer, say what it wanted.
// docs/conformance-kit.md ("Where things are") says what is here yet and
// what is still in the runner.
package cases

import (
	"context"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/petstore/petstore/internal/conform/judge"
	"github.com/petstore/petstore/internal/conform/wire"
	"github.com/petstore/petstore/internal/schemagen"
)

// Case is one request the kit sends to hold the target to a sentence of
// the contract, and what the contract wants of its answer.
type Case struct {
	Label string
	Check string
	Req   wire.Request
	Want  judge.Outcome
}

// Accepted wants any 2xx.
func Accepted() judge.Outcome { return judge.Outcome{} }

// Created wants a 201.
func Created() judge.Outcome { return judge.Outcome{Status: []int{http.StatusCreated}} }

// Refused wants status, an Error with code.
func Refused(status int, code string) judge.Outcome {
	return judge.Outcome{Status: []int{status}, Code: code}
}

// Found is a valid get: 2xx, or 404 for an id that names no pet.
func Found() judge.Outcome {
	return judge.Outcome{Status: []int{http.StatusOK, http.StatusNotFound}}
}

// T is the runner as a case sees it.
type T interface {
	// Send sends req and returns what came back, already judged by every
	// check that holds for every answer (judge.Answer, the checker).
	Send(ctx context.Context, req wire.Request) (*judge.Exchange, error)
	// Expect records a case of check: x, the answer, must satisfy ok,
	// want saying what it wanted otherwise.
	Expect(check string, x *judge.Exchange, ok bool, want string)
	// Enabled reports whether the run judges check.
	Enabled(check string) bool
	// JudgesEvery reports whether a check that judges every answer runs:
	// then every case is worth sending.
	JudgesEvery() bool
	// Skip notes what the run does not judge (a check, or "sentence NAME"),
	// and why: the report lists it under Skipped.
	Skip(what, reason string)
	// Incomplete notes a gap of the run, what it cannot judge of check ("":
	// of the run as a whole), and why: the run cannot pass.
	Incomplete(check, what, reason string)
	// DeferUnsafe keeps back, for the end of the run, the cases that may
	// change pets other cases rely on, and returns the others.
	DeferUnsafe(ks []Case) []Case

	// What the generators of cases ask of the run beyond sending:

	// Stated reports whether the spec being checked states the sentence
	// (or answer rule) named name in its x-rules, where the kit's table of
	// sentences says: the cases of a sentence not stated are not sent.
	Stated(name string) bool
	// Name is a pet name (or an Idempotency-Key) no other request of the
	// run, nor of any other run, uses.
	Name(prefix string) string
	// Requests builds the requests of the cases (the roles, the values).
	Requests() Requests
	// Key is the API key the run authenticates with.
	Key() string
	// Bounds are the limits the spec being checked sets.
	Bounds() Bounds
	// Operations are the spec's operations.
	Operations() []*Operation
	// Scheme is the scheme of the target's base URL (http or https).
	Scheme() string
	// FirstID is the id of the run's first pet, or 0 before it.
	FirstID() int64
	// Valid are values schema s accepts, drawn from the run's seed.
	Valid(s *openapi3.Schema) []Value
	// Post creates body (with header's fields) as tenant (1 the run's key,
	// 2 the second) and returns the exchange and the id of the created pet,
	// ok only for a 201 with an id.
	Post(ctx context.Context, body []byte, header http.Header, tenant int) (x *judge.Exchange, id int64, ok bool, err error)
	// Defaults are the defaults of the created resource's members, as
	// canonical JSON.
	Defaults() map[string]string
	// NameMember is the member of the created resource the kit names: the
	// first required string without an enum.
	NameMember() string
	// Gen is a generator of values that takes its choices from the run's
	// seed.
	Gen() *schemagen.Generator
	// AcceptedBy is the outcome of a valid request to op: a create 201, a
	// get 200 or 404, the listing any 2xx, an operation the kit has no
	// model for what the spec documents.
	AcceptedBy(op *Operation) judge.Outcome
	// NearKey notes a near miss of the run's key, key, so that a curl line
	// shows it as shell, the shell expression that makes it from
	// $PETSTORE_KEY.
	NearKey(key, shell string)
	// RuleStrings is the list of strings the spec gives the sentence name
	// under key.
	RuleStrings(name, key string) []string
	// Routed reports whether target (relative to the base URL) names an
	// operation of the spec, for method.
	Routed(method, target string) bool
	// IntN is a number in [0, n) drawn from the run's seed.
	IntN(n int) int
}

// Send sends each case, the unsafe ones kept for the end, and judges its
// answer by what the case wants.
func Send(ctx context.Context, t T, ks []Case) error {
	ks = t.DeferUnsafe(ks)
	for _, k := range ks {
		if !t.Enabled(k.Check) && !t.JudgesEvery() {
			continue
		}
		x, err := t.Send(ctx, k.Req)
		if err != nil {
			return err
		}
		ok, want := k.Want.Judge(x, k.Label)
		t.Expect(k.Check, x, ok, want)
	}
	return nil
}

package conform

import (
	"context"
	"fmt"
	"strings"

	"github.com/petstore/petstore/internal/conform/cases"
)

// A sentence is a rule the contract states in words, and the cases that
// hold a target to it: legal forms it must accept (a create: and store as
// sent, which the model judges) and illegal forms it must refuse with the
// status the contract gives. The spec names each rule it states, and gives
// its figures, in an x-rules extension beside the words (info, an
// operation, a parameter, a schema, a header, a response): a sentence
// applies when the spec being checked names it at where. The kit keys on
// that name, never on the wording, so rewording the spec changes no
// verdict; quote is the words it names, for the docs and the report. The
// cases of a sentence the spec does not name are not sent, and the run is
// incomplete; bounds come from the spec, never from here.
//
// To add a sentence: name it in the spec's x-rules where the spec states
// it, say where here, quote its words, and write its cases with the helpers (createReq, newPet, created,
// refused…). A rule that holds for every answer of a kind is a
// judge.Rule instead (judge/rules.go); one that needs a sequence of requests is run by its
// phase, named in phase. One a kit must not exercise against a shared
// target says why in skip: the report lists it under Skipped. The cases of
// a sentence marked last are sent after every other phase (lastCases):
// malformed requests, which may bring a fragile target down, cannot hide
// the verdicts of the rest.
type sentence struct {
	name  string
	where string // info.description; operation ID; parameter NAME; schema NAME; header NAME; response NAME
	quote string
	cases func(r *run) []kase // nil: the phase named runs it
	phase string
	skip  string // not exercised, and why
	last  bool
}

// sentences is the table of the contract's sentences the kit holds a target
// to, besides the rules of each schema, parameter and header, which it
// derives from the spec itself (cases.SchemaCases). docs/conformance-kit.md lists
// it.
var sentences = []sentence{
	{name: "json-object", where: "info.description", quote: "Request bodies must be exactly one JSON object: malformed JSON, trailing data, duplicate member names, invalid UTF-8, a missing or non-JSON Content-Type are answered 400.", cases: of(cases.JSONObject)},
	{name: "body-size", where: "info.description", quote: "Bodies larger than", cases: of(cases.BodySize)},
	{name: "content-type", where: "info.description", quote: "with no parameter but an optional charset of utf-8 (in any case, quoted or not)", cases: of(cases.ContentType)},
	{name: "integers", where: "info.description", quote: "for int64, 9223372036854775807 is accepted where the schema allows it", cases: of(cases.IntegerSentence)},
	{name: "bearer", where: "info.description", quote: "Every operation requires Authorization: Bearer <API_KEY>. The scheme name is case-insensitive.", cases: of(cases.Bearer)},
	{name: "auth-first", where: "info.description", quote: "Authentication is decided before any other validation", cases: of(cases.AuthFirstCases)},
	{name: "not-found", where: "info.description", quote: "A path that names no resource is answered 404", cases: of(cases.NotFound)},
	{name: "method-not-allowed", where: "info.description", quote: "a known path with a method it does not support is answered 405 (method_not_allowed) with an Allow header", cases: of(cases.Methods)},
	{name: "no-auth-404-405", where: "info.description", quote: "Neither needs authentication.", cases: of(cases.UnauthenticatedProtocol)},
	{name: "head", where: "info.description", quote: "HEAD is not served: a HEAD to an operation's path is answered 405 with Allow", cases: of(cases.Head)},
	{name: "query-strict", where: "info.description", quote: "Unknown query parameters, and a parameter given twice, are answered 400", cases: of(cases.Query)},
	{name: "percent-encoding", where: "response BadRequest", quote: "or is not valid percent-encoding", cases: of(cases.Percent)},
	{name: "no-body", where: "response BadRequest", quote: "a body, of any length, is sent to an operation that takes none", cases: of(cases.NoBody)},
	{name: "content-encoding", where: "info.description", quote: "a Content-Encoding other than identity on a request with a body is answered 400", cases: func(r *run) []kase { return cases.ContentEncoding(r) }},
	{name: "accept", where: "info.description", quote: "A request whose Accept header admits no application/json is answered 406 (not_acceptable), after authentication.", cases: func(r *run) []kase { return cases.Accept(r) }},
	{name: "accept-syntax", where: "info.description", quote: "An Accept that does not parse as a list of media ranges is answered 400.", cases: func(r *run) []kase { return cases.AcceptSyntax(r) }, last: true},
	{name: "refusal-at-once", where: "info.description", quote: "with Expect: 100-continue it gets its answer instead of 100 Continue, and without it the server reads none of the body. Such an answer carries Connection: close", cases: func(r *run) []kase { return cases.AtOnce(r) }},
	{name: "head-timeout", where: "info.description", quote: "A request whose request line and headers do not arrive whole within 5 seconds gets no answer: the connection is closed; one whose head arrives whole within them is answered, however slowly it came.", phase: "promises"},
	{name: "head-size", where: "info.description", quote: "a request line and headers over", cases: func(r *run) []kase { return cases.HeadSize(r) }, last: true},
	{name: "absolute-form", where: "info.description", quote: "A request-target in absolute form (http://host/v1/pets, RFC 9112 section 3.2.2) naming this server is taken as its origin form (/v1/pets).", cases: func(r *run) []kase { return cases.AbsoluteForm(r) }, last: true},
	{name: "malformed-http", where: "info.description", quote: "are answered before any operation, with an Error body, X-Request-Id and Connection: close", cases: func(r *run) []kase { return cases.Malformed(r) }, last: true},
	{name: "cors-origin", where: "info.description", quote: "an answer to a request with an Origin header carries Access-Control-Allow-Origin: *", cases: of(cases.Origin)},
	{name: "cors-preflight", where: "info.description", quote: "is answered 204 with the allowed methods and headers and no body", cases: of(cases.Preflight)},
	{name: "options", where: "info.description", quote: "any other OPTIONS to an operation's path is answered 405", cases: of(cases.Options)},
	{name: "assigned-id", where: "operation createPet", quote: "a body that names an id, or any member other than those of NewPet, is answered 400", cases: of(cases.Assigned)},
	{name: "name-marks", where: "schema PetName", quote: "The implicit direction marks (U+200E, U+200F, U+061C) and the zero-width joiner (U+200D) are allowed", cases: of(cases.NameMarks)},
	{name: "name-space", where: "schema PetName", quote: "at least one character that is not Unicode white space", cases: of(cases.NameSpace)},
	{name: "name-length", where: "schema PetName", quote: "The animal's name:", cases: of(cases.NameLength)},
	{name: "key-syntax", where: "parameter Idempotency-Key", quote: "1 to 255 characters of A-Z a-z 0-9 - _ . ~ : + / =", cases: of(cases.KeySyntax)},
	{name: "default-status", where: "operation createPet", quote: "When status is omitted the animal is available.", phase: "state"},
	{name: "refused-writes-nothing", where: "operation createPet", quote: "A refused request writes nothing.", phase: "every create (the model)"},
	{name: "after", where: "parameter after", quote: "returns only animals whose id is greater than this value", phase: "every page (the model)"},
	{name: "next-link", where: "operation listPets", quote: "whose target is the same query with after set to the last id of the page", phase: "every page (the model)"},
	{name: "walk", where: "operation listPets", quote: "Following next from the first page visits every animal once, in id order.", phase: "state, read back"},
	{name: "replay", where: "operation createPet", quote: "the same key with the same request answers the first answer again", phase: "idempotency"},
	{name: "retention", where: "operation createPet", quote: "The service keeps the outcome of a successful create for the retention window (24 hours unless the operator sets another)", phase: "promises"},
	{name: "equivalent-requests", where: "operation createPet", quote: "so the order of members, white space, escapes, and an omitted status against an explicit available make no difference", phase: "idempotency"},
	{name: "key-quoted", where: "parameter Idempotency-Key", quote: "that form is accepted too and names the same key as the bare one", phase: "idempotency"},
	{name: "retry-headers", where: "operation createPet", quote: "nor do the request's other headers (Accept, User-Agent, Origin, Content-Type spelt another accepted way), which do not describe the animal", phase: "idempotency"},
	{name: "forms-before-keys", where: "operation createPet", quote: "A request refused for its form (400, 406, 413) is refused so with a key or without, and whether or not the key's outcome is kept: an outcome is looked up for a valid request only.", phase: "forms"},
	{name: "key-reused", where: "operation createPet", quote: "the same key with a different request is answered 422", phase: "idempotency"},
	{name: "refused-no-outcome", where: "operation createPet", quote: "A request that is refused (4xx) or fails with any other 5xx stores no outcome: its retry is processed afresh.", phase: "idempotency"},
	{name: "no-key", where: "operation createPet", quote: "Without the header, every request creates an animal.", phase: "idempotency"},
	{name: "key-scope", where: "operation createPet", quote: "Another API key sending the same Idempotency-Key never sees this answer", phase: "tenants"},
	{name: "in-flight", where: "operation createPet", quote: "Either way one animal is created.", phase: "concurrency"},
	{name: "key-exact-auth", where: "info.description", quote: "the key is compared exactly, case included, and is read from Authorization alone: a key in the query string, a cookie or another header authenticates nothing", phase: "near misses"},
	{name: "exact-names", where: "info.description", quote: "Names and enum values are compared exactly, case included, once percent-decoded", phase: "near misses"},
	{name: "key-exact", where: "parameter Idempotency-Key", quote: "Keys are compared exactly: a key that differs from a kept one in any character, its case included, is another key.", phase: "near misses"},
	{name: "throttle", where: "info.description", quote: "Wrong keys are throttled by client address.", skip: "it takes more wrong keys from the kit's address than the operator's budget (30 by default), after which the target answers every request from that address 429, valid key or not, for the rest of the run (and anyone else's behind it); a 429 that comes is judged: rate_limited, Retry-After, nothing written"},
	{name: "store-bounds", where: "operation createPet", quote: "A create that a bound leaves no room for is answered 507 and writes nothing", skip: "it takes filling the target's store (the reference holds 500 000 pets and 100 000 keyed outcomes by default) with pets nobody can delete; a 507 that comes is judged: its code, Retry-After with idempotency_keys_full only, nothing written"},
	{name: "rate-limit-per-instance", where: "info.description", quote: "The limit holds per server instance", skip: "one client cannot tell the instances behind a balancer apart; the RateLimit fields of every answer are judged (rate-limit-fields)"},
}

// whereOf is where the table says the spec states each sentence and answer
// rule, by name (filled at init: the tables' case functions ask for it).
var whereOf = map[string]string{}

func init() {
	for _, s := range sentences {
		whereOf[s.name] = s.where
	}
	for _, s := range answerRules {
		whereOf[s.Name] = s.Where
	}
}

// SentenceNames are the names of the sentences and answer rules the kit
// holds a target to, in order.
func SentenceNames() []string {
	var out []string
	for _, s := range sentences {
		out = append(out, s.name)
	}
	for _, s := range answerRules {
		out = append(out, s.Name)
	}
	return out
}

// stated reports whether the spec states the sentence named name: its
// name is among the x-rules of where, the place the table gives it. The
// kit keys on the name, never on the words: rewording the spec changes no
// verdict. A sentence the kit does not know is not stated.
func (r *run) stated(name string) bool {
	_, ok := r.rule(name)
	return ok
}

// rule returns the figures the spec gives the sentence named name (its
// x-rules entry at the place the table gives it), and whether the spec
// states it.
func (r *run) rule(name string) (map[string]any, bool) {
	where, known := whereOf[name]
	if !known {
		return nil, false
	}
	rules, _ := r.extensionsAt(where)["x-rules"].(map[string]any)
	v, ok := rules[name]
	params, _ := v.(map[string]any)
	return params, ok
}

// ruleNumber is the number the spec gives the sentence name under key, or
// 0 when it gives none.
func (r *run) ruleNumber(name, key string) float64 {
	params, _ := r.rule(name)
	n, _ := params[key].(float64)
	return n
}

// RuleStrings is the list of strings the spec gives the sentence name under
// key.
func (r *run) RuleStrings(name, key string) []string {
	params, _ := r.rule(name)
	list, _ := params[key].([]any)
	var out []string
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// extensionsAt is the specification extensions of the place where names:
// info.description (the info object), operation ID, parameter NAME, schema
// NAME, header NAME, response NAME.
func (r *run) extensionsAt(where string) map[string]any {
	kind, name, _ := strings.Cut(where, " ")
	c := r.spec.Components
	switch {
	case kind == "info.description" && r.spec.Info != nil:
		return r.spec.Info.Extensions
	case kind == "operation":
		if op := r.operation(name); op != nil {
			return op.Op.Extensions
		}
	case kind == "parameter":
		for _, op := range r.ops {
			for _, p := range op.Op.Parameters {
				if p.Value != nil && p.Value.Name == name {
					return p.Value.Extensions
				}
			}
		}
	case kind == "schema" && c != nil && c.Schemas[name] != nil && c.Schemas[name].Value != nil:
		return c.Schemas[name].Value.Extensions
	case kind == "header" && c != nil && c.Headers[name] != nil && c.Headers[name].Value != nil:
		return c.Headers[name].Value.Extensions
	case kind == "response" && c != nil && c.Responses[name] != nil && c.Responses[name].Value != nil:
		return c.Responses[name].Value.Extensions
	}
	return nil
}

// sentenceCases sends the cases of every sentence the spec states, and the
// cases derived from each schema, parameter and header.
func (r *run) sentenceCases(ctx context.Context) error {
	for _, s := range sentences {
		if !r.stated(s.name) {
			r.unstated(s.name, s.where, s.quote)
			continue
		}
		if s.skip != "" {
			r.skip("sentence "+s.name, "not exercised: "+s.skip)
			continue
		}
		if s.cases == nil || s.last {
			continue
		}
		if err := r.sendCases(ctx, s.cases(r)); err != nil {
			return err
		}
	}
	for _, s := range answerRules {
		if !r.stated(s.Name) {
			r.unstated(s.Name, s.Where, s.Quote)
		}
	}
	return cases.SchemaCases(ctx, r)
}

// unstated notes a sentence of the kit's table that the spec being checked
// no longer states: its cases are not sent, and the run cannot pass, for
// the kit cannot judge the target by it (issue 50). A spec that drops a
// sentence on purpose needs a kit that knows it.
func (r *run) unstated(name, where, quote string) {
	r.incomplete("", "sentence "+name, fmt.Sprintf("the spec no longer states it (%s: %q): the kit cannot judge the target by it, and sends none of its cases", where, quote))
}

// lastCases sends the cases of the sentences, and of the near misses,
// marked last.
func (r *run) lastCases(ctx context.Context) error {
	for _, s := range sentences {
		if s.last && s.cases != nil && s.skip == "" && r.stated(s.name) {
			if err := r.sendCases(ctx, s.cases(r)); err != nil {
				return err
			}
		}
	}
	return r.nearMissCases(ctx, true)
}

// acceptedBy is the outcome of a valid request to op: a create 201, a get
// 200 or 404 (a valid id may name no pet), the listing any 2xx, an
// operation the kit has no model for what the spec documents (documented).
func (r *run) acceptedBy(op *operation) outcome {
	switch {
	case op == r.roles.Create:
		return created()
	case !r.modelled(op):
		return r.documented(op)
	case len(op.InPath) > 0:
		return found()
	}
	return accepted()
}

// of is a sentence's cases made by a function of cases.T.
func of(gen func(cases.T) []kase) func(*run) []kase {
	return func(r *run) []kase { return gen(r) }
}

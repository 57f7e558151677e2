package conform

import (
	"context"
	"fmt"
	"strings"
)

// A sentence is a rule the contract states in words, and the cases that
// hold a target to it: legal forms it must accept (a create: and store as
// sent, which the model judges) and illegal forms it must refuse with the
// status the contract gives. A sentence applies when the spec being checked
// states it: its quote must be in the text at where (backquotes and white
// space aside). The cases of a sentence the spec does not state are not
// sent, and the report says so; bounds come from the spec, never from here.
//
// To add a sentence: name it, say where the spec states it, quote its
// words, and write its cases with the helpers (createReq, newPet, created,
// refused…). A rule that holds for every answer of a kind is an answerRule
// instead (rules.go); one that needs a sequence of requests is run by its
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
// derives from the spec itself (schemaCases). docs/conformance-kit.md lists
// it.
var sentences = []sentence{
	{name: "json-object", where: "info.description", quote: "Request bodies must be exactly one JSON object: malformed JSON, trailing data, duplicate member names, invalid UTF-8, a missing or non-JSON Content-Type are answered 400.", cases: jsonObjectCases},
	{name: "body-size", where: "info.description", quote: "Bodies larger than", cases: bodySizeCases},
	{name: "content-type", where: "info.description", quote: "with no parameter but an optional charset of utf-8 (in any case, quoted or not)", cases: contentTypeCases},
	{name: "integers", where: "info.description", quote: "for int64, 9223372036854775807 is accepted where the schema allows it", cases: integerCases},
	{name: "bearer", where: "info.description", quote: "Every operation requires Authorization: Bearer <API_KEY>. The scheme name is case-insensitive.", cases: bearerCases},
	{name: "auth-first", where: "info.description", quote: "Authentication is decided before any other validation", cases: authFirstCases},
	{name: "not-found", where: "info.description", quote: "A path that names no resource is answered 404", cases: notFoundCases},
	{name: "method-not-allowed", where: "info.description", quote: "a known path with a method it does not support is answered 405 (method_not_allowed) with an Allow header", cases: methodCases},
	{name: "no-auth-404-405", where: "info.description", quote: "Neither needs authentication.", cases: unauthenticatedProtocolCases},
	{name: "head", where: "info.description", quote: "HEAD is not served: a HEAD to an operation's path is answered 405 with Allow", cases: headCases},
	{name: "query-strict", where: "info.description", quote: "Unknown query parameters, and a parameter given twice, are answered 400", cases: queryCases},
	{name: "percent-encoding", where: "response BadRequest", quote: "or is not valid percent-encoding", cases: percentCases},
	{name: "no-body", where: "response BadRequest", quote: "a body, of any length, is sent to an operation that takes none", cases: noBodyCases},
	{name: "content-encoding", where: "info.description", quote: "a Content-Encoding other than identity on a request with a body is answered 400", cases: contentEncodingCases},
	{name: "accept", where: "info.description", quote: "A request whose Accept header admits no application/json is answered 406 (not_acceptable), after authentication.", cases: acceptCases},
	{name: "accept-syntax", where: "info.description", quote: "An Accept that does not parse as a list of media ranges is answered 400.", cases: acceptSyntaxCases, last: true},
	{name: "refusal-at-once", where: "info.description", quote: "with Expect: 100-continue it gets its answer instead of 100 Continue, and without it the server reads none of the body. Such an answer carries Connection: close", cases: atOnceCases},
	{name: "head-size", where: "info.description", quote: "a request line and headers over", cases: headSizeCases, last: true},
	{name: "malformed-http", where: "info.description", quote: "are answered before any operation, with an Error body, X-Request-Id and Connection: close", cases: malformedCases, last: true},
	{name: "cors-origin", where: "info.description", quote: "an answer to a request with an Origin header carries Access-Control-Allow-Origin: *", cases: originCases},
	{name: "cors-preflight", where: "info.description", quote: "is answered 204 with the allowed methods and headers and no body", cases: preflightCases},
	{name: "options", where: "info.description", quote: "any other OPTIONS to an operation's path is answered 405", cases: optionsCases},
	{name: "assigned-id", where: "operation createPet", quote: "a body that names an id, or any member other than those of NewPet, is answered 400", cases: assignedCases},
	{name: "name-marks", where: "schema PetName", quote: "The implicit direction marks (U+200E, U+200F, U+061C) and the zero-width joiner (U+200D) are allowed", cases: nameMarkCases},
	{name: "name-space", where: "schema PetName", quote: "at least one character that is not Unicode white space", cases: nameSpaceCases},
	{name: "name-length", where: "schema PetName", quote: "The animal's name:", cases: nameLengthCases},
	{name: "key-syntax", where: "parameter Idempotency-Key", quote: "1 to 255 characters of A-Z a-z 0-9 - _ . ~ : + / =", cases: keySyntaxCases},
	{name: "default-status", where: "operation createPet", quote: "When status is omitted the animal is available.", phase: "state"},
	{name: "refused-writes-nothing", where: "operation createPet", quote: "A refused request writes nothing.", phase: "every create (the model)"},
	{name: "after", where: "parameter after", quote: "returns only animals whose id is greater than this value", phase: "every page (the model)"},
	{name: "next-link", where: "operation listPets", quote: "whose target is the same query with after set to the last id of the page", phase: "every page (the model)"},
	{name: "walk", where: "operation listPets", quote: "Following next from the first page visits every animal once, in id order.", phase: "state, read back"},
	{name: "replay", where: "operation createPet", quote: "the same key with the same request answers the first answer again", phase: "idempotency"},
	{name: "equivalent-requests", where: "operation createPet", quote: "so the order of members, white space, escapes, and an omitted status against an explicit available make no difference", phase: "idempotency"},
	{name: "key-quoted", where: "parameter Idempotency-Key", quote: "that form is accepted too and names the same key as the bare one", phase: "idempotency"},
	{name: "key-reused", where: "operation createPet", quote: "the same key with a different request is answered 422", phase: "idempotency"},
	{name: "refused-no-outcome", where: "operation createPet", quote: "A request that is refused (4xx) or fails with any other 5xx stores no outcome: its retry is processed afresh.", phase: "idempotency"},
	{name: "no-key", where: "operation createPet", quote: "Without the header, every request creates an animal.", phase: "idempotency"},
	{name: "key-scope", where: "operation createPet", quote: "Another API key sending the same Idempotency-Key never sees this answer", phase: "tenants"},
	{name: "in-flight", where: "operation createPet", quote: "Either way one animal is created.", phase: "concurrency"},
	{name: "throttle", where: "info.description", quote: "Wrong keys are throttled by client address.", skip: "it takes more wrong keys from the kit's address than the operator's budget (30 by default), after which the target answers every request from that address 429, valid key or not, for the rest of the run (and anyone else's behind it); a 429 that comes is judged: rate_limited, Retry-After, nothing written"},
	{name: "store-bounds", where: "operation createPet", quote: "A create that a bound leaves no room for is answered 507 and writes nothing", skip: "it takes filling the target's store (the reference holds 500 000 pets and 100 000 keyed outcomes by default) with pets nobody can delete; a 507 that comes is judged: its code, Retry-After with idempotency_keys_full only, nothing written"},
	{name: "rate-limit-per-instance", where: "info.description", quote: "The limit holds per server instance", skip: "one client cannot tell the instances behind a balancer apart; the RateLimit fields of every answer are judged (rate-limit-fields)"},
}

// SentenceNames are the names of the sentences and answer rules the kit
// holds a target to, in order.
func SentenceNames() []string {
	var out []string
	for _, s := range sentences {
		out = append(out, s.name)
	}
	for _, s := range answerRules {
		out = append(out, s.name)
	}
	return out
}

// stated reports whether the spec states the sentence named name; a
// sentence the kit does not know is not stated.
func (r *run) stated(name string) bool {
	for _, s := range sentences {
		if s.name == name {
			return strings.Contains(plain(r.textAt(s.where)), plain(s.quote))
		}
	}
	for _, s := range answerRules {
		if s.name == name {
			return strings.Contains(plain(r.textAt(s.where)), plain(s.quote))
		}
	}
	return false
}

// textAt is the text of the spec at where.
func (r *run) textAt(where string) string {
	kind, name, _ := strings.Cut(where, " ")
	c := r.spec.Components
	switch {
	case kind == "info.description":
		return r.spec.Info.Description
	case kind == "operation":
		if op := r.operation(name); op != nil {
			return op.op.Summary + "\n" + op.op.Description
		}
	case kind == "parameter":
		for _, op := range r.ops {
			for _, p := range op.op.Parameters {
				if p.Value != nil && p.Value.Name == name {
					return p.Value.Description
				}
			}
		}
	case kind == "schema" && c != nil && c.Schemas[name] != nil && c.Schemas[name].Value != nil:
		return c.Schemas[name].Value.Description
	case kind == "header" && c != nil && c.Headers[name] != nil && c.Headers[name].Value != nil:
		return c.Headers[name].Value.Description
	case kind == "response" && c != nil && c.Responses[name] != nil && c.Responses[name].Value != nil && c.Responses[name].Value.Description != nil:
		return *c.Responses[name].Value.Description
	}
	return ""
}

// sentenceCases sends the cases of every sentence the spec states, and the
// cases derived from each schema, parameter and header.
func (r *run) sentenceCases(ctx context.Context) error {
	for _, s := range sentences {
		if !r.stated(s.name) {
			r.skip("sentence "+s.name, fmt.Sprintf("not stated by this spec (%s: %q)", s.where, s.quote))
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
		if !r.stated(s.name) {
			r.skip("sentence "+s.name, fmt.Sprintf("not stated by this spec (%s: %q)", s.where, s.quote))
		}
	}
	return r.schemaCases(ctx)
}

// lastCases sends the cases of the sentences marked last.
func (r *run) lastCases(ctx context.Context) error {
	for _, s := range sentences {
		if s.last && s.cases != nil && s.skip == "" && r.stated(s.name) {
			if err := r.sendCases(ctx, s.cases(r)); err != nil {
				return err
			}
		}
	}
	return nil
}

// acceptedBy is the outcome of a valid request to op: a create 201, a get
// 200 or 404 (a valid id may name no pet), the listing any 2xx, an
// operation the kit has no model for what the spec documents (documented).
func (r *run) acceptedBy(op *operation) outcome {
	switch {
	case op == r.roles.create:
		return created()
	case !r.modelled(op):
		return r.documented(op)
	case len(op.inPath) > 0:
		return found()
	}
	return accepted()
}

// posCase and negCase make the cases of a sentence: a legal form accepted,
// an illegal one refused 400.
func posCase(label string, req request, want outcome) kase {
	return kase{label: label, check: "positive_data_acceptance", req: req, want: want}
}

func negCase(label string, req request) kase {
	return kase{label: label, check: "negative_data_rejection", req: req, want: refused(400, "invalid_request")}
}

// quoted is the backquoted words of the sentence at where that follow
// lead and sit in its next parentheses: "Another charset (latin1, utf-16,
// utf8)" gives latin1, utf-16 and utf8.
func (r *run) quoted(where, lead string) []string {
	text := plain(r.textAt(where))
	i := strings.Index(text, lead+" (")
	if i < 0 {
		return nil
	}
	rest := text[i+len(lead)+2:]
	end := strings.Index(rest, ")")
	if end < 0 {
		return nil
	}
	var out []string
	for _, w := range strings.Split(rest[:end], ",") {
		if w = strings.TrimSpace(w); w != "" {
			out = append(out, w)
		}
	}
	return out
}

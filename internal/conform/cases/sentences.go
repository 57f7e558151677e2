package cases

import (
	"context"
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/conform/judge"
)

// A Sentence is a rule the contract states in words, and the cases that
// hold a target to it: legal forms it must accept (a create: and store as
// sent, which the model judges) and illegal forms it must refuse with the
// status the contract gives. The spec names each rule it states, and gives
// its figures, in an x-rules extension beside the words (info, an
// operation, a parameter, a schema, a header, a response): a sentence
// applies when the spec being checked names it at Where. The kit keys on
// that name, never on the wording, so rewording the spec changes no
// verdict; Quote is the words it names, for the docs and the report. The
// cases of a sentence the spec does not name are not sent, and the run is
// incomplete; bounds come from the spec, never from here.
//
// To add a sentence: name it in the spec's x-rules where the spec states
// it, say where here, quote its words, and write its cases with the helpers
// (Requests, Created, Refused…). A rule that holds for every answer of a
// kind is a judge.Rule instead (judge/rules.go); one that needs a sequence
// of requests is run by its phase, named in Phase. One a kit must not
// exercise against a shared target says why in Skip: the report lists it
// under Skipped. The cases of a sentence marked Last are sent after every
// other phase (LastCases): malformed requests, which may bring a fragile
// target down, cannot hide the verdicts of the rest.
type Sentence struct {
	Name  string
	Where string // info.description; operation ID; parameter NAME; schema NAME; header NAME; response NAME
	Quote string
	Cases func(T) []Case // nil: the phase named runs it
	Phase string
	Skip  string // not exercised, and why
	Last  bool
}

// Sentences is the table of the contract's sentences the kit holds a target
// to, besides the rules of each schema, parameter and header, which it
// derives from the spec itself (SchemaCases). docs/conformance-kit.md lists
// it. It is filled at init: its cases reach IllegalForms, which reads it.
var Sentences []Sentence

func init() {
	Sentences = sentences()
	for _, s := range Sentences {
		whereOf[s.Name] = s.Where
	}
	for _, s := range judge.Rules {
		whereOf[s.Name] = s.Where
	}
}

func sentences() []Sentence {
	return []Sentence{
		{Name: "json-object", Where: "info.description", Quote: "Request bodies must be exactly one JSON object: malformed JSON, trailing data, duplicate member names, invalid UTF-8, a missing or non-JSON Content-Type are answered 400.", Cases: JSONObject},
		{Name: "body-size", Where: "info.description", Quote: "Bodies larger than", Cases: BodySize},
		{Name: "content-type", Where: "info.description", Quote: "with no parameter but an optional charset of utf-8 (in any case, quoted or not)", Cases: ContentType},
		{Name: "values", Where: "info.description", Quote: "A member is stored and answered as it was sent: as the same value, which is not always the same text.", Cases: ValueRules},
		{Name: "integers", Where: "info.description", Quote: "for int64, 9223372036854775807 is accepted where the schema allows it", Cases: IntegerSentence},
		{Name: "bearer", Where: "info.description", Quote: "Every operation requires Authorization: Bearer <API_KEY>. The scheme name is case-insensitive", Cases: Bearer},
		{Name: "auth-first", Where: "info.description", Quote: "Authentication is decided before any other validation", Cases: AuthFirstCases},
		{Name: "not-found", Where: "info.description", Quote: "A path that names no resource is answered 404", Cases: NotFound},
		{Name: "method-not-allowed", Where: "info.description", Quote: "a known path with a method it does not support is answered 405 (method_not_allowed) with an Allow header", Cases: Methods},
		{Name: "no-auth-404-405", Where: "info.description", Quote: "Neither needs authentication.", Cases: UnauthenticatedProtocol},
		{Name: "head", Where: "info.description", Quote: "HEAD is not served: a HEAD to an operation's path is answered 405 with Allow", Cases: Head},
		{Name: "query-strict", Where: "info.description", Quote: "Unknown query parameters, and a parameter given twice, are answered 400", Cases: Query},
		{Name: "percent-encoding", Where: "response BadRequest", Quote: "or is not valid percent-encoding", Cases: Percent},
		{Name: "no-body", Where: "response BadRequest", Quote: "a body, of any length, is sent to an operation that takes none", Cases: NoBody},
		{Name: "content-encoding", Where: "info.description", Quote: "a Content-Encoding other than identity on a request with a body is answered 400", Cases: ContentEncoding},
		{Name: "accept", Where: "info.description", Quote: "A request whose Accept header admits no application/json is answered 406 (not_acceptable), after authentication.", Cases: Accept},
		{Name: "accept-syntax", Where: "info.description", Quote: "An Accept that does not parse as a list of media ranges is answered 400.", Cases: AcceptSyntax, Last: true},
		{Name: "refusal-at-once", Where: "info.description", Quote: "with Expect: 100-continue it gets its answer instead of 100 Continue, and without it the server reads none of the body. Such an answer carries Connection: close", Cases: AtOnce},
		{Name: "head-timeout", Where: "info.description", Quote: "A request whose request line and headers do not arrive whole within 5 seconds gets no answer: the connection is closed; one whose head arrives whole within them is answered, however slowly it came.", Phase: "promises"},
		{Name: "head-size", Where: "info.description", Quote: "a request line and headers over", Cases: HeadSize, Last: true},
		{Name: "absolute-form", Where: "info.description", Quote: "A request-target in absolute form (the scheme and the host before the path, RFC 9112 section 3.2.2) naming this server is taken as its origin form (the path alone).", Cases: AbsoluteForm, Last: true},
		{Name: "malformed-http", Where: "info.description", Quote: "are answered before any operation, with an Error body, X-Request-Id and Connection: close", Cases: Malformed, Last: true},
		{Name: "cors-origin", Where: "info.description", Quote: "an answer to a request with an Origin header carries Access-Control-Allow-Origin: *", Cases: Origin},
		{Name: "cors-preflight", Where: "info.description", Quote: "is answered 204 with the allowed methods and headers and no body", Cases: Preflight},
		{Name: "options", Where: "info.description", Quote: "any other OPTIONS to an operation's path is answered 405", Cases: Options},
		{Name: "assigned-id", Where: "operation createPet", Quote: "a body that names an id, or any member other than those of NewPet, is answered 400", Cases: Assigned},
		{Name: "name-marks", Where: "schema PetName", Quote: "The implicit direction marks (U+200E, U+200F, U+061C) and the zero-width joiner (U+200D) are allowed", Cases: NameMarks},
		{Name: "name-space", Where: "schema PetName", Quote: "at least one character that is not Unicode white space", Cases: NameSpace},
		{Name: "name-length", Where: "schema PetName", Quote: "The animal's name:", Cases: NameLength},
		{Name: "key-syntax", Where: "parameter Idempotency-Key", Quote: "1 to 255 characters of A-Z a-z 0-9 - _ . ~ : + / =", Cases: KeySyntax},
		{Name: "default-status", Where: "operation createPet", Quote: "When status is omitted the animal is available.", Phase: "state"},
		{Name: "refused-writes-nothing", Where: "operation createPet", Quote: "A refused request writes nothing.", Phase: "every create (the model)"},
		{Name: "after", Where: "parameter after", Quote: "returns only animals whose id is greater than this value", Phase: "every page (the model)"},
		{Name: "next-link", Where: "operation listPets", Quote: "whose target is the same query with after set to the last id of the page", Phase: "every page (the model)"},
		{Name: "walk", Where: "operation listPets", Quote: "Following next from the first page visits every animal once, in id order.", Phase: "state, read back"},
		{Name: "replay", Where: "operation createPet", Quote: "the same key with the same request answers the first answer again", Phase: "idempotency"},
		{Name: "retention", Where: "operation createPet", Quote: "The service keeps the outcome of a successful create for the retention window (24 hours unless the operator sets another)", Phase: "promises"},
		{Name: "equivalent-requests", Where: "operation createPet", Quote: "so the order of members, white space, escapes, and an omitted status against an explicit available make no difference", Phase: "idempotency"},
		{Name: "key-quoted", Where: "parameter Idempotency-Key", Quote: "that form is accepted too and names the same key as the bare one", Phase: "idempotency"},
		{Name: "retry-headers", Where: "operation createPet", Quote: "nor do the request's other headers (Accept, User-Agent, Origin, Content-Type spelt another accepted way), which do not describe the animal", Phase: "idempotency"},
		{Name: "forms-before-keys", Where: "operation createPet", Quote: "A request refused for its form (400, 406, 413) is refused so with a key or without, and whether or not the key's outcome is kept: an outcome is looked up for a valid request only.", Phase: "forms"},
		{Name: "key-reused", Where: "operation createPet", Quote: "the same key with a different request is answered 422", Phase: "idempotency"},
		{Name: "refused-no-outcome", Where: "operation createPet", Quote: "A request that is refused (4xx) or fails with any other 5xx stores no outcome: its retry is processed afresh.", Phase: "idempotency"},
		{Name: "no-key", Where: "operation createPet", Quote: "Without the header, every request creates an animal.", Phase: "idempotency"},
		{Name: "key-scope", Where: "operation createPet", Quote: "Another API key sending the same Idempotency-Key never sees this answer", Phase: "tenants"},
		{Name: "in-flight", Where: "operation createPet", Quote: "Either way one animal is created.", Phase: "concurrency"},
		{Name: "key-exact-auth", Where: "info.description", Quote: "the key is compared exactly, case included, and is read from Authorization alone: a key in the query string, a cookie or another header authenticates nothing", Phase: "near misses"},
		{Name: "exact-names", Where: "info.description", Quote: "Names and enum values are compared exactly, case included, once percent-decoded", Phase: "near misses"},
		{Name: "key-exact", Where: "parameter Idempotency-Key", Quote: "Keys are compared exactly: a key that differs from a kept one in any character, its case included, is another key.", Phase: "near misses"},
		{Name: "throttle", Where: "info.description", Quote: "Wrong keys are throttled by client address.", Skip: "it takes more wrong keys from the kit's address than the operator's budget (30 by default), after which the target answers every request from that address 429, valid key or not, for the rest of the run (and anyone else's behind it); a 429 that comes is judged: rate_limited, Retry-After, nothing written"},
		{Name: "store-bounds", Where: "operation createPet", Quote: "A create that a bound leaves no room for is answered 507 and writes nothing", Skip: "it takes filling the target's store (the reference holds 500 000 pets and 100 000 keyed outcomes by default) with pets nobody can delete; a 507 that comes is judged: its code, Retry-After with idempotency_keys_full only, nothing written"},
		{Name: "rate-limit-per-instance", Where: "info.description", Quote: "The limit holds per server instance", Skip: "one client cannot tell the instances behind a balancer apart; the RateLimit fields of every answer are judged (rate-limit-fields)"},
	}
}

// whereOf is where the table says the spec states each sentence and answer
// rule, by name.
var whereOf = map[string]string{}

// SentenceNames are the names of the sentences and answer rules the kit
// holds a target to, in order.
func SentenceNames() []string {
	var out []string
	for _, s := range Sentences {
		out = append(out, s.Name)
	}
	for _, s := range judge.Rules {
		out = append(out, s.Name)
	}
	return out
}

// Rules reads the x-rules of the spec being checked: which sentences and
// answer rules it states, and their figures. The kit keys on a rule's name
// at the place the table gives it, never on the words: rewording the spec
// changes no verdict.
type Rules struct {
	spec *openapi3.T
	ops  []*Operation
}

// ReadRules reads the x-rules of spec, whose operations are ops.
func ReadRules(spec *openapi3.T, ops []*Operation) Rules { return Rules{spec: spec, ops: ops} }

// Stated reports whether the spec states the sentence or answer rule named
// name: its name is among the x-rules of the place the table gives it. A
// name the kit does not know is not stated.
func (x Rules) Stated(name string) bool {
	_, ok := x.Figures(name)
	return ok
}

// Figures returns the figures the spec gives the rule named name (its
// x-rules entry), and whether the spec states it.
func (x Rules) Figures(name string) (map[string]any, bool) {
	where, known := whereOf[name]
	if !known {
		return nil, false
	}
	rules, _ := x.extensionsAt(where)["x-rules"].(map[string]any)
	v, ok := rules[name]
	params, _ := v.(map[string]any)
	return params, ok
}

// Number is the number the spec gives the rule name under key, or 0 when it
// gives none.
func (x Rules) Number(name, key string) float64 {
	params, _ := x.Figures(name)
	n, _ := params[key].(float64)
	return n
}

// Strings is the list of strings the spec gives the rule name under key.
func (x Rules) Strings(name, key string) []string {
	params, _ := x.Figures(name)
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
func (x Rules) extensionsAt(where string) map[string]any {
	kind, name, _ := strings.Cut(where, " ")
	c := x.spec.Components
	switch {
	case kind == "info.description" && x.spec.Info != nil:
		return x.spec.Info.Extensions
	case kind == "operation":
		for _, op := range x.ops {
			if op.ID == name {
				return op.Op.Extensions
			}
		}
	case kind == "parameter":
		for _, op := range x.ops {
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

// SentenceCases sends the cases of every sentence the spec states but those
// marked Last, and the cases derived from each schema, parameter and
// header. A sentence or answer rule the spec no longer states makes the run
// incomplete (unstated).
func SentenceCases(ctx context.Context, t T) error {
	for _, s := range Sentences {
		if !t.Stated(s.Name) {
			unstated(t, s.Name, s.Where, s.Quote)
			continue
		}
		if s.Skip != "" {
			t.Skip("sentence "+s.Name, "not exercised: "+s.Skip)
			continue
		}
		if s.Cases == nil || s.Last {
			continue
		}
		if err := Send(ctx, t, s.Cases(t)); err != nil {
			return err
		}
	}
	for _, s := range judge.Rules {
		if !t.Stated(s.Name) {
			unstated(t, s.Name, s.Where, s.Quote)
		}
	}
	return SchemaCases(ctx, t)
}

// unstated notes a sentence of the kit's table that the spec being checked
// no longer states: its cases are not sent, and the run cannot pass, for
// the kit cannot judge the target by it (issue 50). A spec that drops a
// sentence on purpose needs a kit that knows it.
func unstated(t T, name, where, quote string) {
	t.Incomplete("", "sentence "+name, fmt.Sprintf("the spec no longer states it (%s: %q): the kit cannot judge the target by it, and sends none of its cases", where, quote))
}

// LastCases sends the cases of the sentences, and of the near misses,
// marked last.
func LastCases(ctx context.Context, t T) error {
	for _, s := range Sentences {
		if s.Last && s.Cases != nil && s.Skip == "" && t.Stated(s.Name) {
			if err := Send(ctx, t, s.Cases(t)); err != nil {
				return err
			}
		}
	}
	return NearMissCases(ctx, t, true)
}

// IllegalForms are the negative cases of the stated sentences sent before
// the last phase, and of each operation's schemas: each a request the
// contract refuses for its form.
func IllegalForms(t T) []Case {
	var forms []Case
	keep := func(ks []Case) {
		for _, k := range ks {
			if k.Check == "negative_data_rejection" && k.Req.Raw == nil {
				forms = append(forms, k)
			}
		}
	}
	for _, s := range Sentences {
		if s.Cases != nil && !s.Last && s.Skip == "" && t.Stated(s.Name) {
			keep(s.Cases(t))
		}
	}
	for _, op := range t.Operations() {
		keep(SchemaNegatives(t, op))
	}
	return forms
}

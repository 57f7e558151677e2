package report

import "github.com/petstore/petstore/internal/contract"

// CheckInfo names a check, says in one sentence what it catches, and the
// families of defect it stands for.
type CheckInfo struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Families    []string `json:"families"`
}

// The families of defect, as issue 42 sorts them: answers of the wrong
// form; well-formed answers that are wrong; legal forms refused; illegal
// forms accepted; the promises across tenants and under concurrency; the
// values of repeated or case-bound headers.
const (
	famForm    = "form"
	famMeaning = "meaning"
	famLegal   = "legal"
	famIllegal = "illegal"
	famTenancy = "tenancy"
	famHeaders = "headers"
)

// Families lists the families of defect in the order the docs explain them.
var Families = []string{famForm, famMeaning, famLegal, famIllegal, famTenancy, famHeaders}

func fam(f ...string) []string { return f }

// Checks is the one table of checks: -checks, the report and the JUnit
// names come from it. The first ten keep Schemathesis's names, for the same
// meaning; the rest are this contract's own.
var Checks = []CheckInfo{
	{"not_a_server_error", "No request, however malformed, is answered 5xx, but the two RFC 9112 asks for (501 to a Transfer-Encoding other than chunked, 505 to a protocol version other than HTTP/1.x) and the 503 outcome_unknown the contract gives a create whose outcome the server could not learn.", fam(famForm)},
	{contract.StatusCode, "Every status is one the contract documents for the operation (404/405 off the operations).", fam(famForm)},
	{contract.ContentType, "Every response's Content-Type is one the contract documents for its status.", fam(famForm)},
	{contract.ResponseHeaders, "Every value of every response header the contract declares is valid against its schema, and present when required.", fam(famForm, famHeaders)},
	{contract.ResponseSchema, "Every response body is valid against the contract's schema for its status.", fam(famForm)},
	{"negative_data_rejection", "A request that breaks exactly one rule of the contract is refused with the status the contract gives it (400, 406, 413).", fam(famIllegal)},
	{"positive_data_acceptance", "A valid request, with values at every bound and in every legal form, is accepted.", fam(famLegal)},
	{"ignored_auth", "No key, another scheme or an unknown key is answered 401; a valid key, the scheme in any case, is accepted.", fam(famLegal, famIllegal)},
	{"use_after_create", "A created pet is readable at its Location and by its id, and listed under its status.", fam(famMeaning)},
	{"unsupported_method", "A known path with a method it does not support (HEAD and OPTIONS included) is answered 405 with an Allow header listing those it does, with a key or without.", fam(famIllegal)},
	{"unknown_path", "A path that names no resource is answered 404, with a key or without.", fam(famIllegal)},
	{contract.ErrorBody, "Every 4xx and 5xx body is an Error whose status equals the HTTP status and whose code is the one the contract gives that answer.", fam(famForm, famMeaning)},
	{"auth_before_validation", "An unauthenticated request is answered 401 even when it is also invalid.", fam(famIllegal)},
	{"default_status", "A member left out of a create takes the default the contract declares.", fam(famMeaning)},
	{"pagination", "Every page holds only ids above its after, at most limit pets, only pets that match its filter, and every pet the kit created that belongs there; its next link continues where it ended.", fam(famMeaning)},
	{"ordering", "Listings are in ascending id order, across pages.", fam(famMeaning)},
	{"deprecation", "A deprecated operation's answers carry Deprecation and the Sunset and Link the contract declares.", fam(famForm)},
	{"refused_write", "A refused create (invalid, unauthenticated, 503 unavailable) stores nothing.", fam(famMeaning)},
	{"unique_ids", "Creates, concurrent ones too, get distinct ids.", fam(famMeaning, famTenancy)},
	{"idempotent_replay", "A create retried with its Idempotency-Key, in any equivalent form, gets the first answer again and stores nothing; the key with another pet is 422; a refused create keeps no outcome; without a key every create creates.", fam(famMeaning)},
	{"stored_as_sent", "Every answer that shows a pet the kit created (the 201, getPet, every page) shows it as sent, defaults applied; getPet answers the pet asked for.", fam(famMeaning, famLegal)},
	{"durability", "At the end, every pet the kit created is still there: read by its id, and found once in a walk of the listing.", fam(famMeaning)},
	{"header_values", "A header value the contract ties to a case goes with that case: error=\"invalid_token\" exactly when a key was sent, Idempotent-Replayed only on a replay, a Location that names the created pet, the RateLimit fields together.", fam(famHeaders)},
	{"cors", "An answer to a request with Origin carries Access-Control-Allow-Origin: *; a preflight is answered 204, no body, allowing the method and headers asked for.", fam(famLegal, famIllegal, famHeaders)},
	{"refusal_at_once", "A request refused before its body is read (no key, no such path, a declared length over the limit) is answered at once, without the body, with Connection: close, and with Expect: 100-continue instead of 100 Continue; a valid create with Expect: 100-continue is created.", fam(famIllegal, famLegal, famHeaders)},
	{"http_framing", "A request that is not HTTP/1.1 as the contract reads it (a head over 64 KiB, a raw space, %zz in the path, no Host, a bad header line, Content-Length twice, Expect 200-ok) is answered 431 or 400, and Transfer-Encoding gzip 501, before any operation, with an Error, X-Request-Id and Connection: close; a head of exactly 64 KiB, HTTP/1.0 and a chunked body are served.", fam(famIllegal, famLegal, famForm)},
	{"idempotency_scope", "Another API key sending the same Idempotency-Key gets a pet of its own, never the first key's answer nor its 422 (needs -key2).", fam(famTenancy)},
	{"concurrent_retries", "A create retried concurrently with one Idempotency-Key creates one pet: each answer is that pet or 409 idempotency_key_in_flight.", fam(famTenancy)},
	{"method_semantics", "What HTTP says a write means holds for every operation, one the kit was written for or not: after a DELETE a GET of the resource is 404 or 410 and listings omit it, and the DELETE repeated leaves the same state; a POST to a collection creates exactly one resource, at its Location. An operation no rule covers leaves the run incomplete.", fam(famMeaning)},
}

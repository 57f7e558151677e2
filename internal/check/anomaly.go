package check

// Anomaly is one promise of openapi.yaml a history shows broken: its kind
// (one of Kinds), the check of the conformance kit that reports it
// (docs/conformance-kit.md), what the contract wants and what came back.
type Anomaly struct {
	Kind  string `json:"kind"`
	Check string `json:"check"`
	Want  string `json:"want"`
	Got   string `json:"got,omitempty"` // "" for the answer itself, described
}

// The verdicts of a checker, as Jepsen's: a history is valid (no promise
// broken), invalid (an anomaly found), or unknown (the checker could not
// judge it: a history that lacks what it needs).
const (
	Valid   = "valid"
	Invalid = "invalid"
	Unknown = "unknown"
)

// Meaning is what each kind of anomaly says, and the checks of the kit
// that report it: one vocabulary for the chaos run's audit (Check) and the
// kit's model (Model).
var Meaning = map[string]struct {
	Says   string
	Checks []string
}{
	KindLost:          {"an acknowledged create is not stored, not as acknowledged, or not as it was sent (defaults applied); or a new create took an id given before", []string{"stored_as_sent", "default_status", "unique_ids", "idempotent_replay", "durability"}},
	KindDoubled:       {"one request made two pets: a key acknowledged or stored twice, a replay that is not the first answer, a key's answer given to another API key", []string{"idempotent_replay", "idempotency_scope", "concurrent_retries"}},
	KindPhantom:       {"a pet no create accounts for: one of a refused create, or more than the creates whose outcome is unknown", []string{"refused_write", "idempotent_replay", "stored_as_sent"}},
	KindAbortedReads:  {"a read showed a pet that is not stored at the end", nil},
	KindWrongReads:    {"a read showed a pet otherwise than stored, or another pet than the one asked for", []string{"stored_as_sent", "default_status"}},
	KindWalkAnomalies: {"a page or a walk of the listing broke its promises: order, after, limit, filter, its next link, a pet it should have shown", []string{"pagination", "ordering", "durability"}},
	KindGetAfterAck:   {"getPet answered 404 for a pet acknowledged before it was asked for", []string{"durability"}},
	KindUnexpected:    {"an answer the contract does not document for the request, or one that breaks openapi.yaml", []string{"idempotent_replay", "idempotency_scope"}},
}

package history

// The conformance kit's records (petstore conform -history). The kit
// follows whatever spec it is given, so it records bodies and pets member
// by member (Members), not as the typed Body and Pet of the chaos run. Its
// times (Invoke, Complete) are ticks of one clock of the run, not
// nanoseconds: one tick an event, so that every event is ordered.

// The kinds of record only the kit writes.
const (
	// Begin is the first line of a kit's history: what the checker must
	// know of the contract (Contract).
	Begin = "begin"
	// List is one page of a listing (GET /pets) asked with a query the
	// contract answers 200, and so answered: its After, Limit, Filter,
	// IDs, Answers and Next.
	List = "list"
	// Other is an exchange the checker does not judge: an operation it
	// has no model for (which may change the pets its path names: Release,
	// ReleaseAll), or a request the contract refuses.
	Other = "other"
	// Scope begins a model of its own for the ops of Process (a sequence
	// of the kit's -examples), tracking the names that contain Names; on
	// Process 0, it says which names the run's own model tracks.
	Scope = "scope"
	// Merge ends the model of Process: what it learnt joins Process 0's.
	Merge = "merge"
	// ReadBack is the walk of the listing that ends a run, from After, by
	// which every pet of Want (those the run created and the model still
	// judges) above After must be found once: IDs are the ids it visited,
	// an id once each time it was seen.
	ReadBack = "readback"
	// Paging is a walk of the listing by its next links (the kit's
	// pagination check), from the page of Query, by which every pet of
	// Want must be found once: IDs are the ids it visited, an id once each
	// time it was seen.
	Paging = "paging"
)

// Members is a JSON object's members, each as canonical JSON text in the
// form the contract's value rules give it (package value): a create's Sent
// normalised by the request's schema, a pet an answer showed as an
// answer's value of it (value.Answered), so that two members are the same
// value exactly when their texts are equal.
type Members map[string]string

// Contract is what the checker must know of the spec to judge a kit's
// history.
type Contract struct {
	Name     string   `json:"name"`             // the member that names a pet
	Filter   string   `json:"filter,omitempty"` // the member the listing filters on
	Defaults Members  `json:"defaults,omitempty"`
	Request  []string `json:"request,omitempty"` // the members a create may send; an answer adds no other of them
}

// Kit are the fields of the kit's records, embedded in Op.
type Kit struct {
	Contract *Contract `json:"contract,omitempty"` // Begin

	// Tenant is which of the kit's API keys a request carried: 1 or 2;
	// 0 for none of them.
	Tenant int `json:"tenant,omitempty"`
	// Sent is a create's body, its members with the contract's defaults
	// applied at every depth; nil when it is no JSON object.
	Sent Members `json:"sent,omitempty"`
	// Got is the pet a 201 or a get's 200 answered, but its id, GotID.
	Got   Members `json:"got,omitempty"`
	GotID int64   `json:"gotId,omitempty"`
	// Location is a 201's Location header.
	Location string `json:"location,omitempty"`
	// Blame is the check a pet of a create's name fails when no
	// acknowledged create accounts for it, and the check the create's own
	// answer fails when the checker finds it wrong ("" for the checker's
	// own): the check of the kit's case that sent it.
	Blame string `json:"blame,omitempty"`
	// Left are the members of the contract's Defaults a create's body left
	// out: an answer that shows one otherwise than its default fails
	// default_status, not stored_as_sent.
	Left []string `json:"left,omitempty"`

	// List: the query's after, and the pets of the page but their ids
	// (in IDs), and its Link rel="next"'s query, one value a parameter.
	After     int64             `json:"after,omitempty"`
	Answers   []Members         `json:"answers,omitempty"`
	Next      bool              `json:"next,omitempty"`
	NextQuery map[string]string `json:"nextQuery,omitempty"`

	// Other: the operation, and the pets it may have changed.
	Operation  string  `json:"operation,omitempty"`
	Release    []int64 `json:"release,omitempty"`
	ReleaseAll bool    `json:"releaseAll,omitempty"`

	// ReadBack, Paging: the pets it must find.
	Want []int64 `json:"want,omitempty"`
	// Paging: the query of the walk's first page.
	Query string `json:"query,omitempty"`

	// Scope: the names its model tracks.
	Names string `json:"names,omitempty"`
}

package check

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/petstore/petstore/internal/history"
)

// Model is the checker of a conformance kit's history: it judges every
// answer of a create, a get and a page of the listing against what the
// earlier ops of the history created and were answered, not only against
// the schema. The kit feeds it op by op while it runs (Invoke, Complete),
// so that it reports a failure at the request that showed it; Replay feeds
// it a saved history, in the same order: the same judgments.
//
// Other writers may share the target: the rule for a page is "every pet of
// the model that belongs here is here, in order, and nothing here breaks
// the page's promises", never "the page equals the model".
//
// A sequence of the kit's -examples runs against a model of its own
// (history.Scope, by Process), merged into Process 0's when it ends.
type Model struct {
	mu     sync.Mutex
	c      history.Contract
	rules  memberRules
	scopes map[int]*model
}

// NewModel is a Model of a target whose contract says c.
func NewModel(c history.Contract) *Model {
	m := &Model{c: c, scopes: map[int]*model{}}
	if c.Request != nil {
		m.rules.request = map[string]bool{}
		for _, k := range c.Request {
			m.rules.request[k] = true
		}
	}
	m.scopes[0] = m.newModel("")
	return m
}

func (m *Model) newModel(names string) *model {
	return &model{
		pets: map[int64]*petRecord{}, names: map[string]*nameUse{}, keys: map[keyID]*keyUse{},
		defaults: m.c.Defaults, filter: m.c.Filter, nameKey: m.c.Name, tracks: names, rules: m.rules,
	}
}

// scope is the model of process; a process without a Scope op is judged
// by Process 0's.
func (m *Model) scope(process int) *model {
	if s := m.scopes[process]; s != nil {
		return s
	}
	return m.scopes[0]
}

// Invoke notes op as it is sent: a create's name is pending; a request the
// model does not follow releases the pets it may change; a Scope or Merge
// takes effect.
func (m *Model) Invoke(op *history.Op) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.scope(op.Process)
	switch op.Kind {
	case history.Create:
		s.sending(op.Sent, op.Key != "", op.Blame)
	case history.Other:
		if len(op.Release) > 0 || op.ReleaseAll {
			s.release(op.Release, op.ReleaseAll)
			if s != m.scopes[0] {
				m.scopes[0].release(op.Release, op.ReleaseAll)
			}
		}
	case history.Scope:
		if op.Process == 0 {
			m.scopes[0].tracks = op.Names
		} else {
			m.scopes[op.Process] = m.newModel(op.Names)
		}
	case history.Merge:
		if s := m.scopes[op.Process]; s != nil && op.Process != 0 {
			m.scopes[0].merge(s)
			delete(m.scopes, op.Process)
		}
	}
}

// Complete judges op's outcome, invoked before (Invoke), and learns from
// it.
func (m *Model) Complete(op *history.Op) []Anomaly {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.scope(op.Process)
	switch op.Kind {
	case history.Create:
		return blamed(s.created(op), op.Blame)
	case history.Get:
		return s.got(op)
	case history.List:
		return s.page(op)
	case history.ReadBack:
		return readBack(op)
	case history.Paging:
		return paging(op)
	}
	return nil
}

// blamed is vs, the anomalies found at a create sent by a case of check
// blame (history.Kit.Blame), as that check's: the case names which of the
// kit's checks its request counts for, the checker judges it.
func blamed(vs []Anomaly, blame string) []Anomaly {
	for i := range vs {
		if blame != "" {
			vs[i].Check = blame
		}
	}
	return vs
}

// Confirmed returns the ids of the pets the target acknowledged or showed
// to Process 0's model and that are still judged, in order: the pets a
// read-back reads.
func (m *Model) Confirmed() []int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []int64
	for _, p := range m.scopes[0].pets {
		if p.acked != 0 && !p.released {
			out = append(out, p.id)
		}
	}
	slices.Sort(out)
	return out
}

// Judgement is what a checker found over a history.
type Judgement struct {
	Verdict   string    `json:"verdict"` // Valid, Invalid or Unknown
	Anomalies []Anomaly `json:"anomalies"`
	// Ops is the index of the op each anomaly was found at, in order.
	Ops []int `json:"ops"`
	// Why says what the checker lacked, when Unknown.
	Why string `json:"why,omitempty"`
}

// event is one op's invocation (invoke) or completion, at its time.
type event struct {
	at     int64
	invoke bool
	i      int
}

// Replay judges a kit's history: the ops after its Begin, invoked and
// completed in the order of their times (a completion before an
// invocation of the same time), as the kit fed them while it ran. A
// history without a Begin is Unknown: the checker does not know the
// contract's members.
func Replay(ops []history.Op) Judgement {
	if len(ops) == 0 || ops[0].Kind != history.Begin || ops[0].Contract == nil {
		return Judgement{Verdict: Unknown, Why: "no begin line: not a kit's history, or one cut short"}
	}
	m := NewModel(*ops[0].Contract)
	var evs []event
	for i := 1; i < len(ops); i++ {
		evs = append(evs, event{ops[i].Invoke, true, i}, event{ops[i].Complete, false, i})
	}
	slices.SortStableFunc(evs, func(a, b event) int {
		if c := cmp.Compare(a.at, b.at); c != 0 {
			return c
		}
		return cmp.Compare(b2i(a.invoke), b2i(b.invoke))
	})
	j := Judgement{Verdict: Valid}
	for _, ev := range evs {
		op := &ops[ev.i]
		if ev.invoke {
			m.Invoke(op)
			continue
		}
		for _, a := range m.Complete(op) {
			j.Anomalies, j.Ops = append(j.Anomalies, a), append(j.Ops, ev.i)
		}
	}
	if len(j.Anomalies) > 0 {
		j.Verdict = Invalid
	}
	return j
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// petRecord is a pet the kit created: its members as sent (defaults
// applied), and when its 201 came back.
type petRecord struct {
	id       int64
	members  history.Members
	left     []string // the members its create left out, which took their defaults
	key      *keyID   // the Idempotency-Key of the create that made it; nil: none, or not made by a create
	acked    int64    // when the target acknowledged it; a pet must be on every page asked for after
	released bool     // a request the model does not follow may have changed it: judged no more
}

// nameUse is what became of the creates that sent one name. The kit's names
// are unique to its run (tracked names), so a pet that bears one was
// written by one of these creates.
type nameUse struct {
	sent    history.Members // the members of the last create sent with the name
	acked   map[int64]bool  // pets acknowledged with it
	found   map[int64]bool  // pets seen with it that an unknown create may have written
	pending int             // creates sent, not yet answered
	unknown int             // creates whose fate is unknown: no answer, a 5xx but 503 unavailable
	refused int             // creates refused: 4xx, 503 unavailable
	blame   string          // the check a pet no create accounts for fails
}

// keyID is an Idempotency-Key as a tenant (API key) uses it.
type keyID struct {
	tenant int
	key    string // without the quotes of the structured-field form
}

// keyUse is the outcome the target keeps for a key: the first successful
// create with it.
type keyUse struct {
	fingerprint string // the request: its members, defaults applied
	id          int64  // 0 while the outcome is unknown
	body        string // the answer's members, canonical
	location    string
	doneAt      int64 // when that answer came
	fresh       int   // answers not marked Idempotent-Replayed: the one that created the pet
	// unknown is the name whose count of unknown creates holds the pet an
	// attempt with the key may have written, while no answer says which
	// pet is the key's (model_unknown.go); nil: none.
	unknown *nameUse
}

// model is the model of one scope.
type model struct {
	pets     map[int64]*petRecord
	names    map[string]*nameUse
	keys     map[keyID]*keyUse
	defaults history.Members // NewPet's defaults
	filter   string          // the member the listing filters on ("status")
	nameKey  string          // the member that names a pet ("name")
	tracks   string          // the names it tracks contain this; "" for none
	rules    memberRules
}

func (m *model) tracked(name string) bool {
	return m.tracks != "" && strings.Contains(name, m.tracks)
}

// withDefaults returns members with the defaults of what they leave out.
func (m *model) withDefaults(members history.Members) history.Members {
	if members == nil {
		return nil
	}
	out := maps.Clone(members)
	for k, v := range m.defaults {
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	return out
}

// fingerprint is what makes two creates the same request: the NewPet after
// its defaults are applied.
func fingerprint(members history.Members) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(members)) {
		fmt.Fprintf(&b, "%q:%s,", k, members[k])
	}
	return b.String()
}

// nameOf returns the use of the name in members, or nil for a name no
// create of the model sent. With add, a tracked name is added.
func (m *model) nameOf(members history.Members, add bool) *nameUse {
	name, ok := unquote(members[m.nameKey])
	if !ok {
		return nil
	}
	u := m.names[name]
	if u == nil && add && m.tracked(name) {
		u = &nameUse{acked: map[int64]bool{}, found: map[int64]bool{}}
		m.names[name] = u
	}
	return u
}

func unquote(s string) (string, bool) {
	v, err := strconv.Unquote(s)
	if err != nil || !strings.HasPrefix(s, `"`) {
		return "", false
	}
	return v, true
}

// sending notes a create about to be sent with members; blame is the check
// a stray pet of its name fails.
func (m *model) sending(members history.Members, keyed bool, blame string) {
	u := m.nameOf(members, true)
	if u == nil {
		return
	}
	u.pending++
	u.sent = m.withDefaults(members)
	switch {
	case blame != "":
		u.blame = blame
	case keyed && u.blame == "":
		u.blame = "idempotent_replay"
	case u.blame == "":
		u.blame = "stored_as_sent"
	}
}

// release takes the pets ids (all, with all) out of judgment: a request
// the model does not follow may have changed them.
func (m *model) release(ids []int64, all bool) {
	for id, p := range m.pets {
		if all || slices.Contains(ids, id) {
			p.released = true
		}
	}
}

// merge adds what another model (one sequence of -examples) learnt.
func (m *model) merge(o *model) {
	for id, p := range o.pets {
		if m.pets[id] == nil {
			m.pets[id] = p
		}
	}
	for name, u := range o.names {
		if m.names[name] == nil {
			m.names[name] = u
		}
	}
}

// Cut shortens a list of ids for a message.
func Cut(ids []int64) string {
	if len(ids) > 10 {
		return fmt.Sprintf("%v … (%d in all)", ids[:10], len(ids))
	}
	return fmt.Sprint(ids)
}

// IsKit reports whether ops are a kit's history (a Begin first), which
// Replay judges; a chaos run's is judged by Check, with its final state.
func IsKit(ops []history.Op) bool {
	return len(ops) > 0 && ops[0].Kind == history.Begin
}

// Print writes the judgement: the anomalies by kind, each with its check
// and the op it was found at, and the verdict.
func (j Judgement) Print(w io.Writer) {
	n := map[string]int{}
	for _, a := range j.Anomalies {
		n[a.Kind]++
	}
	for _, k := range Kinds {
		fmt.Fprintf(w, "%-26s %d\n", k, n[k])
	}
	for i, a := range j.Anomalies {
		fmt.Fprintf(w, "%s (%s) at line %d: want %s", a.Kind, a.Check, j.Ops[i]+1, a.Want)
		if a.Got != "" {
			fmt.Fprintf(w, "; got %s", a.Got)
		}
		fmt.Fprintln(w)
	}
	if j.Why != "" {
		fmt.Fprintf(w, "unknown: %s\n", j.Why)
	}
	fmt.Fprintf(w, "result: %s (%d anomalies)\n", j.Verdict, len(j.Anomalies))
}

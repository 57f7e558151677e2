package conform

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The kit's model of the contract: what the kit itself created and what it
// was answered. Every answer of a create, a get and a listing is judged
// against it, not only against the schema. Its judgments are functions of
// what it was told (Jepsen's checker over a history), so they are
// unit-tested on crafted histories (model_test.go).
//
// Other writers may share the target: the rule for a page is "every pet of
// the model that belongs here is here, in order, and nothing here breaks
// the page's promises", never "the page equals the model".

// violation is one rule of the contract an answer broke.
type violation struct {
	check string
	want  string
	got   string // "" for the answer itself, described
}

// petRecord is a pet the kit created: its members as sent (defaults
// applied), each as canonical JSON text, and when its 201 came back.
type petRecord struct {
	id       int64
	members  map[string]string
	acked    uint64 // the clock when the target acknowledged it; a pet must be on every page asked for after
	released bool   // a request the kit has no model for may have changed it: judged no more (unmodelled.go)
}

// nameUse is what became of the creates that sent one name. The kit's names
// are unique to its run (tracked names), so a pet that bears one was
// written by one of these creates.
type nameUse struct {
	sent    map[string]string // the members of the last create sent with the name
	acked   map[int64]bool    // pets acknowledged with it
	found   map[int64]bool    // pets seen with it that an unknown create may have written
	pending int               // creates sent, not yet answered
	unknown int               // creates whose fate is unknown: no answer, a 5xx but 503 unavailable
	refused int               // creates refused: 4xx, 503 unavailable
	blame   string            // the check a pet no create accounts for fails
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
	doneAt      uint64 // when that answer came
	fresh       int    // answers not marked Idempotent-Replayed: the one that created the pet
}

// model is the kit's model of one target. Its methods are safe for
// concurrent use.
type model struct {
	mu       sync.Mutex
	pets     map[int64]*petRecord
	names    map[string]*nameUse
	keys     map[keyID]*keyUse
	defaults map[string]string // NewPet's defaults, canonical JSON
	filter   string            // the member the listing filters on ("status")
	nameKey  string            // the member that names a pet ("name")
	tracked  func(name string) bool
	rules    memberRules // how a pet as sent and as answered compare (members.go)
}

func newModel(defaults map[string]string, filter, nameKey string, tracked func(string) bool) *model {
	return &model{
		pets: map[int64]*petRecord{}, names: map[string]*nameUse{}, keys: map[keyID]*keyUse{},
		defaults: defaults, filter: filter, nameKey: nameKey, tracked: tracked,
	}
}

// withDefaults returns members with the defaults of what they leave out.
func (m *model) withDefaults(members map[string]string) map[string]string {
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
func fingerprint(members map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(members)) {
		fmt.Fprintf(&b, "%q:%s,", k, members[k])
	}
	return b.String()
}

// nameOf returns the use of the name in members, or nil for a name no
// create of the model sent. With add, a tracked name is added.
func (m *model) nameOf(members map[string]string, add bool) *nameUse {
	name, ok := unquote(members[m.nameKey])
	if !ok {
		return nil
	}
	u := m.names[name]
	if u == nil && add && m.tracked != nil && m.tracked(name) {
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
func (m *model) sending(members map[string]string, keyed bool, blame string) {
	m.mu.Lock()
	defer m.mu.Unlock()
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

// createObs is a create and its answer.
type createObs struct {
	tenant   int
	key      string            // Idempotency-Key, unquoted; "" without one
	sent     map[string]string // members sent, canonical; nil when the body is no JSON object
	status   int               // 0: no answer
	code     string            // the Error body's code
	id       int64             // the 201 body's id
	answer   map[string]string // the 201 body's members but id, canonical
	location string
	replayed bool
	sentAt   uint64
	doneAt   uint64
}

// created judges the answer to a create and learns from it.
func (m *model) created(o createObs) []violation {
	m.mu.Lock()
	defer m.mu.Unlock()
	sent := m.withDefaults(o.sent)
	u := m.nameOf(o.sent, false)
	if u != nil {
		u.pending--
	}
	switch {
	case o.status == 201 && o.answer != nil:
		return m.acked(o, sent, u)
	case o.status == 422 && o.key != "":
		return m.reused(o, sent)
	case o.status == 409 && o.key != "": // in flight: this request wrote nothing
	case o.status == 0 || o.status >= 500 && !(o.status == 503 && o.code == "unavailable") && o.status != 507:
		// outcome_unknown, no answer, a fault: the pet may exist, and with a
		// key its outcome may be kept.
		if u != nil {
			u.unknown++
		}
		if k := (keyID{o.tenant, o.key}); o.key != "" && m.keys[k] == nil {
			m.keys[k] = &keyUse{fingerprint: fingerprint(sent)}
		}
	default: // refused (429 and 507 too), or 503 unavailable: nothing was written
		if u != nil {
			u.refused++
		}
	}
	return nil
}

// acked judges a 201: the first answer for its key again if the key was
// used with the same request, a new pet stored as sent otherwise.
func (m *model) acked(o createObs, sent map[string]string, u *nameUse) []violation {
	var vs []violation
	body := fingerprint(o.answer)
	if o.key != "" {
		known, kvs := m.keyed(o, sent, body)
		if vs = kvs; known {
			return vs
		}
	}
	if p := m.pets[o.id]; p != nil {
		switch {
		case u != nil && u.found[o.id]: // seen in a listing before its answer came
		case o.replayed && o.key != "" && m.rules.alters(p.members, o.answer) == "":
			// The answer kept for the key, from before this run.
		case o.key == "" && fingerprint(p.members) == fingerprint(sent):
			vs = append(vs, violation{"idempotent_replay", fmt.Sprintf("a new pet: without an Idempotency-Key every create creates one, yet pet %d, created before with the same members, came back", o.id), ""})
		default:
			vs = append(vs, violation{"unique_ids", fmt.Sprintf("a new id for a new pet; %d was given before to %s", o.id, fingerprint(p.members)), ""})
		}
	}
	if d := m.rules.alters(sent, o.answer); sent != nil && d != "" {
		vs = append(vs, violation{"stored_as_sent", "201 with the pet as sent, defaults applied: " + fingerprint(sent), "201 with " + d})
	}
	members := sent
	if members == nil {
		members = o.answer
	}
	if p := m.pets[o.id]; p == nil {
		m.pets[o.id] = &petRecord{id: o.id, members: members, acked: o.doneAt}
	} else if p.acked == 0 || p.acked > o.doneAt {
		p.acked = o.doneAt
	}
	if u != nil {
		u.acked[o.id] = true
	}
	return vs
}

// keyed judges a 201 to a create with a key; known reports whether it names
// a pet the model holds already for the key (a replay, right or wrong).
func (m *model) keyed(o createObs, sent map[string]string, body string) (known bool, vs []violation) {
	k := keyID{o.tenant, o.key}
	fp := fingerprint(sent)
	rec := m.keys[k]
	switch {
	case rec == nil || rec.id == 0:
		for other, r := range m.keys {
			if other.key == o.key && other.tenant != o.tenant && r.id == o.id && r.id != 0 {
				return true, []violation{{"idempotency_scope", fmt.Sprintf("a pet of its own: pet %d, another API key's create with this Idempotency-Key, is not this key's answer", r.id), ""}}
			}
		}
		m.keys[k] = &keyUse{fingerprint: fp, id: o.id, body: body, location: o.location, doneAt: o.doneAt}
		if !o.replayed {
			m.keys[k].fresh++
		}
		return false, nil
	case rec.fingerprint != fp:
		return o.id == rec.id, []violation{{"idempotent_replay", fmt.Sprintf("422 idempotency_key_reused: the key was used for another request (pet %d)", rec.id), ""}}
	}
	// The same request again: the first answer, marked as a replay; or,
	// for one request sent before that answer came (a concurrent retry),
	// the answer of the create itself, unmarked.
	original := !o.replayed && rec.fresh == 0 && o.sentAt < rec.doneAt
	if !o.replayed {
		rec.fresh++
	}
	if o.id != rec.id || body != rec.body || o.location != rec.location || !o.replayed && !original {
		vs = append(vs, violation{"idempotent_replay", fmt.Sprintf("the first answer replayed: 201, pet %d, %s, Location %s, Idempotent-Replayed: true", rec.id, rec.body, rec.location), ""})
	}
	return o.id == rec.id, vs
}

// reused judges a 422 to a create with a key: the key must have been used
// by this tenant, successfully, for another request.
func (m *model) reused(o createObs, sent map[string]string) []violation {
	if o.code != "idempotency_key_reused" {
		return nil // the Error's code is judged with every answer
	}
	rec := m.keys[keyID{o.tenant, o.key}]
	switch {
	case rec == nil:
		for other := range m.keys {
			if other.key == o.key && other.tenant != o.tenant {
				return []violation{{"idempotency_scope", "201: another API key's use of this Idempotency-Key does not bind this one", ""}}
			}
		}
		return []violation{{"idempotent_replay", "201: this API key never had a create with this Idempotency-Key succeed (a refused create keeps no outcome)", ""}}
	case rec.id != 0 && rec.fingerprint == fingerprint(sent):
		return []violation{{"idempotent_replay", fmt.Sprintf("the first answer replayed (pet %d), not 422: the same request", rec.id), ""}}
	}
	return nil
}

// getObs is a getPet and its answer.
type getObs struct {
	id     int64
	status int
	gotID  int64
	answer map[string]string // members but id, canonical; nil unless 200
	sentAt uint64
	doneAt uint64
}

// got judges the answer to a getPet: exactly the pet asked for, as created;
// a created pet is never answered 404.
func (m *model) got(o getObs) []violation {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.pets[o.id]
	switch {
	case o.status == 200 && o.answer != nil:
		if o.gotID != o.id {
			return []violation{{"stored_as_sent", fmt.Sprintf("pet %d, the one asked for", o.id), ""}}
		}
		if p != nil {
			return m.same(p, o.answer)
		}
		return m.stray(o.id, o.answer, o.doneAt)
	case o.status == 404 && p != nil && p.acked != 0 && p.acked < o.sentAt && !p.released:
		return []violation{{"durability", fmt.Sprintf("200 with pet %d, created before: %s", o.id, fingerprint(p.members)), ""}}
	}
	return nil
}

// same judges a pet of the model as an answer shows it.
func (m *model) same(p *petRecord, answer map[string]string) []violation {
	if p.released {
		return nil
	}
	if d := m.rules.alters(p.members, answer); d != "" {
		return []violation{{"stored_as_sent", fmt.Sprintf("pet %d as created: %s", p.id, fingerprint(p.members)), fmt.Sprintf("pet %d with %s", p.id, d)}}
	}
	return nil
}

// stray judges a pet the model does not hold: one of another writer, unless
// it bears a name of this run, when a create of this run must account for
// it. A pet an unknown create wrote joins the model.
func (m *model) stray(id int64, answer map[string]string, seen uint64) []violation {
	u := m.nameOf(answer, false)
	if u == nil || u.found[id] {
		return nil
	}
	if u.pending > 0 || u.unknown > len(u.found) {
		u.found[id] = true
		m.pets[id] = &petRecord{id: id, members: u.sent, acked: seen}
		return m.same(m.pets[id], answer)
	}
	name, _ := unquote(answer[m.nameKey])
	if len(u.acked) == 0 && u.unknown == 0 {
		return []violation{{"refused_write", fmt.Sprintf("no pet named %q: every create with that name was refused", name), fmt.Sprintf("pet %d named %q", id, name)}}
	}
	return []violation{{u.blame, fmt.Sprintf("only the pets acknowledged for the name %q (%v), and one for each create whose outcome is unknown (%d)", name, slices.Sorted(maps.Keys(u.acked)), u.unknown), fmt.Sprintf("also pet %d", id)}}
}

// pageObs is a listing and its answer.
type pageObs struct {
	after  int64  // 0 when absent
	limit  int    // limit, or its default
	filter string // the filter's value; "" without one
	ids    []int64
	pets   []map[string]string // members but id, canonical
	next   bool                // a Link rel="next" came
	nextQ  map[string]string   // its query, one value a parameter
	sentAt uint64
	doneAt uint64
}

// page judges one page of a listing.
func (m *model) page(o pageObs) []violation {
	m.mu.Lock()
	defer m.mu.Unlock()
	var vs []violation
	if len(o.ids) > o.limit {
		vs = append(vs, violation{"pagination", fmt.Sprintf("at most limit=%d pets", o.limit), fmt.Sprintf("%d pets", len(o.ids))})
	}
	last := o.after
	ordered, above := true, true
	for i, id := range o.ids {
		above = above && id > o.after
		ordered = ordered && (i == 0 || id > o.ids[i-1])
		last = max(last, id)
		if o.filter != "" && o.pets[i][m.filter] != strconv.Quote(o.filter) {
			vs = append(vs, violation{"pagination", fmt.Sprintf("only pets with %s=%s", m.filter, o.filter), fmt.Sprintf("pet %d with %s %s", id, m.filter, o.pets[i][m.filter])})
		}
		if p := m.pets[id]; p != nil {
			vs = append(vs, m.same(p, o.pets[i])...)
		} else {
			vs = append(vs, m.stray(id, o.pets[i], o.doneAt)...)
		}
	}
	if !above {
		vs = append(vs, violation{"pagination", fmt.Sprintf("only ids above after=%d", o.after), fmt.Sprintf("ids %v", o.ids)})
	}
	if !ordered {
		vs = append(vs, violation{"ordering", "ids in ascending order", fmt.Sprintf("ids %v", o.ids)})
	}
	vs = append(vs, m.missing(o)...)
	return append(vs, m.nextLink(o)...)
}

// missing finds the pets of the model that belong on the page and are not
// on it: acknowledged before the page was asked for, above after, up to the
// page's last id when a next page follows, matching the filter.
func (m *model) missing(o pageObs) []violation {
	upper := int64(-1) // none
	if o.next {
		upper = o.after
		if n := len(o.ids); n > 0 {
			upper = max(upper, o.ids[n-1])
		}
	}
	var lost []int64
	for id, p := range m.pets {
		if p.acked == 0 || p.released || p.acked >= o.sentAt || id <= o.after || upper >= 0 && id > upper || slices.Contains(o.ids, id) {
			continue
		}
		if o.filter != "" && p.members[m.filter] != strconv.Quote(o.filter) {
			continue
		}
		lost = append(lost, id)
	}
	if len(lost) == 0 {
		return nil
	}
	slices.Sort(lost)
	where := "to the end of the listing (no next link)"
	if upper >= 0 {
		where = fmt.Sprintf("up to its last id %d (a next link follows)", upper)
	}
	return []violation{{"pagination", fmt.Sprintf("every pet created before the page was asked for, above after=%d and %s, on it: %v", o.after, where, cut(lost)), fmt.Sprintf("ids %v", o.ids)}}
}

// cut shortens a list of ids for a message.
func cut(ids []int64) string {
	if len(ids) > 10 {
		return fmt.Sprintf("%v … (%d in all)", ids[:10], len(ids))
	}
	return fmt.Sprint(ids)
}

// nextLink judges a next link: the same query, after the page's last id.
func (m *model) nextLink(o pageObs) []violation {
	if !o.next {
		return nil
	}
	if len(o.ids) == 0 {
		return []violation{{"pagination", "no Link rel=\"next\" after an empty page: it has no last id to continue from", ""}}
	}
	want := map[string]string{"after": strconv.FormatInt(o.ids[len(o.ids)-1], 10), "limit": strconv.Itoa(o.limit)}
	if o.filter != "" {
		want[m.filter] = o.filter
	}
	if !maps.Equal(want, o.nextQ) {
		return []violation{{"pagination", fmt.Sprintf("Link rel=\"next\" with the same query, after the page's last id: %v", want), fmt.Sprintf("a next link with %v", o.nextQ)}}
	}
	return nil
}

// confirmed returns the pets the target acknowledged or showed, by id.
func (m *model) confirmed() []*petRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*petRecord
	for _, p := range m.pets {
		if p.acked != 0 && !p.released {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *petRecord) int { return cmp.Compare(a.id, b.id) })
	return out
}

// release takes the pets ids (all, with all) out of judgment: a request
// the kit has no model for may have changed them.
func (m *model) release(ids []int64, all bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, p := range m.pets {
		if all || slices.Contains(ids, id) {
			p.released = true
		}
	}
}

// merge adds what another model (one sequence of -examples) learnt.
func (m *model) merge(o *model) {
	o.mu.Lock()
	defer o.mu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
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

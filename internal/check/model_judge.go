package check

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"

	"github.com/petstore/petstore/internal/history"
)

// an is an anomaly of kind, reported by check.
func an(kind, check, want, got string) Anomaly {
	return Anomaly{Kind: kind, Check: check, Want: want, Got: got}
}

// created judges the answer to a create and learns from it.
func (m *model) created(o *history.Op) []Anomaly {
	sent := m.withDefaults(o.Sent)
	u := m.nameOf(o.Sent, false)
	if u != nil {
		u.pending--
	}
	switch {
	case o.Status == 201 && o.Got != nil:
		return m.acked(o, sent, u)
	case o.Status == 422 && o.Key != "":
		return m.reused(o, sent)
	case o.Status == 409 && o.Key != "": // in flight: this request wrote nothing
	case o.Status == 0 || o.Status >= 500 && !(o.Status == 503 && o.Code == "unavailable") && o.Status != 507:
		// outcome_unknown, no answer, a fault: the pet may exist, and with a
		// key its outcome may be kept (model_unknown.go).
		m.unknownCreate(o, sent, u)
	default: // refused (429 and 507 too), or 503 unavailable: nothing was written
		if u != nil {
			u.refused++
		}
	}
	return nil
}

// acked judges a 201: the first answer for its key again if the key was
// used with the same request, a new pet stored as sent otherwise.
func (m *model) acked(o *history.Op, sent history.Members, u *nameUse) []Anomaly {
	var vs []Anomaly
	body := fingerprint(o.Got)
	if o.Key != "" {
		known, kvs := m.keyed(o, sent, body)
		if vs = append(vs, kvs...); known {
			return vs
		}
	}
	if p := m.pets[o.GotID]; p != nil {
		vs = append(vs, m.again(o, sent, u, p)...)
	}
	if sent != nil {
		vs = append(vs, m.judgeMembers(KindLost, sent, o.Left, o.Got, "201 with the pet as sent, defaults applied: ", "201 with ")...)
	}
	members := sent
	if members == nil {
		members = o.Got
	}
	if p := m.pets[o.GotID]; p == nil {
		p = &petRecord{id: o.GotID, members: members, left: o.Left, acked: o.Complete}
		if o.Key != "" {
			p.key = &keyID{o.Tenant, o.Key}
		}
		m.pets[o.GotID] = p
	} else if p.acked == 0 || p.acked > o.Complete {
		p.acked = o.Complete
	}
	if u != nil {
		u.acked[o.GotID] = true
	}
	return vs
}

// again judges a 201 that names p, a pet the model holds already, not as
// the answer its key keeps: a new create must make a new pet.
func (m *model) again(o *history.Op, sent history.Members, u *nameUse, p *petRecord) []Anomaly {
	switch {
	case u != nil && u.found[o.GotID]: // seen in a listing before its answer came
	case o.Replayed && p.key != nil && *p.key == (keyID{o.Tenant, o.Key}) && m.rules.alters(p.members, o.Got) == "":
		// The answer the key kept, its create judged by the model of a
		// sequence of -examples, which held the key.
	case o.Key == "" && fingerprint(p.members) == fingerprint(sent):
		return []Anomaly{an(KindLost, "idempotent_replay", fmt.Sprintf("a new pet: without an Idempotency-Key every create creates one, yet pet %d, created before with the same members, came back", o.GotID), "")}
	case o.Key != "" && fingerprint(p.members) == fingerprint(sent):
		return []Anomaly{an(KindLost, "idempotent_replay", fmt.Sprintf("a new pet: this Idempotency-Key kept no outcome, yet pet %d, another create's, came back", o.GotID), "")}
	default:
		return []Anomaly{an(KindLost, "unique_ids", fmt.Sprintf("a new id for a new pet; %d was given before to %s", o.GotID, fingerprint(p.members)), "")}
	}
	return nil
}

// keyed judges a 201 to a create with a key; known reports whether it names
// a pet the model holds already for the key (a replay, right or wrong).
func (m *model) keyed(o *history.Op, sent history.Members, body string) (known bool, vs []Anomaly) {
	k := keyID{o.Tenant, o.Key}
	fp := fingerprint(sent)
	rec := m.keys[k]
	switch {
	case rec == nil || rec.id == 0:
		vs = m.settled(rec, o.GotID)
		for other, r := range m.keys {
			if other.key == o.Key && other.tenant != o.Tenant && r.id == o.GotID && r.id != 0 {
				return true, []Anomaly{an(KindDoubled, "idempotency_scope", fmt.Sprintf("a pet of its own: pet %d, another API key's create with this Idempotency-Key, is not this key's answer", r.id), "")}
			}
		}
		m.keys[k] = &keyUse{fingerprint: fp, id: o.GotID, body: body, location: o.Location, doneAt: o.Complete}
		if !o.Replayed {
			m.keys[k].fresh++
		}
		return false, vs
	case rec.fingerprint != fp:
		return o.GotID == rec.id, []Anomaly{an(KindDoubled, "idempotent_replay", fmt.Sprintf("422 idempotency_key_reused: the key was used for another request (pet %d)", rec.id), "")}
	}
	// The same request again: the first answer, marked as a replay; or,
	// for one request sent before that answer came (a concurrent retry),
	// the answer of the create itself, unmarked.
	original := !o.Replayed && rec.fresh == 0 && o.Invoke < rec.doneAt
	if !o.Replayed {
		rec.fresh++
	}
	if o.GotID != rec.id || body != rec.body || o.Location != rec.location || !o.Replayed && !original {
		vs = append(vs, an(KindDoubled, "idempotent_replay", fmt.Sprintf("the first answer replayed: 201, pet %d, %s, Location %s, Idempotent-Replayed: true", rec.id, rec.body, rec.location), ""))
	}
	return o.GotID == rec.id, vs
}

// reused judges a 422 to a create with a key: the key must have been used
// by this tenant, successfully, for another request.
func (m *model) reused(o *history.Op, sent history.Members) []Anomaly {
	if o.Code != "idempotency_key_reused" {
		return nil // the Error's code is judged with every answer
	}
	rec := m.keys[keyID{o.Tenant, o.Key}]
	switch {
	case rec == nil:
		for other := range m.keys {
			if other.key == o.Key && other.tenant != o.Tenant {
				return []Anomaly{an(KindUnexpected, "idempotency_scope", "201: another API key's use of this Idempotency-Key does not bind this one", "")}
			}
		}
		return []Anomaly{an(KindUnexpected, "idempotent_replay", "201: this API key never had a create with this Idempotency-Key succeed (a refused create keeps no outcome)", "")}
	case rec.id != 0 && rec.fingerprint == fingerprint(sent):
		return []Anomaly{an(KindUnexpected, "idempotent_replay", fmt.Sprintf("the first answer replayed (pet %d), not 422: the same request", rec.id), "")}
	}
	return nil
}

// got judges the answer to a getPet: exactly the pet asked for, as created;
// a created pet is never answered 404.
func (m *model) got(o *history.Op) []Anomaly {
	p := m.pets[o.ID]
	var acked int64
	if p != nil && !p.released {
		acked = p.acked
	}
	if o.Status == 200 && o.Got == nil {
		return nil // the schema's to judge
	}
	switch kind, fault := getFault(o.ID, o.Status, o.GotID, acked, o.Invoke); kind {
	case KindWrongReads:
		return []Anomaly{an(kind, "stored_as_sent", fmt.Sprintf("pet %d, the one asked for", o.ID), fault)}
	case KindGetAfterAck:
		return []Anomaly{an(kind, "durability", fmt.Sprintf("200 with pet %d, created before: %s", o.ID, fingerprint(p.members)), fault)}
	}
	switch {
	case o.Status != 200:
	case p != nil:
		return m.same(p, o.Got)
	default:
		return m.stray(o.ID, o.Got, o.Complete)
	}
	return nil
}

// same judges a pet of the model as an answer shows it.
func (m *model) same(p *petRecord, answer history.Members) []Anomaly {
	if p.released {
		return nil
	}
	return m.judgeMembers(KindWrongReads, p.members, p.left, answer, fmt.Sprintf("pet %d as created: ", p.id), fmt.Sprintf("pet %d with ", p.id))
}

// stray judges a pet the model does not hold: one of another writer, unless
// it bears a name the model tracks, when a create it saw must account for
// it. A pet an unknown create wrote joins the model.
func (m *model) stray(id int64, answer history.Members, seen int64) []Anomaly {
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
		return []Anomaly{an(KindPhantom, "refused_write", fmt.Sprintf("no pet named %q: every create with that name was refused", name), fmt.Sprintf("pet %d named %q", id, name))}
	}
	return []Anomaly{an(KindPhantom, u.blame, fmt.Sprintf("only the pets acknowledged for the name %q (%v), and one for each create whose outcome is unknown (%d)", name, slices.Sorted(maps.Keys(u.acked)), u.unknown), fmt.Sprintf("also pet %d", id))}
}

// page judges one page of a listing.
func (m *model) page(o *history.Op) []Anomaly {
	var vs []Anomaly
	walk := func(check, want, got string) { vs = append(vs, an(KindWalkAnomalies, check, want, got)) }
	ordered := true
	for i, id := range o.IDs {
		ordered = ordered && (i == 0 || id > o.IDs[i-1])
		if o.Filter != "" && o.Answers[i][m.filter] != strconv.Quote(o.Filter) {
			walk("pagination", fmt.Sprintf("only pets with %s=%s", m.filter, o.Filter), fmt.Sprintf("pet %d with %s %s", id, m.filter, o.Answers[i][m.filter]))
		}
		if p := m.pets[id]; p != nil {
			vs = append(vs, m.same(p, o.Answers[i])...)
		} else {
			vs = append(vs, m.stray(id, o.Answers[i], o.Complete)...)
		}
	}
	if !ordered {
		walk("ordering", "ids in ascending order", fmt.Sprintf("ids %v", o.IDs))
	}
	for _, fault := range pageFaults(m.pageView(o)) {
		walk("pagination", fmt.Sprintf("a page of at most limit=%d pets above after=%d, a next link only after a pet, with the same query after its last id", o.Limit, o.After), fault)
	}
	return append(vs, m.missing(o)...)
}

// missing finds the pets of the model that belong on the page and are not
// on it: acknowledged before the page was asked for, above after, up to the
// page's last id when a next page follows, matching the filter.
func (m *model) missing(o *history.Op) []Anomaly {
	upper := int64(-1) // none
	if o.Next {
		upper = o.After
		if n := len(o.IDs); n > 0 {
			upper = max(upper, o.IDs[n-1])
		}
	}
	var lost []int64
	for id, p := range m.pets {
		if p.acked == 0 || p.released || p.acked >= o.Invoke || id <= o.After || upper >= 0 && id > upper || slices.Contains(o.IDs, id) {
			continue
		}
		if o.Filter != "" && p.members[m.filter] != strconv.Quote(o.Filter) {
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
	return []Anomaly{an(KindWalkAnomalies, "pagination", fmt.Sprintf("every pet created before the page was asked for, above after=%d and %s, on it: %v", o.After, where, Cut(lost)), fmt.Sprintf("ids %v", o.IDs))}
}

// readBack judges the read-back's walk: every pet it wants above its
// after found once.
func readBack(o *history.Op) []Anomaly {
	lost, twice := foundOnce(o.Want, o.IDs, o.After)
	kind := KindLost
	switch {
	case len(lost) == 0 && len(twice) == 0:
		return nil
	case len(lost) == 0:
		kind = KindWalkAnomalies
	}
	return []Anomaly{an(kind, "durability", fmt.Sprintf("every pet the run created found once walking the listing from after=%d (lost %s, more than once %s)", o.After, Cut(lost), Cut(twice)), "")}
}

// foundOnce returns the ids of want above after that ids holds no time
// (missing) and more than once (repeated): a walk's tally.
func foundOnce(want, ids []int64, after int64) (missing, repeated []int64) {
	seen := map[int64]int{}
	for _, id := range ids {
		seen[id]++
	}
	for _, id := range want {
		switch {
		case id <= after:
		case seen[id] == 0:
			missing = append(missing, id)
		case seen[id] > 1:
			repeated = append(repeated, id)
		}
	}
	return missing, repeated
}

// paging judges a walk of the kit's pagination check: every pet it wants
// visited once, none missed, none repeated.
func paging(o *history.Op) []Anomaly {
	missing, repeated := foundOnce(o.Want, o.IDs, 0)
	if len(missing) == 0 && len(repeated) == 0 {
		return nil
	}
	return []Anomaly{an(KindWalkAnomalies, "pagination", fmt.Sprintf("walking %q by Link visits pets %v once each (missed %v, repeated %v)", o.Query, o.Want, missing, repeated), "")}
}

// pageView is o, a page of the listing, as pageFaults judges it.
func (m *model) pageView(o *history.Op) pageView {
	v := pageView{after: o.After, limit: o.Limit, filterKey: m.filter, filter: o.Filter, ids: o.IDs, next: o.Next}
	if o.Next {
		v.nextQuery = url.Values{}
		for k, x := range o.NextQuery {
			v.nextQuery.Set(k, x)
		}
		v.nextText = "?" + v.nextQuery.Encode()
	}
	return v
}

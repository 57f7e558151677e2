package check

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// A get of one pet by its own promises, whichever history shows it: a 200
// shows the pet asked for, and a 404 never answers for a pet acknowledged
// before the get was sent. The model (model.got) and the audit
// (audit.auditReads, audit.auditGets) judge a get by this rule alone.

// getFault says how a get of id, invoked at invoke and answered status
// (and, a 200, pet gotID), breaks a get's promises, and the kind of
// anomaly; "" when it does not. ackedAt is when the history acknowledged
// pet id first (0: never).
func getFault(id int64, status int, gotID, ackedAt, invoke int64) (kind, fault string) {
	switch {
	case status == 200 && gotID != id:
		return KindWrongReads, fmt.Sprintf("answered pet %d, not pet %d, the one asked for", gotID, id)
	case status == 404 && ackedAt != 0 && ackedAt < invoke:
		return KindGetAfterAck, fmt.Sprintf("404 for pet %d, acknowledged before the get was sent", id)
	}
	return "", ""
}

// One page of the listing by its own promises, whichever history shows it
// (a kit's list op, a page of a chaos run's walk): at most limit pets, each
// above the cursor, and a next link only after a pet, one that keeps the
// query and moves the cursor to the page's last id. The model (model.page)
// and the audit (audit.walkPages) judge a page by this rule alone.

// pageView is a page as both histories record it.
type pageView struct {
	after     int64
	limit     int
	filterKey string  // the member, and the query parameter, the listing filters on
	filter    string  // the filter's value; "" for none
	ids       []int64 // the page's ids, in order
	next      bool    // a Link rel="next" follows
	nextText  string  // the link as the history records it
	nextPath  string  // its path; "" when the history does not record it
	nextQuery url.Values
}

// pageFaults says how p breaks the page's promises, a sentence each.
func pageFaults(p pageView) []string {
	var out []string
	if len(p.ids) > p.limit {
		out = append(out, fmt.Sprintf("%d pets, over the limit %d", len(p.ids), p.limit))
	}
	if i := slices.IndexFunc(p.ids, func(id int64) bool { return id <= p.after }); i >= 0 {
		out = append(out, fmt.Sprintf("pet %d, not above the cursor", p.ids[i]))
	}
	switch {
	case !p.next:
	case len(p.ids) == 0:
		out = append(out, "an empty page links to "+p.nextText+": it has no last id to continue from")
	default:
		if bad := badNext(p, p.ids[len(p.ids)-1]); bad != "" {
			out = append(out, "next link "+p.nextText+" "+bad)
		}
	}
	return out
}

// badNext says how p's next link is not the link the contract promises
// after a page whose last id is last: the same query, with after set to
// last.
func badNext(p pageView, last int64) string {
	q := p.nextQuery
	want := url.Values{"after": {strconv.FormatInt(last, 10)}, "limit": {strconv.Itoa(p.limit)}}
	if p.filter != "" {
		want.Set(p.filterKey, p.filter)
	}
	switch {
	case p.nextPath != "" && !strings.HasSuffix(p.nextPath, "/pets"):
		return "leaves the listing"
	case q.Get("after") != want.Get("after"):
		if after, err := strconv.ParseInt(q.Get("after"), 10, 64); err == nil && after < last {
			return fmt.Sprintf("loops: after=%s goes back from the page's last id %d", q.Get("after"), last)
		}
		return fmt.Sprintf("moves the cursor to after=%s, not to the page's last id %d", q.Get("after"), last)
	case !maps.EqualFunc(q, want, slices.Equal):
		return fmt.Sprintf("changes the query (want %s)", want.Encode())
	}
	return ""
}

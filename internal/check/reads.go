package check

import (
	"cmp"
	"fmt"
	"maps"
	"net/url"
	"slices"

	"github.com/petstore/petstore/internal/history"
)

// walkName names a walk in an anomaly's line.
func walkName(op *history.Op) string {
	what := fmt.Sprintf("walk (process %d, from %s", op.Process, op.Replica)
	if op.Filter != "" {
		what += ", status=" + op.Filter
	}
	return what + fmt.Sprintf(", limit %d, %d pets, at %s)", op.Limit, len(op.IDs), ms(op.Invoke))
}

// auditWalks checks every walk, up to where it ended.
//
// A pet committed after a page was read has an id greater than every id
// that page could show (id order is commit order: pgstore's create lock),
// so a walk that skipped a stored pet below its last id read a page while
// that pet's id was taken but not committed, and some greater id was.
func (a *audit) auditWalks() {
	// Acknowledged pets in the order of their acknowledgement.
	acked := slices.SortedFunc(maps.Values(a.acks), func(x, y *ack) int { return cmp.Compare(x.done, y.done) })
	for i := range a.ops {
		op := &a.ops[i]
		if op.Kind != history.Walk {
			continue
		}
		if op.Outcome == history.OK {
			a.r.Walks++
		}
		what := walkName(op)
		seen := a.walkOrder(op, what)
		a.walkPages(op, what)
		a.walkMissed(op, what, seen, acked)
	}
}

// walkOrder checks that ids ascend and, filtered, that the pets visited
// have the walk's status; it returns the ids visited.
func (a *audit) walkOrder(op *history.Op, what string) map[int64]bool {
	seen := make(map[int64]bool, len(op.IDs))
	for j, id := range op.IDs {
		if j > 0 && id <= op.IDs[j-1] {
			a.r.WalkAnomalies = append(a.r.WalkAnomalies, fmt.Sprintf("%s: id %d after %d, not ascending", what, id, op.IDs[j-1]))
		}
		seen[id] = true
		if p, ok := a.stored[id]; ok && op.Filter != "" && p.Status != op.Filter {
			a.r.WalkAnomalies = append(a.r.WalkAnomalies, fmt.Sprintf("%s: visited pet %d of status %s", what, id, p.Status))
		}
	}
	for _, p := range op.Pets {
		if _, ok := a.stored[p.ID]; !ok && op.Filter != "" && p.Status != op.Filter {
			a.r.WalkAnomalies = append(a.r.WalkAnomalies, fmt.Sprintf("%s: visited pet %d shown with status %s", what, p.ID, p.Status))
		}
	}
	return seen
}

// walkPages checks each page against its request: within the limit, above
// the cursor, a next link that keeps the query and moves the cursor to the
// page's last id; and no cursor refused.
func (a *audit) walkPages(op *history.Op, what string) {
	k := 0 // the page's first id in op.IDs
	for _, pg := range op.Pages {
		at := fmt.Sprintf("%s: page after=%d from %s", what, pg.After, pg.Replica)
		if pg.Status != 200 {
			if pg.Status >= 400 && pg.Status < 500 && pg.After > 0 {
				a.r.WalkAnomalies = append(a.r.WalkAnomalies, fmt.Sprintf("%s: cursor refused: %d %s %s", at, pg.Status, pg.Code, pg.Error))
			}
			continue
		}
		if k+pg.N > len(op.IDs) {
			a.r.Short = append(a.r.Short, fmt.Sprintf("%s: %d pets on the page, but the walk lists %d ids in all", at, pg.N, len(op.IDs)))
			return
		}
		ids := op.IDs[k : k+pg.N]
		k += pg.N
		v := pageView{after: pg.After, limit: op.Limit, filterKey: "status", filter: op.Filter, ids: ids, next: pg.Next != "", nextText: pg.Next}
		if v.next {
			u, err := url.Parse(pg.Next)
			if err != nil {
				a.r.WalkAnomalies = append(a.r.WalkAnomalies, fmt.Sprintf("%s: next link %s does not parse: %v", at, pg.Next, err))
				continue
			}
			v.nextPath, v.nextQuery = u.Path, u.Query()
		}
		for _, fault := range pageFaults(v) {
			a.r.WalkAnomalies = append(a.r.WalkAnomalies, at+": "+fault)
		}
	}
}

// walkMissed checks that the walk saw every stored pet of its status below
// the last id it visited, and, if it reached the last page, every one
// acknowledged before it began.
func (a *audit) walkMissed(op *history.Op, what string, seen map[int64]bool, acked []*ack) {
	var last int64
	if len(op.IDs) > 0 {
		last = op.IDs[len(op.IDs)-1]
	}
	reported := map[int64]bool{}
	for _, p := range a.byID {
		if p.ID >= last {
			break
		}
		if (op.Filter == "" || p.Status == op.Filter) && !seen[p.ID] {
			reported[p.ID] = true
			a.r.WalkAnomalies = append(a.r.WalkAnomalies, fmt.Sprintf("%s: missed pet %d, stored, below the last id visited", what, p.ID))
		}
	}
	if op.Outcome != history.OK {
		return
	}
	for _, k := range acked {
		if k.done >= op.Invoke {
			break
		}
		if op.Filter != "" && k.pet.Status != op.Filter {
			continue
		}
		// A pet not stored at the end is lost, and counted so.
		if _, ok := a.stored[k.pet.ID]; ok && !seen[k.pet.ID] && !reported[k.pet.ID] {
			a.r.WalkAnomalies = append(a.r.WalkAnomalies, fmt.Sprintf("%s: missed pet %d, acknowledged %s before the walk began", what, k.pet.ID, ms(op.Invoke-k.done)))
		}
	}
}

// read is every read that returned one pet (by id, or one version of it).
type read struct {
	first history.Pet // the version first returned
	by    string      // the first read's name
	n     int         // reads that returned it
}

// auditReads checks every pet a read returned against the final state:
// one that is not stored is an aborted read (a read of a create that did
// not last), one stored otherwise a wrong read. Each pet, and each wrong
// version of it, is reported once, with the number of reads that showed it.
func (a *audit) auditReads() {
	absent := map[int64]*read{}
	wrong := map[history.Pet]*read{}
	var absentOrder []int64
	var wrongOrder []history.Pet
	judge := func(p history.Pet, by string) {
		s, ok := a.stored[p.ID]
		switch {
		case !ok:
			if absent[p.ID] == nil {
				absent[p.ID] = &read{first: p, by: by}
				absentOrder = append(absentOrder, p.ID)
			}
			absent[p.ID].n++
		case !a.samePet(s, p):
			if wrong[p] == nil {
				wrong[p] = &read{first: s, by: by}
				wrongOrder = append(wrongOrder, p)
			}
			wrong[p].n++
		}
	}
	for i := range a.ops {
		op := &a.ops[i]
		switch {
		case op.Kind == history.Walk:
			a.r.Reads += len(op.IDs)
			what := walkName(op)
			shown := map[int64]history.Pet{}
			for _, p := range op.Pets {
				shown[p.ID] = p
				judge(p, what)
			}
			for _, id := range op.IDs {
				if _, ok := shown[id]; !ok {
					// A version an earlier line recorded: counted again
					// if absent (its fields were judged there).
					if r := absent[id]; r != nil {
						r.n++
					} else if _, ok := a.stored[id]; !ok {
						judge(history.Pet{ID: id}, what)
					}
				}
			}
		case op.Kind == history.Get && op.Status == 200 && op.Pet != nil:
			a.r.Reads++
			what := fmt.Sprintf("get %d from %s at %s", op.ID, op.Replica, ms(op.Invoke))
			if kind, fault := getFault(op.ID, op.Status, op.Pet.ID, 0, op.Invoke); kind == KindWrongReads {
				a.r.WrongReads = append(a.r.WrongReads, fmt.Sprintf("%s: %s", what, fault))
			}
			judge(*op.Pet, what)
		}
	}
	for _, req := range a.requests {
		for _, op := range req.replays {
			if _, ok := a.stored[op.Pet.ID]; ok { // if not, lost says so
				a.r.Reads++
				judge(*op.Pet, fmt.Sprintf("replay to key %s attempt %d from %s at %s", req.key, op.Attempt, op.Replica, ms(op.Invoke)))
			}
		}
	}
	for _, id := range absentOrder {
		r := absent[id]
		a.r.AbortedReads = append(a.r.AbortedReads, fmt.Sprintf("pet %d %+v returned by %d reads (first: %s) is not stored", id, r.first, r.n, r.by))
	}
	for _, p := range wrongOrder {
		r := wrong[p]
		a.r.WrongReads = append(a.r.WrongReads, fmt.Sprintf("pet %d returned as %+v by %d reads (first: %s), stored as %+v", p.ID, p, r.n, r.by, r.first))
	}
}

// auditGets checks each get of an acknowledged id invoked after the
// acknowledgement: never 404.
func (a *audit) auditGets() {
	for i := range a.ops {
		op := &a.ops[i]
		if op.Kind != history.Get || op.Status != 404 {
			continue
		}
		k, ok := a.acks[op.ID]
		if !ok {
			continue
		}
		if kind, fault := getFault(op.ID, op.Status, 0, k.done, op.Invoke); kind == KindGetAfterAck {
			a.r.GetAfterAck = append(a.r.GetAfterAck, fmt.Sprintf("get %d from %s: %s (%s after)", op.ID, op.Replica, fault, ms(op.Invoke-k.done)))
		}
	}
}

package broken

import (
	"strings"

	"github.com/petstore/petstore/internal/pgstore"
)

// The kinds planted in PostgreSQL's write path, through the statements of
// a batch (pgstore.WithSteps): a wrapper of the store cannot reach inside
// its transaction.
const (
	// NoLock commits batches without the create lock, and pauses up to
	// 20 ms between taking ids and counting the pets (whose row lock would
	// otherwise order most commits): ids no longer follow commit order.
	NoLock = "nolock"
	// Reorder hands the ids of a batch back to its members in reverse
	// order: every member of a batch of two or more is acknowledged with
	// another member's pet.
	Reorder = "reorder"
)

// Options returns the store Options that plant kind: NoLock and Reorder
// edit the batch's statements; the other kinds need none.
func Options(kind string) []pgstore.Option {
	switch kind {
	case NoLock:
		return []pgstore.Option{pgstore.WithSteps(noLock)}
	case Reorder:
		return []pgstore.Option{pgstore.WithSteps(reorder)}
	}
	return nil
}

// pause widens the race NoLock opens.
const pause = "select pg_sleep(random() * 0.02)"

func noLock(steps []pgstore.Step) []pgstore.Step {
	var out []pgstore.Step
	for _, st := range steps {
		switch st.Name {
		case pgstore.StepLock:
			continue
		case pgstore.StepCount:
			out = append(out, pgstore.Step{Name: "pause", SQL: pause})
		}
		out = append(out, st)
	}
	return out
}

// inputOrder is how the insert orders its answer, a row a member.
const inputOrder = "order by m.ord"

func reorder(steps []pgstore.Step) []pgstore.Step {
	for i, st := range steps {
		if st.Name == pgstore.StepInsert || st.Name == pgstore.StepInsertKeyed {
			steps[i].SQL = strings.Replace(st.SQL, inputOrder, inputOrder+" desc", 1)
		}
	}
	return steps
}

package check

import (
	"strconv"
	"testing"

	"github.com/petstore/petstore/internal/history"
)

// A keyed create answered 503 outcome_unknown is settled by its retry with
// the key: the key has one pet, whichever attempt wrote it. A target that
// stored the first attempt and created the pet again on the retry shows a
// second pet of the name, and fails idempotent_replay, whether the kit
// sees it after the retry's answer or before.
func TestModelOutcomeUnknownSettled(t *testing.T) {
	see := func(m *Model, id int64, p history.Members, at int64) []Anomaly {
		return lpage(m, pageObs{after: id - 1, limit: 1, ids: []int64{id}, pets: []history.Members{p}, next: true, nextQ: map[string]string{"after": strconv.FormatInt(id, 10), "limit": "1"}, sentAt: at, doneAt: at + 1})
	}
	unknown := func(m *Model, key string, p history.Members, at int64) []Anomaly {
		return send(m, createObs{tenant: 1, key: key, sent: p, status: 503, code: "outcome_unknown", sentAt: at, doneAt: at + 1})
	}
	retry := func(m *Model, key string, p history.Members, id int64, replayed bool, at int64) []Anomaly {
		return send(m, createObs{tenant: 1, key: key, sent: p, status: 201, id: id, answer: p, replayed: replayed, sentAt: at, doneAt: at + 1})
	}
	p := mpet("run-unknown", "available")

	m := testModel()
	wantChecks(t, "503 outcome_unknown", unknown(m, "k", p, 1))
	wantChecks(t, "its retry, the stored pet replayed", retry(m, "k", p, 7, true, 3))
	wantChecks(t, "the pet, once", see(m, 7, p, 5))

	m = testModel()
	unknown(m, "k", p, 1)
	unknown(m, "k", p, 3)
	wantChecks(t, "retried twice, the pet not stored: created by the retry", retry(m, "k", p, 8, false, 5))
	wantChecks(t, "that pet", see(m, 8, p, 7))
	wantChecks(t, "a second pet of the key's name, seen after the answer", see(m, 7, p, 9), "idempotent_replay")

	m = testModel()
	unknown(m, "k", p, 1)
	wantChecks(t, "a pet the unknown attempt may have written", see(m, 7, p, 3))
	wantChecks(t, "the retry creates another: a second pet, seen before the answer", retry(m, "k", p, 8, false, 5), "idempotent_replay")

	m = testModel()
	send(m, createObs{tenant: 1, sent: p, status: 503, code: "outcome_unknown", sentAt: 1, doneAt: 2})
	wantChecks(t, "without a key, the pet may exist", see(m, 7, p, 3))
	wantChecks(t, "but once", see(m, 8, p, 5), "stored_as_sent")
}

package conform

import (
	"context"
	"net/http"
)

// Retries equivalent over headers: a keyed retry that changes only what
// does not describe the animal (a header the request's fingerprint does
// not read, or another accepted spelling of one it does) is the same
// request, and replays the first answer.

// retryHeaderForms are the headers a retry changes, each alone: name and
// values, and what the change is.
var retryHeaderForms = []struct {
	label  string
	name   string
	values []string
}{
	{"another User-Agent", "User-Agent", []string{"conform-retry/2.0 (another client)"}},
	{"an Accept of another form", "Accept", []string{"application/*;q=0.9, */*;q=0.1"}},
	{"an Origin", "Origin", []string{corsOrigin}},
	{"an X-Request-Id of the client's", "X-Request-Id", []string{"conform-retry-request-id"}},
	{"Cache-Control: no-cache", "Cache-Control", []string{"no-cache"}},
	{"a header the contract does not name", "X-Conform-Retry", []string{"2"}},
	{`Content-Type: Application/JSON; charset="UTF-8"`, "Content-Type", []string{`Application/JSON; charset="UTF-8"`}},
	{"Content-Type: application/json;charset=utf-8", "Content-Type", []string{"application/json;charset=utf-8"}},
	{"Content-Encoding: identity", "Content-Encoding", []string{"identity"}},
}

// retryHeaders creates a pet with a key, then retries it changing each of
// retryHeaderForms alone, and with the scheme of Authorization in another
// case: each retry is the first answer replayed.
func (r *run) retryHeaders(ctx context.Context) error {
	if !r.stated("retry-headers") {
		return nil
	}
	key := r.Name("conform-retry-headers")
	body := mustJSON(r.reqs.NewPet("conform-retry-headers", nil))
	x, id, ok, err := r.post(ctx, body, keyHeader(key), 1)
	if err != nil {
		return err
	}
	r.Expect("idempotent_replay", x, ok, "201 for a create with an Idempotency-Key")
	if !ok {
		return nil
	}
	var ks []kase
	for _, f := range retryHeaderForms {
		req := r.reqs.CreateReq(body, keyHeader(key))
		req.Header = cloneWith(req.Header, f.name, f.values...)
		ks = append(ks, kase{Label: "the retry with " + f.label, Check: "idempotent_replay", Req: req, Want: replayOf(id)})
	}
	scheme := r.reqs.CreateReq(body, http.Header{"Idempotency-Key": {key}, "Authorization": {"bEARER " + r.cfg.Key}})
	ks = append(ks, kase{Label: "the retry with the scheme bEARER", Check: "idempotent_replay", Req: scheme, Want: replayOf(id)})
	return r.sendCases(ctx, ks)
}

package cases

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
	{"an Origin", "Origin", []string{CORSOrigin}},
	{"an X-Request-Id of the client's", "X-Request-Id", []string{"conform-retry-request-id"}},
	{"Cache-Control: no-cache", "Cache-Control", []string{"no-cache"}},
	{"a header the contract does not name", "X-Conform-Retry", []string{"2"}},
	{`Content-Type: Application/JSON; charset="UTF-8"`, "Content-Type", []string{`Application/JSON; charset="UTF-8"`}},
	{"Content-Type: application/json;charset=utf-8", "Content-Type", []string{"application/json;charset=utf-8"}},
	{"Content-Encoding: identity", "Content-Encoding", []string{"identity"}},
}

// RetryHeaders creates a pet with a key, then retries it changing each of
// retryHeaderForms alone, and with the scheme of Authorization in another
// case: each retry is the first answer replayed.
func RetryHeaders(ctx context.Context, t T) error {
	if !t.Stated("retry-headers") {
		return nil
	}
	reqs := t.Requests()
	key := t.Name("conform-retry-headers")
	body := MustJSON(reqs.NewPet("conform-retry-headers", nil))
	x, id, ok, err := t.Post(ctx, body, KeyHeader(key), 1)
	if err != nil {
		return err
	}
	t.Expect("idempotent_replay", x, ok, "201 for a create with an Idempotency-Key")
	if !ok {
		return nil
	}
	var ks []Case
	for _, f := range retryHeaderForms {
		req := reqs.CreateReq(body, KeyHeader(key))
		req.Header = CloneWith(req.Header, f.name, f.values...)
		ks = append(ks, Case{Label: "the retry with " + f.label, Check: "idempotent_replay", Req: req, Want: ReplayOf(id)})
	}
	scheme := reqs.CreateReq(body, http.Header{"Idempotency-Key": {key}, "Authorization": {"bEARER " + t.Key()}})
	ks = append(ks, Case{Label: "the retry with the scheme bEARER", Check: "idempotent_replay", Req: scheme, Want: ReplayOf(id)})
	return Send(ctx, t, ks)
}

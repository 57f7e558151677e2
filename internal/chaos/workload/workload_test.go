package workload

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/history"
	"github.com/petstore/petstore/internal/schemagen"
	"github.com/petstore/petstore/internal/schemagen/schematest"
)

// TestCreateOutcome: only an answer that rules the create out is failed;
// whatever leaves it possible is indeterminate, so that the audit never
// blames the server for a pet a create may have made. A 503 is judged by
// its code, never by its message's words.
func TestCreateOutcome(t *testing.T) {
	body := func(code, msg string) []byte {
		return []byte(`{"code":"` + code + `","message":"` + msg + `","status":503}`)
	}
	for _, c := range []struct {
		name string
		a    answer
		want string
	}{
		{"201", answer{status: 201}, history.OK},
		{"never connected", answer{err: &net.OpError{Op: "dial", Err: errors.New("connection refused")}}, history.Failed},
		{"connection lost", answer{err: &net.OpError{Op: "read", Err: errors.New("connection reset")}}, history.Indeterminate},
		{"409 in flight", answer{status: 409}, history.Failed},
		{"422 reused", answer{status: 422}, history.Failed},
		{"503 unavailable", answer{status: 503, body: body("unavailable", "the store is unavailable; nothing was written, retry later")}, history.Failed},
		{"503 unavailable, whatever it says", answer{status: 503, body: body("unavailable", "the pet may have been created")}, history.Failed},
		{"503 outcome_unknown", answer{status: 503, body: body("outcome_unknown", "the store failed after the create was sent: the pet may have been created")}, history.Indeterminate},
		{"503 outcome_unknown, whatever it says", answer{status: 503, body: body("outcome_unknown", "nothing was written")}, history.Indeterminate},
		{"503 of another code", answer{status: 503, body: body("internal", "nothing was written")}, history.Indeterminate},
		{"503 unreadable", answer{status: 503, body: []byte("nothing was written")}, history.Indeterminate},
		{"500", answer{status: 500}, history.Indeterminate},
	} {
		if got := createOutcome(c.a); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

// TestAnswersKeepTheContract: every answer is checked against openapi.yaml,
// and a create's 201 that does not read as a pet is recorded as a violation
// and left indeterminate, never taken for an acknowledgement.
func TestAnswersKeepTheContract(t *testing.T) {
	var body, location string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if location != "" {
			w.Header().Set("Location", location)
		}
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, body)
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "history.jsonl")
	h, err := history.CreateFile(path, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(h, []Target{At("r1", strings.TrimPrefix(srv.URL, "http://"))}, "k", 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	b := history.Body{Name: "Rex", CategoryID: 1, Status: "available"}
	body, location = apitest.PetJSON(`{"id":1,"name":"Rex","categoryId":1,"status":"available"}`), apitest.Path("/pets/1")
	if out, _ := l.create(context.Background(), 1, b, "", 1); out != history.OK {
		t.Fatalf("a 201 that keeps the contract: %s", out)
	}
	body = `{"id":2,"name":"Rex"}`
	if out, _ := l.create(context.Background(), 1, b, "", 1); out != history.OK {
		t.Fatalf("a 201 that reads as a pet: %s", out)
	}
	body = `{"id":"three"}`
	if out, _ := l.create(context.Background(), 1, b, "", 1); out != history.Indeterminate {
		t.Fatalf("an unreadable 201: %s, want indeterminate", out)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	ops, err := history.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 3 || len(ops[0].Violations) != 0 || len(ops[1].Violations) == 0 || len(ops[2].Violations) == 0 || ops[2].Pet != nil {
		for _, op := range ops {
			t.Logf("%d %s %q", op.Status, op.Outcome, op.Violations)
		}
		t.Fatal("want no violation of the first answer, and violations of the others")
	}
}

// TestBodies: the workload draws its bodies from the spec's NewPet, every
// member of it: each body it sends is valid, carries the create's own name,
// and reads back from the history as sent; on a spec evolved with members
// of every kind, those are sent too, and status is left out now and then.
func TestBodies(t *testing.T) {
	l, err := New(nil, nil, "k", 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	evolved, err := schematest.Evolved()
	if err != nil {
		t.Fatal(err)
	}
	for _, newPet := range []*openapi3.Schema{l.newPet, evolved.Components.Schemas["NewPet"].Value} {
		l.newPet = newPet
		g := schemagen.New(rand.New(rand.NewPCG(1, 2)))
		members, noStatus := map[string]bool{}, 0
		for i := range 300 {
			name := fmt.Sprintf("chaos run-1-%d", i)
			b, err := l.body(g, name)
			if err != nil {
				t.Fatal(err)
			}
			sent, _ := json.Marshal(b)
			var v map[string]any
			dec := json.NewDecoder(bytes.NewReader(sent))
			dec.UseNumber()
			if err := dec.Decode(&v); err != nil || newPet.VisitJSON(v) != nil || v["name"] != name {
				t.Fatalf("body %s: invalid (%v, %v), or not named %q", sent, err, newPet.VisitJSON(v), name)
			}
			var back history.Body
			if err := json.Unmarshal(sent, &back); err != nil || back != b {
				t.Fatalf("body %s reads back as %+v (%v)", sent, back, err)
			}
			for k := range v {
				members[k] = true
			}
			if b.Status == "" {
				noStatus++
			}
		}
		if len(members) != len(newPet.Properties) || noStatus == 0 {
			t.Errorf("300 bodies sent members %v (want every one of %d), %d without status", members, len(newPet.Properties), noStatus)
		}
	}
}

// TestTallyKinds: the load tallies each request under its kind, a keyed
// create's second attempt as a resend, and a request the end of the load
// canceled as cut short rather than unanswered.
func TestTallyKinds(t *testing.T) {
	answers := []int{0, 201, 201, 502, 200, 200} // in the order sent; 0: the connection is closed unanswered
	var next atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := answers[next.Add(1)-1]
		if st == 0 {
			c, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				c.Close()
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(st)
		io.WriteString(w, `{"id":1,"name":"Rex","categoryId":1,"status":"available"}`)
	}))
	defer srv.Close()
	h, err := history.CreateFile(filepath.Join(t.TempDir(), "history.jsonl"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	r := At("lb", strings.TrimPrefix(srv.URL, "http://"))
	l, err := New(h, []Target{r}, "k", 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	tl := &Tally{}
	l.SetTally(tl)
	ctx := context.Background()
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	rex := history.Body{Name: "Rex", CategoryID: 1, Status: "available"}
	l.create(ctx, 1, rex, "k1", 1)
	l.create(ctx, 1, rex, "k1", 2)
	l.create(ctx, 1, rex, "k2", 1)
	l.create(ctx, 1, rex, "", 1)
	l.do(ctx, r, ReqGet, http.MethodGet, l.pets+"/7", nil, "")
	l.do(ctx, r, ReqPage, http.MethodGet, l.pets+"?limit=100", nil, "")
	l.do(canceled, r, ReqPage, http.MethodGet, l.pets+"?limit=100", nil, "")
	var got []string
	for _, s := range tl.Requests() {
		got = append(got, s.Kind+" "+statusName(s.Status))
	}
	want := []string{
		ReqKeyed + " none", ReqKeyedRetry + " 201", ReqKeyed + " 201", ReqKeyless + " 502",
		ReqGet + " 200", ReqPage + " 200", ReqPage + " cut",
	}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var b strings.Builder
	PrintByStatus(&b, tl.Requests())
	// Columns: total, 200, 201, 502, cut, none, not ok. The keyed row: 2
	// sent (the resend has a row of its own), 1 without an answer.
	rows := map[string]string{}
	for _, line := range strings.Split(b.String(), "\n") {
		if f := strings.Fields(line); len(f) > 7 {
			rows[strings.Join(f[:len(f)-7], " ")] = strings.Join(f[len(f)-7:], " ")
		}
	}
	for row, want := range map[string]string{
		ReqKeyed: "2 0 1 0 0 1 1", ReqKeyedRetry: "1 0 1 0 0 0 0", ReqKeyless: "1 0 0 1 0 0 1", ReqPage: "1 1 0 0 1 0 0",
	} {
		if rows[row] != want {
			t.Errorf("%s: got %q, want %q\n%s", row, rows[row], want, b.String())
		}
	}
}

// Package workload is the clients of a chaos run and of a rolling deploy:
// writers that create pets (keyed, retried with their key until answered,
// or keyless, sent once) with bodies drawn from the spec's NewPet, getters
// and walkers that read them back, every answer checked against
// openapi.yaml and every operation recorded in the history, and, when
// asked, every request tallied (Tally). It also holds what reads that
// history back: Save and Audit (the audit under the defaults of the
// NewPet it draws from). It sends to Targets and knows nothing of how they
// run (internal/chaos/cluster) or what faults they suffer
// (internal/chaos/nemesis).
package workload

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"golang.org/x/time/rate"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/check"
	"github.com/petstore/petstore/internal/contract"
	"github.com/petstore/petstore/internal/history"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/schemagen"
)

// requestTimeout bounds one request: above the store's 5 s query timeout,
// so that a slow database gets its 503 rather than a client timeout.
const requestTimeout = 8 * time.Second

var statuses = pets.Statuses

// NamePrefix starts every pet's name, and nothing else the clients send.
// A name goes on with the run's id, the writer and its sequence number:
// unique to one create (the audit's convention), and to one run.
const NamePrefix = "chaos "

// A Target is a server the clients send to: a replica, through its front
// if it has one, or a balancer.
type Target interface {
	Name() string       // as the history names it
	ClientAddr() string // host:port
}

// At is a Target at a fixed address.
func At(name, addr string) Target { return fixed{name, addr} }

type fixed struct{ name, addr string }

func (f fixed) Name() string       { return f.name }
func (f fixed) ClientAddr() string { return f.addr }

// Load is the clients' shared state.
type Load struct {
	h        *history.Writer
	targets  []Target
	key      string // the API key
	run      string // this run's id, in every Idempotency-Key
	client   *http.Client
	contract *contract.Contract // every answer is checked against openapi.yaml
	pets     string             // the collection's path: the spec's base path and /pets
	newPet   *openapi3.Schema   // the create's body: the spec's NewPet, every body drawn from it
	creates  *rate.Limiter
	reads    *rate.Limiter
	tally    *Tally // if set, records every request

	mu    sync.Mutex
	acked []int64 // acknowledged ids, for the getters
}

// New is the clients of targets, recording into h (which SetHistory may
// set later), sending key, at most createRate creates and readRate reads
// a second.
func New(h *history.Writer, targets []Target, key string, createRate, readRate float64) (*Load, error) {
	spec, err := gen.GetSpec()
	if err != nil {
		return nil, err
	}
	c, err := contract.FromServers(spec)
	if err != nil {
		return nil, err
	}
	newPet, err := createBody(spec)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		Proxy:               nil, // loopback only, never an HTTP proxy from the environment
		DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 32,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
	return &Load{
		h: h, targets: targets, key: key, contract: c, pets: c.BasePath() + "/pets", newPet: newPet,
		run:     strconv.FormatUint(rand.Uint64(), 36),
		client:  &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		creates: rate.NewLimiter(rate.Limit(createRate), 10),
		reads:   rate.NewLimiter(rate.Limit(readRate), 10),
	}, nil
}

// Settings are the workload's flags, run's and deploy's alike.
type Settings struct {
	Writers    int
	CreateRate float64
	ReadRate   float64
	Keyless    float64
}

// Register declares the workload's flags on fs, and -min-acked into opt.
func (f *Settings) Register(fs *flag.FlagSet, opt *check.Options) {
	fs.IntVar(&f.Writers, "writers", 8, "concurrent writers")
	fs.Float64Var(&f.CreateRate, "create-rate", 150, "creates a second, at most, across writers; 0 for no limit (each client as fast as answered)")
	fs.Float64Var(&f.ReadRate, "read-rate", 100, "gets and walks begun a second, at most; 0 for no limit")
	fs.Float64Var(&f.Keyless, "keyless", 0.1, "share of creates sent without Idempotency-Key (never retried)")
	fs.IntVar(&opt.MinAcked, "min-acked", 1, "fail unless at least this many creates were acknowledged")
}

// Validate checks the parsed flags, and makes a rate of 0 no limit.
func (f *Settings) Validate() error {
	switch {
	case f.Writers < 1 || f.Writers > 64:
		return errors.New("writers: want 1 to 64")
	case f.CreateRate < 0 || f.ReadRate < 0:
		return errors.New("create-rate and read-rate: want 0 (no limit) or more")
	}
	for _, r := range []*float64{&f.CreateRate, &f.ReadRate} {
		if *r == 0 {
			*r = math.Inf(1)
		}
	}
	return nil
}

// retryGrace is how long the keyed creates begun before the end of the
// load are retried on after it.
const retryGrace = 30 * time.Second

// Start starts the clients, which run until ctx ends: f.Writers writers
// (processes 1 …) and two getters (100, 101) and two walkers (200, 201).
// wait, called once ctx has ended, returns when they all have: the readers
// at once, the writers' keyed creates after up to retryGrace of retries
// (less if parent ends first).
func (l *Load) Start(parent, ctx context.Context, f Settings) (wait func()) {
	grace, stopGrace := context.WithCancel(parent)
	var writers, readers sync.WaitGroup
	for i := range f.Writers {
		writers.Go(func() { l.writer(ctx, grace, 1+i, f.Keyless) })
	}
	for i := range 2 {
		readers.Go(func() { l.getter(ctx, 100+i) })
		readers.Go(func() { l.walker(ctx, 200+i) })
	}
	return func() {
		defer stopGrace()
		readers.Wait()
		timer := time.AfterFunc(retryGrace, stopGrace)
		defer timer.Stop()
		writers.Wait()
	}
}

func (l *Load) pick() Target { return l.targets[rand.IntN(len(l.targets))] }

// SetHistory sets the history the clients record into, before Start.
func (l *Load) SetHistory(h *history.Writer) { l.h = h }

// SetTally makes the clients record every request they send into t.
func (l *Load) SetTally(t *Tally) { l.tally = t }

// answer is what one request got, and how it broke openapi.yaml.
type answer struct {
	status     int
	body       []byte
	header     http.Header
	err        error
	violations []string
}

// do sends one request of kind (for the tally) to r (through its front,
// which partitions play on), and checks the answer against openapi.yaml.
func (l *Load) do(ctx context.Context, r Target, kind, method, path string, body []byte, key string) answer {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, "http://"+r.ClientAddr()+path, bytes.NewReader(body))
	if err != nil {
		return answer{err: err}
	}
	// net/http resends a request with an Idempotency-Key on its own when a
	// reused connection fails after writing it; a resend refused by a killed
	// replica would then read as "never sent" (failed) though the first
	// copy may have been created. The workload does its own retries.
	req.GetBody = nil
	req.Header.Set("Authorization", "Bearer "+l.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	start := time.Now()
	resp, err := l.client.Do(req)
	if l.tally != nil {
		s := Sent{Kind: kind, Start: start, End: time.Now()}
		switch {
		case err != nil && errors.Is(ctx.Err(), context.Canceled):
			s.Status = CutShort
		case err != nil:
			s.Status = NoAnswer
		default:
			s.Status = resp.StatusCode
		}
		l.tally.add(s)
	}
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return answer{err: err}
	}
	a := answer{status: resp.StatusCode, body: b, header: resp.Header}
	for _, v := range l.contract.Check(req, a.status, a.header, a.body) {
		a.violations = append(a.violations, v.String())
	}
	return a
}

// notSent reports whether err means the request never reached a server:
// the connection was never made.
func notSent(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}

// answered: the server answered 2xx or 4xx (the availability).
func (a answer) answered() bool { return a.err == nil && a.status >= 200 && a.status < 500 }

// message is the Error body's message, or the transport error.
func (a answer) message() string {
	if a.err != nil {
		return a.err.Error()
	}
	return a.errorBody().Message
}

// code is the Error body's code of a non-2xx answer.
func (a answer) code() string {
	if a.err != nil || a.status < 300 {
		return ""
	}
	return string(a.errorBody().Code)
}

func (a answer) errorBody() gen.Error {
	var e gen.Error
	json.Unmarshal(a.body, &e)
	return e
}

// record puts the answer's status, code, message and violations into op.
func (a answer) record(op *history.Op) {
	op.Status, op.Code = a.status, a.code()
	if a.status >= 300 || a.err != nil {
		op.Error = a.message()
	}
	op.Violations = append(op.Violations, a.violations...)
	if a.answered() {
		op.Answered++
	}
}

// createOutcome classifies a create's answer by its status and Error code,
// never by the message's words: 201 ok; a 4xx, a 503 unavailable
// (nothing was written), or a connection never made, failed; anything else
// (no answer, 503 outcome_unknown, a 503 of another code, a 500)
// indeterminate.
func createOutcome(a answer) string {
	switch {
	case a.err != nil && notSent(a.err):
		return history.Failed
	case a.err != nil:
		return history.Indeterminate
	case a.status == http.StatusCreated:
		return history.OK
	case a.status >= 400 && a.status < 500:
		return history.Failed
	case a.status == http.StatusServiceUnavailable && a.code() == string(gen.ErrorCodeUnavailable):
		return history.Failed
	}
	return history.Indeterminate
}

// writer creates pets until ctx ends; each keyed create is retried with
// its key until it is answered, or until grace ends.
func (l *Load) writer(ctx, grace context.Context, proc int, keylessShare float64) {
	g := schemagen.New(rand.New(rand.NewPCG(rand.Uint64(), uint64(proc))))
	for seq := 1; ; seq++ {
		if l.creates.Wait(ctx) != nil {
			return
		}
		b, err := l.body(g, fmt.Sprintf("%s%s-%d-%d", NamePrefix, l.run, proc, seq))
		if err != nil {
			panic(err) // the spec's NewPet has no valid value: TestBodies fails first
		}
		if rand.Float64() < keylessShare {
			l.create(grace, proc, b, "", 1)
			continue
		}
		key := fmt.Sprintf("chaos-%s-%d-%d", l.run, proc, seq)
		start := time.Now()
		for attempt := 1; ; attempt++ {
			outcome, status := l.create(grace, proc, b, key, attempt)
			retry := outcome == history.Indeterminate ||
				outcome == history.Failed && (status == 0 || status == http.StatusConflict || status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests)
			if !retry || grace.Err() != nil || time.Since(start) > time.Minute {
				break
			}
			select {
			case <-grace.Done():
			case <-time.After(min(time.Duration(attempt)*50*time.Millisecond, time.Second)):
			}
		}
	}
}

// createBody is the schema of the create's body in spec: NewPet.
func createBody(spec *openapi3.T) (*openapi3.Schema, error) {
	item := spec.Paths.Value("/pets")
	if item == nil || item.Post == nil || item.Post.RequestBody == nil || item.Post.RequestBody.Value == nil {
		return nil, errors.New("the spec has no POST /pets with a body")
	}
	mt := item.Post.RequestBody.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return nil, errors.New("POST /pets takes no JSON body")
	}
	return mt.Schema.Value, nil
}

// Audit is check.Check by the embedded spec's NewPet: a member a create
// left out is expected with its default, at every depth, each value by the
// contract's rules.
func Audit(ops []history.Op, state []history.Pet, opt check.Options) *check.Result {
	if opt.NewPet == nil {
		spec, err := gen.GetSpec()
		if err != nil {
			panic(err) // the embedded spec: its tests load it
		}
		newPet, err := createBody(spec)
		if err != nil {
			panic(err)
		}
		opt.NewPet = newPet
	}
	return check.Check(ops, state, opt)
}

// body draws a create's body from NewPet (schemagen): every member the
// spec gives it, each optional one sent or left out (its default then
// applies), values at their bounds often; and name, the create's own.
func (l *Load) body(g *schemagen.Generator, name string) (history.Body, error) {
	v, err := g.Value(l.newPet)
	if err != nil {
		return history.Body{}, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return history.Body{}, fmt.Errorf("NewPet drew %T, not an object", v)
	}
	m["name"] = name
	return history.NewBody(m)
}

// create sends one create and records it.
func (l *Load) create(ctx context.Context, proc int, b history.Body, key string, attempt int) (string, int) {
	r := l.pick()
	body, _ := json.Marshal(b)
	op := history.Op{Kind: history.Create, Process: proc, Replica: r.Name(), Key: key, Body: &b, Attempt: attempt, Requests: 1}
	if key == "" {
		op.Attempt = 0
	}
	kind := ReqKeyless
	switch {
	case key != "" && attempt > 1:
		kind = ReqKeyedRetry
	case key != "":
		kind = ReqKeyed
	}
	start := time.Now()
	a := l.do(ctx, r, kind, http.MethodPost, l.pets, body, key)
	op.Invoke, op.Complete = l.h.Since(start), l.h.Now()
	a.record(&op)
	op.Outcome = createOutcome(a)
	if op.Outcome == history.OK {
		if p, ok := readPet(a, &op); ok {
			op.Pet = &p
			op.Replayed = a.header.Get("Idempotent-Replayed") == "true"
			l.mu.Lock()
			l.acked = append(l.acked, p.ID)
			l.mu.Unlock()
		} else {
			op.Outcome = history.Indeterminate
		}
	}
	l.h.Add(op)
	return op.Outcome, op.Status
}

// readPet reads a 2xx answer's pet; one that does not read is a violation
// of the contract, noted in op.
func readPet(a answer, op *history.Op) (history.Pet, bool) {
	var p history.Pet
	if err := json.Unmarshal(a.body, &p); err != nil || p.ID <= 0 {
		op.Violations = append(op.Violations, fmt.Sprintf("%d with an unreadable pet: %v", a.status, err))
		return p, false
	}
	return p, true
}

// getID picks the id a get asks for: an acknowledged one, the latest most
// often, or now and then one just above every acknowledged id (a pet being
// created, or none: a read of a create not yet answered must still be
// one that lasts). 0 while nothing is acknowledged.
func (l *Load) getID() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.acked)
	if n == 0 {
		return 0
	}
	switch rand.IntN(5) {
	case 0:
		return l.acked[rand.IntN(n)]
	case 1:
		return slices.Max(l.acked[max(0, n-50):]) + 1 + rand.Int64N(3)
	}
	return l.acked[n-1-rand.IntN(min(n, 50))]
}

// getter reads pets by id until ctx ends.
func (l *Load) getter(ctx context.Context, proc int) {
	for l.reads.Wait(ctx) == nil {
		id := l.getID()
		if id == 0 {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		r := l.pick()
		op := history.Op{Kind: history.Get, Process: proc, Replica: r.Name(), ID: id, Requests: 1}
		start := time.Now()
		a := l.do(ctx, r, ReqGet, http.MethodGet, l.pets+"/"+strconv.FormatInt(id, 10), nil, "")
		if a.err != nil && ctx.Err() != nil {
			return // cut short by the end of the run
		}
		op.Invoke, op.Complete = l.h.Since(start), l.h.Now()
		a.record(&op)
		switch a.status {
		case http.StatusOK:
			if p, ok := readPet(a, &op); ok {
				op.Outcome, op.Pet = history.OK, &p
			} else {
				op.Outcome = history.Failed
			}
		case http.StatusNotFound:
			op.Outcome = history.OK
		default:
			op.Outcome = history.Failed
		}
		l.h.Add(op)
	}
}

var nextLink = regexp.MustCompile(`<([^>]*)>;\s*rel="next"`)

// pageTries bounds the requests for one page of a walk.
const pageTries = 30

// walker walks the listing until ctx ends: from the first page to the
// last by Link rel="next", each page from any replica, filtered by status
// or not. A page without an answer or answered 503 is asked again; any
// other answer but 200 ends the walk, and so does a next link that does
// not move the cursor on (it would loop). Every request is recorded.
func (l *Load) walker(ctx context.Context, proc int) {
	for l.reads.Wait(ctx) == nil {
		op := history.Op{Kind: history.Walk, Process: proc, Limit: []int{100, 100, 37}[rand.IntN(3)]}
		path := l.pets + "?limit=" + strconv.Itoa(op.Limit)
		if rand.IntN(2) == 0 {
			op.Filter = string(statuses[rand.IntN(len(statuses))])
			path += "&status=" + op.Filter
		}
		op.Invoke = l.h.Now()
		op.Outcome = history.Failed
		var after int64
		for tries := 0; path != "" && ctx.Err() == nil; {
			next, got := l.walkPage(ctx, &op, path, after)
			switch {
			case got == pageAgain && tries < pageTries-1:
				tries++
				time.Sleep(100 * time.Millisecond)
				continue
			case got != pageRead:
				path = ""
			case next == "":
				op.Outcome, path = history.OK, ""
			case cursor(next) <= after:
				path = "" // a loop: the audit reports the link
			default:
				path, after, tries = next, cursor(next), 0
			}
		}
		op.Complete = l.h.Now()
		l.h.Add(op)
	}
}

// What became of a page request.
const (
	pageRead  = iota // answered 200 and read
	pageAgain        // no answer, or 503: ask again
	pageEnd          // another answer: the walk ends
)

// walkPage asks for one page of a walk and records it in op; it returns
// the next link, and what became of the request.
func (l *Load) walkPage(ctx context.Context, op *history.Op, path string, after int64) (string, int) {
	r := l.pick()
	if op.Replica == "" {
		op.Replica = r.Name()
	}
	a := l.do(ctx, r, ReqPage, http.MethodGet, path, nil, "")
	if a.err != nil && ctx.Err() != nil {
		return "", pageEnd // cut short by the end of the run: not an answer
	}
	op.Requests++
	a.record(op)
	pg := history.Page{After: after, Replica: r.Name(), Status: a.status, Code: a.code()}
	if a.status != http.StatusOK {
		pg.Error = a.message()
		op.Pages = append(op.Pages, pg)
		if a.err != nil || a.status == http.StatusServiceUnavailable {
			return "", pageAgain
		}
		return "", pageEnd
	}
	var page []history.Pet
	if err := json.Unmarshal(a.body, &page); err != nil {
		op.Violations = append(op.Violations, "200 with an unreadable page: "+err.Error())
		op.Pages = append(op.Pages, pg)
		return "", pageEnd
	}
	for _, p := range page {
		op.IDs = append(op.IDs, p.ID)
	}
	op.Pets = append(op.Pets, page...)
	pg.N = len(page)
	if m := nextLink.FindStringSubmatch(a.header.Get("Link")); m != nil {
		pg.Next = m[1]
	}
	op.Pages = append(op.Pages, pg)
	return pg.Next, pageRead
}

// cursor is the after parameter of a next link; 0 if it has none.
func cursor(next string) int64 {
	u, err := url.Parse(next)
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(u.Query().Get("after"), 10, 64)
	return n
}

// WalkAll lists every pet from r, for the memory store's final state.
func (l *Load) WalkAll(ctx context.Context, r Target) ([]history.Pet, error) {
	var all []history.Pet
	path := l.pets + "?limit=100"
	for path != "" {
		a := l.do(ctx, r, ReqPage, http.MethodGet, path, nil, "")
		if a.err != nil || a.status != http.StatusOK {
			return nil, fmt.Errorf("list %s: %d %s", path, a.status, a.message())
		}
		var page []history.Pet
		if err := json.Unmarshal(a.body, &page); err != nil {
			return nil, err
		}
		all = append(all, page...)
		path = ""
		if m := nextLink.FindStringSubmatch(a.header.Get("Link")); m != nil {
			path = m[1]
		}
	}
	return all, nil
}

// Save closes h, the history in the directory out, writes the final
// state beside it, and reads the history back: the audit reads what a
// later check would.
func Save(h *history.Writer, out string, state []history.Pet) ([]history.Op, error) {
	if err := h.Close(); err != nil {
		return nil, err
	}
	if err := history.WritePets(filepath.Join(out, "state.jsonl"), state); err != nil {
		return nil, err
	}
	return history.ReadFile(filepath.Join(out, "history.jsonl"))
}

package main

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
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/petstore/petstore/internal/chaos/history"
	"github.com/petstore/petstore/internal/pets"
)

// requestTimeout bounds one request: above the store's 5 s query timeout,
// so that a slow database gets its 503 rather than a client timeout.
const requestTimeout = 8 * time.Second

var statuses = pets.Statuses

// namePrefix starts every pet's name, and nothing else the clients send.
const namePrefix = "chaos "

// load is the clients' shared state.
type load struct {
	h        *history.Writer
	replicas []*replica
	key      string // the API key
	run      string // this run's id, in every Idempotency-Key
	client   *http.Client
	creates  *rate.Limiter
	reads    *rate.Limiter

	mu    sync.Mutex
	acked []int64 // acknowledged ids, for the getters
}

func newLoad(h *history.Writer, replicas []*replica, key string, createRate, readRate float64) *load {
	tr := &http.Transport{
		Proxy:               nil, // loopback only, never an HTTP proxy from the environment
		DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 32,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
	return &load{
		h: h, replicas: replicas, key: key,
		run:     strconv.FormatUint(rand.Uint64(), 36),
		client:  &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		creates: rate.NewLimiter(rate.Limit(createRate), 10),
		reads:   rate.NewLimiter(rate.Limit(readRate), 10),
	}
}

func (l *load) pick() *replica { return l.replicas[rand.IntN(len(l.replicas))] }

// answer is what one request got.
type answer struct {
	status int
	body   []byte
	header http.Header
	err    error
}

// do sends one request to r.
func (l *load) do(ctx context.Context, r *replica, method, path string, body []byte, key string) answer {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, "http://"+r.Addr()+path, bytes.NewReader(body))
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
	resp, err := l.client.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return answer{err: err}
	}
	return answer{status: resp.StatusCode, body: b, header: resp.Header}
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
	var e struct{ Message string }
	json.Unmarshal(a.body, &e)
	return e.Message
}

// createOutcome classifies a create's answer: 201 ok; a 4xx, a 503 that
// says nothing was written, or a connection never made, failed; anything
// else (no answer, "may have been created", another 503, 500) indeterminate.
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
	case a.status == http.StatusServiceUnavailable && strings.Contains(a.message(), "nothing was written"):
		return history.Failed
	}
	return history.Indeterminate
}

// writer creates pets until ctx ends; each keyed create is retried with
// its key until it is answered, or until grace ends.
func (l *load) writer(ctx, grace context.Context, proc int, keylessShare float64) {
	for seq := 1; ; seq++ {
		if l.creates.Wait(ctx) != nil {
			return
		}
		b := history.Body{
			Name:       fmt.Sprintf("%s%d-%d", namePrefix, proc, seq),
			CategoryID: 1 + rand.Int64N(9),
			Status:     string(statuses[rand.IntN(len(statuses))]),
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

// create sends one create and records it.
func (l *load) create(ctx context.Context, proc int, b history.Body, key string, attempt int) (string, int) {
	r := l.pick()
	body, _ := json.Marshal(b)
	op := history.Op{Kind: history.Create, Process: proc, Replica: r.name, Key: key, Body: &b, Attempt: attempt, Requests: 1}
	if key == "" {
		op.Attempt = 0
	}
	start := time.Now()
	a := l.do(ctx, r, http.MethodPost, "/v1/pets", body, key)
	op.Invoke, op.Complete = l.h.Since(start), l.h.Now()
	op.Status = a.status
	op.Outcome = createOutcome(a)
	if a.answered() {
		op.Answered = 1
	}
	if op.Outcome == history.OK {
		var p history.Pet
		if err := json.Unmarshal(a.body, &p); err != nil || p.ID <= 0 {
			op.Outcome, op.Error = history.Indeterminate, fmt.Sprintf("201 with an unreadable pet: %v", err)
		} else {
			op.Pet = &p
			l.mu.Lock()
			l.acked = append(l.acked, p.ID)
			l.mu.Unlock()
		}
	} else {
		op.Error = a.message()
	}
	l.h.Add(op)
	return op.Outcome, op.Status
}

// getter reads acknowledged pets by id until ctx ends, the latest ones
// most often.
func (l *load) getter(ctx context.Context, proc int) {
	for l.reads.Wait(ctx) == nil {
		l.mu.Lock()
		n := len(l.acked)
		var id int64
		if n > 0 {
			i := n - 1 - rand.IntN(min(n, 50))
			if rand.IntN(2) == 0 {
				i = rand.IntN(n)
			}
			id = l.acked[i]
		}
		l.mu.Unlock()
		if id == 0 {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		r := l.pick()
		op := history.Op{Kind: history.Get, Process: proc, Replica: r.name, ID: id, Requests: 1}
		start := time.Now()
		a := l.do(ctx, r, http.MethodGet, "/v1/pets/"+strconv.FormatInt(id, 10), nil, "")
		op.Invoke, op.Complete, op.Status = l.h.Since(start), l.h.Now(), a.status
		switch {
		case a.status == http.StatusOK:
			var p history.Pet
			if err := json.Unmarshal(a.body, &p); err != nil {
				op.Outcome, op.Error = history.Failed, "200 with an unreadable pet"
			} else {
				op.Outcome, op.Pet = history.OK, &p
			}
		case a.status == http.StatusNotFound:
			op.Outcome, op.Error = history.OK, a.message()
		case a.err != nil && ctx.Err() != nil:
			continue // cut short by the end of the run
		default:
			op.Outcome, op.Error = history.Failed, a.message()
		}
		if a.answered() {
			op.Answered = 1
		}
		l.h.Add(op)
	}
}

var nextLink = regexp.MustCompile(`<([^>]*)>;\s*rel="next"`)

// walker walks the listing until ctx ends: from the first page to the
// last by Link rel="next", each page from any replica, a failed page
// retried, filtered by status or not.
func (l *load) walker(ctx context.Context, proc int) {
	for ctx.Err() == nil {
		if l.reads.Wait(ctx) != nil {
			return
		}
		op := history.Op{Kind: history.Walk, Process: proc, Limit: []int{100, 100, 37}[rand.IntN(3)]}
		path := "/v1/pets?limit=" + strconv.Itoa(op.Limit)
		if rand.IntN(2) == 0 {
			op.Filter = string(statuses[rand.IntN(len(statuses))])
			path += "&status=" + op.Filter
		}
		op.Invoke = l.h.Now()
		op.Outcome = history.OK
		for path != "" && op.Outcome == history.OK {
			var a answer
			for try := 1; ; try++ {
				r := l.pick()
				if op.Replica == "" {
					op.Replica = r.name
				}
				a = l.do(ctx, r, http.MethodGet, path, nil, "")
				op.Requests++
				if a.answered() {
					op.Answered++
				}
				if a.err == nil && a.status == http.StatusOK || ctx.Err() != nil || try == 30 {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if a.err != nil || a.status != http.StatusOK {
				op.Outcome, op.Status, op.Error = history.Failed, a.status, a.message()
				break
			}
			var page []history.Pet
			if err := json.Unmarshal(a.body, &page); err != nil {
				op.Outcome, op.Error = history.Failed, "unreadable page: "+err.Error()
				break
			}
			for _, p := range page {
				op.IDs = append(op.IDs, p.ID)
			}
			path = ""
			if m := nextLink.FindStringSubmatch(a.header.Get("Link")); m != nil {
				path = m[1]
			}
		}
		op.Complete = l.h.Now()
		l.h.Add(op)
	}
}

// walkAll lists every pet from r, for the memory store's final state.
func (l *load) walkAll(ctx context.Context, r *replica) ([]history.Pet, error) {
	var all []history.Pet
	path := "/v1/pets?limit=100"
	for path != "" {
		a := l.do(ctx, r, http.MethodGet, path, nil, "")
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

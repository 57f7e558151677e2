// Package wire is how the conformance kit sends a request: through
// net/http (the configured transport, no redirect followed, every answer
// read whole) or written byte for byte on a connection of its own (raw.go);
// only to BASE_URL's host, within a request budget, an answer 429
// rate_limited waited out. It knows nothing of cases or checks: an
// Observer is told of each exchange as it leaves and as its answer comes,
// and judges it.
package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrBudget stops a run that has sent its MaxRequests requests, or that
// was stopped (Client.Stop), or whose target stopped answering
// (ErrSilent).
var ErrBudget = errors.New("request budget used up")

// ErrSilent stops a run whose target stopped answering: Config.Silent
// requests in a row got no answer. It is an ErrBudget: the run judges
// what it sent, and sends no more.
var ErrSilent = fmt.Errorf("%w: the target stopped answering", ErrBudget)

// DefaultSilent is Config.Silent's default: three requests in a row
// without an answer, each after its timeout, and the run stops.
const DefaultSilent = 3

// maxBody caps what is read of a response body.
const maxBody = 4 << 20

// Exchange is one request the kit sent and what came back.
type Exchange struct {
	Req     *http.Request
	ReqBody []byte
	Status  int // 0: no answer
	Header  http.Header
	Body    []byte
	Raw     *Raw // how it was written, when byte for byte (raw.go)
	Close   bool // the answer ends the connection (Connection: close, which net/http takes out of Header)
}

// Request is a request the kit sends: a malformed one is the point of
// many of them.
type Request struct {
	Method string
	Target string // relative to BASE_URL ("/pets?limit=1"), or an absolute URL
	Header http.Header
	Body   []byte
	NoKey  bool // send no Authorization of the kit's
	Tenant int  // 2: send Key2; otherwise Key
	Raw    *Raw // written byte for byte on a connection of its own (raw.go)
}

// Observer is told of every exchange of a Client: X is its own record of
// one.
type Observer[X any] interface {
	// Begin makes the record of x, an admitted request about to leave.
	Begin(x *Exchange) X
	// End is told that the answer of a request came, in x's Exchange
	// (Status 0: none came).
	End(x X)
	// NoAnswer is told, after End, of a request that got no answer (a
	// reset connection, a timeout) that does not stop the run: x's Body
	// says why.
	NoAnswer(x X)
}

// Config says where a Client sends and within what.
type Config struct {
	Base        *url.URL          // BASE_URL, without a trailing slash
	Transport   http.RoundTripper // under every request but the raw ones; nil: http.DefaultTransport
	Timeout     time.Duration     // per request
	MaxRequests int               // the budget
	Key, Key2   string            // the kit's keys, by tenant (1, 2)
	// Silent is how many requests in a row may go without an answer (a
	// timeout, a refused or reset connection) before the Client takes the
	// target for one that stopped answering and sends no more (ErrSilent);
	// 0: DefaultSilent. A request whose case holds its body back and
	// waits for an answer at once (Raw.Hold) is not counted: the case
	// judges the wait.
	Silent int
}

// Client sends the kit's requests and tells its Observer of each.
type Client[X any] struct {
	cfg Config
	obs Observer[X]
	hc  *http.Client // every request but the raw ones, through the recorder

	mu         sync.Mutex
	sent       int
	raw        int // of sent, written byte for byte (raw.go)
	throttled  int // 429s waited out
	waited     time.Duration
	truncated  bool
	stopped    bool
	unanswered int               // requests in a row without an answer
	silent     string            // why the Client took the target for silent; "": it answers
	slowest    time.Duration     // the slowest round trip so far (AtOnce)
	nearKeys   map[string]string // near misses of the key sent, and the shell expression of each (Curl)
}

// New is a Client of cfg that tells obs of every exchange.
func New[X any](cfg Config, obs Observer[X]) *Client[X] {
	if cfg.Transport == nil {
		cfg.Transport = http.DefaultTransport
	}
	if cfg.Silent <= 0 {
		cfg.Silent = DefaultSilent
	}
	c := &Client[X]{cfg: cfg, obs: obs}
	c.hc = &http.Client{
		Transport: &recorder[X]{c: c, next: cfg.Transport},
		Timeout:   cfg.Timeout,
		// The kit talks to BASE_URL's host alone and judges redirects as
		// answers: it never follows one.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c
}

// Stats are what a Client sent.
type Stats struct {
	Sent, Raw, Throttled int
	Truncated            bool   // the budget refused a request
	Silent               string // why the Client took the target for one that stopped answering; "": it answers
}

// Stats returns what c has sent so far.
func (c *Client[X]) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{Sent: c.sent, Raw: c.raw, Throttled: c.throttled, Truncated: c.truncated, Silent: c.silent}
}

// Stop refuses every request from now on (ErrBudget), without marking
// the run truncated: the run was stopped, not cut short.
func (c *Client[X]) Stop() {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
}

// Stopped reports whether Stop was called.
func (c *Client[X]) Stopped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopped
}

// Key is the key of a tenant.
func (c *Client[X]) Key(tenant int) string {
	if tenant == 2 {
		return c.cfg.Key2
	}
	return c.cfg.Key
}

// recorder is the transport under every request but the raw ones (raw.go),
// which share its bookkeeping (begin, Observer.End): it keeps the kit on
// BASE_URL's host and within its budget, reads each response whole, and
// tells the Observer.
type recorder[X any] struct {
	c    *Client[X]
	next http.RoundTripper
}

// sentKey finds the record of a request in its context.
type sentKey struct{}

// sent is a request's exchange and the Observer's record of it.
type sent[X any] struct {
	x     *Exchange
	note  X
	begun bool
}

func (t *recorder[X]) RoundTrip(req *http.Request) (*http.Response, error) {
	c := t.c
	if err := c.admit(req.URL); err != nil {
		return nil, err
	}
	var reqBody []byte
	if req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			reqBody, _ = io.ReadAll(rc)
			rc.Close()
		}
	}
	s := c.begin(req, reqBody, nil)
	if holder, ok := req.Context().Value(sentKey{}).(*sent[X]); ok {
		*holder = s
	}
	began := time.Now()
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		c.obs.End(s.note)
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	resp.Body.Close()
	if err != nil {
		c.obs.End(s.note)
		return nil, fmt.Errorf("read response: %w", err)
	}
	c.roundTrip(time.Since(began))
	resp.Body = io.NopCloser(bytes.NewReader(body))
	c.end(s, resp, body)
	return resp, nil
}

// begin makes the exchange of hr, an admitted request about to be sent
// with body (written byte for byte when w is not nil), and the
// Observer's record of it.
func (c *Client[X]) begin(hr *http.Request, body []byte, w *Raw) sent[X] {
	x := &Exchange{Req: hr, ReqBody: body, Raw: w}
	return sent[X]{x: x, note: c.obs.Begin(x), begun: true}
}

// end notes what came back for s, res and its body, and tells the
// Observer.
func (c *Client[X]) end(s sent[X], res *http.Response, body []byte) {
	s.x.Status, s.x.Header, s.x.Body, s.x.Close = res.StatusCode, res.Header, body, res.Close
	c.mu.Lock()
	c.unanswered = 0
	c.mu.Unlock()
	c.obs.End(s.note)
}

// admit counts a request to u against the budget; it refuses one to
// another host than BASE_URL's.
func (c *Client[X]) admit(u *url.URL) error {
	if u.Host != c.cfg.Base.Host || u.Scheme != c.cfg.Base.Scheme {
		return fmt.Errorf("conform: refusing to send to %s: only %s is checked", u.Host, c.cfg.Base.Host)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.silent != "" {
		return ErrSilent
	}
	if c.sent >= c.cfg.MaxRequests || c.stopped {
		c.truncated = !c.stopped
		return ErrBudget
	}
	c.sent++
	return nil
}

// Send sends req and returns the Observer's record of what came back.
// An answer 429 rate_limited (the operator's rate limit, or the throttle
// of wrong keys by address) is told as any, then waited out and the
// request sent again, up to maxThrottleWait in all a Client: its case is
// judged on the answer that follows.
func (c *Client[X]) Send(ctx context.Context, req Request) (X, error) {
	for {
		s, err := c.sendOnce(ctx, req)
		if err != nil || s.x.Status != http.StatusTooManyRequests || !c.waitOut(ctx, s.x) {
			return s.note, err
		}
	}
}

// maxThrottleWait bounds the time a Client waits out 429s.
const maxThrottleWait = 10 * time.Second

// waitOut waits the Retry-After of x, a 429 rate_limited, and reports
// whether it did: not when the Client has waited maxThrottleWait already.
func (c *Client[X]) waitOut(ctx context.Context, x *Exchange) bool {
	code, isError := ErrorCode(x.Body)
	secs, err := strconv.Atoi(x.Header.Get("Retry-After"))
	if !isError || code != "rate_limited" || err != nil || secs < 1 {
		return false
	}
	wait := time.Duration(secs) * time.Second
	c.mu.Lock()
	ok := c.waited+wait <= maxThrottleWait
	if ok {
		c.waited += wait
		c.throttled++
	}
	c.mu.Unlock()
	if !ok {
		return false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// ErrorCode is the code of body, an Error; ok when body is JSON.
func ErrorCode(body []byte) (code string, ok bool) {
	var e struct {
		Code string `json:"code"`
	}
	err := json.Unmarshal(body, &e)
	return e.Code, err == nil
}

func (c *Client[X]) sendOnce(ctx context.Context, req Request) (sent[X], error) {
	if req.Raw != nil {
		return c.sendRaw(ctx, req)
	}
	target := req.Target
	if !strings.HasPrefix(target, "http://") && !strings.HasPrefix(target, "https://") {
		target = c.cfg.Base.String() + target
	}
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	var s sent[X]
	hr, err := http.NewRequestWithContext(context.WithValue(ctx, sentKey{}, &s), req.Method, target, body)
	if err != nil {
		return s, err
	}
	c.setHeader(hr, req)
	resp, err := c.hc.Do(hr)
	if err != nil {
		return c.noAnswer(ctx, s, err)
	}
	resp.Body.Close()
	return s, nil
}

// setHeader gives hr the fields of req, and the key of its tenant unless
// it names an Authorization of its own or none.
func (c *Client[X]) setHeader(hr *http.Request, req Request) {
	for name, values := range req.Header {
		hr.Header[name] = values
	}
	if !req.NoKey && hr.Header.Get("Authorization") == "" {
		hr.Header.Set("Authorization", "Bearer "+c.Key(req.Tenant))
	}
}

// noAnswer tells the Observer of s, a request that got no answer (a reset
// connection, a timeout), with status 0 and why in its body, so that the
// run goes on; only a used-up budget or a cancelled run stop it.
func (c *Client[X]) noAnswer(ctx context.Context, s sent[X], err error) (sent[X], error) {
	if !s.begun || errors.Is(err, ErrBudget) || ctx.Err() != nil {
		var none sent[X]
		return none, err
	}
	s.x.Body = []byte("no answer: " + err.Error())
	c.obs.NoAnswer(s.note)
	c.noteUnanswered(s.x, err)
	return s, nil
}

// noteUnanswered counts x, a request that got no answer: the
// Config.Silent-th in a row makes the Client take the target for one that
// stopped answering, and refuse every request from then on (ErrSilent).
// A 100 Continue to a request whose body is held back is an answer of a
// kind: the target answers. The wait for one that got none (Raw.Hold) is
// the case's to judge, and counts neither way: a target that waits for a
// body and a silent one look alike.
func (c *Client[X]) noteUnanswered(x *Exchange, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case errors.Is(err, errContinue):
		c.unanswered = 0
		return
	case errors.Is(err, errHeld):
		return
	}
	if c.unanswered++; c.unanswered < c.cfg.Silent || c.silent != "" {
		return
	}
	c.silent = fmt.Sprintf("%d requests in a row got no answer (-timeout %s each), the last %s %s: %v", c.unanswered, c.cfg.Timeout, x.Req.Method, x.Req.URL.RequestURI(), err)
}

// Resolve turns a Location or Link target into an absolute URL on the
// target's host; a reference to another host is an error, not a request.
func (c *Client[X]) Resolve(ref string) (string, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return "", err
	}
	base := c.cfg.Base
	u = base.ResolveReference(u)
	if u.Scheme != base.Scheme || u.Host != base.Host {
		return "", fmt.Errorf("%s is not on %s://%s", ref, base.Scheme, base.Host)
	}
	return u.String(), nil
}

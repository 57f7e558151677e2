package conform

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/petstore/petstore/internal/contract"
	"github.com/petstore/petstore/internal/history"
)

// errBudget stops a run that has sent MaxRequests requests.
var errBudget = errors.New("request budget used up")

// maxBody caps what is read of a response body.
const maxBody = 4 << 20

// exchange is one request the kit sent and what came back.
type exchange struct {
	req     *http.Request
	reqBody []byte
	status  int
	header  http.Header
	body    []byte
	op      string      // the operation the contract routes the request to, or noOperation
	tenant  int         // 1 for -key, 2 for -key2, 0 for no key of the kit's
	in      *scope      // where its judgments go
	hop     *history.Op // its op in the history (history.go)
	wire    *wire       // how it was written, when byte for byte (raw.go)
	close   bool        // the answer ends the connection (Connection: close, which net/http takes out of header)
}

const noOperation = "(no operation)"

// recorder is the transport under every request of a run but the raw ones
// (raw.go), which share its bookkeeping (begin, end): it keeps the kit on
// BASE_URL's host and within its budget, reads each response whole, and
// judges it by the checks that hold for every response (the kinds of
// internal/contract, not_a_server_error and deprecation).
type recorder struct {
	run  *run
	next http.RoundTripper
}

// exchangeKey finds the exchange of a response in its request's context.
type exchangeKey struct{}

func (t *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r := t.run
	if err := r.admit(req.URL); err != nil {
		return nil, err
	}
	var reqBody []byte
	if req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			reqBody, _ = io.ReadAll(rc)
			rc.Close()
		}
	}
	x := r.begin(req, reqBody, nil)
	if holder, ok := req.Context().Value(exchangeKey{}).(**exchange); ok {
		*holder = x
	}
	began := time.Now()
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		r.end(x, nil, nil)
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	resp.Body.Close()
	if err != nil {
		r.end(x, nil, nil)
		return nil, fmt.Errorf("read response: %w", err)
	}
	r.roundTrip(time.Since(began))
	resp.Body = io.NopCloser(bytes.NewReader(body))
	r.end(x, resp, body)
	return resp, nil
}

// begin makes the exchange of hr, an admitted request about to be sent
// with body (written byte for byte when w is not nil): the operation the
// contract routes it to, its tenant and scope; and notes it as sent.
func (r *run) begin(hr *http.Request, body []byte, w *wire) *exchange {
	x := &exchange{req: hr, reqBody: body, wire: w, op: noOperation, tenant: r.tenant(hr.Header), in: scopeOf(hr.Context(), r)}
	if route, _, err := r.contract.Route(hr); err == nil {
		x.op = route.Operation.OperationID
	}
	r.sending(x)
	return x
}

// end notes what came back for x, res and its body (res nil: no answer),
// judges an answer, and teaches the model either way.
func (r *run) end(x *exchange, res *http.Response, body []byte) {
	if res != nil {
		x.status, x.header, x.body, x.close = res.StatusCode, res.Header, body, res.Close
		r.judge(x)
	}
	r.observe(x)
}

// admit counts a request to u against the budget; it refuses one to
// another host than BASE_URL's.
func (r *run) admit(u *url.URL) error {
	if u.Host != r.base.Host || u.Scheme != r.base.Scheme {
		return fmt.Errorf("conform: refusing to send to %s: only %s is checked", u.Host, r.base.Host)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sent >= r.cfg.MaxRequests || r.stopped {
		r.truncate = !r.stopped
		return errBudget
	}
	r.sent++
	return nil
}

// judge runs the checks that hold for every response.
func (r *run) judge(x *exchange) {
	byKind := map[string][]string{}
	for _, v := range r.contract.Check(x.req, x.status, x.header, x.body) {
		byKind[v.Kind] = append(byKind[v.Kind], v.Message)
	}
	for _, kind := range []string{contract.StatusCode, contract.ContentType, contract.ResponseHeaders, contract.ResponseSchema, contract.ErrorBody} {
		if msgs := byKind[kind]; len(msgs) > 0 {
			x.in.record(kind, x.op, r.fail(x, "a response that keeps openapi.yaml", strings.Join(msgs, "; ")))
		} else {
			x.in.record(kind, x.op, nil)
		}
	}
	var f *Failure
	if x.status >= 500 && !unimplemented(x) {
		f = r.fail(x, "no 5xx for any request (but 501 and 505 where RFC 9112 asks)", "")
	}
	x.in.record("not_a_server_error", x.op, f)
	r.judgeDeprecation(x)
	r.judgeAnswer(x)
}

// unimplemented reports whether x is one of the two 5xx the contract
// gives, as RFC 9112 asks, for what the server does not implement: 501 to
// a Transfer-Encoding other than chunked, 505 to a protocol version other
// than HTTP/1.x.
func unimplemented(x *exchange) bool {
	switch x.status {
	case http.StatusNotImplemented:
		te := x.req.Header.Values("Transfer-Encoding")
		return len(te) > 0 && !slices.Equal(te, []string{"chunked"})
	case http.StatusHTTPVersionNotSupported:
		return x.wire != nil && x.wire.proto != "" && !strings.HasPrefix(x.wire.proto, "HTTP/1.")
	}
	return false
}

// judgeDeprecation holds every answer of an operation the spec marks
// deprecated to RFC 9745: a Deprecation header, and each other deprecation
// header (Sunset, Link) the spec declares for that answer.
func (r *run) judgeDeprecation(x *exchange) {
	op := r.operation(x.op)
	if op == nil || !op.op.Deprecated {
		return
	}
	var want []string
	if x.status/100 == 2 {
		want = append(want, "Deprecation")
	}
	if ref := op.op.Responses.Status(x.status); ref != nil && ref.Value != nil {
		for _, h := range []string{"Deprecation", "Sunset", "Link"} {
			if ref.Value.Headers[h] != nil && !slices.Contains(want, h) {
				want = append(want, h)
			}
		}
	}
	if len(want) == 0 {
		return
	}
	var missing []string
	for _, h := range want {
		if x.header.Get(h) == "" {
			missing = append(missing, h)
		}
	}
	var f *Failure
	if len(missing) > 0 {
		f = r.fail(x, "the deprecated operation's answer carries "+strings.Join(want, ", "), "no "+strings.Join(missing, ", "))
	}
	x.in.record("deprecation", x.op, f)
}

// fail makes the Failure of a case whose request and response are x.
func (r *run) fail(x *exchange, want, got string) *Failure {
	if got == "" {
		got = describe(x)
	}
	return &Failure{Want: want, Got: got, Curl: r.curl(x)}
}

// describe says what came back, briefly: at most 300 bytes of the body, cut
// on a character boundary, invalid UTF-8 replaced by U+FFFD.
func describe(x *exchange) string {
	body := strings.ToValidUTF8(string(x.body), "\uFFFD")
	if len(body) > 300 {
		cut := 300
		for !utf8.RuneStart(body[cut]) {
			cut--
		}
		body = body[:cut] + "…"
	}
	return fmt.Sprintf("%d %s", x.status, body)
}

// request is a request the kit sends raw: a malformed one is the point of
// most of them.
type request struct {
	method string
	target string // relative to BASE_URL ("/pets?limit=1"), or an absolute URL
	header http.Header
	body   []byte
	noKey  bool  // send no Authorization of the kit's
	tenant int   // 2: send -key2's key; otherwise -key's
	wire   *wire // written byte for byte on a connection of its own (raw.go)
}

// send sends req and returns what came back, already judged. An answer
// 429 rate_limited (the operator's rate limit, or the throttle of wrong
// keys by address) is judged as any, then waited out and the request sent
// again, up to maxThrottleWait in all a run: its case is judged on the
// answer that follows.
func (r *run) send(ctx context.Context, req request) (*exchange, error) {
	for {
		x, err := r.sendOnce(ctx, req)
		if err != nil || x.status != http.StatusTooManyRequests || !r.waitOut(ctx, x) {
			return x, err
		}
	}
}

// maxThrottleWait bounds the time a run waits out 429s.
const maxThrottleWait = 10 * time.Second

// waitOut waits the Retry-After of x, a 429 rate_limited, and reports
// whether it did: not when the run has waited maxThrottleWait already.
func (r *run) waitOut(ctx context.Context, x *exchange) bool {
	code, isError := errorCode(x.body)
	secs, err := strconv.Atoi(x.header.Get("Retry-After"))
	if !isError || code != "rate_limited" || err != nil || secs < 1 {
		return false
	}
	wait := time.Duration(secs) * time.Second
	r.mu.Lock()
	ok := r.waited+wait <= maxThrottleWait
	if ok {
		r.waited += wait
		r.throttled++
	}
	r.mu.Unlock()
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

func (r *run) sendOnce(ctx context.Context, req request) (*exchange, error) {
	if req.wire != nil {
		return r.sendRaw(ctx, req)
	}
	target := req.target
	if !strings.HasPrefix(target, "http://") && !strings.HasPrefix(target, "https://") {
		target = r.base.String() + target
	}
	var body io.Reader
	if req.body != nil {
		body = bytes.NewReader(req.body)
	}
	var x *exchange
	hr, err := http.NewRequestWithContext(context.WithValue(ctx, exchangeKey{}, &x), req.method, target, body)
	if err != nil {
		return nil, err
	}
	r.setHeader(hr, req)
	resp, err := r.hc.Do(hr)
	if err != nil {
		return r.noAnswer(ctx, x, err)
	}
	resp.Body.Close()
	return x, nil
}

// setHeader gives hr the fields of req, and the key of its tenant unless
// it names an Authorization of its own or none.
func (r *run) setHeader(hr *http.Request, req request) {
	for name, values := range req.header {
		hr.Header[name] = values
	}
	if !req.noKey && hr.Header.Get("Authorization") == "" {
		hr.Header.Set("Authorization", "Bearer "+r.key(req.tenant))
	}
}

// noAnswer marks x, a request that got no answer (a reset connection, a
// timeout), as a failure of not_a_server_error with status 0, so that the
// run goes on; only a used-up budget or a cancelled run stop it.
func (r *run) noAnswer(ctx context.Context, x *exchange, err error) (*exchange, error) {
	if x == nil || errors.Is(err, errBudget) || ctx.Err() != nil {
		return nil, err
	}
	x.body = []byte("no answer: " + err.Error())
	x.in.record("not_a_server_error", x.op, r.fail(x, "an answer", string(x.body)))
	return x, nil
}

// resolve turns a Location or Link target into an absolute URL on the
// target's host; a reference to another host is an error, not a request.
func (r *run) resolve(ref string) (string, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return "", err
	}
	u = r.base.ResolveReference(u)
	if u.Scheme != r.base.Scheme || u.Host != r.base.Host {
		return "", fmt.Errorf("%s is not on %s://%s", ref, r.base.Scheme, r.base.Host)
	}
	return u.String(), nil
}

// curl is a command that sends the request of x again, the keys shown as
// $PETSTORE_KEY and $PETSTORE_KEY2.
func (r *run) curl(x *exchange) string {
	var b strings.Builder
	b.WriteString("curl -i -X ")
	b.WriteString(x.req.Method)
	b.WriteString(" " + shellArg(x.req.URL.String()))
	if x.wire != nil {
		b.WriteString(r.curlWire(x))
	}
	names := make([]string, 0, len(x.req.Header))
	for name := range x.req.Header {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if x.wire != nil && x.wire.writes(name) {
			continue // curlWire writes it as it went
		}
		for _, v := range x.req.Header[name] {
			if masked, ok := r.maskKey(name, v); ok {
				b.WriteString(` -H "` + name + `: ` + masked + `"`)
				continue
			}
			b.WriteString(" -H " + shellArg(name+": "+v))
		}
	}
	if x.req.Header.Get("Content-Type") == "" && len(x.reqBody) > 0 {
		// curl would add its own form Content-Type.
		b.WriteString(" -H 'Content-Type:'")
	}
	if len(x.reqBody) > 0 {
		b.WriteString(" --data-binary " + curlData(x.reqBody))
	}
	return b.String()
}

// curlWire is what curl needs to write a request as the kit wrote it byte
// for byte: the request-target as is, HTTP/1.0, no Host, the wire's own
// lines, and none of curl's own User-Agent and Accept (a head's size is
// exact).
func (r *run) curlWire(x *exchange) string {
	w := x.wire
	var b strings.Builder
	switch target := r.base.Path + w.target; {
	case w.scheme != "" && w.target == "":
		b.WriteString(" --request-target " + shellQuote(w.scheme+"://"+r.base.Host+x.req.URL.RequestURI()))
	case w.scheme != "":
		b.WriteString(" --request-target " + shellQuote(w.scheme+"://"+r.base.Host+target))
	case w.target != "":
		b.WriteString(" --request-target " + shellQuote(target))
	}
	if w.proto == "HTTP/1.0" {
		b.WriteString(" --http1.0")
	}
	if w.noHost {
		b.WriteString(" -H 'Host:'")
	}
	for _, name := range []string{"User-Agent", "Accept"} {
		if len(x.req.Header.Values(name)) == 0 {
			b.WriteString(" -H '" + name + ":'")
		}
	}
	for _, f := range w.fields {
		name, value, _ := strings.Cut(f, ":")
		if masked, ok := r.maskKey(http.CanonicalHeaderKey(name), value); ok {
			b.WriteString(` -H "` + name + `:` + masked + `"`)
			continue
		}
		b.WriteString(" -H " + shellQuote(f))
	}
	return b.String()
}

// maskKey shows a key of the run in an Authorization value as the variable
// that holds it.
func (r *run) maskKey(name, v string) (string, bool) {
	if name != "Authorization" {
		return "", false
	}
	if f := strings.Fields(v); len(f) > 0 {
		r.mu.Lock()
		shell, near := r.nearKeys[f[len(f)-1]]
		r.mu.Unlock()
		if near {
			return strings.TrimSuffix(v, f[len(f)-1]) + shell, true
		}
	}
	for _, k := range []struct{ key, env string }{{r.cfg.Key2, "$PETSTORE_KEY2"}, {r.cfg.Key, "$PETSTORE_KEY"}} {
		if k.key != "" && strings.Contains(v, k.key) {
			return strings.ReplaceAll(v, k.key, k.env), true
		}
	}
	return "", false
}

// curlData is curl's --data-binary argument for body: the body quoted, or,
// for a body padded with many spaces (the size cases), a process
// substitution that writes them (bash, zsh).
func curlData(body []byte) string {
	trimmed := bytes.TrimRight(body, " ")
	if pad := len(body) - len(trimmed); pad >= 256 {
		return fmt.Sprintf(`@<(printf %%s %s; printf "%%%ds" "")`, shellQuote(string(trimmed)), pad)
	}
	return shellQuote(string(body))
}

// shellArg is s as one shell word: quoted, a run of 1 024 or more of one
// letter or digit (a padded head) written as the command that prints it.
func shellArg(s string) string {
	const long = 1024
	var b strings.Builder
	start := 0
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == s[i] {
			j++
		}
		if c := s[i]; j-i >= long && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			if start < i {
				b.WriteString(shellQuote(s[start:i]))
			}
			fmt.Fprintf(&b, `"$(head -c %d /dev/zero | tr '\0' %c)"`, j-i, c)
			start = j
		}
		i = j
	}
	if start == 0 {
		return shellQuote(s)
	}
	if start < len(s) {
		b.WriteString(shellQuote(s[start:]))
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell; bytes that are not printable UTF-8
// are written as $'\xHH' (bash, zsh).
func shellQuote(s string) string {
	printable := utf8.ValidString(s)
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			printable = false
		}
	}
	if printable {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString("'")
	return b.String()
}

package wire

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The requests no HTTP client writes: a raw space in the request-target, a
// head of an exact size, another protocol version, a body declared and
// never sent. The kit writes them byte for byte on a connection of its own
// to BASE_URL's host (past -HTTPClient's transport: straight to the host,
// TLS for https), within the same budget, and judges the answer as any
// other. The connection is closed as soon as the answer is read.

// Raw says how a request is written where no HTTP client would write it
// so.
type Raw struct {
	Target string        // the request-target as written, after the base path ("/pets?limit=1 2"); "": the request's
	Scheme string        // write the request-target in absolute form, with this scheme ("http", "HTTP"); "": origin form
	Proto  string        // the protocol version; "": HTTP/1.1
	Fields []string      // header lines written as they are ("Conform Field: 1"), after the others
	NoHost bool          // no Host header
	Hold   bool          // declare the body (the request's Content-Length) and send none of it
	Head   int           // pad the head with an X-Conform-Pad field to exactly this many bytes; 0: no pad
	Slow   time.Duration // write the request a piece at a time over this long; 0: at once
}

// Writes reports whether w Writes a header line named name itself.
func (w *Raw) Writes(name string) bool {
	for _, f := range w.Fields {
		if n, _, ok := strings.Cut(f, ":"); ok && http.CanonicalHeaderKey(n) == http.CanonicalHeaderKey(name) {
			return true
		}
	}
	return false
}

// AtOnce is how long a request whose body is held back waits for its
// answer, which the contract wants at once: a second, and four times the
// slowest round trip of the target measured so far in the run, within the
// run's timeout. A server that waits for the body it refuses waits for as
// long as it waits for any body; one that answers at once answers as fast
// as it answers anything, far or near, loaded or not.
func (c *Client[X]) AtOnce() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return min(time.Second+4*c.slowest, c.cfg.Timeout)
}

// roundTrip notes how long a request took, from its sending to its
// answer's last byte: AtOnce scales with the slowest.
func (c *Client[X]) roundTrip(d time.Duration) {
	c.mu.Lock()
	c.slowest = max(c.slowest, d)
	c.mu.Unlock()
}

// padField pads a head to its size.
const padField = "X-Conform-Pad"

var errContinue = errors.New("100 Continue: the server asked for the body of a request it refuses, instead of answering at once")

// errHeld is the wait of a request whose body is held back, past AtOnce:
// an answer the case wanted at once did not come.
var errHeld = errors.New("the server waits for a body it refuses")

// sendRaw writes req byte for byte and returns what came back, told to
// the Observer.
func (c *Client[X]) sendRaw(ctx context.Context, req Request) (sent[X], error) {
	var none sent[X]
	hr, err := http.NewRequestWithContext(ctx, req.Method, c.cfg.Base.String()+req.Target, nil)
	if err != nil {
		return none, err
	}
	c.setHeader(hr, req)
	head := c.rawHead(req, hr)
	for _, f := range req.Raw.Fields { // what the observer reads, as HTTP reads it
		if name, value, ok := strings.Cut(f, ":"); ok {
			hr.Header.Add(name, strings.TrimSpace(value))
		}
	}
	if err := c.admit(hr.URL); err != nil {
		return none, err
	}
	c.mu.Lock()
	c.raw++
	c.mu.Unlock()
	s := c.begin(hr, req.Body, req.Raw)
	out := head
	if !req.Raw.Hold {
		out = append(out, rawBody(req.Body, hr.Header)...)
	}
	res, body, err := c.roundTripRaw(ctx, hr, out, req.Raw)
	if err != nil {
		c.obs.End(s.note)
		return c.noAnswer(ctx, s, err)
	}
	c.end(s, res, body)
	return s, nil
}

// rawHead is the request line and header of req, as hr holds its fields:
// Host first, the fields in name order, Content-Length for a body (unless
// the request names one, or is chunked), the wire's own lines, the pad.
func (c *Client[X]) rawHead(req Request, hr *http.Request) []byte {
	w := req.Raw
	var b bytes.Buffer
	target := hr.URL.RequestURI()
	if w.Target != "" {
		target = c.cfg.Base.Path + w.Target
	}
	if w.Scheme != "" {
		target = w.Scheme + "://" + c.cfg.Base.Host + target
	}
	fmt.Fprintf(&b, "%s %s %s\r\n", req.Method, target, cmp.Or(w.Proto, "HTTP/1.1"))
	if !w.NoHost {
		b.WriteString("Host: " + c.cfg.Base.Host + "\r\n")
	}
	for _, name := range slices.Sorted(maps.Keys(hr.Header)) {
		for _, v := range hr.Header[name] {
			b.WriteString(name + ": " + v + "\r\n")
		}
	}
	if req.Body != nil && hr.Header.Get("Content-Length") == "" && !chunked(hr.Header) && !slices.ContainsFunc(w.Fields, isLengthField) {
		b.WriteString("Content-Length: " + strconv.Itoa(len(req.Body)) + "\r\n")
	}
	for _, f := range w.Fields {
		b.WriteString(f + "\r\n")
	}
	if w.Head > 0 {
		n := max(w.Head-b.Len()-len(padField+": \r\n\r\n"), 1)
		pad := string(bytes.Repeat([]byte("a"), n))
		hr.Header.Set(padField, pad) // for the curl line
		b.WriteString(padField + ": " + pad + "\r\n")
	}
	b.WriteString("\r\n")
	return b.Bytes()
}

func isLengthField(f string) bool {
	return len(f) > len("Content-Length:") && http.CanonicalHeaderKey(f[:len("Content-Length")]) == "Content-Length"
}

func chunked(h http.Header) bool { return slices.Contains(h.Values("Transfer-Encoding"), "chunked") }

// rawBody is body as written: in two chunks when the request is chunked.
func rawBody(body []byte, h http.Header) []byte {
	if !chunked(h) {
		return body
	}
	half := len(body) / 2
	return fmt.Appendf(nil, "%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n", half, body[:half], len(body)-half, body[half:])
}

// roundTripRaw writes out on a connection of its own and reads the final
// answer, skipping interim ones; with hold (the body declared and not
// sent), a 100 Continue is a failure and the answer must come within
// atOnce.
func (c *Client[X]) roundTripRaw(ctx context.Context, hr *http.Request, out []byte, w *Raw) (*http.Response, []byte, error) {
	hold := w.Hold
	conn, err := c.dialRaw(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	wait := c.cfg.Timeout
	if hold {
		wait = c.AtOnce()
	}
	began := time.Now()
	if err := conn.SetDeadline(time.Now().Add(w.Slow + wait)); err != nil {
		return nil, nil, err
	}
	if w.Slow > 0 {
		if err := c.writeSlowly(ctx, conn, out, w.Slow); err != nil {
			return nil, nil, err
		}
	} else {
		// The server may answer, and close, before it has read it all.
		go func() { _, _ = conn.Write(out) }()
	}
	br := bufio.NewReader(conn)
	for {
		res, err := http.ReadResponse(br, hr)
		var timeout net.Error
		switch {
		case hold && errors.As(err, &timeout) && timeout.Timeout():
			return nil, nil, fmt.Errorf("no answer within %s without the body (a second and four times the slowest round trip so far): %w", wait.Round(time.Millisecond), errHeld)
		case err != nil:
			return nil, nil, err
		case res.StatusCode == http.StatusContinue && hold:
			return nil, nil, errContinue
		case res.StatusCode/100 == 1 && res.StatusCode != http.StatusSwitchingProtocols:
			continue // 100 Continue to a request that sent its body, 103
		}
		body, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
		res.Body.Close()
		if err == nil && !hold {
			c.roundTrip(time.Since(began))
		}
		return res, body, err
	}
}

// slowPieces is how many pieces a slow request is written in.
const slowPieces = 12

// writeSlowly writes out in slowPieces pieces spread over span, the last
// at its end. A Client stopped meanwhile (Stop) gives up: ErrBudget, the
// request never judged.
func (c *Client[X]) writeSlowly(ctx context.Context, conn net.Conn, out []byte, span time.Duration) error {
	start := time.Now()
	for i := range slowPieces {
		from, to := len(out)*i/slowPieces, len(out)*(i+1)/slowPieces
		if _, err := conn.Write(out[from:to]); err != nil {
			return err
		}
		if i == slowPieces-1 {
			break
		}
		t := time.NewTimer(time.Until(start.Add(span * time.Duration(i+1) / (slowPieces - 1))))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		if c.Stopped() {
			return ErrBudget
		}
		if c.Stats().Silent != "" {
			return ErrSilent
		}
	}
	return nil
}

// dialRaw connects to BASE_URL's host, with TLS for https (the transport's
// TLS settings when it has any), speaking HTTP/1.1.
func (c *Client[X]) dialRaw(ctx context.Context) (net.Conn, error) {
	port := c.cfg.Base.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[c.cfg.Base.Scheme]
	}
	d := net.Dialer{Timeout: c.cfg.Timeout}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(c.cfg.Base.Hostname(), port))
	if err != nil || c.cfg.Base.Scheme != "https" {
		return conn, err
	}
	// The handshake gets the request's time too; the caller sets the
	// request's deadline after it.
	if err := conn.SetDeadline(time.Now().Add(c.cfg.Timeout)); err != nil {
		conn.Close()
		return nil, err
	}
	cfg := &tls.Config{}
	if t, ok := c.cfg.Transport.(*http.Transport); ok && t.TLSClientConfig != nil {
		cfg = t.TLSClientConfig.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = c.cfg.Base.Hostname()
	}
	cfg.NextProtos = []string{"http/1.1"}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return tc, nil
}

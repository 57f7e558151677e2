package conform

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
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

// wire says how a request is written where no HTTP client would write it
// so.
type wire struct {
	target string        // the request-target as written, after the base path ("/pets?limit=1 2"); "": the request's
	scheme string        // write the request-target in absolute form, with this scheme ("http", "HTTP"); "": origin form
	proto  string        // the protocol version; "": HTTP/1.1
	fields []string      // header lines written as they are ("Conform Field: 1"), after the others
	noHost bool          // no Host header
	hold   bool          // declare the body (the request's Content-Length) and send none of it
	head   int           // pad the head with an X-Conform-Pad field to exactly this many bytes; 0: no pad
	slow   time.Duration // write the request a piece at a time over this long; 0: at once
}

// writes reports whether w writes a header line named name itself.
func (w *wire) writes(name string) bool {
	for _, f := range w.fields {
		if n, _, ok := strings.Cut(f, ":"); ok && http.CanonicalHeaderKey(n) == http.CanonicalHeaderKey(name) {
			return true
		}
	}
	return false
}

// atOnce is how long a request whose body is held back waits for its
// answer, which the contract wants at once: a second, and four times the
// slowest round trip of the target measured so far in the run, within the
// run's timeout. A server that waits for the body it refuses waits for as
// long as it waits for any body; one that answers at once answers as fast
// as it answers anything, far or near, loaded or not.
func (r *run) atOnce() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return min(time.Second+4*r.slowest, r.cfg.Timeout)
}

// roundTrip notes how long a request took, from its sending to its
// answer's last byte: atOnce scales with the slowest.
func (r *run) roundTrip(d time.Duration) {
	r.mu.Lock()
	r.slowest = max(r.slowest, d)
	r.mu.Unlock()
}

// padField pads a head to its size.
const padField = "X-Conform-Pad"

var errContinue = errors.New("100 Continue: the server asked for the body of a request it refuses, instead of answering at once")

// sendRaw writes req byte for byte and returns what came back, judged.
func (r *run) sendRaw(ctx context.Context, req request) (*exchange, error) {
	hr, err := http.NewRequestWithContext(ctx, req.method, r.base.String()+req.target, nil)
	if err != nil {
		return nil, err
	}
	r.setHeader(hr, req)
	head := r.rawHead(req, hr)
	for _, f := range req.wire.fields { // what the model and the judges read, as HTTP reads it
		if name, value, ok := strings.Cut(f, ":"); ok {
			hr.Header.Add(name, strings.TrimSpace(value))
		}
	}
	if err := r.admit(hr.URL); err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.raw++
	r.mu.Unlock()
	x := r.begin(hr, req.body, req.wire)
	out := head
	if !req.wire.hold {
		out = append(out, rawBody(req.body, hr.Header)...)
	}
	res, body, err := r.roundTripRaw(ctx, hr, out, req.wire)
	if err != nil {
		r.end(x, nil, nil)
		return r.noAnswer(ctx, x, err)
	}
	r.end(x, res, body)
	return x, nil
}

// rawHead is the request line and header of req, as hr holds its fields:
// Host first, the fields in name order, Content-Length for a body (unless
// the request names one, or is chunked), the wire's own lines, the pad.
func (r *run) rawHead(req request, hr *http.Request) []byte {
	w := req.wire
	var b bytes.Buffer
	target := hr.URL.RequestURI()
	if w.target != "" {
		target = r.base.Path + w.target
	}
	if w.scheme != "" {
		target = w.scheme + "://" + r.base.Host + target
	}
	fmt.Fprintf(&b, "%s %s %s\r\n", req.method, target, cmp.Or(w.proto, "HTTP/1.1"))
	if !w.noHost {
		b.WriteString("Host: " + r.base.Host + "\r\n")
	}
	for _, name := range sortedKeys(hr.Header) {
		for _, v := range hr.Header[name] {
			b.WriteString(name + ": " + v + "\r\n")
		}
	}
	if req.body != nil && hr.Header.Get("Content-Length") == "" && !chunked(hr.Header) && !slices.ContainsFunc(w.fields, isLengthField) {
		b.WriteString("Content-Length: " + strconv.Itoa(len(req.body)) + "\r\n")
	}
	for _, f := range w.fields {
		b.WriteString(f + "\r\n")
	}
	if w.head > 0 {
		n := max(w.head-b.Len()-len(padField+": \r\n\r\n"), 1)
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
func (r *run) roundTripRaw(ctx context.Context, hr *http.Request, out []byte, w *wire) (*http.Response, []byte, error) {
	hold := w.hold
	conn, err := r.dialRaw(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	wait := r.cfg.Timeout
	if hold {
		wait = r.atOnce()
	}
	began := time.Now()
	if err := conn.SetDeadline(time.Now().Add(w.slow + wait)); err != nil {
		return nil, nil, err
	}
	if w.slow > 0 {
		if err := r.writeSlowly(ctx, conn, out, w.slow); err != nil {
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
			return nil, nil, fmt.Errorf("no answer within %s without the body (a second and four times the slowest round trip so far): the server waits for a body it refuses", wait.Round(time.Millisecond))
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
			r.roundTrip(time.Since(began))
		}
		return res, body, err
	}
}

// slowPieces is how many pieces a slow request is written in.
const slowPieces = 12

// writeSlowly writes out in slowPieces pieces spread over span, the last
// at its end. A run stopped meanwhile (stopOn) gives up: errBudget, the
// request never judged.
func (r *run) writeSlowly(ctx context.Context, conn net.Conn, out []byte, span time.Duration) error {
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
		if r.halted() {
			return errBudget
		}
	}
	return nil
}

// dialRaw connects to BASE_URL's host, with TLS for https (the transport's
// TLS settings when it has any), speaking HTTP/1.1.
func (r *run) dialRaw(ctx context.Context) (net.Conn, error) {
	port := r.base.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[r.base.Scheme]
	}
	d := net.Dialer{Timeout: r.cfg.Timeout}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(r.base.Hostname(), port))
	if err != nil || r.base.Scheme != "https" {
		return conn, err
	}
	cfg := &tls.Config{}
	if t, ok := r.rt.(*http.Transport); ok && t.TLSClientConfig != nil {
		cfg = t.TLSClientConfig.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = r.base.Hostname()
	}
	cfg.NextProtos = []string{"http/1.1"}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return tc, nil
}

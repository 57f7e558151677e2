package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/petstore/petstore/gen"
)

// Listener returns ln whose connections rewrite the answers net/http writes
// by itself, before any handler runs, as the contract's: a request it
// cannot parse, or whose request line and headers pass maxHeaderBytes. Go
// writes those in plain text, with no X-Request-Id and no security headers
// (TestWire); here each becomes an Error body with both, logged as one line
// on log, and the connection still closes after it, as net/http closes it.
// Serve the app on it: http.Server{Handler: app}.Serve(Listener(ln, …)).
func Listener(ln net.Listener, log *slog.Logger, maxHeaderBytes int) net.Listener {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &wireListener{Listener: ln, log: log, maxHeader: maxHeaderBytes}
}

type wireListener struct {
	net.Listener
	log       *slog.Logger
	maxHeader int
}

func (l *wireListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &wireConn{Conn: c, l: l}, nil
}

// wireConn is a connection whose writes net/http's own answers are
// rewritten in (cannedAnswer).
type wireConn struct {
	net.Conn
	l *wireListener
}

func (c *wireConn) Write(p []byte) (int, error) {
	status, text, ok := cannedAnswer(p)
	if !ok {
		return c.Conn.Write(p)
	}
	if _, err := c.Conn.Write(c.l.answer(status, text)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// CloseWrite half-closes the connection as net/http does after its 431, so
// that the client reads the answer before the connection closes.
func (c *wireConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// cannedHeaders follow the status line of every answer net/http writes by
// itself (server.go, errorHeaders), in one Write with its text body. A
// handler's answer cannot start so: net/http writes its headers sorted, and
// Connection sorts before Content-Type.
const cannedHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// expectationFailed starts net/http's answer to an Expect other than
// 100-continue (sendExpectationFailed), which no handler of the app writes.
const expectationFailed = "HTTP/1.1 417 Expectation Failed\r\n"

// cannedAnswer reports whether p is one of net/http's own answers, and its
// status and reason ("Bad Request: missing required Host header").
func cannedAnswer(p []byte) (status int, reason string, ok bool) {
	const prefix = "HTTP/1.1 "
	if !bytes.HasPrefix(p, []byte(prefix)) || len(p) < len(prefix)+4 || p[len(prefix)+3] != ' ' {
		return 0, "", false
	}
	if bytes.HasPrefix(p, []byte(expectationFailed)) {
		return http.StatusExpectationFailed, "Expectation Failed", true
	}
	end := bytes.Index(p, []byte("\r\n"))
	if end < 0 || !bytes.HasPrefix(p[end:], []byte(cannedHeaders)) {
		return 0, "", false
	}
	status, err := strconv.Atoi(string(p[len(prefix) : len(prefix)+3]))
	if err != nil {
		return 0, "", false
	}
	return status, string(p[len(prefix)+4 : end]), true
}

// answer is the contract's answer for one of net/http's: 431 stays 431,
// and so do 501 (a Transfer-Encoding the server does not implement) and
// 505 (a protocol version it does not speak), as RFC 9112 asks; the rest,
// all saying the request is not HTTP/1.1 as this server reads it (417 for
// an unknown Expect among them), are 400.
func (l *wireListener) answer(status int, reason string) []byte {
	e := gen.Error{Status: http.StatusBadRequest, Code: codeInvalidRequest}
	switch {
	case status == http.StatusRequestHeaderFieldsTooLarge:
		e.Status = int32(status)
		e.Message = "the request line and headers are larger than " + strconv.Itoa(l.maxHeader>>10) + " KiB"
	case status == http.StatusHTTPVersionNotSupported:
		e.Status, e.Code = int32(status), codeVersionNotSupported
		e.Message = "the request is not HTTP/1.x: this server speaks HTTP/1.1 and HTTP/1.0 only"
	case status == http.StatusNotImplemented:
		e.Status, e.Code = int32(status), codeNotImplemented
		e.Message = "Transfer-Encoding: not implemented; send the body chunked or with a Content-Length"
	case status == http.StatusExpectationFailed:
		e.Message = "Expect: only 100-continue is supported"
	default: // "Bad Request: missing required Host header", …: net/http's fixed words
		detail := "its request line or a header does not parse"
		if _, d, ok := strings.Cut(reason, ": "); ok && d != "" {
			detail = d
		}
		e.Message = "the request is not well-formed HTTP/1.1: " + detail
	}
	body, _ := json.Marshal(e)
	body = append(body, '\n')
	id := uuid.NewString()
	l.log.LogAttrs(context.Background(), slog.LevelInfo, "request refused before routing",
		slog.Int("status", int(e.Status)), slog.String("request_id", id), slog.String("error", e.Message))
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 " + strconv.Itoa(int(e.Status)) + " " + http.StatusText(int(e.Status)) + "\r\n")
	for _, h := range [][2]string{
		{echo.HeaderAccessControlAllowOrigin, "*"}, // the request's Origin is not read: any page may read it
		{"Connection", "close"},
		{"Content-Length", strconv.Itoa(len(body))},
		{echo.HeaderContentType, echo.MIMEApplicationJSON},
		{"Date", time.Now().UTC().Format(http.TimeFormat)},
		{echo.HeaderXContentTypeOptions, contentTypeOptions},
		{echo.HeaderXFrameOptions, frameOptions},
		{echo.HeaderXRequestID, id},
	} {
		b.WriteString(h[0] + ": " + h[1] + "\r\n")
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/pets"
	"github.com/petstore/petstore/internal/ratelimit"
	"github.com/petstore/petstore/internal/strict"
)

// The codes of the Error body, as the spec enumerates them.
const (
	codeInvalidRequest      = gen.ErrorCodeInvalidRequest
	codeUnauthorized        = gen.ErrorCodeUnauthorized
	codeNotFound            = gen.ErrorCodeNotFound
	codeMethodNotAllowed    = gen.ErrorCodeMethodNotAllowed
	codePayloadTooLarge     = gen.ErrorCodePayloadTooLarge
	codeRateLimited         = gen.ErrorCodeRateLimited
	codeInternal            = gen.ErrorCodeInternal
	codeUnavailable         = gen.ErrorCodeUnavailable
	codeKeyInFlight         = gen.ErrorCodeIdempotencyKeyInFlight
	codeKeyReused           = gen.ErrorCodeIdempotencyKeyReused
	codeOutcomeUnknown      = gen.ErrorCodeOutcomeUnknown
	codeStoreFull           = gen.ErrorCodeStoreFull
	codeKeysFull            = gen.ErrorCodeIdempotencyKeysFull
	codeNotAcceptable       = gen.ErrorCodeNotAcceptable
	codeNotImplemented      = gen.ErrorCodeNotImplemented
	codeVersionNotSupported = gen.ErrorCodeHttpVersionNotSupported
	codeRequestTimeout      = gen.ErrorCodeRequestTimeout
)

// msgRequestTimeout is the message of a body cut off for arriving too slowly.
const msgRequestTimeout = "body: arrived too slowly and was cut off; nothing was written, send the request again"

// The messages of a 503 to a create whose outcome is unknown (the store
// failed after the create was sent), with and without an Idempotency-Key.
const (
	msgOutcomeUnknownKeyed = "the store failed after the create was sent: the pet may have been created; retry with the same Idempotency-Key to get its answer"
	msgOutcomeUnknown      = "the store failed after the create was sent: the pet may have been created; list the pets before sending it again, or send creates with an Idempotency-Key to retry them safely"
)

// statusClientClosed is the status logged and counted for a request whose
// client hung up before its answer (nginx's "client closed request"). It is
// never sent: observe aborts the response instead (see errorHandler).
const statusClientClosed = 499

// maxMessage is the maxLength of Error.message in the spec.
const maxMessage = 1024

// apiError is an error that already knows its response.
type apiError struct {
	Status  int
	Code    gen.ErrorCode
	Message string
	cause   error
	// byDesign marks a 5xx the server answers on purpose, no fault (a
	// draining server's /readyz): logged at INFO, with no failure line, so
	// that alerting on ERROR does not fire on every deploy.
	byDesign bool
}

func (e *apiError) Error() string { return e.Message }
func (e *apiError) Unwrap() error { return e.cause }

func invalid(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Code: codeInvalidRequest, Message: fmt.Sprintf(format, args...)}
}

// errorHandler is Echo's HTTPErrorHandler: the one place where any error —
// from the router, the validator, authentication, the body limit, a handler,
// the store or a recovered panic — becomes an Error body.
func errorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		if errors.Is(err, context.Canceled) && c.Request().Context().Err() != nil {
			// The client hung up: no one reads an answer, and nothing is
			// wrong with the server. Marked 499 for observe, which logs and
			// counts it (out of the 5xx and the ERROR lines an operator is
			// paged for) and then aborts the response: a client that only
			// half-closed gets no status the contract does not document.
			c.Response().Status = statusClientClosed
			return
		}
		e := describe(err)
		h := c.Response().Header()
		if e.Status == http.StatusUnauthorized {
			if errors.Is(err, errNoCredentials) {
				h.Set(echo.HeaderWWWAuthenticate, `Bearer realm="petstore"`)
			} else {
				h.Set(echo.HeaderWWWAuthenticate, `Bearer realm="petstore", error="invalid_token"`)
			}
		}
		if ra := retryAfter(0); errors.As(e, &ra) {
			h.Set(echo.HeaderRetryAfter, strconv.Itoa(int(ra)))
		}
		if bodyUnread(c) {
			// The rest of the body is not read: close the connection.
			h.Set(echo.HeaderConnection, "close")
		}
		if cl := callOf(c); cl != nil && e.byDesign {
			cl.byDesign = true
		}
		if e.Status >= 500 && !e.byDesign {
			attrs := []slog.Attr{
				slog.String("request_id", h.Get(echo.HeaderXRequestID)),
				slog.Int("status", e.Status),
				slog.String("error", quoted(err.Error())),
			}
			// A panic the store recovered from (pets.ErrPanic) may carry
			// where it happened.
			if st := stackOf(err); st != nil {
				attrs = append(attrs, slog.String("stack", string(st)))
			}
			log.LogAttrs(c.Request().Context(), slog.LevelError, "request failed", attrs...)
			if e.Code == codeInternal {
				e.Message = "internal error; the request id in X-Request-Id locates it in the server log"
			}
		}
		body := gen.Error{Code: e.Code, Message: clip(e.Message), Status: int32(e.Status)}
		var werr error
		if c.Request().Method == http.MethodHead {
			werr = c.NoContent(e.Status)
		} else {
			if _, set := h[echo.HeaderContentType]; !set {
				h[echo.HeaderContentType] = jsonValue // Echo's, without a slice a request
			}
			werr = c.JSON(e.Status, body)
		}
		if werr != nil {
			log.LogAttrs(c.Request().Context(), slog.LevelWarn, "writing error response", slog.String("error", quoted(werr.Error())))
		}
	}
}

// stackOf returns the stack an error in err's chain carries (a
// Stack() []byte method), or nil.
func stackOf(err error) []byte {
	var st interface{ Stack() []byte }
	if errors.As(err, &st) {
		return st.Stack()
	}
	return nil
}

// describe maps err to its status, code and message.
func describe(err error) *apiError {
	var (
		ae  *apiError
		sre *strict.Error
		mbe *http.MaxBytesError
		ve  *pets.ValidationError
		re  *openapi3filter.RequestError
		he  *echo.HTTPError
	)
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &sre):
		return invalid("%s", sre.Message)
	case errors.As(err, &mbe):
		return &apiError{Status: http.StatusRequestEntityTooLarge, Code: codePayloadTooLarge, Message: fmt.Sprintf("request body is larger than %d bytes", mbe.Limit)}
	case errors.As(err, &ve):
		return invalid("%s", ve.Error())
	case errors.Is(err, pets.ErrNotFound):
		return &apiError{Status: http.StatusNotFound, Code: codeNotFound, Message: err.Error()}
	case errors.Is(err, pets.ErrKeyReused):
		return &apiError{Status: http.StatusUnprocessableEntity, Code: codeKeyReused, Message: "Idempotency-Key: already used by this API key for a different request; use a new key for a new pet"}
	case errors.Is(err, pets.ErrKeyInFlight):
		return &apiError{Status: http.StatusConflict, Code: codeKeyInFlight, Message: "Idempotency-Key: a request with this key is still being processed; retry later with the same key"}
	case errors.Is(err, pets.ErrFull):
		// By design: the access log's line and the metrics', not an ERROR
		// a request (a client filling the store would flood the log).
		return &apiError{Status: http.StatusInsufficientStorage, Code: codeStoreFull, Message: "the store holds as many pets as it may; nothing was written", byDesign: true}
	case errors.Is(err, pets.ErrKeysFull):
		e := &apiError{Status: http.StatusInsufficientStorage, Code: codeKeysFull, Message: "the store keeps as many Idempotency-Key outcomes as it may; nothing was written; retry after Retry-After seconds, or without the key", byDesign: true}
		if kf := (*pets.KeysFullError)(nil); errors.As(err, &kf) {
			e.cause = retryAfter(ratelimit.RetrySeconds(kf.Wait))
		}
		return e
	case errors.Is(err, pets.ErrOutcomeUnknown):
		return &apiError{Status: http.StatusServiceUnavailable, Code: codeOutcomeUnknown, Message: msgOutcomeUnknown}
	case errors.Is(err, pets.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		return &apiError{Status: http.StatusServiceUnavailable, Code: codeUnavailable, Message: "the store is unavailable; nothing was written, retry later"}
	case errors.As(err, &re):
		return invalid("%s", describeRequestError(re))
	case errors.As(err, &he):
		return describeHTTPError(he)
	}
	return &apiError{Status: http.StatusInternalServerError, Code: codeInternal}
}

func describeHTTPError(he *echo.HTTPError) *apiError {
	msg, _ := he.Message.(string)
	switch he.Code {
	case http.StatusUnauthorized:
		return &apiError{Status: he.Code, Code: codeUnauthorized, Message: msg}
	case http.StatusNotFound:
		return &apiError{Status: he.Code, Code: codeNotFound, Message: "no resource at this path"}
	case http.StatusMethodNotAllowed:
		return &apiError{Status: he.Code, Code: codeMethodNotAllowed, Message: "method not allowed on this path; the Allow header lists those that are"}
	case http.StatusRequestEntityTooLarge:
		return &apiError{Status: he.Code, Code: codePayloadTooLarge, Message: "request body is too large"}
	case http.StatusTooManyRequests:
		return &apiError{Status: he.Code, Code: codeRateLimited, Message: "rate limit exceeded; retry after the number of seconds in Retry-After", cause: retryAfter(1)}
	case http.StatusServiceUnavailable:
		return &apiError{Status: he.Code, Code: codeUnavailable, Message: "the service is unavailable; retry later"}
	case http.StatusBadRequest:
		// The generated wrapper's binding errors: "Invalid format for
		// parameter limit: …". Name the parameter, drop the internals.
		if rest, ok := strings.CutPrefix(msg, "Invalid format for parameter "); ok {
			name, _, _ := strings.Cut(rest, ":")
			return invalid("%s: invalid value", name)
		}
		// "Expected one value for Idempotency-Key, got 2": a header sent twice.
		if rest, ok := strings.CutPrefix(msg, "Expected one value for "); ok {
			name, _, _ := strings.Cut(rest, ",")
			return invalid("%s: must be given once", name)
		}
		return invalid("invalid request")
	}
	if he.Code >= 400 && he.Code < 500 {
		return invalid("invalid request")
	}
	return &apiError{Status: http.StatusInternalServerError, Code: codeInternal}
}

// describeRequestError turns kin-openapi's verdict on a parameter into a
// message that names the parameter and the rule it breaks.
func describeRequestError(re *openapi3filter.RequestError) string {
	var se *openapi3.SchemaError
	var pe *openapi3filter.ParseError
	if re.Parameter == nil {
		return "invalid request"
	}
	name := re.Parameter.Name
	switch {
	case errors.Is(re.Err, openapi3filter.ErrInvalidRequired):
		return name + ": is required"
	case errors.As(re.Err, &se):
		return name + ": " + schemaReason(se)
	case errors.As(re.Err, &pe):
		return name + ": must be " + typeName(re.Parameter.Schema)
	}
	return name + ": invalid value"
}

// describeBodyError words kin-openapi's verdict on a body's value. The
// verdict of an allOf holds its schemas' in a MultiError: the first of them
// says what is wrong, and where.
func describeBodyError(err error) string {
	var me openapi3.MultiError
	if errors.As(err, &me) {
		err = me
	}
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		return describeBodySchemaError(se)
	}
	return "body: invalid"
}

func describeBodySchemaError(se *openapi3.SchemaError) string {
	field := strings.Join(se.JSONPointer(), ".")
	if field == "" {
		field = "body"
	}
	switch se.SchemaField {
	case "required":
		return field + ": is required" // kin's pointer names the missing member
	case "nullable":
		return field + ": value must be " + article(se.Schema)
	case "type":
		if n, ok := se.Value.(json.Number); ok {
			// A number beyond float64 (1e400), which kin-openapi cannot
			// convert to check: for an integer, its range.
			if r := intRuleOf(se.Schema); r != nil {
				return r.OutOfRange(field, strings.HasPrefix(string(n), "-")).Message
			}
			return field + ": value must be " + article(se.Schema)
		}
	}
	return field + ": " + schemaReason(se)
}

// article is a schema's type as kin-openapi words it in "value must be …".
func article(s *openapi3.Schema) string {
	if s != nil && s.Type != nil {
		for _, t := range []string{"integer", "object", "array"} {
			if s.Type.Is(t) {
				return "an " + t
			}
		}
		for _, t := range []string{"string", "number", "boolean"} {
			if s.Type.Is(t) {
				return "a " + t
			}
		}
	}
	return "a valid value"
}

// schemaReason is kin-openapi's reason, or the spec's own words for a pattern
// (x-pattern-message), since a regular expression is no message.
func schemaReason(se *openapi3.SchemaError) string {
	if se.SchemaField == "pattern" && se.Schema != nil {
		if m, ok := se.Schema.Extensions["x-pattern-message"].(string); ok {
			return m
		}
	}
	// kin-openapi quotes an unknown member's name whole: keep 64 characters.
	if rest, ok := strings.CutPrefix(se.Reason, "property "); ok && strings.HasSuffix(rest, " is unsupported") {
		if q, err := strconv.QuotedPrefix(rest); err == nil {
			name, _ := strconv.Unquote(q)
			return fmt.Sprintf("property %.64q is unsupported", name)
		}
	}
	return se.Reason
}

func typeName(ref *openapi3.SchemaRef) string {
	if ref == nil || ref.Value == nil || ref.Value.Type == nil {
		return "a valid value"
	}
	switch {
	case ref.Value.Type.Is("integer"):
		return "a base-10 integer"
	case ref.Value.Type.Is("string"):
		return "a string"
	}
	return "a valid value"
}

// clip keeps a message within the spec's maxLength and pattern: one line of
// valid UTF-8 without control characters.
func clip(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7F {
			return '\uFFFD'
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	if s == "" {
		return "error"
	}
	if len(s) <= maxMessage {
		return s
	}
	s = s[:maxMessage-3]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "..."
}

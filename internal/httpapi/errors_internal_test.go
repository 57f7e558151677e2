package httpapi

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/pets"
)

// messageRE is the spec's pattern for Error.message.
var messageRE = regexp.MustCompile(`^[^\x00-\x1F\x7F]+$`)

func TestClip(t *testing.T) {
	for _, in := range []string{
		"", "plain", "line\nbreak", "tab\there", "nul\x00byte", "del\x7f", "bad \xff utf-8",
		strings.Repeat("é", 600), strings.Repeat("a", 1021) + "\n\n\n\n",
	} {
		got := clip(in)
		if !messageRE.MatchString(got) || !utf8.ValidString(got) || len(got) > maxMessage {
			t.Errorf("clip(%.40q) = %.40q (%d bytes): want one line of valid UTF-8, no control characters, at most %d bytes", in, got, len(got), maxMessage)
		}
	}
	if got := clip("a\nb"); got != "a\uFFFDb" {
		t.Errorf(`clip("a\nb") = %q, want "a\uFFFDb"`, got)
	}
}

// TestRetryAfterHeader: errorHandler sets Retry-After from the answer's
// retryAfter cause alone, in whole seconds from 1 to 86 400.
func TestRetryAfterHeader(t *testing.T) {
	keysFull := func(d time.Duration) error {
		return fmt.Errorf("memstore: create: %w", &pets.KeysFullError{Wait: d})
	}
	for _, tc := range []struct {
		err    error
		status int
		want   string
	}{
		{keysFull(1500 * time.Millisecond), http.StatusInsufficientStorage, "2"},
		{keysFull(0), http.StatusInsufficientStorage, "1"},
		{keysFull(30 * 24 * time.Hour), http.StatusInsufficientStorage, "86400"},
		{pets.ErrKeysFull, http.StatusInsufficientStorage, ""},
		{pets.ErrFull, http.StatusInsufficientStorage, ""},
		{throttled(7), http.StatusTooManyRequests, "7"},
		{echo.NewHTTPError(http.StatusTooManyRequests), http.StatusTooManyRequests, "1"},
		{pets.ErrUnavailable, http.StatusServiceUnavailable, ""},
	} {
		rec := httptest.NewRecorder()
		c := echo.New().NewContext(httptest.NewRequest(http.MethodPost, apitest.Path("/pets"), nil), rec)
		errorHandler(slog.New(slog.DiscardHandler))(tc.err, c)
		if rec.Code != tc.status || rec.Header().Get(echo.HeaderRetryAfter) != tc.want {
			t.Errorf("%v: got %d, Retry-After %q; want %d, %q", tc.err, rec.Code, rec.Header().Get(echo.HeaderRetryAfter), tc.status, tc.want)
		}
	}
}

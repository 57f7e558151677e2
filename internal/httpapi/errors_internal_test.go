package httpapi

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
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

package conform

import "testing"

// pointer evaluates a link's $response.body#/… (RFC 6901): escapes,
// arrays, a number kept as sent, a string as itself; a place the body has
// nothing at, or a fragment that is no pointer, is an error.
func TestLinkPointer(t *testing.T) {
	body := []byte(`{"id":9007199254740993,"a/b":{"~t":["x",{"n":"rex"}]},"ok":true}`)
	for frag, want := range map[string]string{
		"#/id":           "9007199254740993",
		"#/a~1b/~0t/0":   "x",
		"#/a~1b/~0t/1/n": "rex",
		"#/ok":           "true",
		"#/a~1b/~0t/1":   `{"n":"rex"}`,
	} {
		if got, err := pointer(body, frag); err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", frag, got, err, want)
		}
	}
	for _, frag := range []string{"#/nope", "#/a~1b/~0t/2", "#/id/x", "id", "#id"} {
		if got, err := pointer(body, frag); err == nil {
			t.Errorf("%s: got %q, want an error", frag, got)
		}
	}
}

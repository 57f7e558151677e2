package transform_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/rival/transform"
)

// Each transformation answers the same value in another form: the body
// another text of the same JSON (a member more where it adds one), the
// same status and headers but for the form.
func TestSameValue(t *testing.T) {
	t.Parallel()
	const body = `{"id":1,"name":"Ä/\"🐕","tags":["x"],"size":{"height":9007199254740993,"unit":"cm"}}`
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Location", "/pets/1")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, body)
	})
	want := decode(t, body)
	for _, name := range append(transform.Names, "all") {
		h, err := transform.Wrap(name, app)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		srv.Close()
		got := decode(t, string(b))
		if name == "member" || name == "all" {
			if got["servedBy"] == nil {
				t.Errorf("%s: no member of its own: %s", name, b)
			}
			delete(got, "servedBy")
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %s, want the value of %s", name, b, body)
		}
		if name != "member" && name != "case" && name != "chunked" && name != "close" && string(b) == body+"\n" {
			t.Errorf("%s: the body is unchanged", name)
		}
		if resp.StatusCode != http.StatusCreated || resp.Header.Get("Location") != "/pets/1" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%s: %d %v", name, resp.StatusCode, resp.Header)
		}
		if chunked := len(resp.TransferEncoding) > 0; chunked != (name == "chunked" || name == "all") {
			t.Errorf("%s: Transfer-Encoding %v", name, resp.TransferEncoding)
		}
		if resp.Close != (name == "close" || name == "all") {
			t.Errorf("%s: Connection: close %v", name, resp.Close)
		}
	}
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return m
}

// "case" writes the headers' names in lower case on the wire, Content-Type
// and Date included, once each.
func TestCaseOnTheWire(t *testing.T) {
	t.Parallel()
	h, err := transform.Wrap("case", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "1")
		io.WriteString(w, `{}`)
	}))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	raw, _ := io.ReadAll(c)
	head, _, _ := strings.Cut(string(raw), "\r\n\r\n")
	for _, want := range []string{"\r\ncontent-type: application/json", "\r\nx-request-id: 1", "\r\ndate: "} {
		if strings.Count(strings.ToLower(head), strings.ToLower(want)) != 1 || !strings.Contains(head, want) {
			t.Errorf("want %q once, in lower case:\n%s", want, head)
		}
	}
}

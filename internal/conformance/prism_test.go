package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apitest"
)

// The environment `make conformance` sets.
const (
	envPrismURL = "PETSTORE_PRISM_URL" // Prism's proxy, e.g. http://127.0.0.1:4010
	envKey      = "PETSTORE_PRISM_KEY" // a key the server behind it accepts
)

// violation is one entry of Prism's sl-violations header.
type violation struct {
	Location []string `json:"location"`
	Severity string   `json:"severity"`
	Code     any      `json:"code"`
	Message  string   `json:"message"`
}

// prism sends requests through the proxy and fails the test on any
// violation Prism locates in the response. Request-side violations are the
// point of the invalid scenarios; they are counted, not failed.
type prism struct {
	c        *apitest.Client
	requests int
	reqViol  int
}

func (p *prism) do(t *testing.T, method, path, body string, header ...string) apitest.Response {
	t.Helper()
	res := p.c.Do(t, method, path, body, header...)
	p.requests++
	raw := res.Header.Get("sl-violations")
	if raw == "" {
		return res
	}
	var vs []violation
	if err := json.Unmarshal([]byte(raw), &vs); err != nil {
		t.Fatalf("%s %s: sl-violations %q: %v", method, path, raw, err)
	}
	for _, v := range vs {
		if len(v.Location) > 0 && v.Location[0] == "response" {
			t.Errorf("Prism: %s %s -> %d: response violation at %s (%v): %s",
				method, path, res.Status, strings.Join(v.Location, "."), v.Code, v.Message)
		} else {
			p.reqViol++
		}
	}
	return res
}

// want sends a request and fails the test unless the status is status.
func (p *prism) want(t *testing.T, status int, method, path, body string, header ...string) apitest.Response {
	t.Helper()
	res := p.do(t, method, path, body, header...)
	if res.Status != status {
		t.Errorf("%s %s: got %d %.200s, want %d", method, path, res.Status, res.Body, status)
	}
	return res
}

func TestPrismProxy(t *testing.T) {
	base := os.Getenv(envPrismURL)
	if base == "" {
		t.Skipf("%s is not set: run `make conformance`, which starts the server and Prism's proxy and sets it", envPrismURL)
	}
	key := os.Getenv(envKey)
	if key == "" {
		t.Fatalf("%s is set but %s, the server's key, is not", envPrismURL, envKey)
	}
	waitReady(t, base, key)

	p := &prism{c: &apitest.Client{Contract: apitest.Load(t), BaseURL: base, TrimPrefix: "/v1", Key: key}}
	t.Run("list", func(t *testing.T) { testList(t, p) })
	t.Run("create", func(t *testing.T) { testCreate(t, p) })
	t.Run("get", func(t *testing.T) { testGet(t, p) })
	t.Run("idempotency", func(t *testing.T) { testIdempotency(t, p) })
	t.Run("auth", func(t *testing.T) { testAuth(t, p) })
	t.Run("protocol", func(t *testing.T) { testProtocol(t, p) })
	t.Logf("%d requests through Prism; %d request-side violations (expected: the invalid scenarios)", p.requests, p.reqViol)
	if p.reqViol == 0 {
		t.Errorf("Prism reported no request-side violation: it is not validating")
	}
}

// waitReady polls, with a deadline, until Prism answers a listing through
// the server behind it.
func waitReady(t *testing.T, base, key string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	hc := &http.Client{Timeout: 2 * time.Second}
	for {
		req, _ := http.NewRequest("GET", base+"/pets?limit=1", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := hc.Do(req)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prism at %s with the server behind it not ready within 60s (last: %v)", base, errOrStatus(err, res))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func errOrStatus(err error, res *http.Response) string {
	if err != nil {
		return err.Error()
	}
	return res.Status
}

func testList(t *testing.T, p *prism) {
	// The store may hold pets from an earlier run against the same server:
	// count what is there, add 25, and expect both.
	before := walk(t, p, "/v1/pets?limit=100")
	statuses := []gen.PetStatus{gen.Available, gen.Pending, gen.Sold}
	for i := range 25 {
		p.want(t, 201, "POST", "/v1/pets", fmt.Sprintf(`{"name":"list %d","categoryId":%d,"status":%q}`, i, i+1, statuses[i%3]))
	}
	if all := walk(t, p, "/v1/pets?limit=7"); len(all) != len(before)+25 {
		t.Errorf("following Link from limit=7: got %d pets, want %d", len(all), len(before)+25)
	}
	if sold := walk(t, p, "/v1/pets?status=sold&limit=3"); len(sold) < 8 {
		t.Errorf("following Link for status=sold: got %d pets, want at least 8", len(sold))
	}
	for _, q := range []string{"", "?limit=1", "?limit=100", "?status=available", "?status=pending&limit=2",
		"?after=3", "?after=0&limit=5&status=sold", "?after=9223372036854775807"} {
		p.want(t, 200, "GET", "/v1/pets"+q, "")
	}
	for _, q := range []string{"limit=0", "limit=101", "limit=-1", "limit=abc", "limit=", "status=lost",
		"status=SOLD", "after=-1", "after=x", "after=9223372036854775808", "bogus=1", "limit=5&limit=6"} {
		p.want(t, 400, "GET", "/v1/pets?"+q, "")
	}
}

// walk follows rel="next" from path and returns every pet seen.
func walk(t *testing.T, p *prism, path string) []gen.Pet {
	t.Helper()
	var all []gen.Pet
	for pages := 0; path != ""; pages++ {
		if pages > 1000 {
			t.Fatalf("walk: more than 1000 pages")
		}
		res := p.want(t, 200, "GET", path, "")
		var page []gen.Pet
		res.JSON(t, &page)
		all = append(all, page...)
		path = res.Next(t)
	}
	return all
}

// testCreate sends bodies Prism passes on as they mean. Prism parses JSON
// bodies and sends them on re-encoded, so bodies whose bytes are the point
// (malformed or trailing JSON, duplicate members, invalid UTF-8, integers
// past 2^53) are not the server's to answer here; the in-process suite
// (internal/httpapi) covers them. A GET with a body Prism refuses itself.
func testCreate(t *testing.T, p *prism) {
	for _, body := range []string{
		`{"name":"Rex","categoryId":1}`,
		`{"name":"Tom","categoryId":9007199254740991,"status":"pending"}`,
		`{"name":"` + strings.Repeat("é", 100) + `","categoryId":2,"status":"sold"}`,
	} {
		res := p.want(t, 201, "POST", "/v1/pets", body)
		var pet gen.Pet
		res.JSON(t, &pet)
		if want := "/v1/pets/" + strconv.FormatInt(pet.Id, 10); res.Header.Get("Location") != want {
			t.Errorf("Location: got %q, want %q", res.Header.Get("Location"), want)
		}
	}
	p.want(t, 201, "POST", "/v1/pets", `{"name":"Charset","categoryId":1}`, "Content-Type", "application/json; charset=utf-8")
	for _, body := range []string{
		`{"categoryId":1}`, `{"name":"Rex"}`, `{}`, `{"name":"","categoryId":1}`, `{"name":"   ","categoryId":1}`,
		`{"name":"` + strings.Repeat("a", 101) + `","categoryId":1}`, `{"name":"a\nb","categoryId":1}`,
		`{"name":5,"categoryId":1}`, `{"name":"Rex","categoryId":0}`, `{"name":"Rex","categoryId":"1"}`,
		`{"name":"Rex","categoryId":1.5}`, `{"name":"Rex","categoryId":-1}`,
		`{"name":"Rex","categoryId":1,"status":"lost"}`, `{"id":7,"name":"Rex","categoryId":1}`,
		`{"name":"Rex","categoryId":1,"color":"red"}`, `[{"name":"Rex","categoryId":1}]`, `null`, ``,
	} {
		p.want(t, 400, "POST", "/v1/pets", body)
	}
	for _, ct := range []string{"", "text/plain", "application/merge-patch+json"} {
		p.want(t, 400, "POST", "/v1/pets", `{"name":"Rex","categoryId":1}`, "Content-Type", ct)
	}
	p.want(t, 413, "POST", "/v1/pets", `{"name":"`+strings.Repeat("a", 2<<20)+`","categoryId":1}`)
}

// testIdempotency: a create with an Idempotency-Key, its replay, the key
// reused for another pet, and malformed keys, each answered as documented.
func testIdempotency(t *testing.T, p *prism) {
	key := fmt.Sprintf("prism-%d", time.Now().UnixNano()) // the server may hold keys of an earlier run
	first := p.want(t, 201, "POST", "/v1/pets", `{"name":"Once","categoryId":5}`, "Idempotency-Key", key)
	again := p.want(t, 201, "POST", "/v1/pets", `{"categoryId":5,"name":"Once","status":"available"}`, "Idempotency-Key", key)
	if again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) || again.Header.Get("Location") != first.Header.Get("Location") {
		t.Errorf("replay: got %s (Idempotent-Replayed %q, Location %q), want %s replayed at %q",
			again.Body, again.Header.Get("Idempotent-Replayed"), again.Header.Get("Location"), first.Body, first.Header.Get("Location"))
	}
	p.want(t, 422, "POST", "/v1/pets", `{"name":"Twice","categoryId":5}`, "Idempotency-Key", key)
	for _, bad := range []string{strings.Repeat("k", 256), "a b", "a;b", `"open`} {
		p.want(t, 400, "POST", "/v1/pets", `{"name":"Once","categoryId":5}`, "Idempotency-Key", bad)
	}
}

func testGet(t *testing.T, p *prism) {
	res := p.want(t, 201, "POST", "/v1/pets", `{"name":"Fido","categoryId":4}`)
	var pet gen.Pet
	res.JSON(t, &pet)
	res = p.want(t, 200, "GET", "/v1/pets/"+strconv.FormatInt(pet.Id, 10), "")
	if res.Header.Get("Deprecation") == "" || res.Header.Get("Sunset") == "" {
		t.Errorf("get: no Deprecation or Sunset header")
	}
	p.want(t, 404, "GET", "/v1/pets/9223372036854775807", "")
	for _, path := range []string{"/v1/pets/abc", "/v1/pets/0", "/v1/pets/-1", "/v1/pets/1.0",
		"/v1/pets/99999999999999999999", "/v1/pets/1?verbose=1"} {
		p.want(t, 400, "GET", path, "")
	}
}

func testAuth(t *testing.T, p *prism) {
	anon := &prism{c: &apitest.Client{Contract: p.c.Contract, BaseURL: p.c.BaseURL, TrimPrefix: p.c.TrimPrefix}}
	for _, h := range [][]string{
		nil,
		{"Authorization", "Bearer wrong-key-0123456789abcdef"},
		{"Authorization", "Basic dXNlcjpwYXNz"},
		{"Authorization", "Bearer "},
	} {
		anon.want(t, 401, "GET", "/v1/pets", "", h...)
		anon.want(t, 401, "POST", "/v1/pets", `{"name":"Rex","categoryId":1}`, h...)
		anon.want(t, 401, "GET", "/v1/pets/1", "", h...)
	}
	anon.want(t, 401, "GET", "/v1/pets?limit=0", "")
	anon.want(t, 401, "POST", "/v1/pets", `{"id":1}`)
	p.requests += anon.requests
	p.reqViol += anon.reqViol
}

func testProtocol(t *testing.T, p *prism) {
	p.want(t, 405, "DELETE", "/v1/pets", "")
	p.want(t, 405, "POST", "/v1/pets/1", `{"name":"Rex","categoryId":1}`)
	p.want(t, 404, "GET", "/v1/orders", "")
	// CORS passes through the proxy (Prism runs with --cors=false).
	res := p.want(t, 200, "GET", "/v1/pets?limit=1", "", "Origin", "https://app.example")
	if got := res.Header.Get("Access-Control-Allow-Origin"); got != "*" {
		t.Errorf("Access-Control-Allow-Origin: got %q, want *", got)
	}
}

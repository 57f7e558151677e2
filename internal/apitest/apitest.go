// Package apitest checks HTTP exchanges against openapi.yaml. Every test of
// the API sends its requests through a Client, so a response with a status,
// header or body the contract does not document fails the test that got it.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/contract"
)

// Contract is openapi.yaml, loaded from the repository, ready to check
// responses with internal/contract, the checker the conformance kit uses,
// strictly: a member the contract does not document fails the test.
type Contract struct {
	*contract.Contract
}

var (
	loadOnce sync.Once
	loaded   *Contract
	loadErr  error
)

// Load returns the contract in the repository's openapi.yaml, found by
// walking up from the test's working directory.
func Load(t testing.TB) *Contract {
	t.Helper()
	loadOnce.Do(func() { loaded, loadErr = load() })
	if loadErr != nil {
		t.Fatalf("apitest: %v", loadErr)
	}
	return loaded
}

// SpecFile returns the path of the repository's openapi.yaml, found by
// walking up from the working directory.
func SpecFile() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "openapi.yaml"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}

func load() (*Contract, error) {
	file, err := SpecFile()
	if err != nil {
		return nil, err
	}
	spec, err := openapi3.NewLoader().LoadFromFile(file)
	if err != nil {
		return nil, err
	}
	if err := spec.Validate(context.Background()); err != nil {
		return nil, err
	}
	// Route by path under the servers' base path whatever the host, as the
	// server does.
	c, err := contract.FromServers(spec)
	if err != nil {
		return nil, err
	}
	// The reference is held to exactly the documented members, though the
	// contract's response objects are open to other implementations and
	// to later minor versions.
	return &Contract{c.Strict()}, nil
}

// Check fails t for every way the response breaks the contract
// (contract.Contract.Check).
func (c *Contract) Check(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	for _, v := range c.Contract.Check(req, status, header, body) {
		t.Errorf("contract: %s", v)
	}
}

// Response is what a Client got back.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Error decodes the body as an Error.
func (r Response) Error(t testing.TB) gen.Error {
	t.Helper()
	var e gen.Error
	if err := json.Unmarshal(r.Body, &e); err != nil {
		t.Fatalf("decode Error body %q: %v", r.Body, err)
	}
	return e
}

// nextRE matches a listing's Link rel="next" under the spec's base path.
var nextRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^<(` + regexp.QuoteMeta(Path("/pets")) + `\?[^>]+)>; rel="next"$`)
})

// Next returns the path of a listing's Link rel="next", or "" when it has
// none. A Link of another form fails t.
func (r Response) Next(t testing.TB) string {
	t.Helper()
	link := r.Header.Get("Link")
	if link == "" {
		return ""
	}
	m := nextRE().FindStringSubmatch(link)
	if m == nil {
		t.Fatalf("Link %q: not a rel=next link to %s", link, Path("/pets"))
	}
	return m[1]
}

// JSON decodes the body into v.
func (r Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode body %q: %v", r.Body, err)
	}
}

// Client sends requests to the API, in process (Handler) or over the network
// (BaseURL), and checks every response against the contract.
type Client struct {
	Contract *Contract
	Handler  http.Handler // in process, when set
	BaseURL  string       // e.g. http://127.0.0.1:8080, when Handler is nil
	HTTP     *http.Client // for BaseURL; http.DefaultClient when nil
	Key      string       // sent as a bearer key when not empty
}

// Do sends method path with body (none when empty) and header pairs
// ("Name", "value", …). A Content-Type of application/json is sent with a
// body unless the pairs set one; a pair with an empty value removes it.
func (c *Client) Do(t testing.TB, method, path, body string, header ...string) Response {
	t.Helper()
	return c.DoBytes(t, method, path, []byte(body), header...)
}

// DoBytes is Do with a body of bytes.
func (c *Client) DoBytes(t testing.TB, method, path string, body []byte, header ...string) Response {
	t.Helper()
	var rd io.Reader
	if len(body) > 0 {
		rd = bytes.NewReader(body)
	}
	target := path
	if c.Handler == nil {
		target = c.BaseURL + path
	}
	req, err := http.NewRequest(method, target, rd)
	if err != nil {
		t.Fatalf("new request %s %s: %v", method, path, err)
	}
	if len(body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
			continue
		}
		if i > 0 && header[i] == header[i-2] {
			req.Header.Add(header[i], header[i+1])
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	var res Response
	if c.Handler != nil {
		rec := httptest.NewRecorder()
		c.Handler.ServeHTTP(rec, req)
		res = Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	} else {
		hc := c.HTTP
		if hc == nil {
			hc = http.DefaultClient
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s %s: read body: %v", method, path, err)
		}
		res = Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
	}
	// Check against a request with the path alone, as the server saw it.
	check, _ := http.NewRequest(method, path, nil)
	check.Header = req.Header
	c.Contract.Check(t, check, res.Status, res.Header, res.Body)
	return res
}

// Create adds a pet with POST /pets and returns it; anything but a 201
// fails t. The members the spec requires that body lacks are added (Body).
func (c *Client) Create(t testing.TB, body string) gen.Pet {
	t.Helper()
	body = Body(body)
	res := c.Do(t, "POST", Path("/pets"), body)
	if res.Status != http.StatusCreated {
		t.Fatalf("POST %s %s: got %d %s, want 201", Path("/pets"), body, res.Status, res.Body)
	}
	var p gen.Pet
	res.JSON(t, &p)
	return p
}

// Eventually polls cond until it holds, or fails t after 20s: a generous
// deadline for what takes a moment.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	Within(t, 20*time.Second, what, cond)
}

// Within polls cond every 5ms until it holds, or fails t after limit: for a
// bound the code promises, it logs how long cond took.
func Within(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("%s: %v", what, time.Since(start).Round(time.Millisecond))
}

package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/conform"
)

// The environment `make conformance` sets.
const (
	envProxyURL = "PETSTORE_PRISM_PROXY_URL" // Prism's proxy in front of bin/petstore and the base path, e.g. http://127.0.0.1:4010 then .ci/base-path's
	envMockURL  = "PETSTORE_PRISM_MOCK_URL"  // prism mock openapi.yaml, at its root
	envKey      = "PETSTORE_CONFORM_KEY"     // a key the server behind the proxy accepts
	envKey2     = "PETSTORE_CONFORM_KEY2"    // and a second one, another tenant
	envSeed     = "PETSTORE_CONFORM_SEED"    // the seed of the direct run, so both judges see the same cases
)

// violation is one entry of Prism's sl-violations response header.
type violation struct {
	Location []string `json:"location"`
	Severity string   `json:"severity"`
	Code     any      `json:"code"`
	Message  string   `json:"message"`
}

// prismJudge is the kit's transport through Prism's proxy: it reads the
// sl-violations header of every response, so each violation Prism finds
// comes with the request that drew it (Prism's log has it too, but as
// coloured text for people, not tied to the request).
type prismJudge struct {
	next http.RoundTripper

	mu        sync.Mutex
	responses int
	requestV  int      // request-side violations: the kit's invalid cases
	responseV []string // response-side violations: failures
	broken    []string // headers that are not Prism's JSON
}

func (p *prismJudge) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := p.next.RoundTrip(req)
	if err != nil {
		return res, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.responses++
	raw := res.Header.Get("sl-violations")
	if raw == "" {
		return res, nil
	}
	var vs []violation
	if err := json.Unmarshal([]byte(raw), &vs); err != nil {
		p.broken = append(p.broken, fmt.Sprintf("%s %s: sl-violations %q: %v", req.Method, req.URL, raw, err))
		return res, nil
	}
	for _, v := range vs {
		if len(v.Location) > 0 && v.Location[0] == "response" {
			p.responseV = append(p.responseV, fmt.Sprintf("%s %s -> %d: %s at %s (%v): %s",
				req.Method, req.URL, res.StatusCode, v.Severity, strings.Join(v.Location, "."), v.Code, v.Message))
		} else {
			p.requestV++
		}
	}
	return res, nil
}

// TestPrismProxy sends the kit's cases through Prism's validating proxy to
// bin/petstore and fails on any response Prism finds at odds with
// openapi.yaml. The kit's own verdict on this traffic is not the gate:
// Prism answers some cases itself (a GET with a body: 501; a body that is
// not JSON: its own 400) and re-serialises the JSON it forwards (duplicate
// members merged, integers beyond 2^53 rounded), so those cases do not reach
// the server as sent. The script judges the same cases (same seed) sent
// straight to the server with `petstore conform`, which must pass whole.
func TestPrismProxy(t *testing.T) {
	base := os.Getenv(envProxyURL)
	if base == "" {
		t.Skipf("%s is not set: run `make conformance`, which starts the server and Prism's proxy and sets it", envProxyURL)
	}
	key := os.Getenv(envKey)
	if key == "" {
		t.Fatalf("%s is set but %s, the server's key, is not", envProxyURL, envKey)
	}
	judge := &prismJudge{next: http.DefaultTransport}
	t.Log("the kit's verdict through the proxy follows; it is not the gate (see TestPrismProxy)")
	rep := run(t, conform.Config{BaseURL: base, Key: key, Key2: os.Getenv(envKey2), Seed: seed(t), HTTPClient: &http.Client{Transport: judge}})

	for _, v := range judge.responseV {
		t.Errorf("Prism: %s", v)
	}
	for _, b := range judge.broken {
		t.Error(b)
	}
	t.Logf("%d requests through Prism (kit: %d); Prism found %d request-side violations (the kit's invalid cases), %d response-side",
		judge.responses, rep.Requests, judge.requestV, len(judge.responseV))
	// A proxy that validates nothing would pass too: it must have flagged
	// the kit's invalid requests, and seen every request the kit sent
	// through its client (the raw ones go past it, straight to the proxy).
	if judge.requestV == 0 {
		t.Error("Prism reported no request-side violation: it is not validating")
	}
	if judge.responses < rep.Requests-rep.Raw {
		t.Errorf("Prism answered %d requests, the kit sent %d through its client", judge.responses, rep.Requests-rep.Raw)
	}
}

// mockFails is every check the kit fails on `prism mock openapi.yaml`, found
// by running it (the same on every seed tried): the mock answers each
// operation with its documented example and keeps no state, so it answers
// every create with the example pet (id 1, "string", marked
// Idempotent-Replayed, at Location "string"), pages nowhere and past any
// after, answers 200 where a wrong method, a missing key or a path off the
// operations want 405, 401 or 404, accepts unknown members and parameters,
// sends its own shape of error for a body that is not JSON or a path it does
// not know, a 401 whose code is invalid_request, and no CORS headers (it is
// run with --cors=false); a Content-Type that lists two media types gets
// its 500. It answers 100 Continue to a refused create, and 406 in its own
// media type. It dies on Accept: json (and on a path with %zz), sent last:
// three requests in a row then find no server, and the kit sends no more
// (the target stopped answering: the run is incomplete as well), so the
// framing cases after them are not sent; http_framing passes its one case
// before, the slow head.
var mockFails = []string{
	"not_a_server_error",
	"status_code_conformance",
	"content_type_conformance",
	"response_headers_conformance",
	"response_schema_conformance",
	"negative_data_rejection",
	"positive_data_acceptance",
	"ignored_auth",
	"use_after_create",
	"unsupported_method",
	"unknown_path",
	"error_body",
	"auth_before_validation",
	"pagination",
	"unique_ids",
	"idempotent_replay",
	"stored_as_sent",
	"header_values",
	"cors",
	"refusal_at_once",
	"idempotency_scope",
	"concurrent_retries", // the model judges the retries' pets now: the mock's pet 1 for every key
}

// TestPrismMock runs the kit against Prism's mock and asserts exactly which
// checks fail: the kit's example of what it finds in a stateless fake.
func TestPrismMock(t *testing.T) {
	base := os.Getenv(envMockURL)
	if base == "" {
		t.Skipf("%s is not set: run `make conformance`, which starts Prism's mock and sets it", envMockURL)
	}
	rep := run(t, conform.Config{BaseURL: base, Key: "psk_any-key-the-mock-takes-any", Key2: "psk_another-key-the-mock-takes", Seed: seed(t)})
	var failed []string
	for _, c := range conform.Checks {
		if rep.Failed(c.Name) {
			failed = append(failed, c.Name)
		}
	}
	if !slices.Equal(failed, mockFails) {
		var b strings.Builder
		rep.WriteText(&b)
		t.Errorf("against Prism's mock the kit fails\n  %v\nwant\n  %v\n%s", failed, mockFails, b.String())
	}
	if !slices.ContainsFunc(rep.Incomplete, func(g conform.Gap) bool { return strings.Contains(g.Reason, "stopped answering") }) {
		t.Errorf("the mock dies on Accept: json; the kit does not say that it stopped answering: %+v", rep.Incomplete)
	}
}

// run runs the kit once the target answers, and logs its report.
func run(t *testing.T, cfg conform.Config) *conform.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := conform.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.WriteText(&b)
	t.Log("\n" + b.String())
	if rep.Truncated {
		t.Errorf("the request budget ran out before every case was sent")
	}
	return rep
}

// seed is the direct run's seed, or 0 (the kit picks one) outside make.
func seed(t *testing.T) uint64 {
	s := os.Getenv(envSeed)
	if s == "" {
		return 0
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", envSeed, s, err)
	}
	return n
}

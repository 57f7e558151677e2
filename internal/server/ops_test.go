package server

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// The server serves the operational endpoints without a key.
func TestOperationalEndpoints(t *testing.T) {
	base, _, _, _ := startServer(t, map[string]string{"PETSTORE_API_KEYS": "e2e-key-0123456789abcdef0123456789"})
	get := func(path string) (*http.Response, string) {
		t.Helper()
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatalf("GET %s: read body: %v", path, err)
		}
		return res, string(body)
	}
	if res, body := get("/readyz"); res.StatusCode != http.StatusOK || strings.TrimSpace(body) != `{"status":"ready"}` {
		t.Errorf("GET /readyz: got %d %s, want 200 ready", res.StatusCode, body)
	}
	res, body := get("/metrics")
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: got %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	for _, want := range []string{
		`petstore_http_requests_total{code="200",operation="/readyz"} 1`,
		"petstore_pets 0",
		"petstore_build_info{",
		"process_start_time_seconds ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /metrics lacks %q", want)
		}
	}
}

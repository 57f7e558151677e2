package conformance

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The judge of TestPrismProxy tells Prism's response violations from its
// request ones, and flags a header it cannot read, on canned answers.
func TestPrismJudge(t *testing.T) {
	answers := map[string]string{
		"/clean":    "",
		"/request":  `[{"location":["request","query","limit"],"severity":"Error","code":"maximum","message":"must be <= 100"}]`,
		"/response": `[{"location":["response","headers","link"],"severity":"Error","code":"pattern","message":"must match pattern"}]`,
		"/broken":   `not json`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := answers[r.URL.Path]; v != "" {
			w.Header().Set("sl-violations", v)
		}
	}))
	defer srv.Close()
	judge := &prismJudge{next: http.DefaultTransport}
	hc := &http.Client{Transport: judge}
	for path := range answers {
		res, err := hc.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	if judge.responses != 4 || judge.requestV != 1 || len(judge.broken) != 1 || len(judge.responseV) != 1 {
		t.Fatalf("responses %d, request violations %d, broken %v, response violations %v; want 4, 1, one, one",
			judge.responses, judge.requestV, judge.broken, judge.responseV)
	}
	if v := judge.responseV[0]; !strings.Contains(v, "GET "+srv.URL+"/response -> 200") || !strings.Contains(v, "response.headers.link") {
		t.Errorf("response violation %q does not name the request and the location", v)
	}
}

package httpapi_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/memstore"
)

// chromium finds Debian's headless-capable Chromium. Missing, the browser
// test is skipped on a developer's machine and fails in CI (CI=true), which
// must install it (.ci/run).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed; CI must install it (apt-get install -y chromium) and run the browser test")
	}
	t.Skip("chromium is not installed: skipping the browser test (apt-get install -y chromium to run it)")
	return ""
}

// opblock is one operation as Swagger UI renders it.
type opblock struct {
	Method, Path, OperationID string
	Deprecated                bool
}

// TestDocsInBrowser loads /docs in a real headless Chromium and checks that
// Swagger UI renders the spec's operations, the deprecated ones so, and the
// Authorize control, and that "Try it out" with a key lists the pets of this
// server.
func TestDocsInBrowser(t *testing.T) {
	bin := chromium(t)
	app, err := httpapi.New(httpapi.Config{Store: memstore.New(), Keys: apikey.NewSet(apikey.Hash(testKey))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(app) // 127.0.0.1
	defer srv.Close()
	c := &apitest.Client{Contract: apitest.Load(t), BaseURL: srv.URL, Key: testKey}
	c.Create(t, apitest.Body(`{"name":"Browser Rex","categoryId":1}`))

	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]), // headless, no first run, no background networking, no sync
		chromedp.ExecPath(bin),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-component-update", true),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

	// Every Content-Security-Policy violation of the page, from its start.
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `window.__csp = []; document.addEventListener('securitypolicyviolation', e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));`,
	}); err != nil {
		t.Fatal(err)
	}
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	err = chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/docs"),
		chromedp.WaitVisible(css(".opblock")),
	)
	if err != nil {
		t.Fatalf("load /docs in Chromium: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`document.querySelectorAll('.opblock').length >= %d`, len(apitest.Operations())),
		chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("waiting for the spec's %d operations: %v", len(apitest.Operations()), err)
	}
	ops, err := chromedp.Run(ctx, chromedp.Evaluate[[]opblock](`Array.from(document.querySelectorAll('.opblock')).map(e => ({
		Method: e.querySelector('.opblock-summary-method').textContent.trim(),
		Path: e.querySelector('[data-path]').getAttribute('data-path'),
		OperationID: ((e.querySelector('.opblock-summary-operation-id') || {}).textContent || '').trim(),
		Deprecated: e.classList.contains('opblock-deprecated') && !!e.querySelector('.opblock-summary-path__deprecated'),
	}))`))
	if err != nil {
		t.Fatalf("read the operations: %v", err)
	}
	authorize, err := chromedp.Run(ctx, chromedp.Text(css(".btn.authorize")))
	if err != nil {
		t.Fatalf("find the Authorize control: %v", err)
	}
	var want []opblock // the spec's operations, paths as Swagger UI shows them: without the base path
	for _, op := range apitest.Operations() {
		want = append(want, opblock{op.Method, strings.TrimPrefix(op.Path, apitest.Base()), op.ID, op.Deprecated})
	}
	slices.SortFunc(ops, func(a, b opblock) int { return strings.Compare(a.OperationID, b.OperationID) })
	slices.SortFunc(want, func(a, b opblock) int { return strings.Compare(a.OperationID, b.OperationID) })
	if !slices.Equal(ops, want) {
		t.Errorf("rendered operations:\n got %+v\nwant %+v", ops, want)
	}
	if !strings.Contains(authorize, "Authorize") {
		t.Errorf("Authorize control: got %q, want a button saying Authorize", authorize)
	}

	// Try it out: authorize with the key, list the pets, read the answer.
	const op = "#operations-animals-listPets"
	err = chromedp.Do(ctx,
		chromedp.Click(css(".btn.authorize")),
		chromedp.WaitVisible(css(".modal-ux input")),
		chromedp.SendKeys(css(".modal-ux input"), testKey),
		chromedp.Click(css(".modal-ux .auth-btn-wrapper .authorize")),
		chromedp.Click(css(".modal-ux .btn-done")),
		chromedp.Click(css(op+" .opblock-summary-control")),
		chromedp.Click(css(op+" .try-out__btn")),
		chromedp.Click(css(op+" .execute")),
		chromedp.WaitVisible(css(op+" .live-responses-table tr.response .response-col_status")),
	)
	if err != nil {
		t.Fatalf("try it out in Chromium: %v", err)
	}
	status, err := chromedp.Run(ctx, chromedp.Text(css(op+" .live-responses-table tr.response .response-col_status")))
	if err != nil {
		t.Fatal(err)
	}
	body, err := chromedp.Run(ctx, chromedp.Text(css(op+" .live-responses-table tr.response .response-col_description")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(strings.TrimSpace(status), "200") || !strings.Contains(body, "Browser Rex") {
		t.Errorf("try it out GET /pets: got status %q body %.300q, want 200 with the pet created", status, body)
	}
	// All of it under the page's Content-Security-Policy, which blocked
	// nothing.
	violations, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__csp`))
	if err != nil {
		t.Fatal(err)
	}
	if len(violations) > 0 {
		t.Errorf("Content-Security-Policy violations: %q", violations)
	}
	policy, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch('/docs/').then(r => r.headers.get('Content-Security-Policy'))`, chromedp.EvalAsValue, chromedp.EvalAwaitPromise))
	if err != nil || !strings.Contains(policy, "default-src 'none'") {
		t.Errorf("the page's Content-Security-Policy: got %q (%v), want one that starts from default-src 'none'", policy, err)
	}
}

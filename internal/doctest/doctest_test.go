package doctest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/apitest"
)

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Fourth round: what the kept features cost under load": "fourth-round-what-the-kept-features-cost-under-load",
		"Running with PostgreSQL":                              "running-with-postgresql",
		"What's left — and why?":                               "whats-left--and-why",
		"`make check-compat` keeps its word":                   "make-check-compat-keeps-its-word",
		"snake_case and-dashes 2":                              "snake_case-and-dashes-2",
		"Ünïcode Grüße":                                        "ünïcode-grüße",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseAnchorsAndBlocks(t *testing.T) {
	src := "# Top\n\n## Use `make run`\n\n## Top\n\n<!-- doctest repo ports=5433,8081 -->\n```sh\necho hi\n```\n\n```go\nx := 1\n```\n\n```bash\nls\n```\n"
	d, err := Parse("x.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var anchors []string
	for a := range d.Anchors {
		anchors = append(anchors, a)
	}
	slices.Sort(anchors)
	if want := []string{"top", "top-1", "use-make-run"}; !reflect.DeepEqual(anchors, want) {
		t.Errorf("anchors %v, want %v", anchors, want)
	}
	if len(d.Blocks) != 2 {
		t.Fatalf("%d shell blocks, want 2 (the go block is not one)", len(d.Blocks))
	}
	b := d.Blocks[0]
	if b.Line != 8 || b.Text != "echo hi\n" || b.Marker == nil || !b.Marker.Repo || !reflect.DeepEqual(b.Marker.Ports, []string{"5433", "8081"}) {
		t.Errorf("first block %+v, marker %+v", b, b.Marker)
	}
	if d.Blocks[1].Marker != nil || d.Blocks[1].Line != 16 {
		t.Errorf("second block %+v: want no marker, line 16", d.Blocks[1])
	}
}

func TestParseMarker(t *testing.T) {
	for _, tc := range []struct {
		in      string
		ok, bad bool
		want    Marker
	}{
		{in: "<!-- doctest -->", ok: true},
		{in: "<!-- doctest: repo postgres -->", ok: true, want: Marker{Repo: true, Postgres: true}},
		{in: "<!-- doctest serve -->", ok: true, want: Marker{Serve: true}},
		{in: "<!-- doctest skip: make test runs the tests -->", ok: true, want: Marker{Skip: "make test runs the tests"}},
		{in: "<!-- doctest skip -->", ok: true, bad: true},
		{in: "<!-- doctest repo sudo -->", ok: true, bad: true},
		{in: "<!-- doctest ports=80x -->", ok: true, bad: true},
		{in: "<!-- doctest serve repo -->", ok: true, bad: true},
		{in: "<!-- doctest copy ports=8090 timeout=6m -->", ok: true, want: Marker{Copy: true, Ports: []string{"8090"}, Timeout: 6 * time.Minute}},
		{in: "<!-- doctest copy repo -->", ok: true, bad: true},
		{in: "<!-- doctest serve copy -->", ok: true, bad: true},
		{in: "<!-- doctest timeout=soon -->", ok: true, bad: true},
		{in: "<!-- a comment -->"},
		{in: "<!-- doctests -->"},
	} {
		m, ok, err := parseMarker(tc.in)
		if ok != tc.ok || (err != nil) != tc.bad {
			t.Errorf("%s: ok %v err %v", tc.in, ok, err)
			continue
		}
		if ok && !tc.bad && !reflect.DeepEqual(*m, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.in, *m, tc.want)
		}
	}
}

// TestCheck proves the link checker on a broken link of each kind.
func TestCheck(t *testing.T) {
	root := t.TempDir()
	write := func(name, s string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/b.md", "# B\n\n## Second part\n\nBack to [the top](../a.md#a).\n")
	write("cmd/x/main.go", "package main\n")
	write("a.md", strings.Join([]string{
		"# A",
		"",
		"[ok](docs/b.md) [ok](docs/b.md#second-part) [ok](#a) [ok](cmd/x) [ok](cmd/x/main.go#L1)",
		"[ok](https://example.com/nowhere.md#x) [ok](/docs/b.md) ![ok](docs/b.md)",
		"[bad file](docs/c.md)",
		"[bad anchor](docs/b.md#third-part)",
		"[bad own anchor](#b)",
		"[bad escape](../outside.md)",
		"[ref][r]",
		"",
		"[r]: docs/missing.md",
		"",
		"<!-- doctest -->",
		"```sh",
		"true",
		"```",
		"",
		"```console",
		"$ true",
		"```",
		"",
	}, "\n"))
	probs, err := Check(root, []string{"a.md", "docs/b.md"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range probs {
		got = append(got, p.String())
	}
	want := []string{
		"a.md:18: ```console block without a marker",
		`a.md:5: link "docs/c.md": docs/c.md does not exist`,
		`a.md:6: link "docs/b.md#third-part": no heading with that anchor in docs/b.md`,
		`a.md:7: link "#b": no heading with that anchor in a.md`,
		`a.md:8: link "../outside.md": leaves the repository`,
		`a.md:9: link "docs/missing.md": docs/missing.md does not exist`,
	}
	if len(got) != len(want) {
		t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d: %s\nwant: %s", i, got[i], want[i])
		}
	}
}

// TestRepositoryMarkdown is make lint's check, in make test too.
func TestRepositoryMarkdown(t *testing.T) {
	root := repoRoot(t)
	files, err := MarkdownFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	probs, err := Check(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		t.Error(p)
	}
}

func TestExpect(t *testing.T) {
	block := strings.Join([]string{
		"curl -si localhost:8080" + apitest.Base() + "/pets -d x",
		"#> HTTP/1.1 201 Created",
		"#> Location: " + apitest.Base() + "/pets/<id>",
		"#> {\"id\":<id>,\"name\":\"Rex\"}",
		"curl -s localhost:8080" + apitest.Base() + "/pets/$ID",
		"  #> {\"id\":<id>,…}",
		"#>",
		"#> done",
	}, "\n")
	out := "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nLocation: " + apitest.Base() + "/pets/17\r\n\r\n{\"id\":17,\"name\":\"Rex\"}\n{\"id\":17,\"status\":\"sold\"}\n\ndone\n"
	if err := Expect(block, out); err != nil {
		t.Errorf("good output refused: %v", err)
	}
	for name, bad := range map[string]string{
		"another id":   strings.Replace(out, `{"id":17,"status"`, `{"id":18,"status"`, 1),
		"out of order": "{\"id\":17,\"name\":\"Rex\"}\nHTTP/1.1 201 Created\nLocation: " + apitest.Base() + "/pets/17\n{\"id\":17,\"status\":\"sold\"}\n\ndone\n",
		"a line short": strings.Replace(out, "done\n", "", 1),
		"other status": strings.Replace(out, "201 Created", "200 OK", 1),
		"no blank":     strings.Replace(out, "\n\ndone", "\ndone", 1),
	} {
		if err := Expect(block, bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := Expect("#> <a>-<a>", "x-y"); err == nil {
		t.Error("<a>-<a> matched x-y")
	}
	if err := Expect("#> <a>-<a>", "x-x"); err != nil {
		t.Errorf("<a>-<a> refused x-x: %v", err)
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

var (
	buildOnce sync.Once
	binPath   string
	binErr    error
)

// petstoreBinary builds the server once for the runner tests.
func petstoreBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "doctest-test-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "petstore")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/petstore")
		cmd.Dir = repoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = err
			t.Logf("%s", out)
		}
	})
	if binErr != nil {
		t.Fatalf("building petstore: %v", binErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// runDoc runs the blocks of one Markdown text and returns the result and
// what the runner printed.
func runDoc(t *testing.T, md string) (Result, string) {
	t.Helper()
	d, err := Parse("t.md", []byte(md))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r := &Runner{Root: repoRoot(t), Petstore: petstoreBinary(t), Out: &out, Postgres: false}
	res := r.Run(context.Background(), []*Doc{d})
	return res, out.String()
}

const serveBlock = "<!-- doctest serve -->\n```sh\nPETSTORE_API_KEYS=dev-key-0123456789abcdef0123456789 make run\n```\n\n"

var createBlock = `<!-- doctest -->
` + "```sh" + `
KEY=dev-key-0123456789abcdef0123456789
curl -si localhost:8080` + apitest.Base() + `/pets -H "Authorization: Bearer $KEY" \
  -H 'Content-Type: application/json' -d '` + apitest.Body(`{"name":"Rex","categoryId":1}`) + `'
#> HTTP/1.1 201 Created
#> ` + createdLine() + `
curl -s localhost:8080` + apitest.Base() + `/pets/999 -H "Authorization: Bearer $KEY"
#> {"code":"not_found","message":"pet 999: pet not found","status":404}
` + "```\n\n"

// createdLine is createBlock's pet as its answer shows it: the spec's Pet
// with the members it requires (apitest.PetJSON), members sorted, any id.
func createdLine() string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(apitest.PetJSON(`{"id":1,"name":"Rex","categoryId":1,"status":"available"}`)), &m); err != nil {
		panic(err)
	}
	b, _ := json.Marshal(m)
	return strings.Replace(string(b), `"id":1`, `"id":<id>`, 1)
}

// TestRunner runs good blocks against a real server, and proves that a
// block that fails, one whose output differs from what it shows, and a
// misplaced one each fail.
func TestRunner(t *testing.T) {
	res, out := runDoc(t, serveBlock+createBlock+
		"<!-- doctest ports=5433 -->\n```sh\ntest \"$PWD\" = \"$TMPDIR\"; test -z \"$(ls -A)\"; p=5433; test \"$p\" -ne $((5000 + 433))\n```\n\n"+
		"<!-- doctest repo -->\n```sh\ntest -f go.mod\n```\n\n"+
		"<!-- doctest skip: shows a command that never ends -->\n```sh\nmake run\n```\n\n"+
		"<!-- doctest postgres -->\n```sh\nfalse\n```\n\n")
	if want := (Result{Passed: 3, Skipped: 1}); res != want {
		t.Errorf("result %v, want %v\n%s", res, want, out)
	}
	if !strings.Contains(out, "SKIP t.md:") {
		t.Errorf("no notice for the skipped postgres block:\n%s", out)
	}

	for name, md := range map[string]string{
		"command fails":        serveBlock + "<!-- doctest -->\n```sh\ncurl -sf localhost:8080" + apitest.Base() + "/pets\n```\n",
		"other output":         serveBlock + strings.Replace(createBlock, `"status":404`, `"status":400`, 1),
		"no serve block":       createBlock,
		"bad serve block":      "<!-- doctest serve -->\n```sh\nmake run &\n```\n\n" + createBlock,
		"unmarked":             "```sh\ntrue\n```\n",
		"unset variable":       "<!-- doctest -->\n```sh\necho \"$NO_SUCH_VARIABLE\"\n```\n",
		"pipeline fails early": "<!-- doctest -->\n```sh\nfalse | cat\n```\n",
	} {
		res, out := runDoc(t, md)
		if res.Failed == 0 || res.Passed != 0 || !strings.Contains(out, "FAIL t.md:") {
			t.Errorf("%s: %v, want a failure\n%s", name, res, out)
		}
	}
}

// TestRunnerCopy: a block marked copy runs in a copy of the repository's
// working tree, not in the repository, and without its .git.
func TestRunnerCopy(t *testing.T) {
	root := repoRoot(t)
	canary := fmt.Sprintf("doctest-canary-%d", os.Getpid())
	d, err := Parse("t.md", []byte("<!-- doctest copy -->\n```sh\ntest -f go.mod && test -f internal/doctest/copy.go && test ! -e .git && test ! -e node_modules\ntouch "+canary+"\necho \"in $(basename \"$PWD\")\"\n#> in repo\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r := &Runner{Root: root, Out: &out}
	if res := r.Run(context.Background(), []*Doc{d}); res.Passed != 1 {
		t.Errorf("%v\n%s", res, out.String())
	}
	if _, err := os.Stat(filepath.Join(root, canary)); err == nil {
		os.Remove(filepath.Join(root, canary))
		t.Errorf("the block wrote into the repository, not a copy")
	}
}

// TestRunnerTimeout: a block that hangs fails, and what it started is ended.
func TestRunnerTimeout(t *testing.T) {
	d, err := Parse("t.md", []byte("<!-- doctest -->\n```sh\nsleep 60 &\nsleep 60\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r := &Runner{Root: repoRoot(t), Out: &out, Timeout: 500 * time.Millisecond}
	res := r.Run(context.Background(), []*Doc{d})
	if res.Failed != 1 || !strings.Contains(out.String(), "did not finish within") {
		t.Errorf("%v\n%s", res, out.String())
	}
}

// docBase finds the base path the README's walkthroughs address.
var docBase = regexp.MustCompile(`localhost:8080(/v[0-9]+)/`)

// underSpecBase returns a block of the README with the base path its
// examples were written for replaced by the spec's, and its create bodies
// given the members the spec requires: a tree that make new-major moved
// serves the new contract before its documents follow (make test-docs
// holds the documents to it; this test is about the runner).
func underSpecBase(text string) string {
	text = createBody.ReplaceAllStringFunc(text, func(d string) string {
		return "-d '" + apitest.Body(createBody.FindStringSubmatch(d)[1]) + "'"
	})
	m := docBase.FindStringSubmatch(text)
	if m == nil {
		return text
	}
	return regexp.MustCompile(regexp.QuoteMeta(m[1])+`\b`).ReplaceAllLiteralString(text, apitest.Base())
}

// createBody is a create's body in a block.
var createBody = regexp.MustCompile(`-d '(\{[^']*\})'`)

// TestRealBlockMutant runs the README's walkthroughs that talk to a server
// with one expected line changed: each must fail.
func TestRealBlockMutant(t *testing.T) {
	root := repoRoot(t)
	src, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse("README.md", src)
	if err != nil {
		t.Fatal(err)
	}
	mutated := 0
	for i, b := range d.Blocks {
		if b.Marker == nil || b.Marker.Skip != "" || b.Marker.Serve || !strings.Contains(b.Text, "#> ") {
			continue
		}
		// The serve blocks above it, then the block with its first
		// expected line changed.
		d2 := *d
		d2.Blocks = nil
		for _, x := range d.Blocks[:i] {
			if x.Marker != nil && x.Marker.Serve {
				d2.Blocks = append(d2.Blocks, x)
			}
		}
		m := b
		m.Text = strings.Replace(underSpecBase(b.Text), "#> ", "#> MUTANT ", 1)
		d2.Blocks = append(d2.Blocks, m)
		var out bytes.Buffer
		r := &Runner{Root: root, Petstore: petstoreBinary(t), Out: &out}
		res := r.Run(context.Background(), []*Doc{&d2})
		if res.Failed != 1 || !strings.Contains(out.String(), "expected output line not found") {
			t.Errorf("%s with a mutated expected line: %v\n%s", b, res, out.String())
		}
		mutated++
	}
	if mutated == 0 {
		t.Error("README.md has no block with expected output to mutate")
	}
}

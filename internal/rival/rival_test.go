package rival_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/conform"
	"github.com/petstore/petstore/internal/contract"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/rival/transform"
)

// The rival's two API keys: the kit's two tenants.
const (
	key1 = "psk_rivalrivalrivalrivalrivalrivalrivalrival1"
	key2 = "psk_rivalrivalrivalrivalrivalrivalrivalrival2"
)

// root is the module's root, where go runs.
func root(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// genConfig is oapi-codegen's configuration for the rival's package api:
// the models, the Echo server and its strict interface, and the embedded
// spec the rival validates with.
const genConfig = `package: api
generate:
  echo-server: true
  strict-server: true
  models: true
  embedded-spec: true
output-options:
  skip-prune: true
`

// build generates package api from the spec at specPath with the module's
// oapi-codegen (tools.go pins it) into dir, and builds the rival over it
// (go build -overlay: nothing is written in the tree); it returns the
// binary.
func build(t *testing.T, dir, specPath string) string {
	t.Helper()
	writtenFor(t, loadSpec(t, specPath))
	top := root(t)
	cfg, gen, bin := filepath.Join(dir, "config.yaml"), filepath.Join(dir, "api.gen.go"), filepath.Join(dir, "rival")
	if err := os.WriteFile(cfg, []byte(genConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, top, "go", "run", "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen", "--config="+cfg, "-o", gen, specPath)
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(top, "internal/rival/api/api.gen.go"): gen}})
	if err := os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, top, "go", "build", "-tags", "rival", "-overlay", filepath.Join(dir, "overlay.json"), "-o", bin, "./internal/rival/server")
	return bin
}

func run(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// serve starts the rival binary with one listener a defect ("none" for
// the correct rival), and returns each one's address; it stops it at the
// test's end.
func serve(t *testing.T, bin string, defects []string) map[string]string {
	t.Helper()
	cmd := exec.Command(bin, "-keys", key1+","+key2, "-defects", strings.Join(defects, ","))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addrs := map[string]string{}
	sc := bufio.NewScanner(out)
	for len(addrs) < len(defects) && sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == "rival" {
			addrs[f[1]] = f[2]
		}
	}
	if len(addrs) < len(defects) {
		t.Fatalf("the rival listens on %d of %d listeners: %v", len(addrs), len(defects), sc.Err())
	}
	return addrs
}

// loadSpec is the spec at path, as the kit loads one.
// rivalOperations are the operations the rival's handlers implement: a
// plain user writes one for each operation of the spec.
var rivalOperations = []string{"listPets", "createPet", "getPet"}

// writtenFor skips the test when spec has an operation the rival has no
// handler for (a tree the drill evolved with deletePet): its generated
// interface would ask for a method no one wrote, as it asks the user. The
// kit judges such an operation on the reference (the drill's variant e).
func writtenFor(t *testing.T, spec *openapi3.T) {
	t.Helper()
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			if !slices.Contains(rivalOperations, op.OperationID) {
				t.Skipf("the spec has %s %s (%s), which the rival was not written for", method, path, op.OperationID)
			}
		}
	}
}

func loadSpec(t *testing.T, path string) *openapi3.T {
	t.Helper()
	spec, err := openapi3.NewLoader().LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// kit runs the conformance kit on the rival at addr with spec: its report
// and the report's text; with checks, those alone.
func kit(t *testing.T, addr string, spec *openapi3.T, checks ...string) (*conform.Report, string) {
	t.Helper()
	base, err := contract.BasePath(spec)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := conform.Run(context.Background(), conform.Config{BaseURL: addr + base, Key: key1, Key2: key2, Spec: spec, Seed: 1, Checks: checks})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.WriteText(&b)
	return rep, b.String()
}

// failed are the checks the report fails.
func failed(rep *conform.Report) []string {
	var names []string
	for _, r := range rep.Results {
		if r.Failed > 0 && !slices.Contains(names, r.Check) {
			names = append(names, r.Check)
		}
	}
	return names
}

// plants are the defects planted in the rival (server/defects.go), each
// with the check that must fail for it and the drill variant whose spec
// gives it something to break ("": openapi.yaml).
var plants = []struct{ defect, check, variant string }{
	{"drops-member", "response_schema_conformance", ""},
	{"ignores-default", "default_status", ""},
	{"pages-off-by-one", "pagination", ""},
	{"limit-ignored", "pagination", ""},
	{"link-drops-status", "pagination", ""},
	{"replays-new-id", "idempotent_replay", ""},
	{"replay-unmarked", "idempotent_replay", ""},
	{"key-ignores-body", "idempotent_replay", ""},
	{"key-not-scoped", "idempotency_scope", ""},
	{"answers-200", "status_code_conformance", ""},
	{"wrong-error-body", "error_body", ""},
	{"lenient-json", "negative_data_rejection", ""},
	{"float-lossy", "stored_as_sent", "i"},
	{"other-instant", "stored_as_sent", "j"},
	{"refuses-null", "positive_data_acceptance", "k"},
}

// The plain rival passes the kit on the current spec, and each defect
// planted in it fails the check that judges it (a run of that check
// alone). Held out, the legal transformations of its answers (package
// transform: members in another order, escapes, white space, a member of
// its own, headers' names in another case, chunked bodies, Connection:
// close) all at once fail no check; RIVAL_EACH=1 runs each alone too.
func TestRival(t *testing.T) {
	t.Parallel()
	start := time.Now()
	specPath := filepath.Join(root(t), "openapi.yaml")
	bin := build(t, t.TempDir(), specPath)
	t.Logf("generated and built in %s", time.Since(start).Round(time.Millisecond))
	spec := loadSpec(t, specPath)
	legal := []string{"none", "transform:all"}
	if os.Getenv("RIVAL_EACH") != "" {
		for _, n := range transform.Names {
			legal = append(legal, "transform:"+n)
		}
	}
	defects := slices.Clone(legal)
	for _, p := range plants {
		if p.variant == "" {
			defects = append(defects, p.defect)
		}
	}
	addrs := serve(t, bin, defects)
	for _, d := range legal {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			if rep, text := kit(t, addrs[d], spec); rep.Verdict() != conform.Pass {
				t.Fatalf("the rival (%s) fails the kit: %s\n%s", d, rep.Verdict(), text)
			}
		})
	}
	for _, p := range plants {
		if p.variant != "" {
			continue
		}
		t.Run(p.defect, func(t *testing.T) {
			t.Parallel()
			rep, text := kit(t, addrs[p.defect], spec, p.check)
			if !rep.Failed(p.check) {
				t.Fatalf("%s: %s passes (fails %v):\n%s", p.defect, p.check, failed(rep), text)
			}
			t.Logf("%s: fails %v", p.defect, failed(rep))
		})
	}
}

// dataVariants are the letters of the evolution drill's variants that
// change data alone (tools/drill: drill show names no operation), and
// whose change the spec at specPath has not had yet (a tree the drill made
// has): the rival, generated from the spec, needs no code for them.
func dataVariants(t *testing.T, drill, specPath string) string {
	t.Helper()
	orig, err := os.ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	scratch := filepath.Join(t.TempDir(), "openapi.yaml")
	var letters strings.Builder
	for l := 'a'; l <= 'z'; l++ {
		out, err := exec.Command(drill, "show", string(l)).Output()
		if err != nil || strings.Contains(string(out), " operation=") {
			continue
		}
		if err := os.WriteFile(scratch, orig, 0o644); err != nil {
			t.Fatal(err)
		}
		if exec.Command(drill, "edit", string(l), scratch).Run() == nil {
			letters.WriteRune(l)
		}
	}
	return letters.String()
}

// The plain rival passes the kit on openapi.yaml as the evolution drill
// changes it, every variant of data at once (one build, one run: each
// variant's member is judged as in its own; RIVAL_EACH=1 runs each variant
// on its own as well), and the defects that need a variant's member fail
// there. A variant with an operation needs the rival's code for it, which
// the drill brings for the reference alone.
func TestRivalVariants(t *testing.T) {
	t.Parallel()
	top, dir := root(t), t.TempDir()
	drill := filepath.Join(dir, "drill")
	run(t, top, "go", "build", "-o", drill, "./tools/drill")
	letters := dataVariants(t, drill, filepath.Join(top, "openapi.yaml"))
	if letters == "" {
		t.Skip("openapi.yaml has every variant of data already")
	}
	all := []string{letters}
	if os.Getenv("RIVAL_EACH") != "" {
		all = append(all, strings.Split(letters, "")...)
	}
	for _, v := range all {
		t.Run(v, func(t *testing.T) {
			start := time.Now()
			vdir := t.TempDir()
			specPath := filepath.Join(vdir, "openapi.yaml")
			orig, err := os.ReadFile(filepath.Join(top, "openapi.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(specPath, orig, 0o644); err != nil {
				t.Fatal(err)
			}
			run(t, vdir, drill, "edit", v, specPath)
			bin := build(t, vdir, specPath)
			t.Logf("%s: generated and built in %s", v, time.Since(start).Round(time.Millisecond))
			variantRuns(t, v, bin, loadSpec(t, specPath))
		})
	}
}

// variantRuns runs the kit on the rival built for variant v's spec, and on
// each plant whose variant v has.
func variantRuns(t *testing.T, v, bin string, spec *openapi3.T) {
	t.Helper()
	defects := []string{"none"}
	for _, p := range plants {
		if p.variant != "" && strings.Contains(v, p.variant) {
			defects = append(defects, p.defect)
		}
	}
	addrs := serve(t, bin, defects)
	var wg sync.WaitGroup
	for _, d := range defects {
		wg.Go(func() {
			start := time.Now()
			check := checkOf(d)
			var rep *conform.Report
			var text string
			if d == "none" {
				rep, text = kit(t, addrs[d], spec)
			} else {
				rep, text = kit(t, addrs[d], spec, check)
			}
			switch {
			case d == "none" && rep.Verdict() != conform.Pass:
				t.Errorf("%s: the rival fails the kit: %s\n%s", v, rep.Verdict(), text)
			case d != "none" && !rep.Failed(check):
				t.Errorf("%s: %s: %s passes (fails %v):\n%s", v, d, check, failed(rep), text)
			default:
				t.Logf("%s: %s: %s, fails %v (%s)", v, d, rep.Verdict(), failed(rep), time.Since(start).Round(time.Millisecond))
			}
		})
	}
	wg.Wait()
}

func checkOf(defect string) string {
	for _, p := range plants {
		if p.defect == defect {
			return p.check
		}
	}
	return ""
}

// The reference app with every legal transformation of its answers at
// once (package transform) passes the kit too.
func TestReferenceTransformed(t *testing.T) {
	t.Parallel()
	app, err := httpapi.New(httpapi.Config{Store: memstore.New(), Keys: apikey.NewSet(apikey.Hash(key1), apikey.Hash(key2))})
	if err != nil {
		t.Fatal(err)
	}
	h, err := transform.Wrap("all", app)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.MaxHeaderBytes, srv.Config.ReadHeaderTimeout, srv.Config.DisableGeneralOptionsHandler = 65536-4096, 5*time.Second, true
	srv.Listener = httpapi.Listener(srv.Listener, nil, 65536)
	srv.Start()
	t.Cleanup(srv.Close)
	if rep, text := kit(t, srv.URL, loadSpec(t, filepath.Join(root(t), "openapi.yaml"))); rep.Verdict() != conform.Pass {
		t.Fatalf("the reference, transformed, fails the kit: %s\n%s", rep.Verdict(), text)
	}
}

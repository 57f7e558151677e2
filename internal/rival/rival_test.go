package rival_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/conform"
	"github.com/petstore/petstore/internal/contract"
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
func loadSpec(t *testing.T, path string) *openapi3.T {
	t.Helper()
	spec, err := openapi3.NewLoader().LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// kit runs the conformance kit on the rival at addr with spec: its report
// and the report's text.
func kit(t *testing.T, addr string, spec *openapi3.T) (*conform.Report, string) {
	t.Helper()
	base, err := contract.BasePath(spec)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := conform.Run(context.Background(), conform.Config{BaseURL: addr + base, Key: key1, Key2: key2, Spec: spec, Seed: 1})
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
		if r.Failed > 0 {
			names = append(names, r.Check)
		}
	}
	return names
}

var _ = sync.Mutex{}
var _ = fmt.Sprint
var _ = time.Now

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
}

// The plain rival passes the kit on the current spec, and each defect
// planted in it fails the check that judges it.
func TestRival(t *testing.T) {
	t.Parallel()
	start := time.Now()
	specPath := filepath.Join(root(t), "openapi.yaml")
	bin := build(t, t.TempDir(), specPath)
	t.Logf("generated and built in %s", time.Since(start).Round(time.Millisecond))
	spec := loadSpec(t, specPath)
	defects := []string{"none"}
	for _, p := range plants {
		if p.variant == "" {
			defects = append(defects, p.defect)
		}
	}
	addrs := serve(t, bin, defects)
	t.Run("none", func(t *testing.T) {
		t.Parallel()
		if rep, text := kit(t, addrs["none"], spec); rep.Verdict() != conform.Pass {
			t.Fatalf("the rival fails the kit: %s\n%s", rep.Verdict(), text)
		}
	})
	for _, p := range plants {
		if p.variant != "" {
			continue
		}
		t.Run(p.defect, func(t *testing.T) {
			t.Parallel()
			rep, text := kit(t, addrs[p.defect], spec)
			if !rep.Failed(p.check) {
				t.Fatalf("%s: %s passes (fails %v):\n%s", p.defect, p.check, failed(rep), text)
			}
			t.Logf("%s: fails %v", p.defect, failed(rep))
		})
	}
}

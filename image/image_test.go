package image

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/syncbuf"
)

// instructions returns a Dockerfile's instructions, continuation lines
// joined and comments dropped, split into stages at each FROM.
func instructions(t *testing.T, file string) [][]string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var stages [][]string
	var cur []string
	var line strings.Builder
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "#") || (l == "" && line.Len() == 0) {
			continue
		}
		if cont, ok := strings.CutSuffix(l, "\\"); ok {
			line.WriteString(strings.TrimSpace(cont) + " ")
			continue
		}
		line.WriteString(l)
		ins := line.String()
		line.Reset()
		if strings.HasPrefix(ins, "FROM ") {
			stages = append(stages, cur)
			cur = nil
		}
		cur = append(cur, ins)
	}
	return append(stages, cur)
}

// TestDockerfiles: the Dockerfile builds with go.mod's Go, statically and
// trimmed, and its final stage is host.Dockerfile's but for the one COPY of
// the root filesystem.
func TestDockerfiles(t *testing.T) {
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(gomod)
	docker := instructions(t, "../Dockerfile")
	if want := "ARG GO_VERSION=" + string(goVersion[1]); !slices.Contains(docker[0], want) {
		t.Errorf("Dockerfile: want %q before the first FROM (go.mod's go line), got %q", want, docker[0])
	}
	all := strings.Join(slices.Concat(docker...), "\n")
	for _, want := range []string{"FROM golang:${GO_VERSION}-", "CGO_ENABLED=0 go build -trimpath", "-X main.version=${VERSION}", "-X main.revision=${REVISION}"} {
		if !strings.Contains(all, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	final := docker[len(docker)-1]
	host := instructions(t, "host.Dockerfile")
	if len(host) != 2 {
		t.Fatalf("host.Dockerfile: want one stage, got %d", len(host)-1)
	}
	same := func(ins []string) []string {
		return slices.DeleteFunc(slices.Clone(ins), func(s string) bool { return strings.HasPrefix(s, "COPY ") })
	}
	if !slices.Equal(same(final), same(host[1])) {
		t.Errorf("the final stages differ beyond their COPY:\nDockerfile:      %q\nhost.Dockerfile: %q", same(final), same(host[1]))
	}
	if final[0] != "FROM scratch" {
		t.Errorf("Dockerfile's final stage: %q, want FROM scratch", final[0])
	}
}

// engine is the container engine make image uses.
func engine(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("./engine").Output()
	if err != nil {
		t.Fatalf("image/engine: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func command(t *testing.T, dir, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stderr syncbuf.Buffer // written by exec's goroutine
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// TestImage builds the image with make image and checks it by content: its
// tags, its config, its files, and its binary run on the host (a container
// cannot always run where tests run); built again, it leaves no dangling
// image behind.
func TestImage(t *testing.T) {
	if os.Getenv("PETSTORE_TEST_IMAGE") == "" {
		t.Skip("set PETSTORE_TEST_IMAGE=1 (make test-image): builds an image with docker or podman")
	}
	const version = "9.9.9-test"
	revision := strings.TrimSpace(string(command(t, "..", "git", "rev-parse", "HEAD")))
	eng := engine(t)
	repo := fmt.Sprintf("localhost/petstore-test-%d", os.Getpid())
	tag, versionTag := repo+":latest", repo+":"+version
	dangling := func() int {
		return len(strings.Fields(string(command(t, ".", eng, "images", "-q", "--no-trunc", "--filter", "dangling=true"))))
	}
	all := func() int { // intermediate images included
		return len(strings.Fields(string(command(t, ".", eng, "images", "-a", "-q", "--no-trunc"))))
	}
	before, beforeAll := dangling(), all()
	make := func() {
		command(t, "..", "make", "image", "IMAGE="+repo, "VERSION="+version, "IMAGE_CONTEXT="+filepath.Join(t.TempDir(), "context"))
	}
	make()
	t.Cleanup(func() {
		exec.Command(eng, "rmi", tag).Run()
		exec.Command(eng, "rmi", versionTag).Run()
	})
	// Built again (a binary with the same bytes: force a new image with a
	// changed source label), the image it replaces is removed.
	first := strings.TrimSpace(string(command(t, ".", eng, "image", "inspect", "--format", "{{.Id}}", tag)))
	command(t, "..", "make", "image", "IMAGE="+repo, "VERSION="+version, "IMAGE_SOURCE=https://example.com/petstore-rebuilt", "IMAGE_CONTEXT="+filepath.Join(t.TempDir(), "context"))
	second := strings.TrimSpace(string(command(t, ".", eng, "image", "inspect", "--format", "{{.Id}}", versionTag)))
	if first == second {
		t.Errorf("the rebuilt image has the first one's id %s: the test of dangling images proves nothing", first)
	}
	if after := dangling(); after > before {
		t.Errorf("%d dangling image(s) after make image twice, %d before: the replaced image was left behind", after, before)
	}
	if after := all(); after != beforeAll+1 {
		t.Errorf("%d images (intermediate ones included) after make image twice, %d before: want one more, the image", after, beforeAll)
	}
	if exec.Command(eng, "image", "inspect", first).Run() == nil {
		t.Errorf("the replaced image %s is still there", first)
	}
	make()

	// The config.
	var inspect []struct {
		Size   int64
		Config struct {
			User         string
			Entrypoint   []string
			Cmd          []string
			ExposedPorts map[string]struct{}
			Labels       map[string]string
		}
	}
	if err := json.Unmarshal(command(t, ".", eng, "image", "inspect", tag), &inspect); err != nil || len(inspect) != 1 {
		t.Fatalf("image inspect: %v (%d images)", err, len(inspect))
	}
	cfg := inspect[0].Config
	if cfg.User != "65532:65532" {
		t.Errorf("User %q, want 65532:65532 (numeric, not root)", cfg.User)
	}
	if !slices.Equal(cfg.Entrypoint, []string{"/petstore"}) || !slices.Equal(cfg.Cmd, []string{"serve"}) {
		t.Errorf("Entrypoint %q Cmd %q, want [/petstore] [serve]", cfg.Entrypoint, cfg.Cmd)
	}
	if _, ok := cfg.ExposedPorts["8080/tcp"]; !ok || len(cfg.ExposedPorts) != 1 {
		t.Errorf("ExposedPorts %v, want 8080/tcp only", cfg.ExposedPorts)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.version":  version,
		"org.opencontainers.image.revision": revision, // make image's REVISION: git's HEAD
		"org.opencontainers.image.source":   "https://github.com/petstore/petstore",
	} {
		if cfg.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, cfg.Labels[k], want)
		}
	}

	// The files: every layer of the saved image.
	archive := filepath.Join(t.TempDir(), "image.tar")
	command(t, ".", eng, "save", "-o", archive, tag)
	files, layers := readImage(t, archive)
	var names []string
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{"etc/group", "etc/passwd", "etc/ssl/certs/ca-certificates.crt", "petstore"}
	if !slices.Equal(names, want) {
		t.Errorf("the image's files: %q, want %q (and their directories) only", names, want)
	}
	passwd, _ := os.ReadFile("passwd")
	if !bytes.Equal(files["etc/passwd"].data, passwd) || !strings.Contains(string(passwd), ":65532:65532:") {
		t.Errorf("etc/passwd: %q, want image/passwd naming 65532", files["etc/passwd"].data)
	}
	if !bytes.Contains(files["etc/ssl/certs/ca-certificates.crt"].data, []byte("BEGIN CERTIFICATE")) {
		t.Errorf("etc/ssl/certs/ca-certificates.crt holds no certificate")
	}
	bin := files["petstore"]
	if bin.mode&0o111 == 0 {
		t.Errorf("petstore's mode %v: not executable", bin.mode)
	}
	t.Logf("image %s: %d bytes, %d layer(s): %s", tag, inspect[0].Size, len(layers), strings.Join(layers, ", "))

	// The binary: static, trimmed, versioned.
	exe := filepath.Join(t.TempDir(), "petstore")
	if err := os.WriteFile(exe, bin.data, 0o755); err != nil {
		t.Fatal(err)
	}
	checkBinary(t, exe)
	checkVersion(t, exe, version, revision)
	runBinary(t, exe, version)
}

// checkVersion: petstore version prints the version make image stamped and
// the revision Go recorded, git's HEAD.
func checkVersion(t *testing.T, exe, version, revision string) {
	t.Helper()
	out := string(command(t, ".", exe, "version"))
	t.Logf("petstore version:\n%s", out)
	if !strings.HasPrefix(out, "petstore "+version+"\n") {
		t.Errorf("petstore version: want the first line petstore %s", version)
	}
	m := regexp.MustCompile(`(?m)^revision: +(\S+)$`).FindStringSubmatch(out)
	if m == nil || m[1] != revision {
		t.Errorf("petstore version: revision %q, want git's HEAD %s", m, revision)
	}
	if !regexp.MustCompile(`(?m)^modified: +(true|false)$`).MatchString(out) {
		t.Errorf("petstore version: no modified: true|false line")
	}
}

// make image without an engine says what to install and stops before it
// builds or removes anything: here neither docker nor podman is on PATH.
func TestImageWithoutEngine(t *testing.T) {
	makePath, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	bin := t.TempDir()
	if err := os.Symlink(bash, filepath.Join(bin, "bash")); err != nil {
		t.Fatal(err)
	}
	ctxDir := filepath.Join(t.TempDir(), "context")
	cmd := exec.Command(makePath, "-C", "..", "image", "IMAGE=localhost/petstore-never", "IMAGE_CONTEXT="+ctxDir)
	cmd.Env = []string{"PATH=" + bin, "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("make image without an engine succeeded:\n%s", out)
	}
	for _, want := range []string{"no container engine", "apt-get install podman"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("make image without an engine does not say %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(ctxDir); err == nil {
		t.Errorf("make image without an engine made its build context %s: it went on after the engine check", ctxDir)
	}
	if strings.Contains(string(out), "go build") || strings.Contains(string(out), "rm -rf") {
		t.Errorf("make image without an engine ran its build steps:\n%s", out)
	}
}

type file struct {
	data []byte
	mode os.FileMode
}

// readImage returns the regular files of a docker-archive's layers (a later
// layer's file replaces an earlier one's; the images here have no
// whiteouts), and each layer's size. It fails on anything but files and
// directories.
func readImage(t *testing.T, archive string) (map[string]file, []string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries, links := map[string][]byte{}, map[string]string{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		name := path.Clean(h.Name)
		if h.Typeflag == tar.TypeSymlink {
			links[name] = path.Join(path.Dir(name), h.Linkname)
			continue
		}
		b, _ := io.ReadAll(tr)
		entries[name] = b
	}
	blob := func(name string) []byte {
		if l, ok := links[name]; ok {
			name = l
		}
		b, ok := entries[name]
		if !ok {
			t.Fatalf("%s: no %s in the archive", archive, name)
		}
		return b
	}
	var manifest []struct{ Layers []string }
	if err := json.Unmarshal(blob("manifest.json"), &manifest); err != nil || len(manifest) != 1 {
		t.Fatalf("manifest.json: %v", err)
	}
	files := map[string]file{}
	var layers []string
	for _, l := range manifest[0].Layers {
		b := blob(path.Clean(l))
		var r io.Reader = bytes.NewReader(b)
		if len(b) > 2 && b[0] == 0x1f && b[1] == 0x8b {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			r = zr
		}
		layers = append(layers, fmt.Sprintf("%d bytes", len(b)))
		lr := tar.NewReader(r)
		for {
			h, err := lr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("layer %s: %v", l, err)
			}
			name := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
			switch h.Typeflag {
			case tar.TypeDir:
			case tar.TypeReg:
				data, _ := io.ReadAll(lr)
				files[name] = file{data, h.FileInfo().Mode()}
			default:
				t.Errorf("layer %s: %s is of type %q; want files and directories only", l, name, h.Typeflag)
			}
		}
	}
	return files, layers
}

// checkBinary: statically linked, built with -trimpath and CGO off.
func checkBinary(t *testing.T, exe string) {
	t.Helper()
	ef, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary is dynamically linked (%v)", p.Type)
		}
	}
	bi, err := buildinfo.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	// Go does not record -ldflags under -trimpath: runBinary checks the
	// version the binary reports.
	if settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" {
		t.Errorf("build settings %v: want CGO_ENABLED=0 and -trimpath", settings)
	}
}

// runBinary starts the image's binary on the host, on a free loopback port,
// and sends it GET /healthz and a create and a get with a key.
func runBinary(t *testing.T, exe, version string) {
	t.Helper()
	const key = "image-key-0123456789abcdef0123456789"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "serve")
	cmd.Env = []string{"PETSTORE_ADDR=127.0.0.1:0", "PETSTORE_API_KEYS=" + key, "PETSTORE_SHUTDOWN_DELAY=0"}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var listening struct{ Msg, Addr, Version string }
	for listening.Msg != "listening" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the binary exited before listening: %s", stderr.String())
			}
			json.Unmarshal([]byte(l), &listening)
		case <-ctx.Done():
			t.Fatal("no listening line within a minute")
		}
	}
	go func() {
		for range lines {
		}
	}()
	if listening.Version != version {
		t.Errorf("listening line's version %q, want %q", listening.Version, version)
	}
	base := "http://" + listening.Addr
	res, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz: %d", res.StatusCode)
	}
	// The API's answers, each checked against openapi.yaml.
	c := &apitest.Client{Contract: apitest.Load(t), BaseURL: base, Key: key}
	created := c.Do(t, "POST", apitest.Path("/pets"), apitest.Body(`{"name":"Image","categoryId":1}`))
	var pet struct{ ID int64 }
	if created.Status != http.StatusCreated || json.Unmarshal(created.Body, &pet) != nil {
		t.Fatalf("POST /pets: %d %s", created.Status, created.Body)
	}
	if got := c.Do(t, "GET", apitest.Path(fmt.Sprintf("/pets/%d", pet.ID)), ""); got.Status != http.StatusOK || string(got.Body) != string(created.Body) {
		t.Fatalf("GET the pet: %d %s, want 200 %s", got.Status, got.Body, created.Body)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the binary after SIGTERM: %v, want exit 0\n%s", err, stderr.String())
	}
}

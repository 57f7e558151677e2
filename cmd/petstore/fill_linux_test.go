package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/gen/shape"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/schemagen"
	"github.com/petstore/petstore/internal/value"
)

// rssBoundMiB is the documented bound on the real binary's resident memory
// (its peak, VmHWM) with the memory store filled to its default bounds by
// the largest pets and Idempotency-Keys the contract allows, computed from
// the schema's bounds (memstore.WorstAt; docs/operating.md, "Bounds").
var rssBoundMiB = memstore.WorstAt(memstore.DefaultMaxPets, memstore.DefaultMaxKeys).BoundMiB

// largestPet is the body of the largest pet the contract allows: the
// longest name of four-byte characters, int64's largest category, and each
// other member of NewPet at its largest canonical JSON among the values at
// its bounds (schemagen.Bounds).
func largestPet(t *testing.T) []byte {
	t.Helper()
	spec, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	body := map[string]any{
		"name":       strings.Repeat("\U0001D513", shape.MaxNameLength), // four bytes each in UTF-8
		"categoryId": json.Number("9223372036854775807"),
		"status":     shape.DefaultStatus,
	}
	props := spec.Components.Schemas["NewPet"].Value.Properties
	g := schemagen.New(rand.New(rand.NewPCG(1, 2)))
	for _, name := range shape.ExtraMembers {
		cases, err := g.Bounds(props[name].Value)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		longest := 0
		for _, c := range cases {
			if b, _ := value.Canonical(c.Value, props[name].Value); len(b) > longest {
				longest, body[name] = len(b), c.Value
			}
		}
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFillMemoryStore builds the real binary, serves with the default
// bounds, and fills it over loopback: creates with a new 255-character
// Idempotency-Key each until the answer is 507 idempotency_keys_full, then
// creates without a key until 507 store_full; each pet is the largest the
// schema allows (largestPet). It then reads the server's VmRSS and VmHWM
// from /proc and holds VmHWM under rssBoundMiB. A million creates: a minute
// or two, so it runs only with PETSTORE_TEST_FILL=1 (make bench-bounds).
// PETSTORE_TEST_FILL_BIN runs another binary instead (an older build, for a
// before figure); PETSTORE_TEST_FILL_MAX bounds the creates sent.
func TestFillMemoryStore(t *testing.T) {
	if os.Getenv("PETSTORE_TEST_FILL") != "1" {
		t.Skip("a million creates: set PETSTORE_TEST_FILL=1 (make bench-bounds)")
	}
	bin := os.Getenv("PETSTORE_TEST_FILL_BIN")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "petstore")
		if out, err := exec.Command("go", "build", "-trimpath", "-o", bin, ".").CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	limit := envInt(t, "PETSTORE_TEST_FILL_MAX", memstore.DefaultMaxPets+memstore.DefaultMaxKeys)
	const key = "fill-key-0123456789abcdef0123456789"
	cmd := exec.Command(bin, "serve")
	cmd.Env = []string{"PETSTORE_ADDR=127.0.0.1:0", "PETSTORE_API_KEYS=" + key, "PETSTORE_SHUTDOWN_DELAY=0"}
	for _, v := range []string{"GOMEMLIMIT", "GOGC"} { // the runtime's own levers, passed on
		if os.Getenv(v) != "" {
			cmd.Env = append(cmd.Env, v+"="+os.Getenv(v))
		}
	}
	addr, _ := startProcess(t, cmd, "listening")
	base := "http://" + addr

	if _, ok := memstore.PetBytes(); !ok {
		t.Skipf("a member of NewPet is unbounded (%s): no bound to hold the server to", shape.Unbounded)
	}
	body := largestPet(t)
	var seq atomic.Int64
	var sent atomic.Int64
	fill := func(keyed bool) (codes map[string]int) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var mu sync.Mutex
		codes = map[string]int{}
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil && sent.Add(1) <= int64(limit) {
					req, _ := http.NewRequest("POST", base+apitest.Path("/pets"), bytes.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+key)
					req.Header.Set("Content-Type", "application/json")
					if keyed {
						req.Header.Set("Idempotency-Key", fmt.Sprintf("%0255d", seq.Add(1)))
					}
					res, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Error(err)
						cancel()
						return
					}
					b, _ := io.ReadAll(res.Body)
					res.Body.Close()
					code := strconv.Itoa(res.StatusCode)
					if res.StatusCode != http.StatusCreated {
						var e struct{ Code string }
						json.Unmarshal(b, &e)
						code += " " + e.Code
						cancel() // a refusal ends the phase
					}
					mu.Lock()
					codes[code]++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		return codes
	}
	start := time.Now()
	keyed := fill(true)
	unkeyed := fill(false)
	rss, hwm := procStatus(t, cmd.Process.Pid, "VmRSS"), procStatus(t, cmd.Process.Pid, "VmHWM")
	t.Logf("keyed creates: %v; unkeyed: %v; in %v", keyed, unkeyed, time.Since(start).Round(time.Second))
	t.Logf("server VmRSS %d MiB, VmHWM (peak) %d MiB; bound %d MiB", rss>>10, hwm>>10, rssBoundMiB)
	if keyed["507 idempotency_keys_full"] == 0 || unkeyed["507 store_full"] == 0 {
		t.Errorf("the store did not refuse at its bounds: keyed %v, unkeyed %v", keyed, unkeyed)
	}
	if hwm>>10 > rssBoundMiB {
		t.Errorf("peak RSS %d MiB, over the documented %d MiB", hwm>>10, rssBoundMiB)
	}
}

// procStatus returns a field of /proc/PID/status in KiB.
func procStatus(t *testing.T, pid int, field string) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

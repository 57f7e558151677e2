package main

import (
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/pgtest"
)

const pgKey = "replica-key-0123456789abcdef0123456789"

// TestPostgresReplicas runs two servers on one database, as two replicas
// behind a load balancer: what one writes the other reads, concurrent
// creates through both get unique ids, and a client following the next
// links, alternating replicas, visits every pet exactly once while pets are
// being created through both.
func TestPostgresReplicas(t *testing.T) {
	db := pgtest.Schema(t)
	env := func() map[string]string {
		return map[string]string{"PETSTORE_API_KEYS": pgKey, "PETSTORE_DATABASE_URL": db}
	}
	baseA, _, _, _ := startServer(t, env())
	baseB, _, _, _ := startServer(t, env())
	contract := apitest.Load(t)
	replicas := []*apitest.Client{
		{Contract: contract, BaseURL: baseA, Key: pgKey},
		{Contract: contract, BaseURL: baseB, Key: pgKey},
	}

	// Written on one, read on the other.
	for i, c := range replicas {
		p := c.Create(t, fmt.Sprintf(`{"name":"from %d","categoryId":%d}`, i, i+1))
		res := replicas[1-i].Do(t, "GET", apitest.Path("/pets/")+strconv.FormatInt(p.Id, 10), "")
		var got gen.Pet
		res.JSON(t, &got)
		if res.Status != http.StatusOK || got != p {
			t.Fatalf("pet created on replica %d, read on %d: got %d %+v, want %+v", i, 1-i, res.Status, got, p)
		}
	}

	// Concurrent creates through both, and a client following the cursor
	// to the end again and again, each request to the other replica.
	const writersPerReplica, each = 4, 25
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		acked = map[int64]gen.Pet{}
	)
	for r, c := range replicas {
		for w := range writersPerReplica {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					p := c.Create(t, fmt.Sprintf(apitest.Body(`{"name":"r%d w%d #%d","categoryId":1,"status":"pending"}`), r, w, i))
					mu.Lock()
					if _, dup := acked[p.Id]; dup {
						t.Errorf("id %d assigned twice", p.Id)
					}
					acked[p.Id] = p
					mu.Unlock()
				}
			}()
		}
	}
	writing := make(chan struct{})
	go func() { wg.Wait(); close(writing) }()

	seen := map[int64]gen.Pet{}
	var last int64
	turn := 0
	for done := false; !done; {
		select {
		case <-writing:
			done = true // one more pass to the end, then stop
		default:
		}
		for path := apitest.Path(fmt.Sprintf("/pets?after=%d&limit=9", last)); path != ""; turn++ {
			var page []gen.Pet
			page, path = listPage(t, replicas[turn%2], path)
			for _, p := range page {
				if _, dup := seen[p.Id]; dup || p.Id <= last {
					t.Fatalf("pet %d listed twice or out of order (after %d)", p.Id, last)
				}
				seen[p.Id], last = p, p.Id
			}
		}
	}
	if t.Failed() {
		return
	}
	if len(acked) != 2*writersPerReplica*each {
		t.Fatalf("got %d acknowledged creates, want %d", len(acked), 2*writersPerReplica*each)
	}
	var missed []int64
	for id, p := range acked {
		if seen[id] != p {
			missed = append(missed, id)
		}
	}
	slices.Sort(missed)
	if len(missed) > 0 || len(seen) != len(acked)+2 {
		t.Fatalf("following next links across replicas: saw %d pets, want %d; missed or changed %v", len(seen), len(acked)+2, missed)
	}

	// A filtered walk, alternating replicas, after the writes.
	var pending int
	for path, i := apitest.Path("/pets?status=pending&limit=7"), 0; path != ""; i++ {
		var page []gen.Pet
		page, path = listPage(t, replicas[i%2], path)
		pending += len(page)
	}
	if pending != len(acked) {
		t.Fatalf("walk status=pending across replicas: got %d pets, want %d", pending, len(acked))
	}
}

var nextLink = regexp.MustCompile(`^<(` + apitest.Base() + `/pets\?[^>]+)>; rel="next"$`)

// listPage gets one page and returns it with the path of the next, if any.
func listPage(t *testing.T, c *apitest.Client, path string) ([]gen.Pet, string) {
	t.Helper()
	res := c.Do(t, "GET", path, "")
	if res.Status != http.StatusOK {
		t.Fatalf("GET %s: got %d %s", path, res.Status, res.Body)
	}
	var page []gen.Pet
	res.JSON(t, &page)
	next := ""
	if link := res.Header.Get("Link"); link != "" {
		m := nextLink.FindStringSubmatch(link)
		if m == nil {
			t.Fatalf("GET %s: Link %q is not a rel=next link", path, link)
		}
		next = m[1]
	}
	return page, next
}

// TestPostgresSurvivesKill9 builds the binary, creates pets through it,
// kills it with SIGKILL right after the last 201, starts it again on the
// same database and finds every acknowledged pet.
func TestPostgresSurvivesKill9(t *testing.T) {
	db := pgtest.Schema(t)
	bin := filepath.Join(t.TempDir(), "petstore")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	contract := apitest.Load(t)

	cmd, base := startBinary(t, bin, db)
	c := &apitest.Client{Contract: contract, BaseURL: base, Key: pgKey}
	var acked []gen.Pet
	for i := range 20 {
		acked = append(acked, c.Create(t, fmt.Sprintf(`{"name":"survivor %d","categoryId":%d,"status":"sold"}`, i, i+1)))
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatal("the server exited cleanly; want killed")
	}

	_, base = startBinary(t, bin, db)
	c.BaseURL = base
	for _, p := range acked {
		res := c.Do(t, "GET", apitest.Path("/pets/")+strconv.FormatInt(p.Id, 10), "")
		var got gen.Pet
		res.JSON(t, &got)
		if res.Status != http.StatusOK || got != p {
			t.Fatalf("after kill -9: GET pet %d: got %d %+v, want %+v", p.Id, res.Status, got, p)
		}
	}
	page, _ := listPage(t, c, apitest.Path("/pets?limit=100"))
	if !slices.Equal(page, acked) {
		t.Fatalf("after kill -9: listed %+v, want %+v", page, acked)
	}
}

// startBinary starts the built server on a loopback port over the database
// and returns it once /healthz answers, with its base URL.
func startBinary(t *testing.T, bin, db string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, "serve")
	cmd.Env = []string{
		"PETSTORE_ADDR=127.0.0.1:0",
		"PETSTORE_API_KEYS=" + pgKey,
		"PETSTORE_DATABASE_URL=" + db,
		"PETSTORE_LOG_FORMAT=json",
	}
	addr, _ := startProcess(t, cmd, "listening")
	base := "http://" + addr
	apitest.Eventually(t, "/healthz", func() bool {
		res, err := http.Get(base + "/healthz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	return cmd, base
}

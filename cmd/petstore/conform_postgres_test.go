package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/pgtest"
)

// TestPostgresConform holds the server on PostgreSQL to the contract with
// the kit, as a user would: petstore serve over a fresh schema, then
// petstore conform against it, which must pass every check.
func TestPostgresConform(t *testing.T) {
	base, _, _, _ := startServer(t, map[string]string{"PETSTORE_API_KEYS": bothKeys, "PETSTORE_DATABASE_URL": pgtest.Schema(t)})
	jsonFile := filepath.Join(t.TempDir(), "report.json")
	stdout, _, err := conformRun(nil, "-key", conformKey, "-key2", conformKey2, "-json", jsonFile, base+apitest.Base())
	if err != nil {
		t.Fatalf("conform on PostgreSQL: got %v (exit %d), want exit 0\n%s", err, exitStatus(err), stdout)
	}
	rep := readJSONReport(t, jsonFile)
	ran := map[string]bool{}
	for _, r := range rep.Results {
		ran[r.Check] = ran[r.Check] || r.Cases > 0
	}
	if len(rep.Checks) == 0 {
		t.Fatal("-json lists no checks")
	}
	for _, c := range rep.Checks {
		if !ran[c.Name] {
			t.Errorf("check %s did not run on PostgreSQL", c.Name)
		}
	}
	if !rep.OK || !strings.Contains(stdout, "All checks passed.") {
		t.Errorf("report: ok %v\n%s", rep.OK, stdout)
	}
	t.Logf("seed %d, %d requests", rep.Seed, rep.Requests)
}

package server

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/petstore/petstore/internal/apikey"
)

var update = flag.Bool("update", false, "rewrite docs/operating.md's options table from Settings")

// operatingDoc is docs/operating.md, where the options table is.
const operatingDoc = "../../docs/operating.md"

// optionsTable matches the options table of docs/operating.md: its header
// row and every row after it.
var optionsTable = regexp.MustCompile(`(?m)^\| flag \| variable \| default \| meaning \|\n(?:\|.*\n)+`)

// TestSettingsTableInDocs: the options table of docs/operating.md is the
// one Settings writes, a row a setting; -update rewrites it.
func TestSettingsTableInDocs(t *testing.T) {
	b, err := os.ReadFile(operatingDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	found := optionsTable.FindAllString(doc, -1)
	if len(found) != 1 {
		t.Fatalf("%s: %d options tables (| flag | variable | default | meaning |), want 1", operatingDoc, len(found))
	}
	want := DocsTable()
	if found[0] == want {
		return
	}
	if *update {
		if err := os.WriteFile(operatingDoc, []byte(strings.Replace(doc, found[0], want, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: options table rewritten from Settings", operatingDoc)
		return
	}
	t.Errorf("%s's options table is not Settings' (internal/server/settings.go); refresh it with\n  go test ./internal/server -run TestSettingsTableInDocs -update\ngot:\n%s\nwant:\n%s", operatingDoc, found[0], want)
}

// Every setting has its flag, a PETSTORE_ variable, help and a row in the
// docs, each once; the help's default is the docs'.
func TestSettingsWellFormed(t *testing.T) {
	flags, envs := map[string]bool{}, map[string]bool{}
	for _, s := range Settings {
		if s.Flag == "" || !strings.HasPrefix(s.Env, "PETSTORE_") || s.Help == "" || s.Doc == "" || s.Check == nil {
			t.Errorf("setting %+v: want a flag, a PETSTORE_ variable, help, a docs text and a check", s)
		}
		if flags[s.Flag] || envs[s.Env] {
			t.Errorf("-%s or %s twice", s.Flag, s.Env)
		}
		flags[s.Flag], envs[s.Env] = true, true
		if f := Flags().Lookup(s.Flag); f == nil || f.DefValue != s.Default || !strings.HasSuffix(f.Usage, "("+s.Env+")") {
			t.Errorf("-%s: not defined with its default %q, its help naming %s", s.Flag, s.Default, s.Env)
		}
	}
	// The key syntax in errors is the docs' (their backticks dropped).
	if !strings.Contains(strings.ReplaceAll(DocsTable(), "`", ""), apikey.Syntax) {
		t.Errorf("the docs do not give the key syntax as errors do: %q", apikey.Syntax)
	}
}

// Each value comes from the flag when given, else the variable when set,
// else the default; an error names where the value came from, and quotes
// it unless it is secret.
func TestConfigurePrecedence(t *testing.T) {
	env := map[string]string{"PETSTORE_LOG_FORMAT": "text", "PETSTORE_ADDR": "127.0.0.1:9"}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct {
		args         []string
		addr, format string
		source       string
	}{
		{nil, "127.0.0.1:9", "text", "PETSTORE_LOG_FORMAT"},
		{[]string{"-log-format", "json"}, "127.0.0.1:9", "json", "-log-format"},
		{[]string{"-addr", ":1", "-log-format=text"}, ":1", "text", "-log-format"},
	} {
		cfg, err := configure(tc.args, getenv)
		if err != nil || cfg.Addr != tc.addr || cfg.LogFormat != tc.format || cfg.Sources["log-format"] != tc.source {
			t.Errorf("%v: got %q %q from %s, %v; want %q %q from %s", tc.args, cfg.Addr, cfg.LogFormat, cfg.Sources["log-format"], err, tc.addr, tc.format, tc.source)
		}
	}
	cfg, err := configure(nil, func(string) string { return "" })
	if err != nil || cfg.Addr != ":8080" || cfg.LogFormat != "json" || cfg.AuthFailures == nil || cfg.RateLimit != nil || cfg.Sources["addr"] != "-addr" {
		t.Errorf("defaults: got %+v, %v", cfg, err)
	}
	if _, err := configure([]string{"-api-keys", "short-secret"}, getenv); err == nil || strings.Contains(err.Error(), "short-secret") || !strings.HasPrefix(err.Error(), "-api-keys: ") {
		t.Errorf("a secret refused: got %v, want -api-keys: and no value", err)
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[string]string{"24h": "24h", "5s": "5s", "0s": "0s", "90m": "1h30m", "1h0m1s": "1h0m1s", "720h": "720h", "1m": "1m", "1500ms": "1.5s"} {
		if got := shortDuration(mustDuration(t, d)); got != want {
			t.Errorf("shortDuration(%s) = %q, want %q", d, got, want)
		}
	}
}

func mustDuration(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

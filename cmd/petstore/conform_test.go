package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/check"
	"github.com/petstore/petstore/internal/conform"
	"github.com/petstore/petstore/internal/history"
)

const (
	conformKey  = "conform-cmd-key-0123456789abcdef0123456789"
	conformKey2 = "conform-cmd-key2-0123456789abcdef0123456789"
	bothKeys    = conformKey + "," + conformKey2
)

// conformRun runs "petstore conform args..." with env as the environment.
func conformRun(env map[string]string, args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	err = run(context.Background(), append([]string{"petstore", "conform"}, args...), func(k string) string { return env[k] }, &out, &errOut)
	return out.String(), errOut.String(), err
}

// jsonReport is what -json writes, as far as these tests read it.
type jsonReport struct {
	OK       bool
	Seed     uint64
	Requests int
	Results  []conform.Result
	Failures []conform.Failure
	Skipped  []conform.Skip
	Checks   []conform.CheckInfo
}

func readJSONReport(t *testing.T, file string) jsonReport {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rep jsonReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("-json %s: %v", file, err)
	}
	return rep
}

func readJUnit(t *testing.T, file string) junit.Testsuites {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var suites junit.Testsuites
	if err := xml.Unmarshal(b, &suites); err != nil {
		t.Fatalf("-junit %s: %v", file, err)
	}
	return suites
}

// TestConformPassesAgainstTheServer runs the kit through the binary's run
// against the whole program on loopback: exit 0, the request count and the
// table on stdout, and the -json and -junit reports agree with it. Without
// a second key, the checks across keys are skipped, and the report says so.
func TestConformPassesAgainstTheServer(t *testing.T) {
	base, _, _, _ := startServer(t, map[string]string{"PETSTORE_API_KEYS": bothKeys})
	for _, tc := range []struct {
		name    string
		env     map[string]string
		args    []string
		skipped []string // checks skipped
	}{
		{"key flags", nil, []string{"-key", conformKey, "-key2", conformKey2}, nil},
		{"keys from the environment", map[string]string{"PETSTORE_CONFORM_KEY": conformKey, "PETSTORE_CONFORM_KEY2": conformKey2}, nil, nil},
		{"flags beat the environment", map[string]string{"PETSTORE_CONFORM_KEY": "not-the-key", "PETSTORE_CONFORM_KEY2": "not-the-key"}, []string{"-key", conformKey, "-key2", conformKey2}, nil},
		{"no second key", nil, []string{"-key", conformKey}, []string{"idempotency_scope"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			jsonFile, junitFile, historyFile := filepath.Join(dir, "report.json"), filepath.Join(dir, "junit.xml"), filepath.Join(dir, "history.jsonl")
			args := append(tc.args, "-seed", "42", "-json", jsonFile, "-junit", junitFile, "-history", historyFile, base+apitest.Base())
			stdout, stderr, err := conformRun(tc.env, args...)
			if err != nil {
				t.Fatalf("conform: got %v (exit %d), want exit 0\n%s", err, exitStatus(err), stdout)
			}
			if stderr != "" {
				t.Errorf("stderr is not a terminal, yet got %q", stderr)
			}
			rep := readJSONReport(t, jsonFile)
			judgeHistory(t, historyFile, rep.Requests)
			if !rep.OK || rep.Seed != 42 || rep.Requests == 0 || rep.Requests > conform.DefaultMaxRequests || len(rep.Failures) > 0 {
				t.Errorf("-json: ok %v, seed %d, %d requests, %d failures; want ok, seed 42, 1..%d requests", rep.OK, rep.Seed, rep.Requests, len(rep.Failures), conform.DefaultMaxRequests)
			}
			for _, want := range []string{base + apitest.Base(), "seed 42", "All checks passed."} {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
			if want := " " + strconv.Itoa(rep.Requests) + " requests"; !strings.Contains(stdout, want) {
				t.Errorf("stdout lacks the request count %q:\n%s", want, stdout)
			}
			for _, c := range conform.Checks {
				verdict := "PASS"
				if slices.Contains(tc.skipped, c.Name) {
					verdict = "skipped"
				}
				if !containsRow(stdout, c.Name, verdict) {
					t.Errorf("stdout has no %s row for %s:\n%s", verdict, c.Name, stdout)
				}
			}
			for _, check := range tc.skipped {
				if !strings.Contains(stdout, "  "+check+": needs a second key") {
					t.Errorf("stdout does not say why %s was skipped:\n%s", check, stdout)
				}
			}
			suites := readJUnit(t, junitFile)
			if n := len(rep.Results) + len(rep.Skipped); len(suites.Suites) != 1 || len(suites.Suites[0].Testcases) != n || suites.Failures != 0 {
				t.Errorf("-junit: %d suites, %d failures; want one suite with a testcase per result and skip (%d), none failed", len(suites.Suites), suites.Failures, n)
			}
			if strings.Contains(stdout+stderr, conformKey) || strings.Contains(stdout+stderr, conformKey2) {
				t.Errorf("a key appears in the output")
			}
		})
	}
}

// TestConformFailedChecks holds the server to a stricter copy of the
// contract (name at most 50 characters): the kit must exit 1, say which
// check failed in one line, and show a curl line with the key as
// $PETSTORE_KEY.
func TestConformFailedChecks(t *testing.T) {
	base, _, _, _ := startServer(t, map[string]string{"PETSTORE_API_KEYS": conformKey})
	spec := stricterSpec(t)
	jsonFile := filepath.Join(t.TempDir(), "report.json")
	stdout, _, err := conformRun(nil, "-key", conformKey, "-spec", spec, "-checks", "negative_data_rejection,positive_data_acceptance", "-seed", "7", "-json", jsonFile, base+apitest.Base())
	if err == nil || exitStatus(err) != exitFailure {
		t.Fatalf("conform: got %v (exit %d), want exit 1\n%s", err, exitStatus(err), stdout)
	}
	if want := "conform: checks failed: negative_data_rejection"; err.Error() != want {
		t.Errorf("error: got %q, want %q", err, want)
	}
	if !containsRow(stdout, "negative_data_rejection", "FAIL") || !containsRow(stdout, "positive_data_acceptance", "PASS") || !containsRow(stdout, "ignored_auth", "not run") {
		t.Errorf("table: want negative_data_rejection FAIL, positive_data_acceptance PASS, the rest not run:\n%s", stdout)
	}
	for _, want := range []string{"FAIL negative_data_rejection (createPet)", "want: 400 invalid_request for body name: too long", "curl -i -X POST", `"Authorization: Bearer $PETSTORE_KEY"`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, conformKey) {
		t.Errorf("the key appears in the output")
	}
	rep := readJSONReport(t, jsonFile)
	if rep.OK || len(rep.Failures) == 0 {
		t.Fatalf("-json: ok %v with %d failures, want failures", rep.OK, len(rep.Failures))
	}
	for _, f := range rep.Failures {
		if f.Check != "negative_data_rejection" || f.Want == "" || f.Got == "" || !strings.HasPrefix(f.Curl, "curl ") {
			t.Errorf("-json failure %+v: want negative_data_rejection with want, got and curl", f)
		}
	}
}

// TestConformSeedReplays checks that -seed replays a run: against two
// servers in the same state (fresh), the same seed sends the same cases,
// so the same failures come back.
func TestConformSeedReplays(t *testing.T) {
	spec := stricterSpec(t)
	var runs [2][]string // each failure's want and curl
	for i := range runs {
		base, _, _, _ := startServer(t, map[string]string{"PETSTORE_API_KEYS": conformKey})
		jsonFile := filepath.Join(t.TempDir(), "report.json")
		conformRun(nil, "-key", conformKey, "-spec", spec, "-checks", "negative_data_rejection", "-seed", "99", "-json", jsonFile, base+apitest.Base())
		for _, f := range readJSONReport(t, jsonFile).Failures {
			runs[i] = append(runs[i], f.Want+"\n"+strings.ReplaceAll(f.Curl, base, "BASE"))
		}
	}
	if len(runs[0]) == 0 || !slices.Equal(runs[0], runs[1]) {
		t.Errorf("two runs with -seed 99 differ:\n%q\n%q", runs[0], runs[1])
	}
}

// TestConformCannotRun: each way the kit cannot judge the target exits 2
// with one line saying which, and leaves no report file behind.
func TestConformCannotRun(t *testing.T) {
	base, _, _, _ := startServer(t, map[string]string{"PETSTORE_API_KEYS": conformKey})
	closed := "http://" + apitest.RefusedAddr(t) + apitest.Base()
	dir := t.TempDir()
	badSpec := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(badSpec, []byte("openapi: 3.0.3\ninfo: {}\npaths: 7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	key := []string{"-key", conformKey}
	// The operation a BASE_URL ending in a path is told of: the first on it.
	pets, pet := apitest.OpOn("/pets"), apitest.OpOn("/pets/{petId}")
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"unknown flag", nil, []string{"-bogus", base + apitest.Base()}, "cannot run: flag provided but not defined: -bogus"},
		{"no BASE_URL", nil, key, "cannot run: want one BASE_URL argument, got 0"},
		{"two BASE_URLs", nil, append(key, base+apitest.Base(), base+apitest.Base()), "cannot run: want one BASE_URL argument, got 2"},
		{"not a URL", nil, append(key, "127.0.0.1:8080"+apitest.Base()), `cannot run: BASE_URL "127.0.0.1:8080` + apitest.Base() + `"`},
		{"no key", nil, []string{base + apitest.Base()}, "cannot run: no key"},
		{"unknown check", nil, append(key, "-checks", "not_a_check", base+apitest.Base()), `cannot run: unknown check "not_a_check"`},
		{"unknown excluded check", nil, append(key, "-exclude-checks", "ordering,nope", base+apitest.Base()), `cannot run: unknown check "nope"`},
		{"zero max requests", nil, append(key, "-max-requests", "0", base+apitest.Base()), "cannot run: -max-requests 0"},
		{"negative examples", nil, append(key, "-examples", "-1", base+apitest.Base()), "cannot run: -examples -1"},
		{"second key refused", nil, append(key, "-key2", "wrong-key-0123456789abcdef", base+apitest.Base()), "cannot run: the target refused the second key"},
		{"bad timeout", nil, append(key, "-timeout", "-1s", base+apitest.Base()), "cannot run: -timeout -1s"},
		{"missing spec", nil, append(key, "-spec", filepath.Join(dir, "nope.yaml"), base+apitest.Base()), "cannot run: -spec"},
		{"invalid spec", nil, append(key, "-spec", badSpec, base+apitest.Base()), "cannot run: -spec"},
		{"report in a missing directory", nil, append(key, "-junit", filepath.Join(dir, "no", "junit.xml"), base+apitest.Base()), "cannot run: -junit"},
		{"key refused", nil, []string{"-key", "wrong-key-0123456789abcdef0123456789", base + apitest.Base()}, "cannot run: the target refused the key (GET /pets answered 401)"},
		{"environment key refused", map[string]string{"PETSTORE_CONFORM_KEY": "wrong-key-0123456789abcdef0123456789"}, []string{base + apitest.Base()}, "cannot run: the target refused the key"},
		{"unreachable", nil, append(key, closed), "cannot run: target unreachable"},
		{"base path left out", nil, append(key, base), "cannot run: GET /pets answered 404: is " + base + " the API's base address"},
		{"BASE_URL ends in an operation's path", nil, append(key, base+apitest.Path("/pets")), "cannot run: BASE_URL " + base + apitest.Path("/pets") + " ends in the path of " + pets.ID + " (" + pets.Method + " /pets): BASE_URL is the API's base address, the part before the operation's path; try " + base + apitest.Base()},
		{"BASE_URL ends in a templated path", nil, append(key, base+apitest.Path("/pets/7/")), "ends in the path of " + pet.ID + " (" + pet.Method + " /pets/{petId}): BASE_URL is the API's base address, the part before the operation's path; try " + base + apitest.Base()},
		{"two BASE_URLs, flags between", nil, []string{base + apitest.Base(), "-key", conformKey, base + apitest.Base()}, "cannot run: want one BASE_URL argument, got 2; flags go before or after it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			report := filepath.Join(t.TempDir(), "report.json")
			args := append([]string{"-json", report}, tc.args...)
			stdout, stderr, err := conformRun(tc.env, args...)
			if err == nil || exitStatus(err) != exitUsage || !errors.Is(err, conform.ErrCannotRun) {
				t.Fatalf("conform: got %v (exit %d), want exit 2\n%s", err, exitStatus(err), stdout)
			}
			if !strings.HasPrefix(err.Error(), "conform: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error: got %q, want one containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q spans lines; want one clear line", err)
			}
			if stdout != "" || stderr != "" {
				t.Errorf("output besides the error line: stdout %q, stderr %q", stdout, stderr)
			}
			if _, err := os.Stat(report); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("-json %s left behind by a run that could not run (stat: %v)", report, err)
			}
			if strings.Contains(err.Error(), conformKey) || strings.Contains(err.Error(), "wrong-key") {
				t.Errorf("the key appears in the error: %v", err)
			}
		})
	}
}

// TestConformIncomplete: a run that could not judge all it should exits 3,
// never 0, and says why in each report: a budget too small for the run
// (-max-requests 20), and one too small to start (-max-requests 1 with
// two keys), which the budget stopped, not the target.
func TestConformIncomplete(t *testing.T) {
	base, _, _, _ := startServer(t, map[string]string{"PETSTORE_API_KEYS": bothKeys})
	for _, max := range []string{"20", "1"} {
		t.Run(max, func(t *testing.T) {
			dir := t.TempDir()
			jsonFile, junitFile := filepath.Join(dir, "report.json"), filepath.Join(dir, "junit.xml")
			stdout, _, err := conformRun(nil, "-key", conformKey, "-key2", conformKey2, "-max-requests", max, "-json", jsonFile, "-junit", junitFile, base+apitest.Base())
			if err == nil || exitStatus(err) != exitIncomplete || !errors.Is(err, conform.ErrIncomplete) {
				t.Fatalf("conform -max-requests %s: got %v (exit %d), want exit 3\n%s", max, err, exitStatus(err), stdout)
			}
			budget := "the request budget (-max-requests " + max + ") ran out"
			for _, want := range []string{budget, "Incomplete: no check failed"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
			if strings.Contains(stdout, "All checks passed") || strings.Contains(stdout+err.Error(), "unreachable") {
				t.Errorf("an incomplete run says it passed, or blames the target:\n%s\n%v", stdout, err)
			}
			var rep struct {
				OK         bool
				Verdict    string
				Incomplete []conform.Gap
			}
			b, _ := os.ReadFile(jsonFile)
			if json.Unmarshal(b, &rep) != nil || rep.Verdict != conform.Incomplete || len(rep.Incomplete) == 0 || !strings.Contains(rep.Incomplete[0].Reason, budget) {
				t.Errorf("-json: %s; want verdict incomplete, the budget first among what was not judged", b)
			}
			suites := readJUnit(t, junitFile)
			if len(suites.Suites) != 1 || suites.Errors == 0 {
				t.Errorf("-junit: %d suites, %d errors; want the run's gaps as test cases in error", len(suites.Suites), suites.Errors)
			}
		})
	}
}

// Flags may follow BASE_URL, and "--" ends them.
func TestConformFlagsAfterBaseURL(t *testing.T) {
	base, _, _, _ := startServer(t, map[string]string{"PETSTORE_API_KEYS": conformKey})
	for _, args := range [][]string{
		{base + apitest.Base(), "-key", conformKey, "-checks", "unknown_path", "-seed", "3"},
		{"-key", conformKey, base + apitest.Base(), "-checks", "unknown_path"},
		{"-key", conformKey, "-checks", "unknown_path", "--", base + apitest.Base()},
	} {
		stdout, _, err := conformRun(nil, args...)
		if err != nil || !containsRow(stdout, "unknown_path", "PASS") {
			t.Errorf("conform %q: got %v, want exit 0 and unknown_path passed\n%s", args, err, stdout)
		}
	}
	if _, _, err := conformRun(nil, "-key", conformKey, "--", base+apitest.Base(), "-checks", "unknown_path"); err == nil || !strings.Contains(err.Error(), "want one BASE_URL argument, got 3") {
		t.Errorf(`after "--", flags are arguments: got %v, want 3 arguments refused`, err)
	}
}

func TestConformHelp(t *testing.T) {
	stdout, _, err := conformRun(map[string]string{"PETSTORE_CONFORM_KEY": conformKey}, "-h")
	if err != nil {
		t.Fatalf("-h: got %v, want nil", err)
	}
	for _, want := range []string{"usage: petstore conform [flags] BASE_URL", "CREATES PETS on the target", "Exit status: 0", "-max-requests", "-exclude-checks", "PETSTORE_CONFORM_KEY", "-key2", "PETSTORE_CONFORM_KEY2", "-examples", "not …/", "before or after it", "make build", "bin/petstore conform"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("-h lacks %q:\n%s", want, stdout)
		}
	}
	for _, c := range conform.Checks {
		if !strings.Contains(stdout, c.Name+" ") || !strings.Contains(stdout, c.Description) {
			t.Errorf("-h lacks check %s and its description", c.Name)
		}
	}
	if strings.Contains(stdout, conformKey) {
		t.Errorf("-h prints the key from the environment")
	}
}

// The help and docs/conformance-kit.md say the same: every flag in the
// docs' table of flags, the timeout's default, the four exit statuses and
// the rule that ends a run whose target stopped answering.
func TestConformHelpMatchesDocs(t *testing.T) {
	help, _, err := conformRun(nil, "-h")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := os.ReadFile(filepath.Join("..", "..", "docs", "conformance-kit.md"))
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	timeoutRow := ""
	for _, row := range apitest.READMETable(t, "| flag | does |") {
		for _, f := range regexp.MustCompile("`(-[a-z0-9-]+)").FindAllStringSubmatch(row[0], -1) {
			documented = append(documented, f[1])
			if f[1] == "-timeout" {
				timeoutRow = row[1]
			}
		}
	}
	var flags []string
	newConformFlags().fs.VisitAll(func(f *flag.Flag) { flags = append(flags, "-"+f.Name) })
	slices.Sort(documented)
	slices.Sort(flags)
	if !slices.Equal(documented, flags) {
		t.Errorf("docs' table of flags: %v; conform's flags: %v", documented, flags)
	}
	if want := "(default " + conform.DefaultTimeout.String() + ")"; !strings.Contains(timeoutRow, want) || !strings.Contains(help, want) {
		t.Errorf("-timeout's default %s: not both in the docs (%q) and the help", want, timeoutRow)
	}
	silent := []string{"", "one", "two", "three", "four", "five"}[conform.SilentRequests] + " requests in a row without an answer"
	for _, text := range []struct{ name, text string }{{"help", help}, {"docs", string(docs)}} {
		flat := strings.ToLower(strings.Join(strings.Fields(strings.ReplaceAll(text.text, "`", "")), " "))
		for _, want := range []string{"0 pass", "1 fail", "2 it could not run", "3 incomplete", silent, "a check asked for judged"} {
			if !strings.Contains(flat, want) {
				t.Errorf("the %s does not say %q", text.name, want)
			}
		}
	}
}

// A usage error, or conform unable to judge the target, exits 2; any other
// error 1.
func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{errors.New("listen on nonsense: bad address"), 1},
		{errors.New("conform: checks failed: ordering"), 1},
		{conform.ErrCannotRun, 2},
		{fmt.Errorf("conform: %w: not judged: budget", conform.ErrIncomplete), 3},
		{errors.Join(errors.New("conform"), conform.ErrCannotRun), 2},
		{usageErrorf("serve: unexpected argument %q", "extra"), 2},
		{fmt.Errorf("wrapped: %w", usageErrorf("bad")), 2},
	} {
		if got := exitStatus(tc.err); got != tc.want {
			t.Errorf("exitStatus(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// stricterSpec writes a copy of openapi.yaml in which a pet's name may be
// at most 50 characters, and returns its path.
func stricterSpec(t *testing.T) string {
	t.Helper()
	file, err := apitest.SpecFile()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	const from, to = "      minLength: 1\n      maxLength: 100\n", "      minLength: 1\n      maxLength: 50\n"
	if bytes.Count(b, []byte(from)) != 1 {
		t.Fatalf("openapi.yaml: want exactly one %q (PetName's bounds)", from)
	}
	out := filepath.Join(t.TempDir(), "openapi.yaml")
	if err := os.WriteFile(out, bytes.Replace(b, []byte(from), []byte(to), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// containsRow reports whether the report's table has a row for check
// ending in verdict.
func containsRow(report, check, verdict string) bool {
	for _, line := range strings.Split(report, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == check {
			return strings.HasSuffix(strings.TrimSpace(line), verdict)
		}
	}
	return false
}

// judgeHistory reads a -history file: a kit's history with one create,
// get, list or other op an exchange (requests of them), which the checker
// judges valid.
func judgeHistory(t *testing.T, file string, requests int) {
	t.Helper()
	ops, err := history.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	exchanges := 0
	for _, op := range ops {
		switch op.Kind {
		case history.Create, history.Get, history.List, history.Other:
			if op.Invoke != op.Complete { // not a note (a release)
				exchanges++
			}
		}
	}
	if !check.IsKit(ops) || exchanges != requests {
		t.Errorf("-history: %d ops, %d of them exchanges, kit's %v; want a kit's history of %d exchanges", len(ops), exchanges, check.IsKit(ops), requests)
	}
	if j := check.Replay(ops); j.Verdict != check.Valid {
		t.Errorf("-history judged %s: %+v", j.Verdict, j.Anomalies)
	}
}

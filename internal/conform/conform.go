// Package conform is the conformance kit: it holds any implementation of the
// Pet Store contract to openapi.yaml. It loads the spec and derives cases
// from it: from each schema, parameter and header (valid values at their
// bounds, values that break exactly one rule) and from the sentences of
// its descriptions (sentences.go: every legal and illegal form they state).
// It sends them through internal/conform/wire, and internal/conform/judge
// holds every answer to internal/contract and to the rules on every answer
// of a kind, and records every exchange as an op of a history
// (internal/history) that the checker's model (internal/check) judges as
// it goes: every create, get and page against what the run created and
// was answered. It checks what the contract says across two API keys and
// under concurrent retries, runs random sequences of operations
// (-examples) and shrinks the first that fails, and reads every pet it
// created back at the end. It creates pets on the target. Its report is
// internal/conform/report's. docs/conformance-kit.md ("Where things are")
// says which package and file holds the cases, the wire and the judge.
package conform

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/conform/cases"
	"github.com/petstore/petstore/internal/conform/judge"
	"github.com/petstore/petstore/internal/conform/wire"
	"github.com/petstore/petstore/internal/contract"
	"github.com/petstore/petstore/internal/history"
)

// Defaults of Config.
const (
	DefaultMaxRequests = 2000
	DefaultTimeout     = 10 * time.Second
)

// SilentRequests is how many requests in a row may go without an answer
// before the run takes the target for one that stopped answering, and
// sends no more.
const SilentRequests = wire.DefaultSilent

// Config says what to check and how.
type Config struct {
	BaseURL     string        // the API's base address: scheme, host and base path (the path of the spec's servers here), or no path for an API at the root
	Key         string        // a key the target accepts
	Key2        string        // a second key, another tenant; "" skips the checks across keys
	Spec        *openapi3.T   // the contract; nil = the embedded one
	Checks      []string      // run only these; empty = all
	Exclude     []string      // never these
	Seed        uint64        // 0 = pick one; the one used is in the Report
	Examples    int           // random sequences of operations to run against the model (0: none)
	MaxRequests int           // 0 = DefaultMaxRequests, plus ExamplesBudget a sequence of -examples and ShrinkBudget
	Timeout     time.Duration // per request; 0 = DefaultTimeout
	HTTPClient  *http.Client  // nil = a default client; its Transport is used, redirects are not followed
	Progress    io.Writer     // nil = no progress line
	// History, when not nil, receives the run's history: every exchange as
	// a JSON line of internal/history, which `petstore-chaos check`
	// judges as the run did (check.Replay).
	History io.Writer
}

// ErrCannotRun is wrapped by every error of Run: the kit could not judge the
// target (bad configuration, target unreachable, key refused).
var ErrCannotRun = errors.New("cannot run")

// ErrIncomplete marks the error of a command whose run judged everything it
// sent and found no failure, but could not judge all it should (Report's
// Incomplete): not a pass.
var ErrIncomplete = errors.New("incomplete")

// Run checks the target at cfg.BaseURL. It returns an error wrapping
// ErrCannotRun only when it could not judge the target at all; failed
// checks are in the Report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	r, err := newRun(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCannotRun, err)
	}
	rep, err := r.run(ctx)
	if cerr := r.hist.Close(); cerr != nil && err == nil {
		return nil, fmt.Errorf("%w: history: %v", ErrCannotRun, cerr)
	}
	return rep, err
}

func (r *run) run(ctx context.Context) (*Report, error) {
	start := time.Now()
	if err := r.preflight(ctx); errors.Is(err, wire.ErrBudget) {
		return r.report(time.Since(start)), nil // the budget, not the target: incomplete
	} else if err != nil && !r.halted() {
		return nil, fmt.Errorf("%w: %v", ErrCannotRun, err)
	}
	r.noteUnmodelled()
	r.noteNothingToJudge()
	if err := r.startPromises(ctx); err != nil && !errors.Is(err, wire.ErrBudget) {
		return nil, fmt.Errorf("%w: %v", ErrCannotRun, err)
	}

	for _, phase := range r.phases() {
		if phase.skip != "" {
			r.Skip(phase.checks[0], phase.skip)
			continue
		}
		if !r.wants(phase) {
			continue
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %v", ErrCannotRun, ctx.Err())
		}
		r.progress(phase.name)
		if err := phase.run(ctx); err != nil && !errors.Is(err, wire.ErrBudget) {
			return nil, fmt.Errorf("%w: %s: %v", ErrCannotRun, phase.name, err)
		}
	}
	<-r.time.head // the slow head, when no phase waited for it
	r.progressDone()
	return r.report(time.Since(start)), nil
}

// run is the state of one Run.
type run struct {
	cfg      Config
	base     *url.URL // BaseURL, without a trailing slash
	spec     *openapi3.T
	contract *contract.Contract
	ops      []*cases.Operation
	rng      *rand.Rand
	enabled  map[string]bool
	wire     *wire.Client[*judge.Exchange] // how the kit sends: every exchange told to observer
	roles    cases.Roles
	reqs     cases.Requests // the requests of the cases, from the roles
	bounds   cases.Bounds
	hist     *judge.History // every exchange as an op, fed to the checker and written (history.go)
	main     *judge.Scope   // the run's own: judgments to the report, ops to the model's Process 0
	xrules   cases.Rules    // what the spec states in its x-rules, and the figures
	rules    []judge.Rule   // the answer rules the spec states

	mu         sync.Mutex
	stopOn     string // stop the run once this check has failed (export_test.go)
	results    map[[2]string]*Result
	failures   []Failure
	skipped    []Skip
	gaps       []Gap        // what the run could not judge (verdict.go)
	promises   []Promise    // the promises over time it exercised
	uniq       int          // for unique names
	executions int          // sequences of -examples run, shrinking's re-runs included: in their names
	sequences  int          // of those, the ones Config.Examples asked for (Report.Examples)
	tag        string       // in every name of this run: the first pet's id
	time       promises     // the promises over time (timing.go)
	spare      string       // the id of the pet the operations the kit has no model for name (unmodelled.go)
	deferred   []cases.Case // cases that may change pets, to send after every other (unmodelled.go)
	deferDone  bool         // and they are being sent
}

func newRun(cfg Config) (*run, error) {
	base, err := url.Parse(strings.TrimRight(cfg.BaseURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("BASE_URL %q: want an http or https URL: the API's scheme, host and base path", cfg.BaseURL)
	}
	if cfg.Key == "" {
		return nil, errors.New("no key: give one with -key or PETSTORE_CONFORM_KEY")
	}
	if cfg.Examples < 0 {
		return nil, fmt.Errorf("examples %d: want 0 or more", cfg.Examples)
	}
	if cfg.MaxRequests == 0 {
		cfg.MaxRequests = DefaultMaxRequests
		if cfg.Examples > 0 {
			cfg.MaxRequests += cfg.Examples*ExamplesBudget + ShrinkBudget
		}
	}
	if cfg.MaxRequests < 0 {
		return nil, fmt.Errorf("max requests %d: want a positive number", cfg.MaxRequests)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Seed == 0 {
		var b [8]byte
		_, _ = cryptorand.Read(b[:])
		cfg.Seed = binary.LittleEndian.Uint64(b[:])>>1 + 1
	}
	spec := cfg.Spec
	if spec == nil {
		if spec, err = embeddedSpec(); err != nil {
			return nil, fmt.Errorf("embedded spec: %v", err)
		}
	}
	enabled, err := selectChecks(cfg.Checks, cfg.Exclude)
	if err != nil {
		return nil, err
	}
	c, err := contract.New(spec, base.Path)
	if err != nil {
		return nil, err
	}
	r := &run{
		cfg:      cfg,
		base:     base,
		spec:     c.Spec(),
		contract: c,
		ops:      cases.Operations(c.Spec()),
		rng:      rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		enabled:  enabled,
		results:  map[[2]string]*Result{},
	}
	if len(r.ops) == 0 {
		return nil, errors.New("the spec defines no operation")
	}
	if err := r.checkBase(); err != nil {
		return nil, err
	}
	r.roles = cases.FindRoles(r.ops)
	r.reqs = cases.Requests{Roles: r.roles, Values: cases.Values{Rng: r.rng}, Names: r}
	r.xrules = cases.ReadRules(r.spec, r.ops)
	r.bounds = cases.FindBounds(r.roles, r.xrules.Number)
	var w *history.Writer
	if cfg.History != nil {
		w = history.NewWriter(cfg.History, time.Now())
	}
	r.hist = r.newHistory(w)
	r.rules = r.statedRules()
	r.main = &judge.Scope{Sink: r}
	var transport http.RoundTripper
	if cfg.HTTPClient != nil {
		transport = cfg.HTTPClient.Transport
	}
	r.wire = wire.New(wire.Config{Base: base, Transport: transport, Timeout: cfg.Timeout, MaxRequests: cfg.MaxRequests, Key: cfg.Key, Key2: cfg.Key2}, observer{r})
	return r, nil
}

// embeddedSpec is the embedded openapi.yaml, loaded once: a run only reads
// it (contract.New routes a copy).
var embeddedSpec = sync.OnceValues(gen.GetSpec)

// checkBase refuses a BASE_URL that ends in an operation's path (the base
// path then /pets, or /pets/7): an easy slip from a curl line, which would make
// every case miss the API. It names the base address to use instead.
func (r *run) checkBase() error {
	have := strings.Split(strings.Trim(r.base.Path, "/"), "/")
	for _, op := range r.ops {
		want := strings.Split(strings.Trim(op.Path, "/"), "/")
		if len(want) == 0 || want[0] == "" || len(want) > len(have) {
			continue
		}
		tail := have[len(have)-len(want):]
		match := true
		for i, seg := range want {
			if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
				match = match && tail[i] != ""
			} else {
				match = match && tail[i] == seg
			}
		}
		if !match {
			continue
		}
		fix := *r.base
		fix.Path = "/" + strings.Join(have[:len(have)-len(want)], "/")
		fix.RawPath, fix.RawQuery, fix.Fragment = "", "", ""
		return fmt.Errorf("BASE_URL %s ends in the path of %s (%s %s): BASE_URL is the API's base address, the part before the operation's path; try %s",
			r.base, op.ID, op.Method, op.Path, strings.TrimSuffix(fix.String(), "/"))
	}
	return nil
}

func selectChecks(only, exclude []string) (map[string]bool, error) {
	known := map[string]bool{}
	for _, c := range Checks {
		known[c.Name] = true
	}
	for _, name := range append(slices.Clone(only), exclude...) {
		if !known[name] {
			return nil, fmt.Errorf("unknown check %q (see -h for the list)", name)
		}
	}
	enabled := map[string]bool{}
	for _, c := range Checks {
		enabled[c.Name] = len(only) == 0 || slices.Contains(only, c.Name)
	}
	for _, name := range exclude {
		enabled[name] = false
	}
	return enabled, nil
}

// Record counts one case of check on op, and a failure when f is not nil.
func (r *run) Record(check, op string, f *Failure) {
	if !r.enabled[check] {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	k := [2]string{check, op}
	res := r.results[k]
	if res == nil {
		res = &Result{Check: check, Operation: op}
		r.results[k] = res
	}
	res.Cases++
	if f != nil {
		res.Failed++
		f.Check, f.Operation = check, op
		r.failures = append(r.failures, *f)
		if check == r.stopOn {
			r.wire.Stop()
		}
	}
}

func (r *run) report(elapsed time.Duration) *Report {
	sent := r.wire.Stats()
	r.mu.Lock()
	defer r.mu.Unlock()
	skipped, unjudged := r.unjudged()
	rep := &Report{Seed: r.cfg.Seed, BaseURL: r.base.String(), Requests: sent.Sent, Raw: sent.Raw, Elapsed: elapsed, Examples: r.sequences,
		Truncated: sent.Truncated, Throttled: sent.Throttled, Failures: r.failures, Skipped: skipped,
		Incomplete: append(r.gapsOf(sent), unjudged...), Promises: r.promises}
	for _, c := range Checks {
		var rows []Result
		for k, res := range r.results {
			if k[0] == c.Name {
				rows = append(rows, *res)
			}
		}
		slices.SortFunc(rows, func(a, b Result) int { return strings.Compare(a.Operation, b.Operation) })
		rep.Results = append(rep.Results, rows...)
	}
	order := map[string]int{}
	for i, c := range Checks {
		order[c.Name] = i
	}
	slices.SortStableFunc(rep.Failures, func(a, b Failure) int { return order[a.Check] - order[b.Check] })
	return rep
}

func (r *run) progress(phase string) {
	if r.cfg.Progress == nil {
		return
	}
	n := r.wire.Stats().Sent
	r.mu.Lock()
	failed := len(r.failures)
	r.mu.Unlock()
	fmt.Fprintf(r.cfg.Progress, "\r\033[Kconform: %-12s %4d requests, %d failures", phase, n, failed)
}

func (r *run) progressDone() {
	if r.cfg.Progress != nil {
		fmt.Fprint(r.cfg.Progress, "\r\033[K")
	}
}

// Enabled reports whether the run judges check (judge.Sink).
func (r *run) Enabled(check string) bool { return r.enabled[check] }

// halted reports whether the run stopped once stopOn failed.
func (r *run) halted() bool { return r.wire.Stopped() }

// Skip notes what the run could not judge, and why (cases.T).
func (r *run) Skip(what, reason string) {
	if strings.Contains(what, " ") || r.enabled[what] {
		r.mu.Lock()
		r.skipped = append(r.skipped, Skip{What: what, Reason: reason})
		r.mu.Unlock()
	}
}

// Name returns a pet Name (or an Idempotency-Key) no other request of this
// run uses, nor any other run's: it holds the run's tag, the id of the first
// pet the run created, which no other run was given.
func (r *run) Name(prefix string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.uniq++
	if r.tag == "" {
		return fmt.Sprintf("%s-s%d.%d", prefix, r.cfg.Seed%1000000, r.uniq)
	}
	return fmt.Sprintf("%s-%s.%d", prefix, r.tag, r.uniq)
}

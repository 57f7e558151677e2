package main

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oasdiff/oasdiff/checker"
	"github.com/oasdiff/oasdiff/diff"
	"github.com/oasdiff/oasdiff/load"
	"go.yaml.in/yaml/v3"
)

// Raise is how far info.version must move to carry a set of changes.
type Raise int

const (
	None  Raise = iota // nothing changed
	Patch              // wording only: descriptions, summaries, examples
	Minor              // additive: clients written against the base keep working
	Major              // breaking: a new major version and base path /vN
)

func (r Raise) String() string {
	return [...]string{"none", "patch", "minor", "major"}[r]
}

// Change is one change oasdiff found, with the raise it needs.
type Change struct {
	Raise  Raise
	Where  string // "GET /pets", or "components" for a change outside operations
	Text   string
	Waived string // the reason of the waiver that made a breaking change additive
}

func (c Change) String() string {
	if c.Waived != "" {
		return fmt.Sprintf("%-8s  %s: %s (breaking by oasdiff, waived: %s)", "waived", c.Where, c.Text, c.Waived)
	}
	return fmt.Sprintf("%-8s  %s: %s", c.Raise.label(), c.Where, c.Text)
}

// Report compares a revision of the contract with its base (the last release).
type Report struct {
	BaseVersion, RevVersion string
	Changes                 []Change
	// Wording is set when the documents differ in more than info.version
	// while oasdiff reports no change: descriptions and other prose.
	Wording bool
	// Required is the raise the changes need; Problems says why the
	// revision's info.version (or base path) does not carry them.
	Required Raise
	Problems []string
	// OldBasePath is the released base path when the revision moved it
	// (a new major's /v2), and Leftovers every place where the revision
	// still names it.
	OldBasePath string
	Leftovers   []Place
	// Unwaived are the breaking changes no waiver names, written as a
	// waiver would name them (without a reason).
	Unwaived []Waiver
	// Stale are the indexes of the waivers that name no change.
	Stale []int
}

// OK reports whether the revision may be merged as it is.
func (r *Report) OK() bool { return len(r.Problems) == 0 && len(r.Leftovers) == 0 }

// versioningPolicyIDs are oasdiff's own version findings; the project's rule
// (Compare) replaces them, so that it lives in one place.
var versioningPolicyIDs = []string{
	checker.APIVersionNotBumpedId,
	checker.APIVersionDecreasedId,
	checker.APIMajorVersionNotBumpedId,
}

// errorCodeAdded reports whether c adds a value to the code member of an
// error response's body. oasdiff calls that breaking (a client with an
// exhaustive switch over the values may not handle the new one); this
// project calls it additive: the HTTP status is the primary signal, and
// clients are told (docs/contract.md) to treat a code they do
// not know by the status.
// Only Error.code is treated so: a new value in any other response enum
// (Pet.status, say) stays breaking.
func errorCodeAdded(c checker.Change) bool {
	args := c.GetArgs()
	if c.GetId() != checker.ResponsePropertyEnumValueAddedId || len(args) != 3 {
		return false
	}
	status, err := strconv.Atoi(fmt.Sprint(args[2]))
	return fmt.Sprint(args[1]) == "code" && err == nil && status >= 400
}

var localize = checker.NewDefaultLocalizer()

// Compare loads both documents, lists the changes from base to rev with
// oasdiff, and applies the version rule: a breaking change needs a new major
// (and base path /vN), an additive one a new minor, a wording change a new
// patch; the servers' base path always ends with /v<major>; response
// objects stay open (responseObjectRule). A breaking
// change that a waiver names exactly needs a minor raise; a waiver that
// names no change is a problem (it is stale, or names its change wrongly).
func Compare(base, rev []byte, waivers ...Waiver) (*Report, error) {
	b, err := loadSpec(base, "base")
	if err != nil {
		return nil, err
	}
	r, err := loadSpec(rev, "revision")
	if err != nil {
		return nil, err
	}
	report := &Report{BaseVersion: b.Spec.Info.Version, RevVersion: r.Spec.Info.Version}

	d, sources, err := diff.GetWithOperationsSourcesMap(diff.NewConfig(), b, r)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	found, used := report.classify(checker.CheckBackwardCompatibilityUntilLevel(checker.NewConfig(checker.GetAllChecks()), d, sources, checker.INFO), waivers)
	objects, objectProblems := responseObjectRule(b.Spec, r.Spec)
	for _, c := range objects {
		found = append(found, c)
		report.Required = max(report.Required, c.Raise)
	}
	if moved, err := basePathMove(report, b.Spec, r.Spec, rev); err != nil {
		return nil, err
	} else if moved != nil {
		found = append(found, *moved)
		report.Required = Major
	}
	report.Changes = merge(found)
	if report.Required == None {
		if report.Wording, err = wordingChanged(b.Spec, r.Spec); err != nil {
			return nil, err
		}
		if report.Wording {
			report.Required = Patch
		}
	}

	report.Problems = append(versionProblems(report, r.Spec), objectProblems...)
	for i, w := range waivers {
		if !used[i] {
			report.Stale = append(report.Stale, i)
			report.Problems = append(report.Problems, fmt.Sprintf("waiver %s at %s names no breaking change: remove it (at a new major, make new-major does) or name the change exactly (id, where, every argument)", w.ID, w.Where))
		}
	}
	return report, nil
}

// classify gives each of oasdiff's changes its raise (a waiver makes a
// breaking change additive) and raises report.Required to the largest; used
// says which waivers named a change.
func (report *Report) classify(changes checker.Changes, waivers []Waiver) (found []Change, used []bool) {
	used = make([]bool, len(waivers))
	for _, c := range changes {
		if slices.Contains(versioningPolicyIDs, c.GetId()) {
			continue
		}
		// IsBreaking covers oasdiff's ERR and WARN ("may break clients"):
		// a reference contract takes the cautious reading.
		where := "components"
		if c.GetOperation() != "" {
			where = c.GetOperation() + " " + c.GetPath()
		}
		raise, waived := Minor, ""
		if c.IsBreaking() && !errorCodeAdded(c) {
			raise = Major
			for i := range waivers {
				if waivers[i].matches(c, where) {
					raise, waived = Minor, waivers[i].Reason
					used[i] = true
					break
				}
			}
		}
		if raise == Major {
			args := make([]string, len(c.GetArgs()))
			for i, a := range c.GetArgs() {
				args[i] = fmt.Sprint(a)
			}
			report.Unwaived = append(report.Unwaived, Waiver{ID: c.GetId(), Where: where, Args: args})
		}
		found = append(found, Change{Raise: raise, Where: where, Text: c.GetUncolorizedText(localize), Waived: waived})
		report.Required = max(report.Required, raise)
	}
	return found, used
}

// wordingChanged reports whether the documents differ in prose: oasdiff's
// checks do not report it, so the documents are compared with the
// revision's version set back to the base's, and any difference left is
// wording.
func wordingChanged(base, rev *openapi3.T) (bool, error) {
	same := *rev
	info := *same.Info
	info.Version = base.Info.Version
	same.Info = &info
	wd, err := diff.Get(diff.NewConfig(), base, &same)
	if err != nil {
		return false, fmt.Errorf("diff: %w", err)
	}
	return !wd.Empty(), nil
}

// basePathMove is the change of base path from base to rev, if any: breaking
// (every operation's URL changes); the places where rev still names the old
// one go into the report's Leftovers.
func basePathMove(report *Report, base, rev *openapi3.T, revData []byte) (*Change, error) {
	from, to := basePath(base), basePath(rev)
	if from == to || from == "" {
		return nil, nil
	}
	report.OldBasePath = from
	var doc yaml.Node
	if err := yaml.Unmarshal(revData, &doc); err != nil {
		return nil, fmt.Errorf("revision: %w", err)
	}
	report.Leftovers = namesOf(&doc, from)
	text := fmt.Sprintf("the base path moved from `%s` to `%s`: every operation is served under the new one, and the old one answers `404`", from, to)
	if to == "" {
		text = fmt.Sprintf("the servers no longer share the base path `%s`", from)
	}
	return &Change{Raise: Major, Where: "servers", Text: text}, nil
}

// statusSuffix ends oasdiff's text for a change in one response.
var statusSuffix = regexp.MustCompile(" for (?:the response )?status `([0-9X]+)`$")

// merge makes one line of the changes that differ only in operation and
// response status: a member of a shared schema (Error.code, say) changes in
// every response that uses it, and oasdiff reports each. Breaking first.
func merge(changes []Change) []Change {
	type line struct {
		Change
		wheres, statuses []string
	}
	var lines []*line
	index := map[[3]string]*line{}
	for _, c := range changes {
		text, status := c.Text, ""
		if m := statusSuffix.FindStringSubmatchIndex(text); m != nil {
			text, status = text[:m[0]], text[m[2]:m[3]]
		}
		key := [3]string{c.Raise.String(), text, c.Waived}
		l := index[key]
		if l == nil {
			l = &line{Change: Change{Raise: c.Raise, Text: text, Waived: c.Waived}}
			index[key] = l
			lines = append(lines, l)
		}
		if !slices.Contains(l.wheres, c.Where) {
			l.wheres = append(l.wheres, c.Where)
		}
		if status != "" && !slices.Contains(l.statuses, status) {
			l.statuses = append(l.statuses, status)
		}
	}
	out := make([]Change, 0, len(lines))
	for _, l := range lines {
		slices.Sort(l.wheres)
		slices.Sort(l.statuses)
		c := l.Change
		c.Where = strings.Join(l.wheres, ", ")
		switch len(l.statuses) {
		case 0:
		case 1:
			c.Text += " for the response status `" + l.statuses[0] + "`"
		default:
			c.Text += " for the response statuses `" + strings.Join(l.statuses, "`, `") + "`"
		}
		out = append(out, c)
	}
	slices.SortStableFunc(out, func(x, y Change) int {
		if x.Raise != y.Raise {
			return int(y.Raise - x.Raise)
		}
		return strings.Compare(x.Where+x.Text, y.Where+y.Text)
	})
	return out
}

func loadSpec(data []byte, name string) (*load.SpecInfo, error) {
	loader := openapi3.NewLoader()
	s, err := load.NewSpecInfoFromData(loader, data, name)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", name, err)
	}
	if s.Spec.Info == nil {
		return nil, fmt.Errorf("load %s: no info object", name)
	}
	return s, nil
}

type semver struct{ major, minor, patch int }

var semverRE = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

func parseVersion(v string) (semver, error) {
	m := semverRE.FindStringSubmatch(v)
	if m == nil {
		return semver{}, fmt.Errorf("info.version %q is not MAJOR.MINOR.PATCH", v)
	}
	n := func(s string) int { i, _ := strconv.Atoi(s); return i }
	return semver{n(m[1]), n(m[2]), n(m[3])}, nil
}

func (v semver) String() string { return fmt.Sprintf("%d.%d.%d", v.major, v.minor, v.patch) }

func (v semver) compare(w semver) int {
	if c := v.major - w.major; c != 0 {
		return c
	}
	if c := v.minor - w.minor; c != 0 {
		return c
	}
	return v.patch - w.patch
}

// next is the smallest version after v that carries a raise of r.
func (v semver) next(r Raise) semver {
	switch r {
	case Major:
		return semver{v.major + 1, 0, 0}
	case Minor:
		return semver{v.major, v.minor + 1, 0}
	}
	return semver{v.major, v.minor, v.patch + 1}
}

// versionProblems applies the version rule to the report's changes.
func versionProblems(report *Report, rev *openapi3.T) []string {
	base, err := parseVersion(report.BaseVersion)
	if err != nil {
		return []string{"released contract: " + err.Error()}
	}
	got, err := parseVersion(report.RevVersion)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	if got.compare(base) < 0 {
		problems = append(problems, fmt.Sprintf("info.version %s is lower than the released %s", got, base))
	} else if report.Required != None && got.compare(base.next(report.Required)) < 0 {
		want := base.next(report.Required)
		msg := fmt.Sprintf("%d %s change(s) need a %s raise of info.version: at least %s, not %s",
			count(report, report.Required), report.Required.label(), report.Required, want, got)
		if report.Required == Major {
			msg += fmt.Sprintf(", and the base path /v%d (servers' urls end with /v%d, the seed's versioning rule): make new-major moves both", want.major, want.major)
		}
		problems = append(problems, msg)
	}
	// The seed: the major version appears in the base path as /v<major>.
	suffix := fmt.Sprintf("/v%d", got.major)
	for _, s := range rev.Servers {
		if !strings.HasSuffix(strings.TrimSuffix(s.URL, "/"), suffix) {
			problems = append(problems, fmt.Sprintf("server %s: with info.version %s the base path must end with %s", s.URL, got, suffix))
		}
	}
	return problems
}

func (r Raise) label() string {
	return map[Raise]string{Major: "breaking", Minor: "additive", Patch: "wording"}[r]
}

func count(report *Report, r Raise) int {
	if r == Patch {
		return 1
	}
	n := 0
	for _, c := range report.Changes {
		if c.Raise == r {
			n++
		}
	}
	return n
}

package judge

import (
	"context"
	"sync"

	"github.com/petstore/petstore/internal/conform/report"
)

// Sink takes the judgments of the run's own scope: the report's results.
type Sink interface {
	// Record counts one case of check on op, and a failure when f is not
	// nil.
	Record(check, op string, f *report.Failure)
	// Enabled reports whether the run judges check.
	Enabled(check string) bool
}

// Scope is where the judgments of an exchange go: the run's report and
// the checker's model of Process 0, or, for a sequence of -examples, the
// sequence's own model (its Process) and failures, kept until the
// sequence is shrunk.
type Scope struct {
	Sink
	Process int  // its ops' Process in the history: 0 for the run's own, n for the nth sequence
	Quiet   bool // count no case: a re-run of a sequence while it is shrunk
	Own     bool // keep failures in fails instead of the report
	Trace   bool // keep the curl line of every request, in Lines
	mu      sync.Mutex
	fails   []report.Failure
	lines   []string
}

// Failures returns the failures kept so far.
func (s *Scope) Failures() []report.Failure {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]report.Failure(nil), s.fails...)
}

// Lines returns the curl lines kept so far (Trace).
func (s *Scope) Lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines...)
}

// AddLine keeps the curl line of a request sent in s, when s traces.
func (s *Scope) AddLine(line func() string) {
	if !s.Trace {
		return
	}
	l := line()
	s.mu.Lock()
	s.lines = append(s.lines, l)
	s.mu.Unlock()
}

// Record counts one case of check on op, and a failure when f is not nil.
func (s *Scope) Record(check, op string, f *report.Failure) {
	if !s.Own {
		s.Sink.Record(check, op, f)
		return
	}
	if !s.Quiet {
		s.Sink.Record(check, op, nil)
	}
	if f != nil && s.Enabled(check) {
		s.mu.Lock()
		f.Check, f.Operation = check, op
		s.fails = append(s.fails, *f)
		s.mu.Unlock()
	}
}

type scopeKey struct{}

// WithScope is ctx, whose requests' judgments go to s.
func WithScope(ctx context.Context, s *Scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, s)
}

// ScopeOf is the scope of a request's context: WithScope's, or def.
func ScopeOf(ctx context.Context, def *Scope) *Scope {
	if s, ok := ctx.Value(scopeKey{}).(*Scope); ok {
		return s
	}
	return def
}

package conform_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/petstore/petstore/internal/conform"
)

// mutantsAtOnce is how many mutants run at a time: a kit run spends much
// of its time waiting on the loopback exchange (and on held-back bodies),
// so more than the two cores keeps both busy.
const mutantsAtOnce = 6

// caught runs the kit against each mutant, mutantsAtOnce at a time, until
// the mutant's check fails (conform.RunUntilFailed: the check catching it
// is what the table claims; the other checks' verdicts are
// TestMutantEvidence's), and fails the subtest of each it does not catch.
func caught(t *testing.T, ms []mutant, cfg func(base string) conform.Config, serve func(*testing.T, func(http.Handler) http.Handler) string) {
	sem := make(chan struct{}, mutantsAtOnce)
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			t.Run(m.name, func(t *testing.T) {
				c := cfg(serve(t, m.wrap))
				if mutantOptions[m.name].reword {
					c.Spec = reworded(t)
				}
				rep, err := conform.RunUntilFailed(context.Background(), c, m.check)
				if err != nil {
					t.Fatal(err)
				}
				if want := mutantOptions[m.name].verdict; want != "" {
					if rep.Verdict() != want {
						t.Fatalf("mutant %q: verdict %s, want %s\n%s", m.name, rep.Verdict(), want, report(rep))
					}
					return
				}
				if !rep.Failed(m.check) {
					var b strings.Builder
					rep.WriteText(&b)
					t.Fatalf("mutant %q: check %s did not fail\n%s", m.name, m.check, b.String())
				}
				for _, f := range rep.Failures {
					if f.Check == m.check {
						t.Logf("caught by %s after %d requests: want %s, got %.80s", m.check, rep.Requests, f.Want, f.Got)
						break
					}
				}
			})
		}()
	}
	wg.Wait()
}

func TestMutantsAreCaught(t *testing.T) {
	t.Parallel()
	if len(mutants) < 20 {
		t.Fatalf("%d mutants; the kit proves itself on at least 20", len(mutants))
	}
	caught(t, mutants, kitConfig, serveMutant)
}

// The letter's corners (letterMutants), with one key.
func TestLetterMutants(t *testing.T) {
	t.Parallel()
	caught(t, letterMutants, func(base string) conform.Config { return conform.Config{BaseURL: base, Key: testKey, Seed: 1} }, serve)
}

package main

import (
	"strings"
	"testing"
)

// TestUsageErrors: every command's flags reach the package that declares
// them, and a refused one exits 2 with the package's reason, before
// anything runs.
func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "usage: petstore-chaos run|check|deploy"},
		{[]string{"start"}, `unknown command "start"`},
		{[]string{"run", "-duration", "0s"}, "petstore-chaos: duration 0s: want up to 1h"},
		{[]string{"run", "-store", "memory", "-faults", "kill"}, `fault "kill": the memory store forgets on a kill`},
		{[]string{"run", "-broken", "nokey", "-store", "memory"}, `broken "nokey": want one of`},
		{[]string{"run", "-writers", "0"}, "petstore-chaos: writers: want 1 to 64"},
		{[]string{"deploy", "-replicas", "1"}, "petstore-chaos: replicas: want 2 to 8"},
		{[]string{"deploy", "-http-reuse", "sometimes"}, `http-reuse "sometimes"`},
		{[]string{"deploy", "-no-such-flag"}, "flag provided but not defined: -no-such-flag"},
		{[]string{"check", "-history", "/nonexistent/history.jsonl"}, "petstore-chaos: "},
	} {
		var stdout, stderr strings.Builder
		if got := cli(c.args, &stdout, &stderr); got != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, got, stderr.String(), c.want)
		}
	}
}

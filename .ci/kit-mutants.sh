#!/usr/bin/env bash
# The conformance kit's mutants (internal/conform, mutants*_test.go) against
# the kit of this tree and against the kit of an older commit (default
# 5953675, before the kit had a model; f204cc2 is the kit of issue 42,
# before the sentences on content codings, Accept, refusals at once and
# HTTP framing): the same mutants, each around the older tree's app, each
# kit's verdict. Prints a Markdown table, one row a mutant: the checks each
# kit fails on it ("passes" when it fails none, "cannot run" when the kit
# could not judge the target, "incomplete" when it failed none but could not
# judge all it should). A row of TestMutantEvidence is MUTANT, then name,
# family, check, the checks failed, Run's error and the verdict (empty from
# a kit without one); joined on the name, the older kit's are $2-$6 and
# this kit's $7-$11.
#   bash .ci/kit-mutants.sh [COMMIT]
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-5953675}
old=$(mktemp -d)
trap 'rm -rf "$old"' EXIT
git archive "$base" | tar -x -C "$old"
# The mutants and their helpers, with a configuration the older kit takes
# (before issue 42 it has no second key) and a test server the older tree
# can build (before httpapi.Listener, net/http's own answers).
cp internal/conform/mutants_test.go internal/conform/mutants42_test.go internal/conform/mutants_edges_test.go internal/conform/mutants51_test.go internal/conform/mutants59_test.go internal/conform/letter_test.go "$old/internal/conform/"
if grep -q 'Key2 ' "$old/internal/conform/conform.go"; then
	cp internal/conform/kitconfig_test.go "$old/internal/conform/"
else
	cat >"$old/internal/conform/kitconfig_test.go" <<'GO'
package conform_test

import "github.com/petstore/petstore/internal/conform"

func kitConfig(base string) conform.Config {
	return conform.Config{BaseURL: base, Key: testKey, Seed: 1}
}
GO
fi
if grep -q 'func Listener' "$old/internal/httpapi/wire.go" 2>/dev/null; then
	cp internal/conform/target_test.go "$old/internal/conform/"
else
	cat >"$old/internal/conform/target_test.go" <<'GO'
package conform_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

const headMax = 64 << 10

type serverDefect struct {
	http.Handler
	plain         bool
	maxHeader     int
	headerTimeout time.Duration // not applied: the older tree's server keeps its own
}

func listen(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
GO
fi
# The mutants address the API through apitest.Path and apitest.Base: an
# older tree without them gets both, with the base path of its own spec.
if ! grep -q '^func Path(' "$old"/internal/apitest/*.go; then
	cat >"$old/internal/apitest/path_shim.go" <<GO
package apitest

// Base and Path as this tree's apitest has them (.ci/kit-mutants.sh).
func Base() string { return "$(.ci/base-path "$old/openapi.yaml")" }

func Path(p string) string { return Base() + p }
GO
fi
evidence() {
	CONFORM_MUTANT_EVIDENCE=1 go -C "$1" test -v -count=1 -run '^TestMutantEvidence$' ./internal/conform/ | grep '^MUTANT' | cut -f2-
}
evidence "$old" >"$old/then.tsv"
evidence "$PWD" >"$old/now.tsv"
echo "| mutant | family | must fail | kit at $base fails | this kit fails |"
echo "|---|---|---|---|---|"
LC_ALL=C join -t $'\t' <(LC_ALL=C sort "$old/then.tsv") <(LC_ALL=C sort "$old/now.tsv") | sort -t $'\t' -k2,2 -k1,1 |
	awk -F'\t' 'function word(failed, err, verdict) { return err != "<nil>" ? "cannot run" : (failed != "" ? failed : (verdict == "incomplete" ? "incomplete" : "passes")) }
		{ printf "| %s | %s | `%s` | %s | %s |\n", $1, $2, ($3 == "" ? "incomplete" : $3), word($4, $5, $6), word($9, $10, $11) }'

#!/usr/bin/env bash
# The conformance kit's mutants (internal/conform, mutants*_test.go) against
# the kit of this tree and against the kit of an older commit (default
# 5953675, before the kit had a model): the same mutants, the same real app
# behind them, each kit's verdict. Prints a Markdown table, one row a mutant:
# the checks each kit fails on it ("passes" when it fails none).
#   bash .ci/kit-mutants.sh [COMMIT]
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-5953675}
old=$(mktemp -d)
trap 'rm -rf "$old"' EXIT
git archive "$base" | tar -x -C "$old"
# The mutants and their helpers, with a configuration the older kit takes
# (it has no second key).
cp internal/conform/mutants_test.go internal/conform/mutants42_test.go internal/conform/letter_test.go "$old/internal/conform/"
cat >"$old/internal/conform/kitconfig_test.go" <<'GO'
package conform_test

import "github.com/petstore/petstore/internal/conform"

func kitConfig(base string) conform.Config {
	return conform.Config{BaseURL: base, Key: testKey, Seed: 1}
}
GO
evidence() {
	CONFORM_MUTANT_EVIDENCE=1 go -C "$1" test -v -count=1 -run '^TestMutantEvidence$' ./internal/conform/ | grep '^MUTANT' | cut -f2-
}
evidence "$old" >"$old/then.tsv"
evidence "$PWD" >"$old/now.tsv"
echo "| mutant | family | must fail | kit at $base fails | this kit fails |"
echo "|---|---|---|---|---|"
LC_ALL=C join -t $'\t' <(LC_ALL=C sort "$old/then.tsv") <(LC_ALL=C sort "$old/now.tsv") | sort -t $'\t' -k2,2 -k1,1 |
	awk -F'\t' '{ then = ($4 == "" ? "passes" : $4); now = ($8 == "" ? "passes" : $8);
		printf "| %s | %s | `%s` | %s | %s |\n", $1, $2, $3, then, now }'

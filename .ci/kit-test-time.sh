#!/usr/bin/env bash
# kit-test-time.sh [COMMIT] [RUNS]: the time of the kit's own tests
# (go test -race -count=1 ./internal/conform) at COMMIT (default f204cc2)
# and in this tree, alternately, RUNS times each (default 2): each run's
# wall time, CPU (user + system) and load, so that a shared machine's noise
# shows. Needs /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-f204cc2}
runs=${2:-2}
old=$(mktemp -d)
out=$(mktemp)
trap 'rm -rf "$old" "$out"' EXIT
git archive "$base" | tar -x -C "$old"
for i in $(seq 1 "$runs"); do
	for tree in "$old" "$PWD"; do
		name=$([ "$tree" = "$old" ] && echo "$base" || echo "this tree")
		load=$(cut -d' ' -f1 /proc/loadavg)
		start=$(date +%s.%N)
		/usr/bin/time -f '%U %S' -o "$out" go -C "$tree" test -race -count=1 ./internal/conform >/dev/null
		end=$(date +%s.%N)
		printf '%-10s run %d: %5.1f s wall, %5.1f s CPU, load %s\n' "$name" "$i" \
			"$(echo "$end - $start" | bc)" "$(tail -n1 "$out" | awk '{ print $1 + $2 }')" "$load"
	done
done

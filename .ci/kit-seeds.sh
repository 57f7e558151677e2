#!/usr/bin/env bash
# kit-seeds.sh [RUNS] [-- CONFORM FLAGS]: RUNS (default 50) runs of
# petstore conform, seeds 1001, 1002, …, one after another against one
# bin/petstore on a free loopback port (on PostgreSQL when
# PETSTORE_TEST_DATABASE_URL is set: .ci/with-postgres bash .ci/kit-seeds.sh),
# with both keys. KITS=2 runs two kits at once each time (the second with
# seed 2001, 2002, …), sharing the server: each must pass what the other
# writes. Prints a line a run (seed, requests, the kit's own time as its
# report gives it, the kit's CPU, verdict) and a summary; exits 1 if any
# run failed or was incomplete. Needs bin/petstore (make build) and
# /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-50}
shift || true
[ "${1:-}" = "--" ] && shift
kits=${KITS:-1}
key="kit-seeds-key-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
key2="kit-seeds-key2-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
log=$(mktemp)
tmp=$(mktemp -d)
port=
for _ in 1 2 3 4 5 6 7 8; do
	port=$((20000 + RANDOM % 40000))
	(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || break
done
# Each run sends eight wrong keys (its ignored_auth cases and the key's near
# misses): fifty runs back to back from one address outrun the default
# throttle of wrong keys (30, then one a second), which would answer 429 and
# make the kit wait, so the server here refills twenty a second. Rate
# limiting is on, with a bucket no run empties, so that every answer
# carries the RateLimit fields whose relations the kit judges.
PETSTORE_API_KEYS="$key,$key2" PETSTORE_DATABASE_URL="${PETSTORE_TEST_DATABASE_URL:-}" PETSTORE_AUTH_FAILURES=20/s,burst=60 \
	PETSTORE_RATE_LIMIT=100/s,burst=100000 \
	bin/petstore serve -addr "127.0.0.1:$port" -log-format text >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$log" "$tmp"' EXIT
deadline=$((SECONDS + 60))
until curl -sf "http://127.0.0.1:$port/healthz" >/dev/null; do
	((SECONDS < deadline)) || { echo "kit-seeds: the server did not start:"; cat "$log"; exit 1; }
	sleep 0.1
done
store=memory
[ -n "${PETSTORE_TEST_DATABASE_URL:-}" ] && store=PostgreSQL
failed=0
incomplete=0
times=()
cpus=()
# kit SEED: one run, its report in $tmp/SEED.out, its CPU in $tmp/SEED.cpu,
# its exit status in $tmp/SEED.rc.
kit() {
	local rc=0
	PETSTORE_CONFORM_KEY=$key PETSTORE_CONFORM_KEY2=$key2 /usr/bin/time -f '%U %S' -o "$tmp/$1.cpu" \
		bin/petstore conform -seed "$1" "${@:2}" "http://127.0.0.1:$port$(.ci/base-path)" >"$tmp/$1.out" 2>&1 || rc=$?
	echo "$rc" >"$tmp/$1.rc"
}
for i in $(seq 1 "$runs"); do
	seeds=()
	for k in $(seq 1 "$kits"); do
		seeds+=($((k * 1000 + i)))
	done
	pids=()
	for seed in "${seeds[@]}"; do
		kit "$seed" "$@" &
		pids+=($!)
	done
	wait "${pids[@]}"
	for seed in "${seeds[@]}"; do
		out=$(cat "$tmp/$seed.out")
		case $(cat "$tmp/$seed.rc") in
		0) verdict=pass ;;
		3) verdict=INCOMPLETE; incomplete=$((incomplete + 1)); echo "$out" ;;
		*) verdict=FAIL; failed=$((failed + 1)); echo "$out" ;;
		esac
		head=$(head -n1 <<<"$out")
		requests=$(sed -E 's/.*: ([0-9]+) requests.*/\1/' <<<"$head")
		secs=$(sed -E 's/.* in ([0-9.]+)s.*/\1/' <<<"$head")
		times+=("$secs")
		cpus+=("$(tail -n1 "$tmp/$seed.cpu" | awk '{ printf "%.2f", $1 + $2 }')") # time says "exited with non-zero status" first
		echo "seed $seed: $requests requests, ${secs}s, CPU ${cpus[-1]}s, $verdict"
	done
done
n=${#times[@]}
median() { sort -n | sed -n "$(((n + 1) / 2))p"; }
echo "kit-seeds: $n runs ($kits at once) on the $store store, $failed failed, $incomplete incomplete; kit time median $(printf '%s\n' "${times[@]}" | median)s, max $(printf '%s\n' "${times[@]}" | sort -n | tail -n1)s; kit CPU median $(printf '%s\n' "${cpus[@]}" | median)s; load $(cut -d' ' -f1-3 /proc/loadavg)"
((failed == 0 && incomplete == 0))

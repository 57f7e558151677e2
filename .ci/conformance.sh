#!/usr/bin/env bash
# make conformance: the live contract check by a third party. Starts the real
# server (bin/petstore) and Stoplight Prism's validating proxy in front of it,
# both on free loopback ports, runs the scenario suite (internal/conformance)
# through the proxy, and stops both whatever happens. The suite fails on any
# violation Prism locates in a response.
set -euo pipefail
cd "$(dirname "$0")/.."

free_port() {
	node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'
}

key="conformance-key-$(node -e 'console.log(require("crypto").randomBytes(12).toString("hex"))')"
srv_port=$(free_port)
prism_port=$(free_port)
logs=$(mktemp -d)
pids=()
cleanup() {
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	rm -rf "$logs"
}
trap cleanup EXIT

PETSTORE_API_KEYS="$key" bin/petstore serve -addr "127.0.0.1:$srv_port" -log-format text >"$logs/server.log" 2>&1 &
pids+=($!)
node_modules/.bin/prism proxy openapi.yaml "http://127.0.0.1:$srv_port/v1" \
	--host 127.0.0.1 --port "$prism_port" --cors=false --errors=false >"$logs/prism.log" 2>&1 &
pids+=($!)
echo "conformance: server on 127.0.0.1:$srv_port, Prism proxy on 127.0.0.1:$prism_port"

# The suite polls, with a deadline, until both answer.
if ! PETSTORE_PRISM_URL="http://127.0.0.1:$prism_port" PETSTORE_PRISM_KEY="$key" \
	go test -race -count=1 -v -run '^TestPrismProxy$' ./internal/conformance; then
	echo "--- server log (tail)"; tail -n 40 "$logs/server.log"
	echo "--- Prism log (tail)"; tail -n 80 "$logs/prism.log"
	exit 1
fi

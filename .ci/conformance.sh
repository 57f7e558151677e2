#!/usr/bin/env bash
# make conformance: the conformance kit against real peers, all on free
# loopback ports and all stopped whatever happens:
#   1. `bin/petstore conform` straight to bin/petstore: must pass whole;
#   2. the same cases (same seed) through Stoplight Prism's validating proxy
#      in front of it: any response Prism finds at odds with openapi.yaml
#      fails (internal/conformance TestPrismProxy);
#   3. the kit against `prism mock openapi.yaml`: the checks it fails are
#      pinned (TestPrismMock).
# Reports go to bin/conformance (text, JUnit, JSON) for CI to keep.
set -euo pipefail
cd "$(dirname "$0")/.."

free_port() {
	node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'
}

# wait_port PORT NAME: poll, with a 60s deadline, until PORT accepts.
wait_port() {
	local deadline=$((SECONDS + 60))
	until (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; do
		if ((SECONDS >= deadline)); then
			echo "conformance: $2 not listening on 127.0.0.1:$1 within 60s"
			return 1
		fi
		sleep 0.2
	done
}

base=$(.ci/base-path) # the spec's; the kit takes a server's address and base path
key="conformance-key-$(node -e 'console.log(require("crypto").randomBytes(12).toString("hex"))')"
key2="conformance-key2-$(node -e 'console.log(require("crypto").randomBytes(12).toString("hex"))')"
seed=$(node -e 'console.log(require("crypto").randomBytes(4).readUInt32BE(0) + 1)')
srv_port=$(free_port)
proxy_port=$(free_port)
mock_port=$(free_port)
out=bin/conformance
logs=$(mktemp -d)
pids=()
cleanup() {
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	rm -rf "$logs"
}
trap cleanup EXIT
mkdir -p "$out"
failed=0
tails() {
	echo "--- server log (tail)"; tail -n 40 "$logs/server.log"
	echo "--- Prism proxy log (tail)"; tail -n 80 "$logs/proxy.log"
	echo "--- Prism mock log (tail)"; tail -n 40 "$logs/mock.log"
}

PETSTORE_API_KEYS="$key,$key2" bin/petstore serve -addr "127.0.0.1:$srv_port" -log-format text >"$logs/server.log" 2>&1 &
pids+=($!)
# The proxy forwards the path as sent: the kit calls it at the base path, so
# the server's Location and Link (under the base path) lead back through it.
node_modules/.bin/prism proxy openapi.yaml "http://127.0.0.1:$srv_port" \
	--host 127.0.0.1 --port "$proxy_port" --cors=false --errors=false >"$logs/proxy.log" 2>&1 &
pids+=($!)
node_modules/.bin/prism mock openapi.yaml --host 127.0.0.1 --port "$mock_port" --cors=false >"$logs/mock.log" 2>&1 &
pids+=($!)
echo "conformance: server on 127.0.0.1:$srv_port, Prism proxy on :$proxy_port, Prism mock on :$mock_port; seed $seed"
wait_port "$srv_port" server && wait_port "$proxy_port" "Prism proxy" && wait_port "$mock_port" "Prism mock" || { tails; exit 1; }

echo "== 1. petstore conform, straight to the server"
if ! PETSTORE_CONFORM_KEY="$key" PETSTORE_CONFORM_KEY2="$key2" bin/petstore conform -seed "$seed" \
	-junit "$out/direct.junit.xml" -json "$out/direct.json" "http://127.0.0.1:$srv_port$base" | tee "$out/direct.txt"; then
	failed=1
fi

echo "== 2. the same cases through Prism's proxy; 3. against Prism's mock"
if ! PETSTORE_PRISM_PROXY_URL="http://127.0.0.1:$proxy_port$base" PETSTORE_PRISM_MOCK_URL="http://127.0.0.1:$mock_port" \
	PETSTORE_CONFORM_KEY="$key" PETSTORE_CONFORM_KEY2="$key2" PETSTORE_CONFORM_SEED="$seed" \
	go test -race -count=1 -v -run '^TestPrism(Proxy|Mock)$' ./internal/conformance | tee "$out/prism.txt"; then
	failed=1
fi

if ((failed)); then
	tails
	exit 1
fi

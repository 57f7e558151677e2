# Shell functions of the load runs (.ci/load, .ci/bench-writes, .ci/guess), sourced.

# listening PID: the port process PID listens on (TCP over IPv4), found by
# its socket inodes in /proc/PID/fd and the LISTEN (0A) rows of
# /proc/net/tcp; fails while it listens on none.
listening() {
	local fd link inodes="" hex
	for fd in /proc/"$1"/fd/*; do
		link=$(readlink "$fd" 2>/dev/null) || continue
		case $link in socket:\[*\]) link=${link#socket:[}; inodes+=" ${link%]}" ;; esac
	done
	hex=$(awk -v inodes="$inodes" 'BEGIN { n = split(inodes, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
		$4 == "0A" && ($10 in want) { split($2, p, ":"); print p[2]; exit }' /proc/net/tcp)
	[ -n "$hex" ] && echo $((16#$hex))
}

# wait_listening PID ERRFILE: prints 127.0.0.1:PORT once PID listens; fails
# (showing ERRFILE) if it exits first or does not listen within 10 s.
wait_listening() {
	local i p
	for i in $(seq 100); do
		p=$(listening "$1") && { echo "127.0.0.1:$p"; return; }
		kill -0 "$1" 2>/dev/null || { cat "$2" >&2; return 1; }
		sleep 0.1
	done
	echo "pid $1 did not listen within 10s" >&2
	return 1
}

# build_rev REV OUT: builds cmd/petstore as of git revision REV into OUT
# (git archive into a temporary directory).
build_rev() {
	local src out_abs
	src=$(mktemp -d)
	git archive "$1" | tar -x -C "$src"
	out_abs=$(realpath -m "$2")
	(cd "$src" && go build -trimpath -o "$out_abs" ./cmd/petstore)
	rm -rf "$src"
}

# need_wrk: installs wrk (Debian) when missing, and says so; where that
# cannot be done, says how.
need_wrk() {
	command -v wrk >/dev/null && return
	local sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	echo "wrk is missing: installing it (Debian: apt-get install -y wrk)" >&2
	$sudo apt-get update && $sudo apt-get install -y wrk && return
	echo "could not install wrk: install it (Debian: apt-get install wrk; elsewhere see https://github.com/wg/wrk) and run again" >&2
	return 1
}

# The peer of make bench-peer: oapi-codegen's examples/petstore-expanded/echo.
# Its handlers and spec come from the Go module proxy: the last release of
# the module that still held its examples (the examples have been a module of
# their own since, which the proxy does not serve); its server code is
# generated with this module's pinned oapi-codegen, as the example's
# go:generate lines do; its main is .ci/peer/main.go, the example's setup
# of today (no request logger, loopback only).
PEER_MODULE=github.com/deepmap/oapi-codegen@v1.13.4

# build_peer OUT: builds the peer into OUT, in a temporary module that
# requires what this module requires (the same Echo, kin-openapi,
# echo-middleware and runtime).
build_peer() {
	local src tmp out_abs ex=examples/petstore-expanded
	out_abs=$(realpath -m "$1")
	src=$(go mod download -json "$PEER_MODULE" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[ -d "$src/$ex/echo/api" ] || { echo "build_peer: no $ex/echo/api in $PEER_MODULE ($src)" >&2; return 1; }
	tmp=$(mktemp -d)
	mkdir -p "$tmp/$ex/echo/api/models" "$tmp/cmd/peer"
	cp "$src/$ex/petstore-expanded.yaml" "$tmp/$ex/"
	cp "$src/$ex/echo/api/petstore.go" "$src/$ex/echo/api/models.cfg.yaml" "$src/$ex/echo/api/server.cfg.yaml" "$tmp/$ex/echo/api/"
	cp .ci/peer/main.go "$tmp/cmd/peer/"
	chmod -R u+w "$tmp"
	sed '1s|.*|module github.com/deepmap/oapi-codegen|' go.mod >"$tmp/go.mod"
	cp go.sum "$tmp/"
	go build -o "$tmp/oapi-codegen" github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen
	(cd "$tmp/$ex/echo/api" &&
		"$tmp/oapi-codegen" --config=models.cfg.yaml ../../petstore-expanded.yaml &&
		"$tmp/oapi-codegen" --config=server.cfg.yaml ../../petstore-expanded.yaml) &&
		(cd "$tmp" && go build -trimpath -o "$out_abs" ./cmd/peer)
	local rc=$?
	rm -rf "$tmp"
	return $rc
}

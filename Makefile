# petstore — see README.md. `make run` and `make test` are all a new machine needs.
GO ?= go
PKGS_NOGEN = $(shell $(GO) list ./... | grep -v '/gen$$')

.PHONY: all run build image test-image test test-plants test-docs evolve-drill new-major test-new-major test-postgres chaos chaos-short chaos-memory chaos-broken deploy-test deploy-test-short bench-postgres fuzz generate check-generate check-compat changelog release-contract lint ci lint-spec conformance test-browser bench bench-go bench-load bench-peer bench-layers bench-bounds bench-guess bench-writes

all: lint test

## run: serve the API on :8080 with the in-memory store (prints a key if none is configured)
run:
	$(GO) run ./cmd/petstore serve -log-format=text -shutdown-delay=0

## build: build bin/petstore (PETSTORE_BIN), stamped with VERSION, the git revision and whether the tree was modified (petstore version)
# VERSION names the build: git describe, else dev. Go records the revision
# and the modified flag itself in a clone; in a git worktree (.git is a
# file) it records none, and STAMP's stand in.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
MODIFIED ?= $(shell if git rev-parse --git-dir >/dev/null 2>&1; then test -z "$$(git status --porcelain)" && echo false || echo true; else echo unknown; fi)
STAMP = -X main.version=$(VERSION) -X main.revision=$(REVISION) -X main.modified=$(MODIFIED)
PETSTORE_BIN ?= bin/petstore
build:
	$(GO) build -trimpath -buildvcs=auto -ldflags '$(STAMP)' -o $(PETSTORE_BIN) ./cmd/petstore

## image: the container image $(IMAGE), tagged latest and VERSION, from a binary built here (image/host.Dockerfile),
## with docker or podman (image/engine: it installs nothing; without an engine it says what to install and stops);
## the image it replaces is removed when no tag is left on it, and podman keeps no intermediate images (--layers=false).
## The Dockerfile builds the same image in a Go stage
IMAGE ?= petstore
IMAGE_TAGS = $(IMAGE):latest $(IMAGE):$(subst +,-,$(subst /,-,$(VERSION)))
IMAGE_SOURCE ?= https://github.com/petstore/petstore
IMAGE_CONTEXT ?= bin/image
CA_CERTS ?= /etc/ssl/certs/ca-certificates.crt
image:
	@engine=$$(image/engine) && set -x && \
	{ test -f $(CA_CERTS) || { echo "$(CA_CERTS) missing: apt-get install ca-certificates (or set CA_CERTS)"; exit 1; }; } && \
	rm -rf $(IMAGE_CONTEXT) && mkdir -p $(IMAGE_CONTEXT)/rootfs/etc/ssl/certs && \
	CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=auto -ldflags '-s -w $(STAMP)' -o $(IMAGE_CONTEXT)/rootfs/petstore ./cmd/petstore && \
	cp image/passwd image/group $(IMAGE_CONTEXT)/rootfs/etc/ && \
	cp $(CA_CERTS) $(IMAGE_CONTEXT)/rootfs/etc/ssl/certs/ca-certificates.crt && \
	chmod -R go-w $(IMAGE_CONTEXT)/rootfs && \
	old=$$($$engine image inspect --format '{{.Id}}' $(IMAGE):latest 2>/dev/null || true) && \
	$$engine build $$([ "$$engine" = podman ] && echo --layers=false) -f image/host.Dockerfile \
		--build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) --build-arg SOURCE=$(IMAGE_SOURCE) \
		$(addprefix -t ,$(IMAGE_TAGS)) $(IMAGE_CONTEXT) && \
	if [ -n "$$old" ] && $$engine images -q --no-trunc --filter dangling=true | grep -qF "$$old"; then \
		$$engine rmi "$$old" >/dev/null; \
	fi

## test-image: build the image and test it by content: config, files, and its binary run on the host (image/image_test.go)
test-image:
	PETSTORE_TEST_IMAGE=1 $(GO) test -race -count=1 -v -run '^(TestImage|TestDockerfiles)$$' ./image

## test: every test, with the race detector; the PostgreSQL ones wherever PostgreSQL can run (PETSTORE_TEST_DATABASE_URL,
## else a throwaway cluster: .ci/test), else skipped, saying why (CI=true: failed)
test:
	GO=$(GO) .ci/test
	$(GO) -C tools/compat test -race -count=1 -timeout 30m ./...

## test-new-major: the proof that the spec alone names the base path: a copy of the tree moved to the next major (make
## new-major, generate, changelog, check-compat, nothing else) passes make test there (.ci/new-major-proof; as long as
## make test again, so not in make ci: make test's TestNoBasePathWritten keeps tests and scripts free of the literal)
test-new-major:
	.ci/new-major-proof

## test-plants: plant each defect of .ci/plants (a store that drops a member, a fingerprint that ignores one, a memory
## store that sorts arrays, a PostgreSQL store that drops a member or a column) in a copy of its file (go test -overlay)
## and fail unless the tests catch every one: the planted tree builds and a test fails by name (the runner proves that
## rule on plants of its own first, --self-test); PostgreSQL's plants as make test runs PostgreSQL
test-plants:
	.ci/plants/run --self-test
	.ci/plants/run

## evolve-drill: the evolution drill (docs/evolving-the-contract.md#the-drill): in a copy of the tree, each change of
## EVOLVE_DRILL made to openapi.yaml (a: a string member with a pattern, b: an array, c: an object, d: a new PetStatus
## value, e: an operation, DELETE /pets/{petId}, with its code, f: a required member at a new major; letters together: their changes at once; :full, :vet or
## :none after one, its tests), then what a user runs: generate, changelog, the gate (it must name the raise), build,
## the tests, both stores and the kit through the binary (PostgreSQL: root, as test-postgres); fails unless every change
## of data needed no hand-written file beside the spec, and the operation only its handler, stores and migration
EVOLVE_DRILL ?= a b c d e f
DRILL_JOBS ?= 1
evolve-drill:
	DRILL_JOBS=$(DRILL_JOBS) .ci/evolve-drill $(EVOLVE_DRILL)

## test-docs: run every marked shell block of the repository's Markdown as written (internal/doctest), each in a
## fresh directory, with a fresh bin/petstore where it talks to localhost:8080; blocks marked postgres make their own
## cluster (root or not) and are skipped with a notice without PostgreSQL's binaries (CI=true: they fail instead)
test-docs: build
	$(GO) run ./tools/doctest run -petstore bin/petstore

## test-postgres: the PostgreSQL tests alone (make test runs them too), against a throwaway cluster (.ci/with-postgres)
test-postgres:
	.ci/with-postgres $(GO) test -race -count=1 -run '^TestPostgres' ./...

## chaos: the chaos run (docs/reliability.md): two replicas on a throwaway PostgreSQL cluster (fsync on, its data
## directory on a lazy FUSE filesystem for power cuts) under load and faults for CHAOS_DURATION, then the audit of its
## history; fails on any anomaly
CHAOS_DURATION ?= 60s
CHAOS_OUT ?= bin/chaos
CHAOS_RUN = bin/petstore-chaos run -duration $(CHAOS_DURATION)
chaos: bin/petstore-chaos
	PG_FSYNC=on .ci/with-postgres $(CHAOS_RUN) -out $(CHAOS_OUT) -min-acked 2000 -min-faults 10

## chaos-short: a 30 s chaos run (.ci/run)
chaos-short: CHAOS_DURATION = 30s
chaos-short: bin/petstore-chaos
	PG_FSYNC=on .ci/with-postgres $(CHAOS_RUN) -out $(CHAOS_OUT) -min-acked 500 -min-faults 5

## chaos-memory: the same load and audit on the memory store: one replica, pauses only
chaos-memory: bin/petstore-chaos
	$(CHAOS_RUN) -store memory -out $(CHAOS_OUT)-memory -min-acked 1000 -min-faults 5

## chaos-broken: the chaos run with a defect planted (CHAOS_BROKEN=nolock|reorder|asynccommit|fsyncoff|nokey|nounknown|dirtyread);
## passes only when the audit reports the kind of anomaly the defect causes
chaos-broken: bin/petstore-chaos
	@test -n "$(CHAOS_BROKEN)" || { echo 'chaos-broken: set CHAOS_BROKEN=nolock|reorder|asynccommit|fsyncoff|nokey|nounknown|dirtyread'; exit 2; }
	.ci/with-postgres $(CHAOS_RUN) -broken $(CHAOS_BROKEN) -out $(CHAOS_OUT)-$(CHAOS_BROKEN)

## deploy-test: a rolling deploy behind HAProxy (docs/deploying.md#behind-a-load-balancer): two replicas on a
## throwaway PostgreSQL cluster under a steady load through HAProxy; DEPLOY_ROUNDS times, each replica in turn
## drained (SIGTERM), stopped and started on a new binary; fails on any failed request or audit anomaly
DEPLOY_ROUNDS ?= 3
DEPLOY_STEADY ?= 10s
DEPLOY_OUT ?= bin/deploy
DEPLOY_RUN = bin/petstore-chaos deploy -rounds $(DEPLOY_ROUNDS) -steady $(DEPLOY_STEADY) -out $(DEPLOY_OUT)
HAPROXY_CHECK = @command -v haproxy >/dev/null || { echo 'deploy-test: no haproxy: apt-get install haproxy'; exit 1; }
deploy-test: bin/petstore-chaos
	$(HAPROXY_CHECK)
	.ci/with-postgres $(DEPLOY_RUN) -min-acked 2000

## deploy-test-short: one round, 5 s steady stretches (.ci/run)
deploy-test-short: DEPLOY_ROUNDS = 1
deploy-test-short: DEPLOY_STEADY = 5s
deploy-test-short: bin/petstore-chaos
	$(HAPROXY_CHECK)
	.ci/with-postgres $(DEPLOY_RUN) -min-acked 500

.PHONY: bin/petstore-chaos
bin/petstore-chaos:
	$(GO) build -o $@ ./cmd/petstore-chaos

## bench-postgres: create and list throughput, memory vs PostgreSQL (fsync on), store and HTTP over loopback; benchstat
bench-postgres:
	PG_FSYNC=on .ci/with-postgres bash -o pipefail -c '$(GO) test -run "^$$" -bench "^BenchmarkPostgres" -benchmem -count 6 ./internal/pgstore ./internal/httpapi | tee bench-postgres.out'
	$(GO) run golang.org/x/perf/cmd/benchstat -col /store bench-postgres.out

## bench-writes: the create ceiling on PostgreSQL (fsync on), in one run: pgbench's plain insert at 1 and 32 clients,
## POST /pets with one replica and two, before and after, a lone create, listPets while creating (.ci/bench-writes)
bench-writes:
	PG_FSYNC=on .ci/with-postgres .ci/bench-writes

## fuzz: run each fuzz test for FUZZTIME (default 50000x: runs of the target; the report's FUZZTIME_REPORT, 10000x); a crasher is kept in the package's testdata/fuzz
# FUZZ_TARGETS are package:target pairs: the app end to end (httpapi) and
# the strict input rules on their own (strict), the kit's reports (conform).
# A count, not a duration: when a duration runs out, Go 1.26's fuzzing
# coordinator can fail the target with a bare "context deadline exceeded"
# and no input (golang/go#75804, fixed in Go 1.27); a count sets no deadline.
# Minimizing each new interesting input is capped at 5s (Go's default is 60s,
# during which no new inputs are tried).
FUZZTIME ?= 50000x
FUZZ_TARGETS = httpapi:FuzzCreatePet httpapi:FuzzListPets httpapi:FuzzGetPet \
	strict:FuzzQuery strict:FuzzInt strict:FuzzContentType strict:FuzzDecodeJSON strict:FuzzAccept \
	conform:FuzzReportWellFormed:$(FUZZTIME_REPORT)
# The report's target runs fewer: in conform's large package most inputs are
# new coverage, each minimized, and 50000 took 190 s of CI's 358 s of fuzzing.
FUZZTIME_REPORT ?= 10000x
fuzz:
	@for pt in $(FUZZ_TARGETS); do \
		p=$${pt%%:*}; f=$${pt#*:}; n=$${f#*:}; f=$${f%%:*}; [ "$$n" != "$$f" ] || n=$(FUZZTIME); \
		echo "== $$p $$f ($$n)"; \
		$(GO) test -run='^$$' -fuzz="^$$f\$$" -fuzztime=$$n -fuzzminimizetime=5s ./internal/$$p || exit 1; \
	done

## generate: regenerate gen/ (gen/shape included) from openapi.yaml, and copy openapi.yaml there to be served byte for byte;
## then the documents' figures derived from the schema's bounds (tools/docbounds)
generate:
	cd gen && $(GO) generate ./...
	$(GO) run ./tools/docbounds

# FRESH_GEN generates gen/'s files from openapi.yaml into a temporary
# directory $$fresh (removed when the recipe ends), leaving gen/ as it is.
FRESH_GEN = fresh=$$(mktemp -d) && trap 'rm -rf "$$fresh"' EXIT && (cd gen && GEN_OUT=$$fresh/ $(GO) generate ./...)

## check-generate: fail when gen/ is not what openapi.yaml generates: a fresh generation compared file by file with gen/ (committed or not),
## or the documents' figures are not what the schema's bounds make them
check-generate:
	@$(FRESH_GEN) && $(COMPAT) drift -dir $(CURDIR) -generated $$fresh
	@$(GO) run ./tools/docbounds -check

## check-compat: the gate (docs/evolving-the-contract.md): one line "ok", or what the tree needs: gen/ as openapi.yaml generates it,
## info.version carrying every change since the released contract, a new major naming only its own base path, CHANGELOG.md up to date
## (COMPAT_FLAGS=-v lists every change, and the breaking ones as released/waivers.yaml would name them)
# tools/compat is a module of its own (oasdiff, pinned in its go.mod), so that
# oasdiff's kin-openapi does not decide the server's.
COMPAT = $(GO) run -C tools/compat .
COMPAT_FLAGS ?=
check-compat:
	@$(FRESH_GEN) && $(COMPAT) check -dir $(CURDIR) -generated $$fresh $(COMPAT_FLAGS)

## new-major: move openapi.yaml to the next major after the release: info.version N.0.0 and the base path /vN wherever the spec names it;
## remove the waivers of released/waivers.yaml that name no change of it
new-major:
	@$(COMPAT) major -dir $(CURDIR)

## changelog: write CHANGELOG.md's Unreleased section: the changes since released/openapi.yaml
changelog:
	$(COMPAT) changelog -dir $(CURDIR)

## release-contract: at a release, name the Unreleased changes after info.version and make openapi.yaml the baseline
release-contract: check-compat
	$(COMPAT) release -dir $(CURDIR)

## lint: gofmt, go vet, staticcheck (generated code excluded); the Markdown: every relative link and anchor resolves, every shell block is marked
lint:
	$(GO) run ./tools/doctest check
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^gen/')); test -z "$$out" || { echo "gofmt needed: $$out"; exit 1; }
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck $(PKGS_NOGEN)
	$(GO) -C tools/compat vet ./...
	$(GO) build -o bin/staticcheck honnef.co/go/tools/cmd/staticcheck && cd tools/compat && ../../bin/staticcheck ./...

## ci: every check CI makes: what .ci/run runs once it has installed the tools (npm packages, chromium, docker or
## podman, PostgreSQL, HAProxy); each target is also run on its own
# Two lanes at once (.ci/timed): CI's work is mostly CPU (-race), and one
# lane in turn left a core idle for about half the run. The drill and the
# fuzzing, neither of which measures time, make the second lane. The drill
# in CI (EVOLVE_DRILL_CI) runs make test once, on a tree with every change
# at once (the members, the new PetStatus value, the required member at a
# new major, the operation with its code, whose no-op plant its tests and
# the kit must fail). Each change alone would repeat what the combined tree
# proves (its members through both stores and the kit, its files) at a
# minute or more each, past CI's budget; make evolve-drill runs every
# variant alone, with make test, and the gate's minor path is
# tools/compat's tests'.
EVOLVE_DRILL_CI ?= abcdefghijkl:full
CI_LANE1 = check-compat lint test test-plants test-docs test-image lint-spec conformance test-browser chaos-short deploy-test-short
CI_LANE2 = evolve-drill fuzz
ci:
	@.ci/timed $(MAKE) --no-print-directory EVOLVE_DRILL='$(EVOLVE_DRILL_CI)' DRILL_JOBS=1 -- $(CI_LANE1) // $(CI_LANE2)

## node_modules: the pinned npm tools (package-lock.json), installed with npm ci when missing or stale
NODE_STAMP = node_modules/.petstore-installed
$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

## lint-spec: Spectral (spectral:oas + OWASP ruleset, .spectral.yaml) on openapi.yaml; fails on any error
lint-spec: $(NODE_STAMP)
	node_modules/.bin/spectral lint openapi.yaml --ruleset .spectral.yaml --fail-severity error

## conformance: the kit (petstore conform) against bin/petstore, through Prism's validating proxy, and against Prism's mock
conformance: build $(NODE_STAMP)
	bash .ci/conformance.sh

## test-browser: Swagger UI at /docs in headless Chromium (skips without chromium; fails without it when CI=true)
test-browser:
	$(GO) test -race -count=1 -v -run '^TestDocsInBrowser$$' ./internal/httpapi

## bench: Go benchmarks (API full vs novalidate and vs bare, store at 1k/100k/1M pets),
## memory per pet, bench-postgres, bench-writes, and last the loopback load run (wrk) of
## the real binary against the bare baseline and the net/http floor, whose
## table ends the output; see BENCHMARKS.md
BENCH_COUNT ?= 6
BENCH_OUT ?= bin/bench
BENCHSTAT = $(GO) run golang.org/x/perf/cmd/benchstat
bench: bench-go bench-postgres bench-writes bench-load

bench-go:
	@mkdir -p $(BENCH_OUT)
	$(GO) test -run '^$$' -bench '^BenchmarkAPI$$' -benchmem -count $(BENCH_COUNT) ./internal/httpapi | tee $(BENCH_OUT)/api.txt
	$(GO) test -run '^$$' -bench '^Benchmark(List|Create)$$' -benchmem -count $(BENCH_COUNT) ./internal/memstore | tee $(BENCH_OUT)/store.txt
	$(GO) test -count=1 -run '^TestMemoryPerPet$$' -v ./internal/memstore | grep 'B/pet'
	@# benchstat compares columns by a named key: name the mode for it.
	sed -E 's#^(BenchmarkAPI/[^/]+)/(full|novalidate|bare)#\1/mode=\2#' $(BENCH_OUT)/api.txt > $(BENCH_OUT)/api-mode.txt
	$(BENCHSTAT) -col '/mode@(novalidate full)' $(BENCH_OUT)/api-mode.txt
	$(BENCHSTAT) -col '/mode@(bare full)' $(BENCH_OUT)/api-mode.txt
	$(BENCHSTAT) -col /n $(BENCH_OUT)/store.txt

## bench-bounds: the real binary's memory store filled to its default bounds with the largest pets and keys; its peak RSS (docs/operating.md#bounds; ~1-2 min)
bench-bounds:
	PETSTORE_TEST_FILL=1 $(GO) test -count=1 -timeout 30m -run '^TestFillMemoryStore$$' -v ./cmd/petstore

## bench-load: full vs bare vs floor under wrk over loopback, interleaved (.ci/load; ~3 min)
bench-load:
	BENCH_OUT=$(BENCH_OUT) bash .ci/load

## bench-peer: the real binary against its peer (oapi-codegen's petstore-expanded/echo, built from the Go module proxy) and
## the net/http floor under wrk, in one run: petstore/peer and petstore/floor for create, a list of 20 and a get, the median
## of the rounds' ratios, PASS or MISS against >= 1.0x and >= 0.8x (.ci/bench-peer; ~3 min; wrk: apt-get install wrk)
bench-peer:
	.ci/bench-peer

## bench-layers: each layer's CPU, allocations and bytes a request (list of 20, create, get), petstore and the peer, from
## profiles of the real binaries under wrk, as Markdown tables (.ci/bench-layers; ~2 min; LAYERS_BEFORE=REV adds a revision)
bench-layers:
	.ci/bench-layers

## bench-guess: wrong-key guesses a second that get past the throttle from one address, with the default
## -auth-failures and without (GUESS_DURATION each, default 60s; .ci/guess, wrk over loopback)
bench-guess:
	BENCH_OUT=$(BENCH_OUT) bash .ci/guess
	BENCH_OUT=$(BENCH_OUT) GUESS_AUTH_FAILURES=off bash .ci/guess

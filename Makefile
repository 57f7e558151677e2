# petstore — see README.md. `make run` and `make test` are all a new machine needs.
GO ?= go
PKGS_NOGEN = $(shell $(GO) list ./... | grep -v '/gen$$')

.PHONY: all run build image test-image test test-docs test-postgres chaos chaos-short chaos-memory chaos-broken bench-postgres bench-writes fuzz generate check-generate check-compat changelog release-contract lint ci lint-spec conformance test-browser bench bench-go bench-load

all: lint test

## run: serve the API on :8080 with the in-memory store (prints a key if none is configured)
run:
	$(GO) run ./cmd/petstore serve -log-format=text -shutdown-delay=0

## build: build bin/petstore
build:
	$(GO) build -trimpath -o bin/petstore ./cmd/petstore

## image: the container image $(IMAGE) from a binary built here (image/host.Dockerfile) with docker or podman (image/engine; installs podman when neither works); the Dockerfile builds the same image in a Go stage
IMAGE ?= petstore:dev
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
IMAGE_SOURCE ?= https://github.com/petstore/petstore
CA_CERTS ?= /etc/ssl/certs/ca-certificates.crt
image:
	@test -f $(CA_CERTS) || { echo "$(CA_CERTS) missing: apt-get install ca-certificates (or set CA_CERTS)"; exit 1; }
	rm -rf bin/image && mkdir -p bin/image/rootfs/etc/ssl/certs
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w -X main.version=$(VERSION)' -o bin/image/rootfs/petstore ./cmd/petstore
	cp image/passwd image/group bin/image/rootfs/etc/
	cp $(CA_CERTS) bin/image/rootfs/etc/ssl/certs/ca-certificates.crt
	chmod -R go-w bin/image/rootfs
	engine=$$(image/engine) && $$engine build -f image/host.Dockerfile \
		--build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) --build-arg SOURCE=$(IMAGE_SOURCE) \
		-t $(IMAGE) bin/image

## test-image: build the image and test it by content: config, files, and its binary run on the host (image/image_test.go)
test-image:
	PETSTORE_TEST_IMAGE=1 $(GO) test -race -count=1 -v -run '^(TestImage|TestDockerfiles)$$' ./image

## test: every test, with the race detector (the PostgreSQL ones: make test-postgres)
test:
	$(GO) test -race -count=1 -skip '^TestPostgres' ./...
	$(GO) -C tools/compat test -race -count=1 ./...

## test-docs: run every marked shell block of the repository's Markdown as written (internal/doctest), each in a
## fresh directory, with a fresh bin/petstore where it talks to localhost:8080; blocks marked postgres make their own
## cluster (root or not) and are skipped with a notice without PostgreSQL's binaries (CI=true: they fail instead)
test-docs: build
	$(GO) run ./tools/doctest run -petstore bin/petstore

## test-postgres: the PostgreSQL tests, against a throwaway cluster (.ci/with-postgres; root, PostgreSQL 15)
test-postgres:
	.ci/with-postgres $(GO) test -race -count=1 -run '^TestPostgres' ./...

## chaos: the chaos run (docs/reliability.md): two replicas on a throwaway PostgreSQL cluster
## under load and faults for CHAOS_DURATION, then the audit of its history; fails on any anomaly
CHAOS_DURATION ?= 60s
CHAOS_OUT ?= bin/chaos
CHAOS_RUN = bin/petstore-chaos run -duration $(CHAOS_DURATION)
chaos: bin/petstore-chaos
	.ci/with-postgres $(CHAOS_RUN) -out $(CHAOS_OUT) -min-acked 2000 -min-faults 10

## chaos-short: a 25 s chaos run (.ci/run)
chaos-short: CHAOS_DURATION = 25s
chaos-short: bin/petstore-chaos
	.ci/with-postgres $(CHAOS_RUN) -out $(CHAOS_OUT) -min-acked 500 -min-faults 5

## chaos-memory: the same load and audit on the memory store: one replica, pauses only
chaos-memory: bin/petstore-chaos
	$(CHAOS_RUN) -store memory -out $(CHAOS_OUT)-memory -min-acked 1000 -min-faults 5

## chaos-broken: the chaos run of a server built broken (CHAOS_BROKEN=nolock|reorder|asynccommit|nokey|nounknown);
## passes when the audit catches it
chaos-broken: bin/petstore-chaos
	@test -n "$(CHAOS_BROKEN)" || { echo 'chaos-broken: set CHAOS_BROKEN=nolock|reorder|asynccommit|nokey|nounknown'; exit 2; }
	@rc=0; .ci/with-postgres $(CHAOS_RUN) -broken $(CHAOS_BROKEN) -out $(CHAOS_OUT)-$(CHAOS_BROKEN) || rc=$$?; \
	case $$rc in \
	1) echo "chaos-broken: the audit caught $(CHAOS_BROKEN)";; \
	0) echo "chaos-broken: the audit missed $(CHAOS_BROKEN)"; exit 1;; \
	*) exit $$rc;; \
	esac

.PHONY: bin/petstore-chaos
bin/petstore-chaos:
	$(GO) build -o $@ ./cmd/petstore-chaos

## bench-postgres: create and list throughput, memory vs PostgreSQL (fsync on), store and HTTP over loopback; benchstat
bench-postgres:
	PG_FSYNC=on .ci/with-postgres bash -o pipefail -c '$(GO) test -run "^$$" -bench "^BenchmarkPostgres" -benchmem -count 6 ./internal/pgstore ./internal/httpapi | tee bench-postgres.out'
	$(GO) run golang.org/x/perf/cmd/benchstat -col /store bench-postgres.out

## bench-writes: the create ceiling on PostgreSQL (fsync on), in one run: pgbench's plain insert at 1 and 32 clients,
## POST /v1/pets with one replica and two, before and after, a lone create, listPets while creating (.ci/bench-writes)
bench-writes:
	PG_FSYNC=on .ci/with-postgres .ci/bench-writes

## fuzz: run each fuzz test for FUZZTIME (default 50000x: runs of the target); a crasher is kept in the package's testdata/fuzz
# FUZZ_TARGETS are package:target pairs: the app end to end (httpapi) and
# the strict input rules on their own (strict), the kit's reports (conform).
# A count, not a duration: when a duration runs out, Go 1.26's fuzzing
# coordinator can fail the target with a bare "context deadline exceeded"
# and no input (golang/go#75804, fixed in Go 1.27); a count sets no deadline.
# Minimizing each new interesting input is capped at 5s (Go's default is 60s,
# during which no new inputs are tried).
FUZZTIME ?= 50000x
FUZZ_TARGETS = httpapi:FuzzCreatePet httpapi:FuzzListPets httpapi:FuzzGetPet \
	strict:FuzzQuery strict:FuzzInt strict:FuzzContentType strict:FuzzDecodeJSON \
	conform:FuzzReportWellFormed
fuzz:
	@for pt in $(FUZZ_TARGETS); do \
		p=$${pt%%:*}; f=$${pt#*:}; \
		echo "== $$p $$f ($(FUZZTIME))"; \
		$(GO) test -run='^$$' -fuzz="^$$f\$$" -fuzztime=$(FUZZTIME) -fuzzminimizetime=5s ./internal/$$p || exit 1; \
	done

## generate: regenerate gen/ from openapi.yaml, and copy openapi.yaml there to be served byte for byte
generate:
	cd gen && $(GO) generate ./...

## check-generate: fail when gen/ is not what openapi.yaml generates
check-generate: generate
	@test -z "$$(git status --porcelain -- gen)" || { git status --porcelain -- gen; git diff --stat -- gen; echo 'gen/ drifts from openapi.yaml: run make generate and commit'; exit 1; }

## check-compat: fail when gen/ drifts from openapi.yaml, when info.version does not carry every change since the released contract, or when CHANGELOG.md is stale
# tools/compat is a module of its own (oasdiff, pinned in its go.mod), so that
# oasdiff's kin-openapi does not decide the server's.
COMPAT = $(GO) run -C tools/compat .
check-compat: check-generate
	$(COMPAT) check -dir $(CURDIR)
	$(COMPAT) changelog -check -dir $(CURDIR)

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

## ci: every check CI makes, in order: what .ci/run runs once it has installed the tools
## (npm packages, chromium, docker or podman, PostgreSQL); each target is also run on its own
ci: check-generate check-compat lint test test-docs test-image lint-spec conformance test-browser test-postgres chaos-short fuzz

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

## bench-load: full vs bare vs floor under wrk over loopback, interleaved (.ci/load; ~3 min)
bench-load:
	BENCH_OUT=$(BENCH_OUT) bash .ci/load

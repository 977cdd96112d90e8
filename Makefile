# Seatghor's front door. `make` (or `make help`) lists the targets.
#
# Needs Go, Node.js 20 and make; `make run` and `make test` install the rest
# (the PostgreSQL server binaries, the TypeScript client's and the site's npm
# packages, Chromium for the browser tests) through scripts/ensure-deps.sh.
# The site's built assets (clients/web/dist) are committed: `make run`
# needs no Node.js.

GO      ?= go
BIN     ?= bin/seatghor
# Extra arguments for `make run`, e.g. make run ARGS='--addr 127.0.0.1:9090'.
ARGS    ?=
GOTOOL  := $(GO) tool -modfile=tools/go.mod
# Everything scripts/generate.sh and `make web` write; the reason lists and
# docs/errors.md come from proto/seatghor/errors/v1/reason.proto (decision 0318).
GENERATED := gen clients/ts/src/gen clients/go/seatghor/gen clients/go/seatghor/services.gen.go clients/web/dist \
	docs/errors.md server/fault/reasons.gen.go server/api/reasons.gen.go clients/go/seatghor/reasons.gen.go clients/ts/src/reasons.gen.ts \
	docs/decisions/README.md

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# The released API, which `buf breaking` compares proto/ with (WIRE_JSON).
RELEASED_API := proto/released.txtpb

.PHONY: help deps deps-run build run test test-go test-go-sdk test-deploy test-ts sdk lint-openapi test-web test-web-unit web screenshots bench-web bench-phone generate check-generate check-repo breaking release-api lint bench loadtest loadtest-holds cluster-onsale shard-curve bench-move clean chaos chaos-short chaos-broken fuzz

help: ## List the targets
	@echo 'Usage: make <target>'
	@echo
	@awk 'BEGIN { FS = ":[^#]*## " } /^[a-zA-Z_-]+:[^#]*## / { printf "  %-15s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

deps: ## Install what the tests need if missing: PostgreSQL and Redis binaries, npm packages, MinIO, Meilisearch
	@bash scripts/ensure-deps.sh test

deps-run: ## Install only what `seatghor dev` needs if missing: the PostgreSQL and Redis binaries
	@bash scripts/ensure-deps.sh run

build: ## Build the binary into bin/seatghor
	$(GO) build -o $(BIN) ./cmd/seatghor

run: deps-run build ## Run everything locally on 127.0.0.1:8080 (seatghor dev, own PostgreSQL, demo shows)
	$(BIN) dev $(ARGS)

test: deps ## Every check CI runs: build, vet, staticcheck, buf lint and breaking, the OpenAPI lint, repository guards, Go tests, the short chaos run, deployment-file, TypeScript and SDK-release tests, generated code
	$(GO) build ./...
	$(GO) vet ./...
	$(GOTOOL) staticcheck ./...
	$(GOTOOL) buf lint
	$(MAKE) --no-print-directory lint-openapi
	$(MAKE) --no-print-directory breaking
	$(MAKE) --no-print-directory check-repo
	SEATGHOR_TEST_MEILI=require $(MAKE) --no-print-directory test-go
# After the Go tests, not beside them: the chaos run is a cluster of its own.
	$(MAKE) --no-print-directory chaos-short
	$(MAKE) --no-print-directory test-deploy
	$(MAKE) --no-print-directory test-web-unit
# One make for both, so that the `sdk` they install is built once.
	$(MAKE) --no-print-directory test-go-sdk test-ts
	$(MAKE) --no-print-directory check-generate

test-go: ## Run the Go tests only (real PostgreSQL: 127.0.0.1:5432 or a throwaway cluster; the browser tests in server/site too)
	$(GO) test -count=1 -timeout 20m ./...

test-deploy: ## Check the Dockerfile, deploy/compose.yaml and deploy/k8s offline (their own module, deploy/validate)
	cd deploy/validate && $(GO) vet ./... && $(GO) test -count=1 ./...

# The Go SDK is a module of its own, which `./...` above does not reach.
test-go-sdk: build sdk ## Vet, staticcheck and test the Go SDK (clients/go/seatghor; its tests start bin/seatghor dev and install make sdk's module in fresh projects)
	cd clients/go/seatghor && $(GO) vet ./...
	staticcheck="$$($(GOTOOL) -n staticcheck)" && cd clients/go/seatghor && "$$staticcheck" ./...
	cd clients/go/seatghor && SEATGHOR_BIN="$(CURDIR)/$(BIN)" SEATGHOR_SDK_DIST="$(SDK_DIST)" $(GO) test -count=1 -timeout 10m ./...

test-ts: build sdk ## Run the TypeScript client test only (it starts bin/seatghor dev and installs make sdk's tarball in a fresh project)
	cd clients/ts && SEATGHOR_BIN="$(CURDIR)/$(BIN)" SEATGHOR_SDK_DIST="$(SDK_DIST)" npm test

# The SDKs' release, built here until the Go module path is fetchable and
# the npm package published (decision 0328); never committed.
SDK_DIST := $(CURDIR)/dist/sdk

sdk: ## Build the SDKs' release into dist/sdk: the npm tarball, the Go module as a module proxy directory, its go.sum lines, SHA256SUMS
	@bash scripts/ensure-deps.sh sdk
	$(GO) run -C tools ./sdkrelease -out "$(SDK_DIST)"

test-web: build ## Run the site's browser tests only (headless Chromium drives bin/seatghor dev)
	SEATGHOR_BIN="$(CURDIR)/$(BIN)" $(GO) test -count=1 -run 'TestBrowser' ./server/site

test-web-unit: ## Run the site's unit tests only (clients/web/test: the gate's rules, with Node's test runner)
	@bash scripts/ensure-deps.sh web
	cd clients/web && npm test

web: ## Build the site into clients/web/dist (committed, embedded in the binary; decision 0160)
	@bash scripts/ensure-deps.sh web
	cd clients/web && npm run --silent build

screenshots: build ## Take the site's screenshots into docs/img (the browser tests, SEATGHOR_SCREENSHOTS)
	SEATGHOR_BIN="$(CURDIR)/$(BIN)" SEATGHOR_SCREENSHOTS="$(CURDIR)/docs/img" $(GO) test -count=1 -run 'TestBrowser' ./server/site

bench-web: build ## First-load bytes (gzip), the seat map's draw and refresh times (median of 5, with the load), 50,000 seats next to a 40-seat bus, in headless Chromium
	SEATGHOR_BIN="$(CURDIR)/$(BIN)" $(GO) test -count=1 -run '^$$' -bench 'BenchmarkSite' -benchtime 5x ./server/site

bench-phone: build ## A phone's bytes and time for a seat-map refresh and a purchase, Connect JSON against binary, in Chromium throttled to Slow 4G and 3G
	@bash scripts/ensure-deps.sh web
	SEATGHOR_BIN="$(CURDIR)/$(BIN)" $(GO) test -count=1 -run '^$$' -bench 'BenchmarkPhoneBytes' -benchtime 3x ./server/site

generate: ## Regenerate gen/ (OpenAPI too), clients/ts/src/gen/, the Go SDK's generated code, the reason lists and docs/errors.md from proto/, the decisions index (scripts/generate.sh)
	bash scripts/generate.sh

check-generate: generate web ## Fail if `make generate` or `make web` changes or adds generated files (the GENERATED list)
	@if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
	  echo 'check-generate: needs a git checkout to compare against' >&2; exit 1; \
	fi
	@status=0; \
	if ! git diff --quiet -- $(GENERATED); then \
	  echo 'check-generate: `make generate` or `make web` changed generated files (run them and commit the result):' >&2; \
	  git --no-pager diff --stat -- $(GENERATED) >&2; \
	  git --no-pager diff -- $(GENERATED) | head -n 200 >&2 || true; \
	  status=1; \
	fi; \
	untracked="$$(git status --porcelain --untracked-files=all -- $(GENERATED) | sed -n 's/^?? //p')"; \
	if [[ -n "$$untracked" ]]; then \
	  echo 'check-generate: `make generate` or `make web` wrote files that are not in git (add and commit them):' >&2; \
	  sed 's/^/  /' <<<"$$untracked" >&2; \
	  status=1; \
	fi; \
	if [[ $$status -eq 0 ]]; then echo 'check-generate: generated code is up to date'; fi; \
	exit $$status

check-repo: ## Fail on tracked files over 1 MB, unlisted binaries, uncited rules, broken DESIGN.md references, import layers or SQL outside a table's owner
	bash scripts/check-repo.sh

breaking: ## Fail if proto/ breaks the released API (buf breaking, WIRE_JSON, against $(RELEASED_API))
	$(GOTOOL) buf breaking proto --against $(RELEASED_API)

lint-openapi: ## Lint gen/openapi/openapi.yaml with Redocly's recommended rules, warnings as errors (tools/redocly, decision 0329)
	@bash scripts/ensure-deps.sh openapi
	cd tools/redocly && REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true node_modules/.bin/redocly lint ../../gen/openapi/openapi.yaml

release-api: ## Accept the API as released: rewrite $(RELEASED_API) (commit it on purpose, with the reason)
	$(GOTOOL) buf build proto --exclude-source-info -o $(RELEASED_API)

lint: ## buf lint, the OpenAPI lint, go vet and staticcheck
	$(GOTOOL) buf lint
	$(MAKE) --no-print-directory lint-openapi
	$(GO) vet ./...
	$(GOTOOL) staticcheck ./...

bench: ## Run the Go benchmarks of server/ (3 s each)
	$(GO) test -run '^$$' -bench . -benchtime 3s ./server/...

loadtest: build ## The on-sale load test against a running server (make run): small preset; ARGS='--preset full' for the documented run
	$(BIN) loadtest onsale $(ARGS)

loadtest-holds: build ## CreateHold and GetSeatMap against their baselines (docs/performance.md): ARGS='--pg-url … --redis-url … --preset full'
	$(BIN) loadtest holds $(ARGS)

cluster-onsale: ## cluster up, 1,200 buyers through both API processes, one SIGKILLed mid-run: nothing lost, nothing oversold (docs/loadtest.md)
	SEATGHOR_TEST_CLUSTER_ONSALE=long $(GO) test -count=1 -timeout 20m -run '^TestClusterOnSaleWithAPIKilled$$' -v ./cmd/seatghor
shard-curve: build ## CreateHold on 3,000 buses, 4 shards on 1, 2 and 4 throwaway PostgreSQL servers, then a paying run; prints a markdown table (docs/operations.md; about 6 min)
	$(GO) run ./scripts/shardcurve -bin $(BIN) $(ARGS)
bench-move: ## Move a 50,000-seat show (2,500 holds) between shards under a light load: the move's length and its freeze (docs/operations.md)
	SEATGHOR_MOVE_SEATS=50000 $(GO) test -count=1 -v -timeout 20m -run '^TestMoveBigShow$$' ./server/shardmove

# Where the chaos runs write their results (never committed); how long
# `make fuzz` runs each fuzz target, and with how many workers.
CHAOS_OUT    := $(CURDIR)/dist/chaos
FUZZTIME     ?= 30s
FUZZPARALLEL ?= 2

chaos: build ## The full chaos run: a cluster of its own under load, crashes, outages, bad input; every invariant checked; writes docs/reliability.md (ARGS='--seed 7 …')
	@mkdir -p $(CHAOS_OUT)
	$(BIN) chaos --preset full --out $(CHAOS_OUT)/full.json $(ARGS)

chaos-short: build ## The short chaos run (under 3 minutes; make test runs it): the same faults at a small size, never writing docs/reliability.md
	@mkdir -p $(CHAOS_OUT)
	$(BIN) chaos --preset short --out $(CHAOS_OUT)/short.json $(ARGS)

chaos-broken: ## Build bin/seatghor-broken (-tags chaosbroken) and run the short chaos run with its broken switches on: passes only if the run reports violations (exit 3)
	@mkdir -p $(CHAOS_OUT)
	$(GO) build -tags chaosbroken -o bin/seatghor-broken ./cmd/seatghor
	@status=0; bin/seatghor-broken chaos --preset short --broken $${BROKEN:-holds,webhooks} --out $(CHAOS_OUT)/broken.json $(ARGS) || status=$$?; \
	if [[ $$status -ne 3 ]]; then echo "chaos-broken: the broken build's run exited $$status, not 3 (invariants broken)" >&2; exit 1; fi; \
	echo 'chaos-broken: the broken build was caught (exit 3)'

fuzz: ## Run every fuzz target (each func Fuzz… of the module's tests) for FUZZTIME (30s) each, FUZZPARALLEL (2) workers
	@for f in $$(git grep -l '^func Fuzz' -- '*_test.go' ':!clients/'); do \
	  for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$$f"); do \
	    echo "fuzz: $$t in ./$$(dirname "$$f") for $(FUZZTIME)"; \
	    $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 2s -parallel $(FUZZPARALLEL) "./$$(dirname "$$f")"; \
	  done; \
	done

clean: ## Remove build outputs (bin/, dist/, clients/ts/dist/); dev data in .seatghor/ and the committed clients/web/dist stay
	rm -rf bin dist clients/ts/dist

# hoard — `make help` lists the targets.

GO        ?= go
PKGS      ?= ./...
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
STATICCHECK_VERSION ?= v0.6.1

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## build bin/hoard
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/hoard ./cmd/hoard

.PHONY: demo
demo: build ## run the whole service on this machine (embedded PostgreSQL, generated AUTH_SECRET); ADDR=:9090 for another port
	bin/hoard demo $(if $(ADDR),--addr $(ADDR))

.PHONY: chat
chat: build ## talk to the running demo's bot as one of its users: make chat AS=alice
	bin/hoard chat --as $(or $(AS),alice)

.PHONY: run
run: ## run web + worker + bot with the configuration in the environment
	$(GO) run -ldflags "$(LDFLAGS)" ./cmd/hoard serve

.PHONY: migrate
migrate: ## apply database migrations
	$(GO) run ./cmd/hoard migrate

# go test runs packages in the order given, two at a time on two cores.
# cmd/hoard's end-to-end cases take minutes and most of the machine: it
# starts first, the short packages run beside it, and the two other long
# ones (LAST_PKGS) start last, when cmd/hoard has finished or nearly, so
# that neither of them shares the cores with it for all of its run.
FIRST_PKGS := ./cmd/hoard
LAST_PKGS  := ./jobs ./web
ORDERED_PKGS = $(FIRST_PKGS) $(filter-out $(addprefix $(MODULE)/,$(patsubst ./%,%,$(FIRST_PKGS) $(LAST_PKGS))),$(shell $(GO) list ./...)) $(LAST_PKGS)
MODULE     = $(shell $(GO) list -m)
TEST_PKGS  = $(if $(filter ./...,$(PKGS)),$(ORDERED_PKGS),$(PKGS))

.PHONY: test
test: ## run the test suite (TEST_DATABASE_URL to use a running PostgreSQL)
	$(GO) test -count=1 -timeout 25m $(TEST_PKGS)

.PHONY: test-long
test-long: ## the default suite with its long cases too (multi-GB files, soaks, the issues' full sizes): HOARD_LARGE_TESTS=1
	HOARD_LARGE_TESTS=1 $(GO) test -count=1 -timeout 90m $(TEST_PKGS)

.PHONY: test-race
test-race: ## run the test suite under the race detector
	$(GO) test -race -count=1 -timeout 25m $(TEST_PKGS)

.PHONY: lint
lint: ## gofmt, go vet and staticcheck (installed on demand)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	@if command -v staticcheck >/dev/null 2>&1 || $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION); then \
		PATH="$$PATH:$$($(GO) env GOPATH)/bin" staticcheck $(PKGS); \
	else echo "staticcheck could not be installed; skipped"; fi

.PHONY: bench
bench: ## run the benchmarks (figures for README's performance section)
	$(GO) test -run '^$$' -bench . -benchmem -timeout 60m $(PKGS)

# The catalog of bench-10m: a database of its own (about 36 GB), generated
# on the first run and kept for the next ones.
BENCH_10M_URL ?= postgres://postgres@127.0.0.1:5432/hoard_bench_10m?sslmode=disable

.PHONY: bench-10m
bench-10m: ## BenchmarkSearch over 10,000,000 packages in BENCH_10M_URL (kept; the first run generates it, about 36 GB); not for CI
	HOARD_BENCH_DB_URL='$(BENCH_10M_URL)' HOARD_BENCH_PACKAGES=10000000 \
		$(GO) test -run '^$$' -bench BenchmarkSearch -benchtime 100x -timeout 0 -v ./store/

.PHONY: fuzz
fuzz: ## run every fuzz target for FUZZTIME each (default 30s)
	@for pkg in $$($(GO) list $(PKGS)); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $${FUZZTIME:-30s} $$pkg || exit 1; \
		done; \
	done

.PHONY: clean
clean: ## remove build output (not DATA_DIR)
	rm -rf bin

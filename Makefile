# The two commands a newcomer runs: `make test` and `make bench` (`make
# example` is the quickstart). Each installs what it needs.

# Build artifacts live outside the clone so repeated clones reuse them; a
# fresh machine simply builds from scratch. Override as you like.
CARGO_TARGET_DIR ?= $(HOME)/.cache/hyperdb-api/target
export CARGO_TARGET_DIR

CARGO ?= cargo
NPM ?= npm
NODE_PKG := hyperdb-api-node

.PHONY: all hyperd test test-rust test-node node node-deps lint lint-node example bench bench-scale bench-node fmt clean-data fuzz fuzz-short soak soak-short

all: test

## Install hyperd (pinned tableauhyperapi wheel, checksum-verified) into .hyperd/.
hyperd:
	@scripts/install-hyperd.sh

## Tableau's own Python Hyper API, the independent reader of the interop test.
interop-deps:
	@scripts/install-interop.sh

## Every test: formatting, lints, a short fuzz run, unit tests and live tests
## against a real hyperd, Rust first, then the Node package, then the
## 2-minute soak.
test: hyperd interop-deps lint fuzz-short test-rust test-node soak-short

# Release mode: the live tests move tens of millions of rows.
test-rust: hyperd interop-deps
	$(CARGO) test --workspace --release

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --release -- -D warnings
	$(CARGO) clippy -p hyperdb-api-core -p hyperdb-api --no-default-features --release --lib -- -D warnings
	for f in arrow async async,arrow; do \
	  $(CARGO) clippy -p hyperdb-api --no-default-features --features $$f --release --lib -- -D warnings || exit 1; \
	done
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps --release

## Coverage-guided fuzzing on stable Rust (libFuzzer, no extra tool): every
## target of fuzz/ for FUZZ_SECONDS each (`make fuzz FUZZ_TARGETS=session`
## for one). The instrumented build, corpora and crashes live under
## $(CARGO_TARGET_DIR)/fuzz; see DEVELOPMENT.md, "Fuzzing". Not run by CI.
FUZZ_SECONDS ?= 300
FUZZ_SHORT_SECONDS ?= 5
FUZZ_TARGETS ?=
fuzz:
	scripts/fuzz.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

## A few seconds of each target, part of `make test`: the targets build,
## their seeds and kept regressions pass, and a short search finds nothing.
fuzz-short:
	scripts/fuzz.sh $(FUZZ_SHORT_SECONDS) $(FUZZ_TARGETS)

## The Node package's npm dependencies, pinned by its committed lockfile.
node-deps: $(NODE_PKG)/node_modules/.package-lock.json
$(NODE_PKG)/node_modules/.package-lock.json: $(NODE_PKG)/package.json $(NODE_PKG)/package-lock.json
	cd $(NODE_PKG) && $(NPM) ci --no-audit --no-fund

## Build the Node addon (napi CLI, release) and compile the TypeScript API.
## The typings the napi CLI generates must be the ones committed.
node: node-deps
	cd $(NODE_PKG) && $(NPM) run build
	@git diff --quiet -- $(NODE_PKG)/native/index.d.ts 2>/dev/null || { \
	  echo "error: $(NODE_PKG)/native/index.d.ts differs from what the build generates:"; \
	  git --no-pager diff -- $(NODE_PKG)/native/index.d.ts; \
	  echo "commit the regenerated typings."; exit 1; }

lint-node: node-deps
	cd $(NODE_PKG) && $(NPM) run lint

## The Node tests (node --test) against a real hyperd, then the packed
## package installed into a fresh project and run from ESM and CommonJS.
test-node: hyperd node lint-node
	cd $(NODE_PKG) && $(NPM) test
	cd $(NODE_PKG) && node scripts/pack-test.mjs

## Start hyperd, create a .hyper file, insert and query a few rows.
example: hyperd
	$(CARGO) run -p hyperdb-api --release --example quickstart

## The benchmark suite at the scale the speed targets are set at: 10M rows
## per workload (as `shared/tools/ceilings`), 2 workers, a warm-up then 5 runs
## each (~13 minutes on a 2-core machine: ~9 of them lineitem, ~2 the query
## mix), then the Node benchmark (~2 more).
## Writes test_results/benchmark_suite.{md,json,svg} and
## benchmark_suite_node.{md,json,svg}; BENCH_TRANSPORT=ipc make bench writes
## benchmark_suite_ipc.*. See docs/BENCHMARKS.md.
BENCH_ROWS ?= 10000000
BENCH_WORKERS ?= 2
BENCH_REPEAT ?= 5
bench: hyperd node
	BENCH_OUT_DIR=$(CURDIR)/test_results BENCH_REPEAT=$(BENCH_REPEAT) $(CARGO) run -p hyperdb-api --release --example benchmark_suite -- $(BENCH_ROWS) $(BENCH_WORKERS)
	$(MAKE) --no-print-directory bench-node

## The scale sweep (not part of `make bench`): the headline insert and read
## paths and their ceilings at each of BENCH_SCALE's sizes, rows/s, % of
## ceiling and peak client RSS per size, into
## test_results/benchmark_suite_scale.{md,json,svg} (~1 minute of measuring at
## the default 1e5,1e6,1e7 on a 2-core machine). 1e8 is opt-in
## (`make bench-scale BENCH_SCALE=1e5,1e6,1e7,1e8`): ~10 more minutes and
## ~1.7 GB free disk for bench_data/. See docs/BENCHMARKS.md, "Scale sweep".
BENCH_SCALE ?= 1e5,1e6,1e7
BENCH_SCALE_REPEAT ?= 3
bench-scale: hyperd
	BENCH_OUT_DIR=$(CURDIR)/test_results BENCH_REPEAT=$(BENCH_SCALE_REPEAT) BENCH_SCALE=$(BENCH_SCALE) $(CARGO) run -p hyperdb-api --release --example benchmark_suite -- $(BENCH_ROWS) $(BENCH_WORKERS)

## The soak (DEVELOPMENT.md, "Fault campaign"): writers and readers through
## the fault proxy, faults every 1.5 s, hyperd killed and restarted
## SOAK_KILLS times; fails unless every acknowledged row is there exactly
## once, nothing is half there, no unexpected error, and RSS and open fds
## stay flat. Writes test_results/soak.md.
SOAK_SECONDS ?= 600
soak: hyperd
	SOAK_SECONDS=$(SOAK_SECONDS) SOAK_REPORT=test_results/soak.md $(CARGO) run -p hyperdb-api --release --example soak

## The same for 2 minutes (part of `make test`); its report goes to stdout only.
soak-short: hyperd
	SOAK_SECONDS=120 $(CARGO) run -p hyperdb-api --release --example soak

## The Node benchmark alone: its reads against the same Rust paths run in
## turn with them (node_reference), its inserts against the Rust suite's artifact;
## writes test_results/benchmark_suite_node.{md,json} and, from the Rust
## suite's ceilings, benchmark_suite_node.svg.
bench-node: hyperd node
	$(CARGO) build -p hyperdb-api --release --example node_reference
	cd $(NODE_PKG) && BENCH_RUST_REFERENCE=$(CARGO_TARGET_DIR)/release/examples/node_reference \
	  BENCH_RUST_JSON=$(CURDIR)/test_results/benchmark_suite.json BENCH_OUT=$(CURDIR)/test_results/benchmark_suite_node \
	  BENCH_REPEAT=$(BENCH_REPEAT) BENCH_WORKERS=$(BENCH_WORKERS) node --expose-gc __test__/benchmark.mjs $(BENCH_ROWS)
	$(CARGO) run -p hyperdb-api --release --example bench_node_chart -- $(CURDIR)/test_results/benchmark_suite_node.json \
	  $(CURDIR)/test_results/benchmark_suite.json $(CURDIR)/test_results/benchmark_suite_node.svg

fmt: node-deps
	$(CARGO) fmt --all
	cd $(NODE_PKG) && $(NPM) run format

# The two commands a newcomer runs: `make test` and `make bench` (`make
# example` is the quickstart). Each installs what it needs.

# Build artifacts live outside the clone so repeated clones reuse them; a
# fresh machine simply builds from scratch. Override as you like.
CARGO_TARGET_DIR ?= $(HOME)/.cache/hyperdb-api/target
export CARGO_TARGET_DIR

CARGO ?= cargo

.PHONY: all hyperd test test-rust lint example bench fmt clean-data

all: test

## Install hyperd (pinned tableauhyperapi wheel, checksum-verified) into .hyperd/.
hyperd:
	@scripts/install-hyperd.sh

## Tableau's own Python Hyper API, the independent reader of the interop test.
interop-deps:
	@scripts/install-interop.sh

## Every test: formatting, lints, unit tests and live tests against a real hyperd.
test: hyperd interop-deps lint test-rust

# Release mode: the live tests move tens of millions of rows.
test-rust: hyperd interop-deps
	$(CARGO) test --workspace --release

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --release -- -D warnings
	$(CARGO) clippy -p hyperdb-api-core -p hyperdb-api --no-default-features --release --lib -- -D warnings
	$(CARGO) clippy -p hyperdb-api --no-default-features --features arrow --release --lib -- -D warnings

## Start hyperd, create a .hyper file, insert and query a few rows.
example: hyperd
	$(CARGO) run -p hyperdb-api --release --example quickstart

## The benchmark suite at the scale the speed targets are set at: 10M rows
## per workload (as `shared/tools/ceilings`), 2 workers, a warm-up then 5 runs
## each (~3 minutes on a 2-core machine). Writes
## test_results/benchmark_suite.{md,json}; BENCH_TRANSPORT=ipc make bench
## writes benchmark_suite_ipc.*. See docs/BENCHMARKS.md.
BENCH_ROWS ?= 10000000
BENCH_WORKERS ?= 2
BENCH_REPEAT ?= 5
bench: hyperd
	BENCH_REPEAT=$(BENCH_REPEAT) $(CARGO) run -p hyperdb-api --release --example benchmark_suite -- $(BENCH_ROWS) $(BENCH_WORKERS)

fmt:
	$(CARGO) fmt --all

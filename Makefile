# The two commands a newcomer runs: `make test` and `make example`
# (`make bench` once the benchmark suite lands). Each installs what it needs.

# Build artifacts live outside the clone so repeated clones reuse them; a
# fresh machine simply builds from scratch. Override as you like.
CARGO_TARGET_DIR ?= $(HOME)/.cache/hyperdb-api/target
export CARGO_TARGET_DIR

CARGO ?= cargo

.PHONY: all hyperd test test-rust lint example fmt clean-data

all: test

## Install hyperd (pinned tableauhyperapi wheel, checksum-verified) into .hyperd/.
hyperd:
	@scripts/install-hyperd.sh

## Every test: formatting, lints, unit tests and live tests against a real hyperd.
test: hyperd lint test-rust

# Release mode: the live tests move tens of millions of rows.
test-rust: hyperd
	$(CARGO) test --workspace --release

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --release -- -D warnings
	$(CARGO) clippy -p hyperdb-api-core -p hyperdb-api --no-default-features --release --lib -- -D warnings

## Start hyperd, create a .hyper file, insert and query a few rows.
example: hyperd
	$(CARGO) run -p hyperdb-api --release --example quickstart

fmt:
	$(CARGO) fmt --all

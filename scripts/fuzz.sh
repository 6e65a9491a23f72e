#!/usr/bin/env bash
# Coverage-guided fuzzing on stable Rust: each target of fuzz/ is a
# libFuzzer binary (libfuzzer-sys, pinned by Cargo.lock, compiles libFuzzer
# itself), instrumented with the sanitizer-coverage flags cargo-fuzz passes,
# all of which are stable `-C` options. No sanitizer (they need nightly),
# no extra tool to install: see DEVELOPMENT.md, "Fuzzing".
#
#   scripts/fuzz.sh SECONDS [TARGET...]   # every target when none is named
#
# The instrumented build, the growing corpora and any crashing input live
# under $CARGO_TARGET_DIR/fuzz, never in the clone. A crash fails the run
# and says how to keep the input as a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:?usage: scripts/fuzz.sh SECONDS [TARGET...]}
shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(backend session hyperbinary arrow scram escape)
fi

cargo=${CARGO:-cargo}
base=${CARGO_TARGET_DIR:-$HOME/.cache/hyperdb-api/target}
out=$base/fuzz
host=$(rustc -vV | sed -n 's/^host: //p')

# The seed corpus is code (fuzz/src/seeds.rs), written out by an ordinary
# build of the crate.
CARGO_TARGET_DIR=$base $cargo run --locked --release -q -p hyperdb-api-fuzz --bin seeds -- "$out/seeds"

# `--target` keeps the flags off build scripts and proc macros, which are
# not linked with libFuzzer.
bins=()
for t in "${targets[@]}"; do bins+=(--bin "$t"); done
RUSTFLAGS="-Cpasses=sancov-module \
  -Cllvm-args=-sanitizer-coverage-level=4 \
  -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
  -Cllvm-args=-sanitizer-coverage-pc-table \
  -Cllvm-args=-sanitizer-coverage-trace-compares \
  -Cllvm-args=-sanitizer-coverage-stack-depth \
  --cfg fuzzing -Cdebug-assertions -Coverflow-checks" \
  $cargo build --locked --release -p hyperdb-api-fuzz --features libfuzzer \
  --target "$host" --target-dir "$out/target" "${bins[@]}"

summary=$out/last-run.txt
: >"$summary"
failed=0
for t in "${targets[@]}"; do
  corpus=$out/corpus/$t
  artifacts=$out/artifacts/$t
  log=$out/logs/$t.log
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  # New inputs go to the first folder; the seeds are read, never written.
  if "$out/target/$host/release/$t" "$corpus" "$out/seeds/$t" \
    -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len=16384 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1; then
    status=ok
  else
    status=FAILED
    failed=1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  units=$(ls "$corpus" | wc -l)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
  line="$t: $status, ${runs:-?} executions in ${seconds}s (${speed:-?}/s), $cov, corpus $units inputs"
  echo "$line" | tee -a "$summary"
  if [ $status = FAILED ]; then
    tail -n 40 "$log"
    echo "The input is in $artifacts/. Keep it as a regression test:"
    echo "  cp $artifacts/<crash-file> fuzz/regressions/$t/<name>"
    echo "  cargo test -p hyperdb-api-fuzz --release   # replays it without libFuzzer"
  fi
done
exit $failed

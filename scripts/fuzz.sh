#!/usr/bin/env bash
# Runs each cargo-fuzz target (fuzz/) for a bounded time: `scripts/fuzz.sh [SECONDS]` (default 20 each).
# Installs cargo-fuzz into $CACHE/tools when missing (it needs the nightly toolchain, installed with
# rustup on these machines). New inputs go to a scratch corpus; the checked-in seeds in fuzz/corpus are
# only read. A crash fails the run and leaves its input in fuzz/artifacts/<target>/.
# Prints, per target, the executions and the corpus size libFuzzer reports. The fuzz builds go to
# $CACHE/fuzz-target, so a fresh clone does not compile them all again.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE="${TABWIRE_CACHE:-$HOME/.cache/tabwire}"
SECONDS_EACH="${1:-20}"
TOOLS="$CACHE/tools"
export PATH="$TOOLS/bin:$PATH"

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzzing needs the nightly toolchain (rustup toolchain install nightly)" >&2
  exit 1
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "==> install cargo-fuzz into $TOOLS" >&2
  cargo install --quiet --root "$TOOLS" cargo-fuzz --locked
fi

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
for target in decode_frame parse_adapter interpolate; do
  mkdir -p "$scratch/$target"
  log="$scratch/$target.log"
  if ! cargo +nightly fuzz run --fuzz-dir fuzz --target-dir "$CACHE/fuzz-target" "$target" "$scratch/$target" "fuzz/corpus/$target" -- \
      -max_total_time="$SECONDS_EACH" -print_final_stats=1 >"$log" 2>&1; then
    tail -40 "$log" >&2
    echo "fuzz target $target FAILED (its input is in fuzz/artifacts/$target/)" >&2
    exit 1
  fi
  runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')"
  echo "fuzz $target: ${SECONDS_EACH}s, $runs executions, 0 crashes, corpus $(ls "$scratch/$target" | wc -l) new inputs"
done

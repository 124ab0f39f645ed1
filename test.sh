#!/usr/bin/env bash
# Tabwire's test command (the README's): build everything, install the test apps and the Python test
# environment, then run the Rust checks and the end-to-end tests. Run from anywhere; works in CI (CI=true,
# no stdin). The pytest summary is the last thing printed.
#
# On a fresh machine most of the time goes to compiling (2 cores) and to downloads from the registries:
# the test environment (npm and PyPI packages, scripts/test-env.sh) installs in the background while the
# build compiles, the end-to-end tests run two at a time, and each step says how long it took.
set -euo pipefail
cd "$(dirname "$0")"
CACHE="${TABWIRE_CACHE:-$HOME/.cache/tabwire}"
mkdir -p "$CACHE"

STARTED=$SECONDS
STEP_STARTED=$SECONDS
STEP_NAME=""
step() {
  [ -z "$STEP_NAME" ] || printf '==> %s took %d s\n' "$STEP_NAME" $((SECONDS - STEP_STARTED))
  STEP_NAME="$*"
  STEP_STARTED=$SECONDS
  printf '\n==> %s (at %d s)\n' "$*" $((SECONDS - STARTED))
}

# A fresh clone (CI's) keeps cargo's target directory in the cache, so that the next fresh clone on this
# machine compiles only its own crates, not every dependency again. A checkout that has a target
# directory (or sets CARGO_TARGET_DIR) keeps it.
if [ ! -e target ] && [ -z "${CARGO_TARGET_DIR:-}" ]; then
  mkdir -p "$CACHE/target"
  ln -s "$CACHE/target" target
  echo "==> target -> $CACHE/target (cargo's target directory, kept in the cache)"
fi

step "Debian packages (./build.sh deps)"
./build.sh deps
ENV_LOG="$(mktemp)"
trap 'rm -f "$ENV_LOG"' EXIT
# Mostly downloads: overlaps the build's compiling.
(export CACHE; . scripts/test-env.sh) >"$ENV_LOG" 2>&1 &
ENV_PID=$!

step "build (./build.sh)"
./build.sh
step "test environment (scripts/test-env.sh, started in the background)"
env_status=0
wait "$ENV_PID" || env_status=$?
cat "$ENV_LOG"
[ "$env_status" = 0 ] || { echo "scripts/test-env.sh failed (exit $env_status)" >&2; exit "$env_status"; }
. scripts/test-env.sh

step "cargo fmt --check"
cargo fmt --all -- --check
step "cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings
step "cargo test"
cargo test --workspace
step "cargo check of the server for macOS (cargo xtask check-targets; the Windows build below checks Windows)"
cargo xtask check-targets x86_64-apple-darwin

# The other release binaries (`cargo xtask dist`: macOS and Linux arm64 through zig) and the
# reproducibility check (`cargo xtask repro`) are a separate step, not run here: each platform's std
# and dependencies from source take 30+ min on a 2-core machine the first time (README: Install).
step "the Windows binary and the packages (cargo xtask dist win32-x64: std from source, MinGW-w64; cached in \$CACHE/target-dist)"
TABWIRE_DIST_KEEP_PATHS=1 cargo xtask dist win32-x64

step "fuzz (scripts/fuzz.sh: each cargo-fuzz target for ${TABWIRE_FUZZ_SECONDS:-12} s)"
scripts/fuzz.sh "${TABWIRE_FUZZ_SECONDS:-12}"

# Two workers: the tests mostly wait on browsers and servers, so two at a time take about half as
# long on two cores (each test has its own ports, profile and HOME). Those marked `alone` measure
# tabwire under a flood and run afterwards, one at a time. The Firefox tests (marker `firefox`,
# test_firefox.py, headless Firefox ESR from `./build.sh deps`) run in the first phase: their two
# idle minutes need no machine to themselves.
step "end-to-end tests (two at a time, pytest-xdist)"
"$VENV/bin/python" -m pytest tests/e2e -v -n 2 -m "not alone" --durations=15
step "end-to-end tests that measure a flood (one at a time)"
exec "$VENV/bin/python" -m pytest tests/e2e -v -m alone

#!/usr/bin/env bash
# Tabwire's test command (the README's): build everything, install the test apps and the Python test
# environment, then run the Rust checks and the end-to-end tests. Run from anywhere; works in CI (CI=true,
# no stdin). The pytest summary is the last thing printed.
set -euo pipefail
cd "$(dirname "$0")"
CACHE="${TABWIRE_CACHE:-$HOME/.cache/tabwire}"
mkdir -p "$CACHE"

step() { printf '\n==> %s\n' "$*"; }

step "build (./build.sh)"
./build.sh
step "test environment"
. scripts/test-env.sh

step "cargo fmt --check"
cargo fmt --all -- --check
step "cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings
step "cargo test"
cargo test --workspace
step "cargo check of the server for macOS and Windows (cargo xtask check-targets)"
cargo xtask check-targets

step "the Windows binary and the packages (cargo xtask dist win32-x64: std from source, MinGW-w64; cached in \$CACHE/target-dist)"
started=$SECONDS
cargo xtask dist win32-x64
echo "(took $((SECONDS - started)) s)"

step "fuzz (scripts/fuzz.sh: each cargo-fuzz target for ${TABWIRE_FUZZ_SECONDS:-20} s)"
scripts/fuzz.sh "${TABWIRE_FUZZ_SECONDS:-20}"

step "end-to-end tests"
exec "$VENV/bin/python" -m pytest tests/e2e -v

#!/usr/bin/env bash
# scripts/size-report.sh — what the extension's wasm modules are made of (a developer tool; no test
# runs it). Takes the wasm that ./build.sh (the Debian fallback) left in target/wasm-ia-small, redoes
# wasm-bindgen and wasm-opt -Oz the way `cargo xtask build` does (xtask/src/wasm.rs) but keeping
# function names, and prints the largest functions
# with twiggy. twiggy is not installed by the build (it takes minutes to compile); install it once:
#   cargo install twiggy --root ~/.cache/tabwire/tools-twiggy
# With --parts it prints each module's bytes by the part of the code that needs them instead
# (scripts/size_parts.py: our modules, std's modules, other crates whole).
# Usage: scripts/size-report.sh [worker|injector ...] [-n ROWS] [--parts]   (default: both, 25 rows)
set -euo pipefail
SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${TABWIRE_CACHE:-$HOME/.cache/tabwire}
WASM_TARGET=wasm32-unknown-unknown
WASM_STD_VARIANT=ia-small # xtask/src/toolchain.rs: DEBIAN_VARIANT
WASM_BINDGEN="$CACHE/tools/bin/wasm-bindgen"
WASM_OPT="$CACHE/npm/node_modules/.bin/wasm-opt"
die() { printf '[size-report] ERROR: %s\n' "$*" >&2; exit 1; }
ROOT=$(dirname "$SCRIPTS")

ROWS=25 CRATES=() PARTS=
while [ $# -gt 0 ]; do
    case "$1" in
        -n) ROWS=$2; shift 2 ;;
        --parts) PARTS=1; shift ;;
        worker | injector) CRATES+=("$1"); shift ;;
        *) die "size-report.sh: unknown argument $1 (worker, injector, -n ROWS, --parts)" ;;
    esac
done
[ ${#CRATES[@]} -gt 0 ] || CRATES=(worker injector)
TWIGGY=${TWIGGY:-$CACHE/tools-twiggy/bin/twiggy}
[ -x "$TWIGGY" ] || die "no twiggy at $TWIGGY: cargo install twiggy --root $CACHE/tools-twiggy"

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
for crate in "${CRATES[@]}"; do
    wasm="$ROOT/target/wasm-$WASM_STD_VARIANT/$WASM_TARGET/wasm-release/$crate.wasm"
    [ -f "$wasm" ] || die "no $wasm: run ./build.sh first"
    "$WASM_BINDGEN" --target web --no-typescript --keep-debug --out-dir "$OUT/$crate" "$wasm"
    "$WASM_OPT" -Oz -g "$OUT/$crate/${crate}_bg.wasm" -o "$OUT/$crate/named.wasm"
    shipped="$ROOT/extension/dist/$crate/${crate}_bg.wasm"
    printf '\n== %s: shipped %s bytes; with names kept %s bytes (the "function names" row is the difference)\n' \
        "$crate" "$(stat -c %s "$shipped" 2>/dev/null || echo '?')" "$(stat -c %s "$OUT/$crate/named.wasm")"
    if [ -n "$PARTS" ]; then
        "$TWIGGY" top -n 1000000 -f csv "$OUT/$crate/named.wasm" | python3 "$SCRIPTS/size_parts.py" "$ROWS"
    else
        "$TWIGGY" top -n "$ROWS" "$OUT/$crate/named.wasm"
    fi
done

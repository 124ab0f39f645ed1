#!/usr/bin/env bash
# build.sh — the one build command. Owns the build order:
#   1. scripts/install-deps.sh: apt (Debian Rust 1.96 + std sources, lld-22, chromium), npm binaryen, wasm-bindgen-cli
#   2. cargo build --release -p server            → target/release/tabwire (host toolchain)
#   3. scripts/wasm-crate.sh for extension/worker  → extension/dist/worker/
#      and extension/injector                      → extension/dist/injector/ + extension/dist/injector-js/ (wasm2js)
#      (wasm32 std built once, offline, from Debian's rust-web-src: scripts/wasm-toolchain.sh)
#   4. tabwire pair --extension-config extension/pairing.json
# Everything installed or built outside the repo lives in ${TABWIRE_CACHE:-$HOME/.cache/tabwire}.
# A second run with nothing changed takes seconds. Progress goes to stderr.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$ROOT"
# shellcheck source=scripts/common.sh
. scripts/common.sh

T0=$SECONDS
MISSING=()
HOST_CARGO=$(command -v cargo || echo /usr/bin/cargo)
HOST_TARGET=${CARGO_TARGET_DIR:-$ROOT/target}

# ---- 1. prerequisites ---------------------------------------------------------------------------------
log "checking prerequisites (cache: $CACHE)"
if [ -f Cargo.toml ] && [ ! -f Cargo.lock ]; then
    # wasm-bindgen-cli must match the wasm-bindgen version the lock file will pin: make the lock file first.
    if command -v "$HOST_CARGO" >/dev/null; then "$HOST_CARGO" generate-lockfile --quiet || true; fi
fi
scripts/install-deps.sh "$ROOT/Cargo.lock"

# ---- 2. server (host) -----------------------------------------------------------------------------------
if [ -f Cargo.toml ] && [ -f server/Cargo.toml ]; then
    log "cargo build --release -p server"
    "$HOST_CARGO" build --release -p server || die "cargo build --release -p server failed"
else
    warn "no server crate (server/Cargo.toml) yet: skipping the server build"
    MISSING+=(server)
fi

# ---- 3. wasm crates -------------------------------------------------------------------------------------
# wasm_crate NAME CRATE_DIR OUT_DIR [JS_OUT_DIR]: build one wasm-bindgen crate into OUT_DIR (--target web,
# wasm-opt -Oz) and, when JS_OUT_DIR is given, its wasm2js fallback. Skipped with a warning when the crate
# directory does not exist yet.
wasm_crate() {
    local name=$1 dir=$2 out=$3 js=${4:-}
    if [ ! -f "$dir/Cargo.toml" ]; then
        warn "no crate at $dir yet: skipping $name"
        MISSING+=("$name")
        return 0
    fi
    scripts/wasm-crate.sh --out-name "$name" ${js:+--js "$js"} "$dir" "$out"
}
wasm_crate worker   extension/worker   extension/dist/worker
wasm_crate injector extension/injector extension/dist/injector extension/dist/injector-js
scripts/bundle-code-adapters.sh adapters/code extension/dist/code-adapters.js

# ---- 4. pairing -----------------------------------------------------------------------------------------
TABWIRE="$HOST_TARGET/release/tabwire"
PAIR_HELP=""
[ ! -x "$TABWIRE" ] || PAIR_HELP=$("$TABWIRE" pair --help 2>&1 || true)
if [ ! -x "$TABWIRE" ]; then
    warn "no $TABWIRE: extension/pairing.json not written"
elif [[ "$PAIR_HELP" != *--extension-config* ]]; then
    warn "$TABWIRE has no 'pair' command yet: extension/pairing.json not written"
else
    rm -f extension/pairing.json
    "$TABWIRE" pair --extension-config extension/pairing.json || die "tabwire pair failed"
    [ -s extension/pairing.json ] || die "tabwire pair did not write extension/pairing.json"
    log "extension/pairing.json written"
fi

if [ ${#MISSING[@]} -gt 0 ]; then
    warn "build finished WITHOUT: ${MISSING[*]} (their crates do not exist yet)"
fi
log "done in $((SECONDS - T0)) s"

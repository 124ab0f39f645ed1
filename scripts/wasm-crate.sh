#!/usr/bin/env bash
# scripts/wasm-crate.sh — builds one wasm-bindgen crate for wasm32-unknown-unknown and post-processes it:
#   cargo (profile wasm-release, private Debian-built toolchain, target dir <workspace>/target/wasm-<std variant>)
#   → wasm-bindgen --target web → wasm-opt -Oz (npm binaryen)                       into OUT_DIR
# and with --js JS_DIR also the JavaScript (CSP) fallback, toolchain.md step 7:
#   cargo with -Ctarget-cpu=mvp (MVP std, target dir <workspace>/target/wasm-mvp-<std variant>)
#   → wasm-bindgen --target bundler → wasm-opt -Oz → wasm2js -Oz → memory.grow fix
#   → glue imports ./<name>_bg.wasm.js instead of ./<name>_bg.wasm                   into JS_DIR
# Post-processing is skipped when the outputs are newer than their inputs.
# Usage: scripts/wasm-crate.sh [--out-name N] [--js JS_DIR] CRATE_DIR OUT_DIR
#   (the package is the one of CRATE_DIR/Cargo.toml; --out-name defaults to its lib name)
set -euo pipefail
SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/common.sh
. "$SCRIPTS/common.sh"

OUT_NAME="" JS_DIR=""
while [ $# -gt 0 ]; do
    case "$1" in
        --out-name) OUT_NAME=$2; shift 2 ;;
        --js) JS_DIR=$2; shift 2 ;;
        -*) die "wasm-crate.sh: unknown option $1" ;;
        *) break ;;
    esac
done
[ $# -eq 2 ] || die "usage: wasm-crate.sh [--out-name N] [--js JS_DIR] CRATE_DIR OUT_DIR"
CRATE_DIR=$(cd "$1" && pwd) OUT_DIR=$2
MANIFEST="$CRATE_DIR/Cargo.toml"
[ -f "$MANIFEST" ] || die "no Cargo.toml in $CRATE_DIR"

for t in "$WASM_BINDGEN" "$WASM_OPT"; do [ -x "$t" ] || die "missing $t (run scripts/install-deps.sh)"; done
[ -z "$JS_DIR" ] || [ -x "$WASM2JS" ] || die "missing $WASM2JS (run scripts/install-deps.sh)"
command -v node >/dev/null || die "node is missing (apt-get install nodejs)"

# The lib name (file name of the .wasm) and the workspace root (where target/ lives).
PKG=$(awk '/^\[/{s=$0} s=="[package]" && /^name *=/{gsub(/[" ]/,"",$0); sub(/^name=/,"",$0); print; exit}' "$MANIFEST")
LIB=$(awk '/^\[/{s=$0} s=="[lib]" && /^name *=/{gsub(/[" ]/,"",$0); sub(/^name=/,"",$0); print; exit}' "$MANIFEST")
LIB=${LIB:-${PKG//-/_}}
[ -n "$LIB" ] || die "cannot read the package name from $MANIFEST"
OUT_NAME=${OUT_NAME:-$LIB}
WS_MANIFEST=$(/usr/bin/cargo locate-project --workspace --message-format plain --manifest-path "$MANIFEST") \
    || die "cargo locate-project failed for $MANIFEST"
WS=$(dirname "$WS_MANIFEST")

# Which toolchain builds the default (non-MVP) wasm: the active rustup toolchain when it already has the
# wasm32 target (e.g. after `rustup target add`), else the private one from scripts/wasm-toolchain.sh.
pick_toolchain() {
    local sysroot
    if [ -z "${TABWIRE_FORCE_PRIVATE_WASM_TOOLCHAIN:-}" ] && command -v rustc >/dev/null &&
        sysroot=$(cd "$WS" && rustc --print sysroot 2>/dev/null) &&
        [ -d "$sysroot/lib/rustlib/$WASM_TARGET/lib" ] && [ "$sysroot" != "$WASM_SYSROOT" ]; then
        W_CARGO=$(cd "$WS" && { rustup which cargo 2>/dev/null || command -v cargo; }) W_RUSTC="$sysroot/bin/rustc"
        W_FLAGS="" # a prebuilt std unwinds or aborts: immediate-abort needs our own std
    else
        "$SCRIPTS/wasm-toolchain.sh" default
        W_CARGO="$WASM_SYSROOT/bin/cargo" W_RUSTC="$WASM_SYSROOT/bin/rustc" W_FLAGS=$WASM_PANIC_RUSTFLAGS
    fi
}

# cargo_wasm TARGET_DIR CARGO RUSTC [extra rustflags, space-separated] — RUSTFLAGS from the environment
# are meant for host builds and are dropped here; per-target rustflags from .cargo/config.toml still
# apply (and are merged). RUSTC_BOOTSTRAP=1 lets our own toolchain take $WASM_PANIC_RUSTFLAGS.
cargo_wasm() {
    local tdir=$1 cargo=$2 rustc=$3 flags=${4:-}
    local cfg=() list="" f
    for f in $flags; do list+="${list:+, }\"$f\""; done
    [ -z "$list" ] || cfg=(--config "target.$WASM_TARGET.rustflags=[$list]")
    env -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS -u RUSTUP_TOOLCHAIN -u CARGO_BUILD_TARGET \
        RUSTC_BOOTSTRAP=1 RUSTC="$rustc" "$cargo" build --quiet ${cfg[@]+"${cfg[@]}"} --manifest-path "$MANIFEST" \
        --target "$WASM_TARGET" --profile wasm-release --target-dir "$tdir" >&2
}

# Inputs every post-processed output depends on besides the .wasm itself.
TOOL_INPUTS=("$WASM_BINDGEN" "$CACHE/npm/node_modules/binaryen/package.json" "$SCRIPTS/wasm-crate.sh"
    "$SCRIPTS/common.sh" "$SCRIPTS/wasm2js-fix.mjs" "$SCRIPTS/check-exports.mjs")

# Temporary output directories are removed however the script ends.
TMPS=()
trap 'rm -rf ${TMPS[@]+"${TMPS[@]}"}' EXIT

# ---- wasm build ------------------------------------------------------------------------------------
pick_toolchain
log "cargo build $PKG (wasm32, profile wasm-release)"
t0=$SECONDS
cargo_wasm "$WS/target/wasm-$WASM_STD_VARIANT" "$W_CARGO" "$W_RUSTC" "$W_FLAGS" || die "cargo build of $PKG for $WASM_TARGET failed"
WASM="$WS/target/wasm-$WASM_STD_VARIANT/$WASM_TARGET/wasm-release/$LIB.wasm"
[ -f "$WASM" ] || die "cargo did not produce $WASM (is $PKG a cdylib?)"

if newer_than "$OUT_DIR/${OUT_NAME}_bg.wasm" "$WASM" "${TOOL_INPUTS[@]}" && [ -f "$OUT_DIR/$OUT_NAME.js" ]; then
    log "$OUT_DIR up to date"
else
    tmp="$OUT_DIR.tmp.$$"; TMPS+=("$tmp")
    rm -rf "$tmp"; mkdir -p "$tmp"
    "$WASM_BINDGEN" --target web --no-typescript --out-dir "$tmp" --out-name "$OUT_NAME" "$WASM" \
        || die "wasm-bindgen --target web failed for $WASM"
    "$WASM_OPT" -Oz "$tmp/${OUT_NAME}_bg.wasm" -o "$tmp/${OUT_NAME}_bg.opt.wasm" \
        || die "wasm-opt -Oz failed for $PKG"
    mv "$tmp/${OUT_NAME}_bg.opt.wasm" "$tmp/${OUT_NAME}_bg.wasm"
    rm -rf "$OUT_DIR"; mkdir -p "$(dirname "$OUT_DIR")"; mv "$tmp" "$OUT_DIR"
    log "$OUT_DIR: ${OUT_NAME}_bg.wasm $(stat -c %s "$WASM") → $(stat -c %s "$OUT_DIR/${OUT_NAME}_bg.wasm") bytes ($((SECONDS - t0)) s)"
fi

[ -n "$JS_DIR" ] || exit 0

# ---- JS (wasm2js) build -----------------------------------------------------------------------------
"$SCRIPTS/wasm-toolchain.sh" mvp
log "cargo build $PKG (wasm32 MVP for wasm2js, profile wasm-release)"
t0=$SECONDS
cargo_wasm "$WS/target/wasm-mvp-$WASM_STD_VARIANT" "$WASM_SYSROOT_MVP/bin/cargo" "$WASM_SYSROOT_MVP/bin/rustc" \
    "-Ctarget-cpu=mvp $WASM_PANIC_RUSTFLAGS" \
    || die "cargo build of $PKG for $WASM_TARGET (MVP) failed"
MVP_WASM="$WS/target/wasm-mvp-$WASM_STD_VARIANT/$WASM_TARGET/wasm-release/$LIB.wasm"
[ -f "$MVP_WASM" ] || die "cargo did not produce $MVP_WASM"

if newer_than "$JS_DIR/${OUT_NAME}_bg.wasm.js" "$MVP_WASM" "${TOOL_INPUTS[@]}" "$OUT_DIR/$OUT_NAME.js" &&
    [ -f "$JS_DIR/$OUT_NAME.js" ]; then
    log "$JS_DIR up to date"
    exit 0
fi
tmp="$JS_DIR.tmp.$$"; TMPS+=("$tmp")
rm -rf "$tmp"; mkdir -p "$tmp"
"$WASM_BINDGEN" --target bundler --no-typescript --out-dir "$tmp" --out-name "$OUT_NAME" "$MVP_WASM" \
    || die "wasm-bindgen --target bundler failed for $MVP_WASM"
"$WASM_OPT" -Oz --mvp-features "$tmp/${OUT_NAME}_bg.wasm" -o "$tmp/${OUT_NAME}_bg.opt.wasm" \
    || die "wasm-opt -Oz (MVP) failed for $PKG"
"$WASM2JS" -Oz --mvp-features "$tmp/${OUT_NAME}_bg.opt.wasm" -o "$tmp/${OUT_NAME}_bg.wasm.js" \
    || die "wasm2js failed for $PKG"
rm -f "$tmp/${OUT_NAME}_bg.wasm" "$tmp/${OUT_NAME}_bg.opt.wasm"
node "$SCRIPTS/wasm2js-fix.mjs" "$tmp/${OUT_NAME}_bg.wasm.js" "$tmp/$OUT_NAME.js" "./${OUT_NAME}_bg.wasm" \
    || die "patching the wasm2js output of $PKG failed"
node "$SCRIPTS/check-exports.mjs" "$OUT_DIR/$OUT_NAME.js" "$tmp" "$OUT_NAME" \
    || die "the JS build of $PKG is not an ES module with the same exports as its wasm build"
rm -rf "$JS_DIR"; mkdir -p "$(dirname "$JS_DIR")"; mv "$tmp" "$JS_DIR"
log "$JS_DIR: ${OUT_NAME}_bg.wasm.js $(stat -c %s "$JS_DIR/${OUT_NAME}_bg.wasm.js") bytes ($((SECONDS - t0)) s)"

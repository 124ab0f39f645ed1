# scripts/common.sh — shared settings and helpers for build.sh and scripts/*.sh (sourced, not run).
# Owns: the cache location, pinned tool versions, tool paths, logging/die helpers.
# shellcheck shell=bash disable=SC2034  # the variables are used by the scripts that source this file

CACHE=${TABWIRE_CACHE:-$HOME/.cache/tabwire}
BINARYEN_VERSION=132                      # npm package "binaryen" (wasm-opt + wasm2js)
DEFAULT_WASM_BINDGEN_VERSION=0.2.130      # used when there is no Cargo.lock yet
WASM_TARGET=wasm32-unknown-unknown
HOST_TRIPLE=x86_64-unknown-linux-gnu
case "$(uname -m)" in aarch64) HOST_TRIPLE=aarch64-unknown-linux-gnu ;; esac

# Private toolchains built from Debian's rust-web-src (see scripts/wasm-toolchain.sh). Their std is
# built for size: with -Cpanic=immediate-abort (a panic is a bare trap: no message formatting, which in
# a wasm module without a panic hook printed nowhere anyway; the crates must then be built with it too:
# WASM_PANIC_RUSTFLAGS) and std's optimize_for_size feature. WASM_STD_VARIANT names that recipe in the
# sysroots' and the wasm target dirs' names: change it with the recipe, or cargo would reuse crates
# compiled against the previous std (it does not notice a std swapped under the same path).
WASM_STD_VARIANT=ia-small
WASM_SYSROOT="$CACHE/wasm-sysroot-$WASM_STD_VARIANT"         # std with the default wasm32 features (reference types, ...)
WASM_SYSROOT_MVP="$CACHE/wasm-sysroot-mvp-$WASM_STD_VARIANT" # std built with -Ctarget-cpu=mvp, for wasm2js
WASM_TOOLCHAIN_NAME=tabwire-wasm-$WASM_STD_VARIANT           # rustup toolchain names the two sysroots are linked as
WASM_TOOLCHAIN_NAME_MVP=tabwire-wasm-mvp-$WASM_STD_VARIANT
WASM_PANIC_RUSTFLAGS="-Zunstable-options -Cpanic=immediate-abort" # needs RUSTC_BOOTSTRAP=1

# Tools installed into the cache (never Debian's binaryen: it corrupts wasm-bindgen output).
WASM_BINDGEN="$CACHE/tools/bin/wasm-bindgen"
WASM_OPT="$CACHE/npm/node_modules/.bin/wasm-opt"
WASM2JS="$CACHE/npm/node_modules/.bin/wasm2js"

log()  { printf '[build] %s\n' "$*" >&2; }
warn() { printf '[build] WARNING: %s\n' "$*" >&2; }
die()  { printf '[build] ERROR: %s\n' "$*" >&2; exit 1; }

is_root() { [ "$(id -u)" = 0 ]; }

# The wasm-bindgen crate version pinned in a Cargo.lock (arg: lock file), else the default.
wasm_bindgen_version() {
    local lock=${1:-}
    local v=""
    if [ -n "$lock" ] && [ -f "$lock" ]; then
        v=$(awk '/^\[\[package\]\]/{n=""} /^name = /{n=$3} /^version = / && n=="\"wasm-bindgen\""{gsub(/"/,"",$3); print $3; exit}' "$lock")
    fi
    echo "${v:-$DEFAULT_WASM_BINDGEN_VERSION}"
}

# newer_than OUT IN... : true when OUT exists and is newer than every existing IN.
newer_than() {
    local out=$1; shift
    [ -e "$out" ] || return 1
    local f
    for f in "$@"; do
        [ -e "$f" ] || continue
        [ "$out" -nt "$f" ] || return 1
    done
    return 0
}

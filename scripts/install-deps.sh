#!/usr/bin/env bash
# scripts/install-deps.sh — installs the build prerequisites that are missing (idempotent, fast when all present):
#   apt: rustc-web cargo-web rust-web-src lld-22 (bookworm-security), chromium, nodejs/npm when npm is absent;
#   npm: binaryen@$BINARYEN_VERSION into $CACHE/npm;
#   cargo install: wasm-bindgen-cli at exactly the wasm-bindgen version of Cargo.lock, into $CACHE/tools.
# Only package registries are used (apt, npm, crates.io); nothing is downloaded any other way.
# Usage: scripts/install-deps.sh [path/to/Cargo.lock]
set -euo pipefail
# shellcheck source=scripts/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

LOCK=${1:-}

# --- apt -------------------------------------------------------------------------------------------
pkg_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

wait_for_apt() {
    local said=""
    while pgrep -x apt-get >/dev/null || pgrep -x apt >/dev/null || pgrep -x dpkg >/dev/null; do
        [ -n "$said" ] || { log "waiting for another apt/dpkg process to finish..."; said=1; }
        sleep 3
    done
}

APT_UPDATED=""
apt_install() { # apt_install [-t RELEASE] PKG...  (installs the missing ones only)
    local opts=() missing=() p
    if [ "${1:-}" = -t ]; then opts=(-t "$2"); shift 2; fi
    for p in "$@"; do pkg_installed "$p" || missing+=("$p"); done
    [ ${#missing[@]} -gt 0 ] || return 0
    if ! is_root; then
        warn "missing Debian packages: ${missing[*]}; run as root:"
        printf '    sudo apt-get update && sudo apt-get install -y %s\n' "${opts[*]:+${opts[*]} }${missing[*]}" >&2
        return 1
    fi
    wait_for_apt
    if [ -z "$APT_UPDATED" ]; then
        log "apt-get update"
        apt-get -o DPkg::Lock::Timeout=600 update -qq >&2 || die "apt-get update failed"
        APT_UPDATED=1
    fi
    log "apt-get install -y ${opts[*]:+${opts[*]} }${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq ${opts[@]+"${opts[@]}"} "${missing[@]}" >&2 \
        || die "apt-get install ${missing[*]} failed"
}

# Debian's Rust 1.96 with the standard library's sources (to build the wasm32 std offline) and rust-lld.
apt_install -t bookworm-security rustc-web cargo-web rust-web-src lld-22 \
    || die "the wasm build needs Debian's rustc-web cargo-web rust-web-src lld-22 (see the command above)"
# Chromium is needed by the tests and the demo, not by the build: warn only.
apt_install chromium || warn "chromium missing: the build goes on, the tests will not run"
# npm (for binaryen). nodejs from Debian brings node; npm is a separate package there.
if ! command -v npm >/dev/null; then
    apt_install nodejs npm || die "npm is needed to install binaryen (see the command above)"
fi

# --- npm: binaryen (wasm-opt, wasm2js) -------------------------------------------------------------
have_binaryen() {
    [ -x "$WASM_OPT" ] && [ -x "$WASM2JS" ] &&
        grep -q "\"version\": *\"$BINARYEN_VERSION\." "$CACHE/npm/node_modules/binaryen/package.json" 2>/dev/null
}
if ! have_binaryen; then
    log "npm install binaryen@$BINARYEN_VERSION into $CACHE/npm"
    mkdir -p "$CACHE/npm"
    npm install --prefix "$CACHE/npm" --no-audit --no-fund --loglevel=error "binaryen@$BINARYEN_VERSION" >&2 \
        || die "npm install binaryen@$BINARYEN_VERSION failed"
    have_binaryen || die "binaryen@$BINARYEN_VERSION installed but $WASM_OPT / $WASM2JS are missing"
fi

# --- cargo install: wasm-bindgen-cli ---------------------------------------------------------------
WBG_VERSION=$(wasm_bindgen_version "$LOCK")
have_wasm_bindgen() { [ -x "$WASM_BINDGEN" ] && [ "$("$WASM_BINDGEN" --version 2>/dev/null)" = "wasm-bindgen $WBG_VERSION" ]; }

if ! have_wasm_bindgen; then
    # Someone (another build.sh, a setup job) may already be installing it: wait instead of racing.
    said=""
    while pgrep -f "cargo install wasm-bindgen-cli" >/dev/null; do
        [ -n "$said" ] || { log "waiting for a running 'cargo install wasm-bindgen-cli' to finish..."; said=1; }
        sleep 5
    done
fi
if ! have_wasm_bindgen; then
    CARGO_BIN=$(command -v cargo || echo /usr/bin/cargo)
    [ -x "$CARGO_BIN" ] || die "no cargo found to install wasm-bindgen-cli"
    # No --locked: a locked dependency version of wasm-bindgen-cli is missing from the registry.
    log "cargo install wasm-bindgen-cli --version $WBG_VERSION (3-6 minutes, once)"
    "$CARGO_BIN" install wasm-bindgen-cli --version "$WBG_VERSION" --root "$CACHE/tools" >&2 \
        || die "cargo install wasm-bindgen-cli --version $WBG_VERSION failed"
    have_wasm_bindgen || die "$WASM_BINDGEN --version is not $WBG_VERSION after installing"
fi

#!/usr/bin/env bash
# build.sh — the one build command on Debian: installs the Debian packages the build needs when they
# are missing, then runs the portable build driver, `cargo xtask build` (xtask/: the wasm toolchain
# choice, wasm-bindgen-cli and binaryen, the extension, the server, pairing, the .zip and .mcpb).
# On macOS and Windows run `cargo xtask build` directly (README: Install). Apt packages:
#   rustc-web cargo-web rust-web-src lld-22 (bookworm-security): the wasm32 std built offline from
#     Debian's sources, for when the active Rust toolchain has no wasm32 target (rustup here cannot
#     download one);
#   nodejs npm (when npm is missing): the npm package binaryen (wasm-opt, wasm2js);
#   chromium: the tests and the demo (a warning only when it cannot be installed);
#   firefox-esr: the Firefox end-to-end tests (the same extension with Firefox's manifest).
# Everything installed or built outside the repo lives in ${TABWIRE_CACHE:-$HOME/.cache/tabwire}.
# A second run with nothing changed takes about a second. Progress goes to stderr.
# `./build.sh deps` installs the Debian packages only (test.sh runs it first, so that the test
# environment's downloads can overlap the build's compiling).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

log()  { printf '[build] %s\n' "$*" >&2; }
die()  { printf '[build] ERROR: %s\n' "$*" >&2; exit 1; }

pkg_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
APT_UPDATED=""
apt_install() { # apt_install [-t RELEASE] PKG...  (installs the missing ones only)
    local opts=() missing=() p
    if [ "${1:-}" = -t ]; then opts=(-t "$2"); shift 2; fi
    for p in "$@"; do pkg_installed "$p" || missing+=("$p"); done
    [ ${#missing[@]} -gt 0 ] || return 0
    if [ "$(id -u)" != 0 ]; then
        printf '[build] missing Debian packages: %s; run as root:\n    sudo apt-get update && sudo apt-get install -y %s\n' \
            "${missing[*]}" "${opts[*]:+${opts[*]} }${missing[*]}" >&2
        return 1
    fi
    if [ -z "$APT_UPDATED" ]; then
        log "apt-get update"
        apt-get -o DPkg::Lock::Timeout=600 update -qq >&2 || die "apt-get update failed"
        APT_UPDATED=1
    fi
    log "apt-get install -y ${opts[*]:+${opts[*]} }${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq ${opts[@]+"${opts[@]}"} "${missing[@]}" >&2 \
        || die "apt-get install ${missing[*]} failed"
}

if command -v dpkg-query >/dev/null; then
    apt_install -t bookworm-security rustc-web cargo-web rust-web-src lld-22 \
        || die "the wasm build's fallback needs Debian's rustc-web cargo-web rust-web-src lld-22 (see the command above)"
    command -v npm >/dev/null || apt_install nodejs npm || die "npm is needed to install binaryen (see the command above)"
    apt_install chromium || log "WARNING: chromium missing: the build goes on, the tests will not run"
    apt_install firefox-esr || log "WARNING: firefox-esr missing: the build goes on, the Firefox tests will not run"
fi

[ "${1:-}" != deps ] || exit 0
CARGO=$(command -v cargo || echo /usr/bin/cargo)
[ -x "$CARGO" ] || die "no cargo: install Rust (rustup) or apt-get install -t bookworm-security cargo-web"
exec "$CARGO" xtask build

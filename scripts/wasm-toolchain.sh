#!/usr/bin/env bash
# scripts/wasm-toolchain.sh — builds (once) and caches the wasm32 standard library from Debian's rust-web-src,
# offline, and wraps it as a private sysroot/toolchain (toolchain.md steps 2-3 and 7):
#   default: $CACHE/wasm-sysroot-<variant>     (default wasm32 features)   rustup link: tabwire-wasm-<variant>
#   mvp:     $CACHE/wasm-sysroot-mvp-<variant> (-Ctarget-cpu=mvp, for wasm2js) rustup link: tabwire-wasm-mvp-<variant>
# Both std builds use -Cembed-bitcode=yes (needed by `lto = true`), $WASM_PANIC_RUSTFLAGS (panics
# trap at once, without formatting a message) and std's optimize_for_size feature: the recipe that
# common.sh's WASM_STD_VARIANT names. Nothing is written outside $CACHE
# except the rustup toolchain links (when rustup exists). A later run finds the stamp and does nothing.
# Usage: scripts/wasm-toolchain.sh default|mvp
set -euo pipefail
# shellcheck source=scripts/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

KIND=${1:?usage: wasm-toolchain.sh default|mvp}
case "$KIND" in
    default) DIR=$WASM_SYSROOT;     NAME=$WASM_TOOLCHAIN_NAME;     EXTRA="" ;;
    mvp)     DIR=$WASM_SYSROOT_MVP; NAME=$WASM_TOOLCHAIN_NAME_MVP; EXTRA="-Ctarget-cpu=mvp" ;;
    *) die "wasm-toolchain.sh: unknown kind '$KIND' (default|mvp)" ;;
esac

SYS_RUSTC=/usr/bin/rustc SYS_CARGO=/usr/bin/cargo
SYS_RUSTLIB=/usr/lib/rustlib
{ [ -x "$SYS_RUSTC" ] && [ -x "$SYS_CARGO" ]; } || die "Debian's rustc/cargo missing: apt-get install -t bookworm-security rustc-web cargo-web"
[ -d "$SYS_RUSTLIB/src/rust/library/std" ] || die "Debian's std sources missing: apt-get install -t bookworm-security rust-web-src"
command -v rust-lld >/dev/null || command -v wasm-ld >/dev/null || die "no wasm linker (rust-lld): apt-get install -t bookworm-security lld-22"

STD_RUSTFLAGS="-Cembed-bitcode=yes $WASM_PANIC_RUSTFLAGS${EXTRA:+ $EXTRA}"
# optimize_for_size: std's smaller sorts, integer formatting and escapes (same results, a bit slower).
STD_FEATURES=optimize_for_size
STAMP_WANT="$("$SYS_RUSTC" -vV | tr '\n' ' ') | RUSTFLAGS=$STD_RUSTFLAGS | features=$STD_FEATURES | layout=1"

link_rustup() {
    command -v rustup >/dev/null || return 0
    local cur
    cur=$(rustup toolchain list -v 2>/dev/null | awk -v n="$NAME" '$1==n {print $NF}')
    [ "$cur" = "$DIR" ] && return 0
    [ -z "$cur" ] || rustup toolchain uninstall "$NAME" >/dev/null 2>&1 || true
    rustup toolchain link "$NAME" "$DIR" >&2 || warn "rustup toolchain link $NAME failed (the build does not need it)"
}

if [ -f "$DIR/.tabwire-stamp" ] && [ "$(cat "$DIR/.tabwire-stamp")" = "$STAMP_WANT" ]; then
    link_rustup
    exit 0
fi

log "building the $WASM_TARGET standard library ($KIND, RUSTFLAGS='$STD_RUSTFLAGS', features $STD_FEATURES) from Debian's rust-web-src (~1 min, once)"
WORK="$CACHE/wasm-std-build-$KIND"
rm -rf "$WORK"
mkdir -p "$WORK/src"
cat >"$WORK/Cargo.toml" <<'TOML'
[package]
name = "tabwire_std_build"
version = "0.0.0"
edition = "2021"
[lib]
path = "src/lib.rs"
[workspace]
TOML
: >"$WORK/src/lib.rs"
t0=$SECONDS
env -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS -u CARGO_BUILD_TARGET -u RUSTUP_TOOLCHAIN \
    RUSTC="$SYS_RUSTC" RUSTC_BOOTSTRAP=1 RUSTFLAGS="$STD_RUSTFLAGS" \
    "$SYS_CARGO" build --quiet --release --target "$WASM_TARGET" -Zbuild-std=std,panic_abort \
    -Zbuild-std-features="$STD_FEATURES" \
    --manifest-path "$WORK/Cargo.toml" --target-dir "$WORK/target" >&2 \
    || die "building the wasm32 std failed (log above); needs Debian's rust-web-src"
DEPS="$WORK/target/$WASM_TARGET/release/deps"
ls "$DEPS"/libstd-*.rlib >/dev/null 2>&1 || die "std build produced no libstd rlib in $DEPS"

# Assemble the sysroot next to its final place, then swap it in.
NEW="$DIR.new.$$"
rm -rf "$NEW"
mkdir -p "$NEW/bin" "$NEW/lib/rustlib/$WASM_TARGET/lib"
for tool in rustc rustdoc; do
    # A wrapper, not a symlink: rustc derives its sysroot from its own library's location.
    printf '#!/bin/sh\nexec /usr/bin/%s --sysroot "%s" "$@"\n' "$tool" "$DIR" >"$NEW/bin/$tool"
    chmod +x "$NEW/bin/$tool"
done
ln -s "$SYS_CARGO" "$NEW/bin/cargo"
ln -s "$SYS_RUSTLIB/$HOST_TRIPLE" "$NEW/lib/rustlib/$HOST_TRIPLE"
ln -s "$SYS_RUSTLIB/src" "$NEW/lib/rustlib/src"
ln -s "$SYS_RUSTLIB/etc" "$NEW/lib/rustlib/etc"
for f in "$DEPS"/*.rlib; do
    case "$(basename "$f")" in libtabwire_std_build-*) continue ;; esac
    cp "$f" "$NEW/lib/rustlib/$WASM_TARGET/lib/"
done
printf '%s' "$STAMP_WANT" >"$NEW/.tabwire-stamp"
rm -rf "$DIR"
mv "$NEW" "$DIR"
rm -rf "$WORK"
link_rustup
log "wasm32 std ($KIND) ready in $((SECONDS - t0)) s: $DIR"

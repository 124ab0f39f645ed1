"""The build's standard path: a Rust toolchain that has the wasm32 target builds the extension
directly (./build.sh on these machines takes the Debian fallback instead: rustup's stable here has
no wasm32 target and cannot download one). CI has both: test.sh's own build is the fallback, and
this test builds a clean copy of the checkout with such a toolchain and drives TodoMVC through the
result, on a page where wasm runs and on one whose CSP forbids it (the wasm2js build).

The toolchain is the private sysroot the fallback built from Debian's sources, linked into rustup
under its own name: to rustup and cargo it is a toolchain with the wasm32 target (a prebuilt std)
and rust-src, as `rustup target add wasm32-unknown-unknown` plus `rustup component add rust-src`
leave one. The driver must see that and use it: its prebuilt std for the wasm build, a std built
from its rust-src for the MVP build wasm2js needs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import CACHE, REPO
from harness.todomvc import stored_todos, wait_until_app_ready

pytestmark = pytest.mark.anyio

TOOLCHAIN = "tabwire-ci-standard"
SYSROOT = CACHE / "wasm-sysroot-ia-small"  # xtask/src/toolchain.rs: the Debian sysroot of the wasm build
BUILT = ["worker/worker_bg.wasm", "injector/injector_bg.wasm", "injector/injector_wasm.js", "injector-js/injector_bg.wasm.js",
         "code-adapters.js"]


def clean_copy(dest: Path) -> Path:
    """The checkout's tracked files (as in the working tree), nothing built. Copied with fresh
    modification times: the target dir is shared between runs (and checkouts), and cargo keeps an
    artifact newer than its sources, so sources keeping their old times could be built against
    another checkout's crates (a bridge without a module this one added)."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        source = REPO / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, dest / name)
    return dest


def forget_workspace_crates(target: Path) -> None:
    """Makes cargo build this checkout's own crates again in the shared target dir. Cargo names a
    workspace crate's build by its path inside the checkout, and judges it fresh by the files the
    last build read: another checkout's (another branch's copy on this machine), older than its
    build. The registry crates stay built."""
    members = ("bridge", "worker", "injector", "server", "xtask")
    for fingerprints in target.rglob(".fingerprint"):
        for member in members:
            for stale in fingerprints.glob(f"{member}-*"):
                shutil.rmtree(stale, ignore_errors=True)


@pytest.fixture
def standard_extension(tmp_path, pairing) -> Path:
    if not (SYSROOT / "lib" / "rustlib" / "wasm32-unknown-unknown" / "lib").is_dir():
        pytest.fail(f"{SYSROOT} is missing: run ./build.sh first (its Debian fallback builds it)", pytrace=False)
    subprocess.run(["rustup", "toolchain", "link", TOOLCHAIN, str(SYSROOT)], check=True, timeout=60)
    checkout = clean_copy(tmp_path / "checkout")
    target = CACHE / "target-standard-path"
    forget_workspace_crates(target)
    env = {
        **os.environ,
        "RUSTUP_TOOLCHAIN": TOOLCHAIN,
        "TABWIRE_CACHE": str(CACHE),
        # Kept between runs: the std built from rust-src and the crates' artifacts.
        "CARGO_TARGET_DIR": str(target),
    }
    # At the lowest CPU priority: this compile takes minutes on two cores, and the other test worker's
    # browser tests (whose waits have deadlines) must not starve behind it.
    done = subprocess.run(
        ["nice", "-n", "19", "cargo", "xtask", "extension"],
        cwd=checkout, env=env, capture_output=True, text=True, timeout=1500,
    )
    (tmp_path / "standard-build.log").write_text(done.stdout + done.stderr)
    assert done.returncode == 0, done.stderr[-4000:]
    plan = next(line for line in done.stderr.splitlines() if line.startswith("[build] wasm toolchain:"))
    assert plan == (
        "[build] wasm toolchain: wasm: toolchain wasm-sysroot-ia-small with its prebuilt std (immediate-abort); "
        "JS fallback: toolchain wasm-sysroot-ia-small with std built from its rust-src (immediate-abort, size-optimized)"
    ), plan
    dist = checkout / "extension" / "dist"
    for name in BUILT:
        ours, fallback = (dist / name).stat().st_size, (REPO / "extension" / "dist" / name).stat().st_size
        print(f"{name}: standard path {ours:,} bytes, Debian fallback {fallback:,} bytes")
    (checkout / "extension" / "pairing.json").write_text(json.dumps({"port": pairing.port, "secret": pairing.secret}))
    return checkout


@pytest.mark.timeout(1800)
async def test_a_toolchain_with_the_wasm32_target_builds_an_extension_that_works(
    standard_extension, tabwire, launch_chromium, todomvc_url
):
    browser = await launch_chromium(extension_dir=standard_extension)
    for variant, runtime in (("plain", "wasm"), ("csp-header", "js")):
        url = todomvc_url(variant)
        opened = await tabwire.browser_open(url)
        tab = opened.structured["tab_id"]
        listed = (await tabwire.call_ok("browser_tabs")).structured["tabs"]
        assert [t["runtime"] for t in listed if t["id"] == tab] == [runtime], listed
        await tabwire.call_ok("todomvc_add_todo", {"title": f"built on the standard path ({variant})", "tab_id": tab})
        page = await browser.cdp.wait_for_page(url)
        await wait_until_app_ready(browser.cdp, page)
        assert {"title": f"built on the standard path ({variant})", "completed": False} in await stored_todos(browser.cdp, page)

"""A call's latency in headless Firefox ESR beside headless Chromium, side by side in one run (prints numbers,
asserts nothing about speed; run: `~/.cache/tabwire/venv/bin/python scripts/bench_firefox.py`).

For each browser, rounds alternating: one `tabwire mcp` driven by the official Python MCP SDK client over
stdio, the browser with the extension (Chromium: the repo's copy; Firefox: what `tabwire extension install
--browser firefox` writes, installed through WebDriver BiDi), TodoMVC on 127.0.0.1; after a warm-up,
sequential `todomvc_list_todos` round trips through the whole path, and `browser_tabs` (client and server
only, no browser) as the client's own share.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
sys.path.insert(0, str(REPO / "scripts"))

from bench import BINARY, TODOMVC, free_port, paired_setup, quantiles, timed  # noqa: E402
from harness.chromium import Chromium  # noqa: E402
from harness.firefox import Firefox  # noqa: E402
from harness.mcp_client import open_tabwire_session  # noqa: E402
from harness.static_server import StaticServer  # noqa: E402

CALLS = int(os.environ.get("TABWIRE_BENCH_CALLS", "500"))
ROUNDS = int(os.environ.get("TABWIRE_BENCH_ROUNDS", "2"))


async def one(work: Path, browser_name: str, page: str, n: int) -> tuple[list[float], list[float]]:
    name = f"{browser_name}-{n}"
    port, ext, args = paired_setup(work, name)
    env = {"RUST_LOG": "warn", "XDG_CONFIG_HOME": str(work / f"{name}-config")}
    browser = None
    async with open_tabwire_session(BINARY, args, env=env, cwd=REPO, stderr_path=work / f"{name}.log") as s:
        try:
            if browser_name == "chromium":
                browser = Chromium(work / f"{name}-profile", work / f"{name}-browser.log", ext, page)
            else:
                ff_ext = work / f"{name}-firefox-extension"
                secret_file = args[args.index("--secret-file") + 1]
                subprocess.run([str(BINARY), "extension", "install", "--browser", "firefox", str(ff_ext),
                                "--port", str(port), "--secret-file", secret_file],
                               env={**os.environ, **env}, check=True, capture_output=True)
                browser = Firefox(work / f"{name}-profile", work / f"{name}-browser.log", free_port())
                await browser.start(ff_ext)
                await browser.bidi.open(page)
            await s.wait_for_tools("todomvc_list_todos", timeout=60)
            for _ in range(100):  # warm up both sides
                await timed(s, "todomvc_list_todos", {})
            base = [await timed(s, "browser_tabs", {}) for _ in range(CALLS)]
            calls = [await timed(s, "todomvc_list_todos", {}) for _ in range(CALLS)]
            return base, calls
        finally:
            if browser is not None:
                browser.stop()


async def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="tabwire-bench-firefox-"))
    site = StaticServer(TODOMVC, work / "site.log")
    page = site.url("plain", "examples/vanillajs/index.html")
    results: dict[str, tuple[list[float], list[float]]] = {"chromium": ([], []), "firefox": ([], [])}
    try:
        for n in range(ROUNDS):
            for browser_name in ("chromium", "firefox"):
                t0 = time.perf_counter()
                base, calls = await one(work, browser_name, page, n)
                results[browser_name][0].extend(base)
                results[browser_name][1].extend(calls)
                print(f"round {n} {browser_name:8} list_todos {quantiles(calls)}  ({time.perf_counter() - t0:.0f} s)")
        for browser_name, (base, calls) in results.items():
            print(f"{browser_name:8} todomvc_list_todos, whole path: {quantiles(calls)}")
            print(f"{browser_name:8} browser_tabs (client + server): {quantiles(base)}")
    finally:
        site.stop()


if __name__ == "__main__":
    anyio.run(main)

"""Full-path benchmark: prints numbers, asserts nothing about speed (run: scripts/bench.sh).

One `tabwire mcp` driven by the official Python MCP SDK client over stdio, headless Chromium with the
extension, TodoMVC on 127.0.0.1 in four tabs. Measures:
- start: Chromium launch → the page's tools visible to the client;
- baseline: `browser_tabs` round trips (client + server only, no browser), the client's own share;
- sequential: `todomvc_list_todos` round trips through the whole path (p50 / p90 / p99);
- throughput: calls/s with 16 in flight spread over 4 tabs;
- the server's RSS before and after.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))

from harness.chromium import Chromium  # noqa: E402
from harness.mcp_client import open_tabwire_session  # noqa: E402
from harness.static_server import StaticServer  # noqa: E402

CACHE = Path(os.environ.get("TABWIRE_CACHE") or Path.home() / ".cache" / "tabwire")
TODOMVC = CACHE / "apps" / "node_modules" / "todomvc"
BINARY = REPO / "target" / "release" / "tabwire"
SEQUENTIAL = 1000
CONCURRENT = 2000
IN_FLIGHT = 16
TABS = 4


def quantiles(samples: list[float]) -> str:
    s = sorted(samples)
    pick = lambda q: s[min(len(s) - 1, int(len(s) * q))]  # noqa: E731
    return f"p50 {statistics.median(s):.2f} ms  p90 {pick(0.9):.2f} ms  p99 {pick(0.99):.2f} ms"


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def tabwire_pid(port: int) -> int:
    """The tabwire process listening on `port` (the SDK does not expose its child's pid)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if cmdline and cmdline[0].endswith(b"tabwire") and str(port).encode() in cmdline:
            return int(pid)
    raise RuntimeError("tabwire process not found")


async def timed(session, name: str, args: dict) -> float:
    t0 = time.perf_counter()
    out = await session.call(name, args)
    elapsed = (time.perf_counter() - t0) * 1000
    if out.is_error:
        raise AssertionError(f"{name} failed: {out}")
    return elapsed


async def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="tabwire-bench-"))
    secret = os.urandom(32).hex()
    (work / "secret").write_text(secret)
    (work / "secret").chmod(0o600)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ext = work / "extension-root"
    ext.mkdir()
    (ext / "manifest.json").write_bytes((REPO / "manifest.json").read_bytes())
    shutil.copytree(REPO / "extension", ext / "extension", ignore=shutil.ignore_patterns("pairing.json"))
    (ext / "extension" / "pairing.json").write_text(json.dumps({"port": port, "secret": secret}))
    site = StaticServer(TODOMVC, work / "site.log")
    page = site.url("plain", "examples/vanillajs/index.html")
    args = ["mcp", "--port", str(port), "--secret-file", str(work / "secret"),
            "--adapter-match", "todomvc=http://127.0.0.1/*"]
    env = {"RUST_LOG": "warn", "XDG_CONFIG_HOME": str(work / "config")}
    browser = None
    try:
        async with open_tabwire_session(BINARY, args, env=env, cwd=REPO, stderr_path=work / "tabwire.log") as s:
            pid = tabwire_pid(port)
            idle = rss_kib(pid)
            t0 = time.perf_counter()
            browser = Chromium(work / "profile", work / "chromium.log", ext, page)
            await s.wait_for_tools("todomvc_list_todos", timeout=30)
            print(f"start:       tools visible {(time.perf_counter() - t0) * 1000:.0f} ms after Chromium was launched")
            tabs = [(await s.call_ok("browser_tabs")).structured["tabs"][0]["id"]]
            for _ in range(TABS - 1):
                opened = await s.call_ok("browser_open", {"url": page})
                tabs.append(opened.structured["tab_id"])
            for _ in range(100):  # warm up both sides
                await timed(s, "todomvc_list_todos", {})
            base = [await timed(s, "browser_tabs", {}) for _ in range(SEQUENTIAL)]
            print(f"baseline:    browser_tabs (client + server only)      {quantiles(base)}")
            seq = [await timed(s, "todomvc_list_todos", {"tab_id": tabs[0]}) for _ in range(SEQUENTIAL)]
            print(f"sequential:  todomvc_list_todos, whole path          {quantiles(seq)}")
            done = 0
            t0 = time.perf_counter()

            async def worker(n: int) -> None:
                nonlocal done
                for i in range(CONCURRENT // IN_FLIGHT):
                    await timed(s, "todomvc_list_todos", {"tab_id": tabs[(n + i) % TABS]})
                    done += 1

            async with anyio.create_task_group() as tg:
                for n in range(IN_FLIGHT):
                    tg.start_soon(worker, n)
            rate = done / (time.perf_counter() - t0)
            print(f"throughput:  {rate:.0f} calls/s with {IN_FLIGHT} in flight over {TABS} tabs ({done} calls)")
            print(f"server RSS:  idle {idle / 1024:.1f} MB, after the load {rss_kib(pid) / 1024:.1f} MB")
    finally:
        if browser is not None:
            browser.stop()
        site.stop()
    for name in ("worker/worker_bg.wasm", "injector/injector_bg.wasm", "injector-js/injector_bg.wasm.js"):
        path = REPO / "extension" / "dist" / name
        print(f"size:        {name} {path.stat().st_size / 1024:.0f} KB")


if __name__ == "__main__":
    anyio.run(main)

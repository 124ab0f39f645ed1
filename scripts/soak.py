"""Soak benchmark: long use as a heavy user's agent gives it, bounded in time; prints numbers, asserts
nothing (run: scripts/soak.sh [MINUTES], 15 by default; not part of ./test.sh).

One `tabwire mcp` driven by the official Python MCP SDK client over stdio, headless Chromium with the
extension, TodoMVC on 127.0.0.1. For MINUTES it loops: calls to one long-lived tab (list, add, toggle,
delete in turn), a fresh tab opened with `browser_open`, used and closed through DevTools every 50 calls,
and the service worker stopped through DevTools every 1/4 of the run. Once a minute it samples:
- tabwire's RSS and open file descriptors (/proc);
- the long-lived page's runtime: its wasm-bindgen externref table length and wasm memory (DevTools
  `Runtime.queryObjects` in the extension's isolated world, after a forced GC);
- the window's call latency (p50 / p99), calls and tabs so far.
At the end: the series, and each measure's least-squares slope per 1,000 calls and per 100 tabs, over the
samples after the first (warm-up). Figures go in RELIABILITY.md by hand, with the date and commit.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

from bench import BINARY, REPO, TODOMVC, log_times, paired_setup, rss_kib, tabwire_pid
from harness.cdp import Cdp, wasm_sizes
from harness.chromium import Chromium
from harness.mcp_client import open_tabwire_session
from harness.static_server import StaticServer
from harness.waiting import wait_for

SAMPLE_EVERY_S = 60
TAB_EVERY_CALLS = 50


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of ys over xs (0 with fewer than two distinct xs)."""
    if len(set(xs)) < 2:
        return 0.0
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


async def sample(cdp: Cdp, page, pid: int, calls: int, tabs: int, window: list[float], started: float) -> dict:
    runtime = await wasm_sizes(cdp, page, "Tabwire")
    ordered = sorted(window) or [0.0]
    return {
        "minute": (time.monotonic() - started) / 60,
        "calls": calls,
        "tabs": tabs,
        "rss_mb": rss_kib(pid) / 1024,
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
        "table": sum(runtime["tables"]),
        "wasm_kb": sum(runtime["memories"]) / 1024,
        "p50_ms": statistics.median(ordered),
        "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))],
    }


async def soak(minutes: float) -> None:
    work = Path(tempfile.mkdtemp(prefix="tabwire-soak-"))
    port, ext, args = paired_setup(work, "soak")
    site = StaticServer(TODOMVC, work / "site.log")
    home = site.url("plain", "examples/vanillajs/index.html")
    env = {"RUST_LOG": "info", "XDG_CONFIG_HOME": str(work / "config")}
    log = work / "tabwire.log"
    browser = Chromium(work / "profile", work / "chromium.log", ext, home)
    samples: list[dict] = []
    try:
        cdp = await browser.wait_ready()
        root = await cdp.browser_target()
        async with open_tabwire_session(BINARY, args, env=env, cwd=REPO, stderr_path=log) as s:
            await s.wait_for_tools("todomvc_list_todos", timeout=30)
            pid = tabwire_pid(port)
            page = await cdp.wait_for_page(home)
            home_tab = (await s.call_ok("browser_tabs")).structured["tabs"][0]["id"]
            started = time.monotonic()
            deadline = started + minutes * 60
            next_sample, next_restart = started, started + minutes * 15
            calls = tabs = 0
            window: list[float] = []

            async def call(name: str, arguments: dict) -> None:
                nonlocal calls
                t0 = time.perf_counter()
                out = await s.call(name, arguments)
                window.append((time.perf_counter() - t0) * 1000)
                calls += 1
                if out.is_error and not out.text.startswith(("NOT_CONNECTED", "NO_SUCH_TAB")):
                    raise AssertionError(f"{name} failed: {out}")

            while time.monotonic() < deadline:
                if time.monotonic() >= next_sample:
                    samples.append(await sample(cdp, page, pid, calls, tabs, window, started))
                    print(" ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}"
                                   for k, v in samples[-1].items()), flush=True)
                    window.clear()
                    next_sample += SAMPLE_EVERY_S
                if time.monotonic() >= next_restart:
                    hellos = len(log_times(log, "extension said hello"))
                    for w in [t for t in await cdp.targets() if t.type == "service_worker"]:
                        await cdp.send(root, "Target.closeTarget", {"targetId": w.id})
                    await wait_for(lambda: len(log_times(log, "extension said hello")) > hellos, timeout=30,
                                   what="the restarted worker's hello")
                    await wait_for(lambda: _lists_tab(s, home_tab), timeout=30, what="the tab's tools again")
                    next_restart += minutes * 15
                title = f"soak {calls}"
                await call("todomvc_add_todo", {"title": title, "tab_id": home_tab})
                await call("todomvc_toggle_todo", {"title": title, "tab_id": home_tab})
                await call("todomvc_list_todos", {"tab_id": home_tab})
                await call("todomvc_delete_todo", {"title": title, "tab_id": home_tab})
                if calls // TAB_EVERY_CALLS > tabs:
                    opened = await s.call_ok("browser_open", {"url": home})
                    await call("todomvc_list_todos", {"tab_id": opened.structured["tab_id"]})
                    extra = {t.id for t in await cdp.targets() if t.type == "page" and t.id != page.id}
                    for target_id in extra:
                        await cdp.send(root, "Target.closeTarget", {"targetId": target_id})
                    await wait_for(lambda: _pages_gone(cdp, extra), timeout=10, what="the closed tabs to go")
                    tabs += 1
            samples.append(await sample(cdp, page, pid, calls, tabs, window, started))
    finally:
        browser.stop()
        site.stop()
    report(samples)


async def _lists_tab(session, tab: int) -> bool:
    out = await session.call("browser_tabs", {})
    return not out.is_error and any(t["id"] == tab and t["tools"] for t in out.structured["tabs"])


async def _pages_gone(cdp: Cdp, ids: set[str]) -> bool:
    return not ({t.id for t in await cdp.targets()} & ids)


def report(samples: list[dict]) -> None:
    last = samples[-1]
    print(f"\nsoak: {last['minute']:.1f} min, {last['calls']} calls, {last['tabs']} tabs opened and closed")
    steady = samples[1:] if len(samples) > 2 else samples
    for key, unit in (("rss_mb", "MB"), ("fds", "fds"), ("table", "slots"), ("wasm_kb", "KB"), ("p50_ms", "ms")):
        series = " ".join(f"{x[key]:.1f}" for x in samples)
        per_kcall = slope([x["calls"] for x in steady], [x[key] for x in steady]) * 1000
        per_100_tabs = slope([x["tabs"] for x in steady], [x[key] for x in steady]) * 100
        print(f"{key:8} {series}\n{'':8} slope {per_kcall:+.3f} {unit} per 1,000 calls, {per_100_tabs:+.3f} {unit} per 100 tabs")


if __name__ == "__main__":
    anyio.run(soak, float(sys.argv[1]) if len(sys.argv) > 1 else 15.0)

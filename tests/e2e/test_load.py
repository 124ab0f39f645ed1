"""Load, end to end: 1,000 calls with 16 in flight across 4 real Chromium tabs, through the real MCP client.

Every result must come back to its own caller (each call carries its number and names its tab; the answer must
carry the same number and that tab's marker, read from the page), none may be lost, and the tabwire process's
resident memory must come back near its baseline afterwards. The figures are printed (pytest -s shows them);
the test asserts no timing, only a generous memory bound.
"""

from __future__ import annotations

import time

import anyio
import pytest

from harness.mcp_client import TabwireSession
from harness.processes import pid_listening_on, rss_kib
from harness.waiting import wait_for
from test_faults import fault_pages, open_tab, page_url, tabwire_command  # noqa: F401 - shared fixtures

pytestmark = pytest.mark.anyio

CALLS = 1000
IN_FLIGHT = 16
TABS = 4
# Allocator caches and rmcp's buffers may keep a little; a leak of a few bytes per call would not fit.
RSS_SLACK_KIB = 4 * 1024


async def run_calls(tabwire: TabwireSession, tabs: dict[int, str], first: int, count: int) -> list[str]:
    """`count` calls numbered from `first`, IN_FLIGHT at a time; returns the problems seen."""
    problems: list[str] = []
    ids = list(tabs)
    numbers = iter(range(first, first + count))

    async def worker() -> None:
        for n in numbers:
            tab = ids[n % len(ids)]
            out = await tabwire.call("faults_echo", {"n": n, "tab_id": tab})
            if out.is_error or out.structured != {"n": n, "marker": tabs[tab]}:
                problems.append(f"call {n} to tab {tab} ({tabs[tab]}): {out}")

    async with anyio.create_task_group() as tg:
        for _ in range(IN_FLIGHT):
            tg.start_soon(worker)
    return problems


async def test_thousand_calls_sixteen_in_flight_four_tabs(
    tabwire, launch_chromium, extension_dir, fault_pages, pairing  # noqa: F811
):
    await launch_chromium(extension_dir=extension_dir)
    tabs: dict[int, str] = {}
    for i in range(TABS):
        name = f"load{i}"
        tabs[await open_tab(tabwire, page_url(fault_pages, name))] = name
    pid = await wait_for(lambda: pid_listening_on(pairing.port), timeout=5, what="tabwire's pid")

    # Warm up (first-use allocations, caches), then take the baseline.
    assert await run_calls(tabwire, tabs, 0, 200) == []
    baseline = rss_kib(pid)

    started = time.monotonic()
    problems = await run_calls(tabwire, tabs, 1000, CALLS)
    elapsed = time.monotonic() - started
    peak = rss_kib(pid)
    assert problems == [], f"{len(problems)} of {CALLS} calls went wrong, e.g. {problems[:5]}"

    settled = await wait_for(
        lambda: (r := rss_kib(pid)) <= baseline + RSS_SLACK_KIB and r,
        timeout=10,
        what=f"tabwire's RSS to return within {RSS_SLACK_KIB} KiB of its baseline {baseline} KiB",
    )
    print(
        f"\nload: {CALLS} calls, {IN_FLIGHT} in flight, {TABS} tabs: {elapsed:.2f}s = {CALLS / elapsed:.0f} calls/s;"
        f" tabwire RSS baseline {baseline} KiB, after load {peak} KiB, settled {settled} KiB"
    )

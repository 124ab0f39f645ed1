"""Trusted input against synthetic input, side by side in one run (numbers only; run: scripts/bench.sh --trusted).

One `tabwire mcp` and headless Chromium with the extension, the trusted-input fixture (tests/fixtures/trusted,
whose button counts trusted clicks only) served on 127.0.0.1, no adapter: page_act clicks the button, in turns
of 10 alternating between synthetic input (no grant) and trusted input (`tabwire allow --trusted-input`, the
grants file rewritten between turns), so both see the same machine load. Prints act p50/p99 of each, what the
first trusted act costs (attaching Chrome's debugger), and how many clicks the page took from each.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
sys.path.insert(0, str(REPO / "scripts"))

from bench import BINARY, extension_connected, paired_session, spread, tabwire_env  # noqa: E402
from harness.static_server import StaticServer  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures"
TURNS = 8
PER_TURN = 10


async def main() -> None:
    if not BINARY.exists():
        sys.exit(f"{BINARY} is missing: run scripts/bench.sh --trusted (it builds first)")
    work = Path(tempfile.mkdtemp(prefix="tabwire-bench-trusted-"))
    site = StaticServer(FIXTURES, work / "site.log")
    env = tabwire_env(work, HOME=str(work))

    def grant(on: bool) -> None:
        verb = "allow" if on else "revoke"
        cli = [str(BINARY), verb, "--trusted-input", site.origin]
        subprocess.run(cli, env={**env, "PATH": "/usr/bin:/bin"}, check=True, capture_output=True, timeout=30)

    url = site.url("plain", "trusted/index.html?free")
    times: dict[bool, list[float]] = {False: [], True: []}
    try:
        async with paired_session(work, env=env) as (s, browser):
            await extension_connected(s)
            tab = (await s.call_ok("browser_open", {"url": url})).structured["tab_id"]
            snap = (await s.call_ok("page_snapshot", {"tab_id": tab})).text
            button = re.search(r'button (e\d+) "Press me"', snap).group(1)
            act = {"tab_id": tab, "ref": button, "action": "click"}
            for _ in range(10):  # warm up (synthetic)
                await s.call_ok("page_act", act)
            grant(True)
            t0 = time.perf_counter()
            await s.call_ok("page_act", act)
            first_trusted = (time.perf_counter() - t0) * 1000
            for turn in range(TURNS):
                trusted = turn % 2 == 0
                grant(trusted)
                for _ in range(PER_TURN):
                    t0 = time.perf_counter()
                    await s.call_ok("page_act", act)
                    times[trusted].append((time.perf_counter() - t0) * 1000)
            target = await browser.cdp.wait_for_page(url)
            taken = await browser.cdp.evaluate(target, "fixture.presses().length")
    finally:
        site.stop()
    print(f"page_act click on the trusted-input fixture ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})")
    print(f"synthetic:            {spread(times[False])}")
    print(f"trusted (debugger):   {spread(times[True])}")
    print(f"first trusted act:    {first_trusted:.1f} ms (attaches Chrome's debugger to the tab)")
    print(f"clicks the page took: {taken} of {1 + len(times[True])} trusted, 0 of {10 + len(times[False])} synthetic expected")


if __name__ == "__main__":
    anyio.run(main)

"""What the worker's look at a tab's top document costs each checked answer (issue 26's check after
the fact, issue 32's measurement; numbers only, never pass/fail: `scripts/bench.sh --get-frame`).

Every page tool's answer waits, in the service worker, for one `chrome.webNavigation.getFrame` of the
tab's top frame (`web/glue/tab_calls.rs`'s `look_at_top_document`) before it is passed on. This
measures that round trip where it runs, in the worker (DevTools `Runtime.evaluate` in the service
worker's target, `performance.now()` around each await), beside `chrome.tabs.get` (the other
browser round trip on a call's path) and `chrome.runtime.getPlatformInfo` (an extension API call that
asks the browser for nothing about tabs), and, in the same rounds, whole calls from the MCP client:
`page_read` (a checked answer) and `browser_tabs` (no page: client, server, worker, `tabs.query`). Rounds alternate the measures, so a
loaded machine's drift falls on all of them alike.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import anyio

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
sys.path.insert(0, str(REPO / "scripts"))

from bench import TODOMVC, extension_connected, paired_session, spread, timed  # noqa: E402
from harness.static_server import StaticServer  # noqa: E402

ROUNDS = int(os.environ.get("TABWIRE_BENCH_ROUNDS", "4"))
PER_ROUND = int(os.environ.get("TABWIRE_BENCH_CALLS", "100"))

IN_WORKER = """(async () => {
  const tab = %d, n = %d, out = {getFrame: [], tabsGet: [], platformInfo: []};
  const time = async (key, call) => { const t = performance.now(); await call(); out[key].push(performance.now() - t); };
  for (let i = 0; i < n; i++) {
    await time("getFrame", () => chrome.webNavigation.getFrame({tabId: tab, frameId: 0}));
    await time("tabsGet", () => chrome.tabs.get(tab));
    await time("platformInfo", () => chrome.runtime.getPlatformInfo());
  }
  return out;
})()"""


async def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="tabwire-bench-get-frame-"))
    site = StaticServer(TODOMVC, work / "site.log")
    url = site.url("plain", "examples/vanillajs/index.html")
    samples: dict[str, list[float]] = {}
    try:
        async with paired_session(work) as (s, browser):
            cdp = browser.cdp
            await extension_connected(s)
            tab = (await s.call_ok("browser_open", {"url": url})).structured["tab_id"]
            worker = next(t for t in await cdp.targets() if t.type == "service_worker" and t.url.endswith("worker.js"))
            for _ in range(20):  # warm every path measured
                await s.call_ok("page_read", {"tab_id": tab})
            calls = {
                "MCP page_read (a checked answer)": ("page_read", {"tab_id": tab}),
                "MCP browser_tabs (no page)": ("browser_tabs", {}),
            }
            for _ in range(ROUNDS):
                got = await cdp.evaluate(worker, IN_WORKER % (tab, PER_ROUND), await_promise=True)
                for key, ms in got.items():
                    samples.setdefault(f"worker {key}", []).extend(ms)
                for label, (name, arguments) in calls.items():
                    for _ in range(PER_ROUND):
                        samples.setdefault(label, []).append(await timed(s, name, arguments))
    finally:
        site.stop()
    print(f"the worker's browser round trips and whole calls ({time.strftime('%Y-%m-%d %H:%M')}, "
          f"load {os.getloadavg()[0]:.2f}, {ROUNDS} rounds of {PER_ROUND})")
    for label, ms in samples.items():
        print(f"  {label:40} {spread(ms)}")


if __name__ == "__main__":
    anyio.run(main)

"""End to end, long use: thousands of calls to one tab leave the page's runtime and the service worker
no bigger than a few hundred did. wasm-bindgen keeps every JS value Rust holds in an externref table (a
`WebAssembly.Table`) that grows, and never shrinks, once all its slots are taken; a slot lost per call
(a JS exception caught through a `catch` binding lost one, in every call of an adapter without code
handlers) makes it grow without bound. Its length and the wasm memory, in the page's isolated world and
in the worker, are read through DevTools (`Runtime.queryObjects`) after a forced garbage collection.
"""

from __future__ import annotations

import pytest

from harness.cdp import wasm_sizes
from harness.todomvc import TODO_TOOLS

pytestmark = pytest.mark.anyio

WARM_UP_CALLS = 200
CALLS = 3000


async def test_thousands_of_calls_leave_the_page_runtime_bounded(tabwire, launch_chromium, extension_dir, todomvc_url):
    url = todomvc_url("plain")
    browser = await launch_chromium(extension_dir=extension_dir, url=url)
    await tabwire.wait_for_tools(*TODO_TOOLS)
    page = await browser.cdp.wait_for_page(url)
    await tabwire.call_ok("todomvc_add_todo", {"title": "Buy milk"})

    async def calls(n: int) -> None:
        # Reading (wait, extract) and acting (within, read, click, a wait for the re-render) in turn.
        for i in range(n // 2):
            await tabwire.call_ok("todomvc_list_todos")
            out = await tabwire.call_ok("todomvc_toggle_todo", {"title": "Buy milk"})
            assert out.structured["completed"] == (i % 2 == 0), out

    async def sizes() -> dict[str, dict[str, list[int]]]:
        workers = [t for t in await browser.cdp.targets() if t.type == "service_worker" and t.ws_url]
        assert len(workers) == 1, workers
        return {
            "page runtime": await wasm_sizes(browser.cdp, page, "Tabwire"),
            "service worker": await wasm_sizes(browser.cdp, workers[0], None),
        }

    await calls(WARM_UP_CALLS)
    before = await sizes()
    await calls(CALLS)
    after = await sizes()

    for where in before:
        was, now = before[where], after[where]
        assert len(was["tables"]) == len(now["tables"]) >= 1, f"{where}: {was} → {now}"
        grown = sum(now["tables"]) - sum(was["tables"])
        # One slot lost per call would add about CALLS; the table grows in steps of at least 128.
        assert grown <= 256, f"the {where}'s externref table grew by {grown} slots in {CALLS} calls: {was} → {now}"
        memory_grown = sum(now["memories"]) - sum(was["memories"])
        assert memory_grown <= 64 * 1024, f"the {where}'s wasm memory grew by {memory_grown} bytes: {was} → {now}"

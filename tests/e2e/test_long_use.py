"""End to end, long use: thousands of calls to one tab leave the page's runtime no bigger than a few
hundred did. wasm-bindgen keeps every JS value Rust holds in an externref table (a `WebAssembly.Table` in
the extension's isolated world) that grows, and never shrinks, once all its slots are taken; a slot lost
per call (a JS exception caught through a `catch` binding lost one, in every call of an adapter without
code handlers) makes it grow without bound. Its length and the wasm memory are read through DevTools
(`Runtime.queryObjects`) after a forced garbage collection.
"""

from __future__ import annotations

import pytest

from harness.cdp import isolated_world_wasm_sizes
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

    await calls(WARM_UP_CALLS)
    before = await isolated_world_wasm_sizes(browser.cdp, page, "Tabwire")
    await calls(CALLS)
    after = await isolated_world_wasm_sizes(browser.cdp, page, "Tabwire")

    assert len(before["tables"]) == len(after["tables"]) >= 1, f"{before} → {after}"
    grown = sum(after["tables"]) - sum(before["tables"])
    # One slot lost per call would add about CALLS; the table grows in steps of at least 128.
    assert grown <= 256, f"the runtime's externref table grew by {grown} slots in {CALLS} calls: {before} → {after}"
    memory_grown = sum(after["memories"]) - sum(before["memories"])
    assert memory_grown <= 64 * 1024, f"the runtime's wasm memory grew by {memory_grown} bytes: {before} → {after}"

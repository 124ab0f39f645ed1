"""WebMCP capture: a page that registers its own tools with `document.modelContext.registerTool` (or the older
`navigator.modelContext`) gets them exposed as `webmcp_<sanitized name>` with no adapter at all. The API is
provided by the extension (the headless browser has none) before page scripts run; names are sanitized, a page
tool can never shadow a meta-tool, failures and hangs come back as clear errors, and unregistering removes the
tool. The oracle is the page's own DOM, read through DevTools.
"""

from __future__ import annotations

import pytest
from mcp.shared.exceptions import MCPError

from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

PAGE = "webmcp/index.html"
PAGE_TOOLS = ("webmcp_add_note", "webmcp_browser_tabs", "webmcp_explode", "webmcp_hang", "webmcp_count_notes")


@pytest.fixture
def tabwire_command(tabwire_command):
    return tabwire_command.serving_page_tools_only(call_timeout_ms=2000)  # 2 s: the hanging tool


async def test_page_registered_tools_are_captured_and_callable(tabwire, launch_chromium, extension_dir, fixture_server):
    url = fixture_server.url("plain", PAGE)
    browser = await launch_chromium(extension_dir=extension_dir)
    out = await tabwire.browser_open(url)
    assert not out.is_error, out
    # No adapter matches the page, yet browser_open waited for the tools it registered while loading.
    assert set(PAGE_TOOLS) <= set(out.structured["tools"]), out
    await tabwire.wait_for_tools(*PAGE_TOOLS)
    page = await browser.cdp.wait_for_page(url)
    tools = await tabwire.tools()
    assert tools["webmcp_add_note"].description == "Add a note to the page."
    assert tools["webmcp_add_note"].input_schema["required"] == ["text"]
    assert tools["webmcp_count_notes"].annotations.read_only_hint is True

    out = await tabwire.call_ok("webmcp_add_note", {"text": "buy milk"})
    assert out.structured["count"] == 1, out
    assert await browser.cdp.evaluate(page, "[...document.querySelectorAll('#notes li')].map(li => li.textContent)") == [
        "buy milk"
    ]
    assert (await tabwire.call_ok("webmcp_count_notes")).structured == {"count": 1}

    # The meta-tool is still ours; the page's look-alike is a separate, prefixed tool.
    meta = await tabwire.call_ok("browser_tabs")
    assert any(url in str(tab.get("url")) for tab in meta.structured["tabs"]), meta
    assert (await tabwire.call_ok("webmcp_browser_tabs")).structured == {"shadowed": False}

    out = await tabwire.call("webmcp_explode")
    assert out.is_error and "ADAPTER_ERROR" in out.text and "the page says no" in out.text, out
    out = await tabwire.call("webmcp_hang")
    assert out.is_error and "TIMEOUT" in out.text, out
    # The page's own schema is enforced before the page sees the call.
    with pytest.raises(MCPError, match="text"):
        await tabwire.call("webmcp_add_note", {})
    assert await browser.cdp.evaluate(page, "document.querySelectorAll('#notes li').length") == 1

    # Unregistering removes the tool.
    await browser.cdp.evaluate(page, "document.modelContext.unregisterTool('explode'); 1")

    async def gone() -> bool:
        names = await tabwire.tool_names()
        return "webmcp_explode" not in names and "webmcp_add_note" in names

    await wait_for(gone, timeout=10, what="webmcp_explode to leave tools/list")


async def test_a_tool_registered_later_loads_the_runtime_on_demand(
    tabwire, launch_chromium, extension_dir, fixture_server
):
    """A page with no adapter and no tools at load: the API is there before page scripts; the runtime loads
    only when the page registers a tool, and the tool then reaches the client."""
    url = fixture_server.url("plain", "live/index.html")
    browser = await launch_chromium(extension_dir=extension_dir)
    out = await tabwire.browser_open(url)
    assert not out.is_error, out
    # The page loaded and registered nothing: browser_open says so instead of waiting for tools.
    assert out.structured["tools"] == [] and "registered no tools" in out.structured["note"], out
    page = await browser.cdp.wait_for_page(url)
    await wait_for(
        lambda: browser.cdp.evaluate(page, "document.readyState === 'complete'"), timeout=10, what="the page to load"
    )
    assert await browser.cdp.evaluate(page, "typeof navigator.modelContext.registerTool") == "function"
    await browser.cdp.evaluate(
        page,
        """document.modelContext.registerTool({name: 'heading', description: 'The heading.',
             execute: () => document.getElementById('heading').textContent}); 1""",
    )
    await tabwire.wait_for_tools("webmcp_heading")
    assert (await tabwire.call_ok("webmcp_heading")).structured == {"result": "Live page"}

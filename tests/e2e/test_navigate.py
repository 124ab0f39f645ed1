"""End to end: a tool whose `navigate` step loads another page carries on there. The injector answers the
first part of the call with a continuation, the service worker holds it across the page load and sends the
remaining steps (with the variables read so far) to the new page's runtime; the MCP client sees one call.
The argument in the URL is percent-encoded: the new page must show it exactly.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.adapter_docs import adapter, arguments, tool

pytestmark = pytest.mark.anyio

ADAPTER = adapter("pages", ["http://127.0.0.1/plain/navigate/*"], [
    tool("search", "Go from the start page to the results for q.", [
        {"step": "read", "selector": "h1", "into": "start"},
        {"step": "navigate", "url": "results.html?q={{q}}"},
        {"step": "wait", "selector": "#q", "until": "attached", "timeout_ms": 5000},
        {"step": "read", "selector": "#q", "into": "shown"},
        {"step": "read", "selector": "h1", "into": "landed"},
        {"step": "return", "value": {"start": "{{start}}", "landed": "{{landed}}", "shown": "{{shown}}"}},
    ], input_schema=arguments("q")),
    tool("go_nowhere", "Navigate to a page no adapter serves.", [
        {"step": "navigate", "url": "/elsewhere/"}, {"step": "read", "selector": "h1", "into": "x"},
    ]),
])


@pytest.fixture
def tabwire_command(tabwire_command, fixture_server, tmp_path: Path):
    adapters = tmp_path / "adapters"
    adapters.mkdir()
    (adapters / "pages.json").write_text(json.dumps(ADAPTER))
    served = tabwire_command.serving("pages", f"{fixture_server.origin}/plain/navigate").with_adapters(adapters)
    # Short, so the call that cannot continue fails soon (with TIMEOUT) instead of after 30 s.
    return served.with_flags(call_timeout_ms=4000)


async def test_a_call_continues_after_navigating(tabwire, fixture_server, launch_chromium, extension_dir):
    url = fixture_server.url("plain", "navigate/index.html")
    browser = await launch_chromium(extension_dir=extension_dir, url=url)
    await tabwire.wait_for_tools("pages_search")

    query = 'tea & "cakes"/?#'
    out = await tabwire.call_ok("pages_search", {"q": query})
    assert out.structured == {"start": "Start page", "landed": "Results page", "shown": query}, out
    page = await browser.cdp.wait_for_page(fixture_server.url("plain", "navigate/results.html?q="))
    assert await browser.cdp.evaluate(page, "new URLSearchParams(location.search).get('q')") == query

    # The tab's tools work again on the new page, and a second trip works too.
    out = await tabwire.call_ok("pages_search", {"q": "again"})
    assert out.structured["shown"] == "again", out

    # Navigating somewhere no adapter serves cannot continue: the call fails (NAVIGATED, or TIMEOUT when
    # no runtime ever starts there), it does not hang past the call's deadline.
    out = await tabwire.call("pages_go_nowhere")
    assert out.is_error and out.text.split(":")[0] in {"NAVIGATED", "TIMEOUT"}, out

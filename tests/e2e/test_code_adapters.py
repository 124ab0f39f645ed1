"""Code adapters: JS files bundled into the extension at build time (`cargo xtask bundle-code-adapters`, here run
on tests/fixtures/code-adapters into this test's extension copy) register tools through the same bridge. Their
declarations are validated by the Rust worker (an invalid one is skipped, a file that throws does not stop the
others), the Rust runtime routes calls to the handlers, enforces the call timeout and turns a throw into
ADAPTER_ERROR. Driven by the real server and MCP client; the oracle is the page's DOM through DevTools.
"""

from __future__ import annotations

import subprocess

import pytest

from conftest import FIXTURES, REPO
from harness.webmcp_names import page_tool_name

pytestmark = pytest.mark.anyio

PAGE = "live/index.html"


@pytest.fixture
def extension_dir(extension_dir):
    bundle = extension_dir / "extension" / "dist" / "code-adapters.js"
    subprocess.run(
        ["cargo", "xtask", "bundle-code-adapters", str(FIXTURES / "code-adapters"), str(bundle)],
        check=True,
        cwd=REPO,
        timeout=120,
    )
    return extension_dir


@pytest.fixture
def tabwire_command(tabwire_command):
    return tabwire_command.serving_page_tools_only(call_timeout_ms=2000)  # 2 s: the hanging tool


async def test_code_adapter_tools_are_routed_to_their_handlers(tabwire, launch_chromium, extension_dir, fixture_server):
    url = fixture_server.url("plain", PAGE)
    browser = await launch_chromium(extension_dir=extension_dir)
    out = await tabwire.browser_open(url)
    # The server knows the code adapter's match patterns (from the extension's hello), so browser_open
    # waited for its tools.
    code_tools = {"listcode_stats", "listcode_sum", "listcode_explode", "listcode_hang"}
    assert not out.is_error and code_tools <= set(out.structured["tools"]), out
    names = await tabwire.wait_for_tools(*code_tools, timeout=30)
    assert not any(n.startswith("broken") for n in names), names
    page = await browser.cdp.wait_for_page(url)

    await browser.cdp.evaluate(page, "document.getElementById('items').append(Object.assign(document.createElement('li'), {textContent: 'three'})); 1")
    items = await browser.cdp.evaluate(page, "[...document.querySelectorAll('#items > li')].map(li => li.textContent)")
    out = await tabwire.call_ok("listcode_stats")
    assert out.structured == {"count": len(items), "letters": sum(map(len, items)), "items": items}, out
    assert (await tabwire.call_ok("listcode_sum", {"a": 2, "b": 40})).structured == {"sum": 42}
    tools = await tabwire.tools()
    assert tools["listcode_sum"].annotations.read_only_hint is True
    assert tools["listcode_sum"].input_schema["required"] == ["a", "b"]

    out = await tabwire.call("listcode_explode")
    assert out.is_error and "ADAPTER_ERROR" in out.text and "code says no" in out.text, out
    out = await tabwire.call("listcode_hang")
    assert out.is_error and "TIMEOUT" in out.text, out
    # The runtime is still healthy after a hung handler.
    assert (await tabwire.call_ok("listcode_sum", {"a": 1, "b": 1})).structured == {"sum": 2}


async def test_the_dom_predicate_applies_to_code_adapters(tabwire, launch_chromium, extension_dir, fixture_server):
    """The webmcp fixture page has no #items: the code adapter must not serve it."""
    url = fixture_server.url("plain", "webmcp/index.html")
    await launch_chromium(extension_dir=extension_dir)
    out = await tabwire.browser_open(url)
    # The code adapter's URL pattern matches but its predicate does not: browser_open returns with the
    # tools the page registered itself.
    add_note = page_tool_name(fixture_server.origin + "/", "add_note")
    assert not out.is_error and add_note in out.structured["tools"], out
    assert not any(n.startswith("listcode_") for n in out.structured["tools"]), out
    names = await tabwire.wait_for_tools(add_note, timeout=30)
    assert not any(n.startswith("listcode_") for n in names), names

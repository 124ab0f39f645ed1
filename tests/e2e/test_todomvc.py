"""End to end: an MCP client drives TodoMVC in headless Chromium through tabwire and the extension.

The issue's definition of done, sentence by sentence: the client sees `tools/list_changed`, finds the
todomvc tools, adds two todos, toggles one, lists them with the right states, reloads the tab and lists
again (the app's own storage kept them); the same flow on pages whose CSP is `script-src 'self'` (as a
header and as a `<meta>`), where WebAssembly cannot compile and the injector's wasm2js build must run.
Plus the meta-tools (`browser_open`, `browser_tabs`, `site_call`), `clear_completed` and an error path.
"""

from __future__ import annotations

import pytest

from harness.mcp_client import ERROR_CODES, TabwireSession, error_codes_in
from harness.todomvc import TODO_TOOLS, csp_facts, stored_todos, todos_from, wait_until_app_ready
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

# The output schema adapters/todomvc.json declares for list_todos: it describes structuredContent,
# where a list result is wrapped as {"result": [...]}. The SDK client checks every list_todos result
# against it, so each successful list_todos call below also proves the result matches.
LIST_TODOS_OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "result": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"title": {"type": "string"}, "completed": {"type": "boolean"}},
                "required": ["title", "completed"],
            },
        }
    },
    "required": ["result"],
}


async def list_todos(tabwire: TabwireSession) -> list[dict]:
    out = await tabwire.call_ok("todomvc_list_todos")
    todos = todos_from(out.structured)
    for todo in todos:  # the text rendering is for the model: it must at least name every todo
        assert todo["title"] in out.text, f"list_todos text does not mention {todo['title']!r}: {out.text!r}"
    return todos


@pytest.mark.parametrize(
    "variant, opened_by",
    [
        ("plain", "browser_open"),
        ("csp-header", "browser_open"),
        ("csp-meta", "command_line"),
    ],
)
async def test_todo_flow(variant, opened_by, tabwire, launch_chromium, extension_dir, todomvc_url):
    url = todomvc_url(variant)
    list_changed_before = tabwire.list_changed_count()

    if opened_by == "browser_open":
        browser = await launch_chromium(extension_dir=extension_dir)
        out = await tabwire.browser_open(url)
        assert not out.is_error, f"browser_open({url}) failed: {out}"
    else:
        browser = await launch_chromium(extension_dir=extension_dir, url=url)

    # The client is told the tool list changed, and finds the todomvc tools.
    await tabwire.wait_for_list_changed(list_changed_before)
    await tabwire.wait_for_tools(*TODO_TOOLS)
    listed = await tabwire.tools()
    assert listed["todomvc_list_todos"].output_schema == LIST_TODOS_OUTPUT_SCHEMA, listed["todomvc_list_todos"]
    assert listed["todomvc_add_todo"].output_schema is None

    # The page is the real app, and its CSP is what the variant says (so a failure is attributable).
    page = await browser.cdp.wait_for_page(url)
    await wait_until_app_ready(browser.cdp, page)
    facts = await csp_facts(browser.cdp, page)
    if variant == "plain":
        assert facts == {"inline_script_runs": True, "wasm": "compiled"}, facts
    else:
        assert facts == {"inline_script_runs": False, "wasm": "CompileError"}, (
            f"{variant}: the page should forbid inline scripts and WebAssembly: {facts}"
        )
    assert await stored_todos(browser.cdp, page) == []

    # The injector build that runs is the wasm module, or its wasm2js translation where the CSP
    # forbids compiling wasm: the fallback is what makes the CSP variants work at all.
    tabs = _tabs_from((await tabwire.call_ok("browser_tabs")).structured)
    runtimes = [t.get("runtime") for t in tabs if t.get("url", "").startswith(url)]
    assert runtimes == ["wasm" if variant == "plain" else "js"], f"{variant}: {tabs}"

    # Add two todos, toggle one, list them with the right states.
    await tabwire.call_ok("todomvc_add_todo", {"title": "Buy milk"})
    await tabwire.call_ok("todomvc_add_todo", {"title": "Walk the dog"})
    await tabwire.call_ok("todomvc_toggle_todo", {"title": "Buy milk"})
    expected = [{"title": "Buy milk", "completed": True}, {"title": "Walk the dog", "completed": False}]
    assert await list_todos(tabwire) == expected
    assert await stored_todos(browser.cdp, page) == expected, "the app's localStorage disagrees with list_todos"

    # Reload the tab: the tools come back and the app's own storage kept the todos.
    await browser.cdp.reload(page)
    await wait_until_app_ready(browser.cdp, page)
    assert await stored_todos(browser.cdp, page) == expected

    async def listed_after_reload() -> list[dict] | None:
        out = await tabwire.call("todomvc_list_todos")
        return None if out.is_error else todos_from(out.structured)

    todos = await wait_for(listed_after_reload, timeout=20, what="todomvc_list_todos to work again after reload")
    assert todos == expected
    assert set(TODO_TOOLS) <= await tabwire.tool_names()


def _tab_tool_names(tab: dict) -> set[str]:
    return {t if isinstance(t, str) else t.get("name", "") for t in tab.get("tools", [])}


def _tabs_from(structured) -> list[dict]:
    tabs = structured.get("tabs") if isinstance(structured, dict) else structured
    assert isinstance(tabs, list), f"browser_tabs structuredContent has no tab list: {structured!r}"
    return tabs


async def test_meta_tools_clear_completed_and_errors(tabwire, launch_chromium, extension_dir, todomvc_url):
    url = todomvc_url("plain")
    browser = await launch_chromium(extension_dir=extension_dir, url=url)
    await tabwire.wait_for_tools(*TODO_TOOLS)
    page = await browser.cdp.wait_for_page(url)
    await wait_until_app_ready(browser.cdp, page)

    # browser_tabs names the tab, its URL and its site tools.
    out = await tabwire.call_ok("browser_tabs")
    tabs = [t for t in _tabs_from(out.structured) if str(t.get("url", "")).startswith(url)]
    assert len(tabs) == 1, f"expected exactly one tab at {url} in browser_tabs: {out}"
    tab = tabs[0]
    assert isinstance(tab.get("id"), int), f"tab id should be an integer: {tab!r}"
    # The page's title: its runtime started as the page began loading, and told it once parsed.
    title = await browser.cdp.evaluate(page, "document.title")
    assert title and tab["title"] == title, tab
    assert {"todomvc_add_todo", "add_todo"} & _tab_tool_names(tab), f"tab lists no todomvc tools: {tab!r}"
    assert "todomvc" in out.text.lower() or url in out.text, f"browser_tabs text is not informative: {out.text!r}"
    tab_id = tab["id"]

    # site_call reaches the same tool by name; an explicit tab_id works on the per-site tools too.
    await tabwire.call_ok(
        "site_call", {"tool": "todomvc_add_todo", "args": {"title": "Via site_call"}, "tab_id": tab_id}
    )
    await tabwire.call_ok("todomvc_add_todo", {"title": "Keep me", "tab_id": tab_id})
    await tabwire.call_ok("todomvc_toggle_todo", {"title": "Via site_call"})
    assert await stored_todos(browser.cdp, page) == [
        {"title": "Via site_call", "completed": True},
        {"title": "Keep me", "completed": False},
    ]
    out = await tabwire.call_ok("site_call", {"tool": "todomvc_list_todos", "args": {}})
    assert todos_from(out.structured) == await stored_todos(browser.cdp, page)

    # clear_completed removes the done one, in the app's storage too.
    await tabwire.call_ok("todomvc_clear_completed")
    assert await list_todos(tabwire) == [{"title": "Keep me", "completed": False}]
    assert await stored_todos(browser.cdp, page) == [{"title": "Keep me", "completed": False}]

    # Toggling a todo that does not exist is a tool error with a protocol error code, not a hang or a crash.
    out = await tabwire.call("todomvc_toggle_todo", {"title": "No such todo"})
    assert out.is_error, f"toggling a missing todo should fail: {out}"
    codes = error_codes_in(out.text)
    assert codes and codes[0] in {"ELEMENT_NOT_FOUND", "ADAPTER_ERROR", "INVALID_ARGS"}, (
        f"error text should start with a code from {sorted(ERROR_CODES)}: {out.text!r}"
    )
    if isinstance(out.structured, dict) and isinstance(out.structured.get("error"), dict):
        assert out.structured["error"].get("code") == codes[0], out
    assert await stored_todos(browser.cdp, page) == [{"title": "Keep me", "completed": False}]

    # The session is still healthy after the error.
    assert await list_todos(tabwire) == [{"title": "Keep me", "completed": False}]

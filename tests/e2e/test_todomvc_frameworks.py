"""End to end: one TodoMVC adapter drives the vanillajs, React and Vue examples (ids vs classes, React adding
on keydown and Vue on keyup, apps that render after load) through every tool: add, toggle, edit (double
click, type, Enter), delete (the hover-only `.destroy` button), set_filter and clear_completed. The oracle
is each app's own localStorage entry, read through DevTools.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.cdp import Cdp, CdpError, Target
from harness.mcp_client import TabwireSession
from harness.todomvc import TODO_TOOLS, todos_from
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

ALL_TOOLS = (*TODO_TOOLS, "todomvc_set_filter", "todomvc_edit_todo", "todomvc_delete_todo")

# framework -> (page under the todomvc package, its localStorage key, whether the todos sit under "todos")
FRAMEWORKS = {
    "vanillajs": ("examples/vanillajs/index.html", "todos-vanillajs", True),
    "react": ("examples/react/index.html", "react-todos", False),
    "vue": ("examples/vue/index.html", "todos-vuejs", False),
}


async def stored_todos(cdp: Cdp, page: Target, framework: str) -> list[dict[str, Any]]:
    """The todos as the app stored them ([] before it stored anything)."""
    _, key, nested = FRAMEWORKS[framework]
    raw = await cdp.evaluate(page, f"localStorage.getItem({json.dumps(key)})")
    if raw is None:
        return []
    data = json.loads(raw)
    todos = data["todos"] if nested else data
    return [{"title": t["title"], "completed": bool(t["completed"])} for t in todos]


async def storage_becomes(cdp: Cdp, page: Target, framework: str, expected: list[dict]) -> None:
    async def matches() -> bool:
        return await stored_todos(cdp, page, framework) == expected

    await wait_for(matches, timeout=10, what=f"{framework}'s localStorage to hold {expected}", ignore=(CdpError,))


async def listed(tabwire: TabwireSession) -> list[dict]:
    return todos_from((await tabwire.call_ok("todomvc_list_todos")).structured)


@pytest.mark.parametrize("framework", list(FRAMEWORKS))
async def test_every_tool_on_each_framework(framework, tabwire, launch_chromium, extension_dir, static_server):
    url = static_server.url("plain", FRAMEWORKS[framework][0])
    browser = await launch_chromium(extension_dir=extension_dir, url=url)
    await tabwire.wait_for_tools(*ALL_TOOLS)
    page = await browser.cdp.wait_for_page(url)

    for title in ("Buy milk", "Walk the dog", "Call mum"):
        out = await tabwire.call_ok("todomvc_add_todo", {"title": title})
        assert out.structured == {"added": title}, out
    await tabwire.call_ok("todomvc_toggle_todo", {"title": "Walk the dog"})
    expected = [
        {"title": "Buy milk", "completed": False},
        {"title": "Walk the dog", "completed": True},
        {"title": "Call mum", "completed": False},
    ]
    await storage_becomes(browser.cdp, page, framework, expected)
    assert await listed(tabwire) == expected

    # edit_todo: double click, type, Enter; the app saves the new title.
    out = await tabwire.call_ok("todomvc_edit_todo", {"title": "Buy milk", "new_title": "Buy oat milk"})
    assert out.structured == {"title": "Buy oat milk", "completed": False}, out
    expected[0]["title"] = "Buy oat milk"
    await storage_becomes(browser.cdp, page, framework, expected)

    # delete_todo clicks the .destroy button that only shows on hover.
    out = await tabwire.call_ok("todomvc_delete_todo", {"title": "Call mum"})
    assert out.structured == {"deleted": "Call mum"}, out
    del expected[2]
    await storage_becomes(browser.cdp, page, framework, expected)

    # set_filter shows only what the filter selects; the app's storage is untouched.
    out = await tabwire.call_ok("todomvc_set_filter", {"filter": "Active"})
    assert out.structured["filter"] == "Active", out
    assert todos_from(out.structured["todos"]) == [{"title": "Buy oat milk", "completed": False}]
    out = await tabwire.call_ok("todomvc_set_filter", {"filter": "Completed"})
    assert todos_from(out.structured["todos"]) == [{"title": "Walk the dog", "completed": True}]
    out = await tabwire.call_ok("todomvc_set_filter", {"filter": "All"})
    assert todos_from(out.structured["todos"]) == expected
    assert await stored_todos(browser.cdp, page, framework) == expected

    # clear_completed removes the done one; a second call (nothing to clear) still succeeds.
    await tabwire.call_ok("todomvc_clear_completed")
    await storage_becomes(browser.cdp, page, framework, [{"title": "Buy oat milk", "completed": False}])
    out = await tabwire.call_ok("todomvc_clear_completed")
    assert todos_from(out.structured) == [{"title": "Buy oat milk", "completed": False}]

    # A todo that is not there: ELEMENT_NOT_FOUND naming the step and the selector.
    out = await tabwire.call("todomvc_delete_todo", {"title": "Nope"})
    assert out.is_error and out.text.startswith("ELEMENT_NOT_FOUND"), out
    assert "steps[1] (within)" in out.text and "label" in out.text, out

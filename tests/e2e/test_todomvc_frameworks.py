"""End to end: the shipped TodoMVC adapter on every example its `match` claims, through every tool: add,
toggle, edit (double click, type, Enter), delete (the hover-only `.destroy` button), set_filter and
clear_completed. The examples are read from `adapters/todomvc.json` itself, so the adapter cannot claim an
example this test does not run. The oracle is each app's own localStorage, read through DevTools; each
tool's answer must agree with it (a tool that reports an effect the app did not store fails here).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from harness.cdp import Cdp, CdpError, Target
from harness.mcp_client import TabwireSession
from harness.fixture_pages import REPO
from harness.todomvc import TODO_TOOLS, any_stored_todos, todos_from
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

ALL_TOOLS = (*TODO_TOOLS, "todomvc_set_filter", "todomvc_edit_todo", "todomvc_delete_todo")


def claimed_examples() -> list[str]:
    """The TodoMVC examples the shipped adapter's match patterns name (`*://todomvc.com/examples/<name>/*`)."""
    adapter = json.loads((REPO / "adapters" / "todomvc.json").read_text())
    names = []
    for pattern in adapter["match"]:
        found = re.fullmatch(r"\*://(?:\*\.)?todomvc\.com/examples/([a-z0-9_-]+)/\*", pattern)
        assert found, f"todomvc.json matches {pattern!r}: name one example per pattern so a test covers it"
        names.append(found[1])
    return sorted(set(names))


def by_title(todos: list[dict]) -> list[dict]:
    return sorted(todos, key=lambda t: t["title"])


async def storage_becomes(cdp: Cdp, page: Target, expected: list[dict]) -> None:
    stored: list = []

    async def matches() -> bool:
        stored[:] = await any_stored_todos(cdp, page)
        return stored == by_title(expected)

    try:
        await wait_for(matches, timeout=10, what=f"localStorage to hold {expected}", ignore=(CdpError,))
    except Exception as e:
        raise AssertionError(f"localStorage holds {stored}, not {expected}") from e


async def shown_todos(cdp: Cdp, page: Target) -> list[dict[str, Any]]:
    """The todos the page shows, read through DevTools (not through tabwire's own tools): in the document
    and in the open shadow roots inside it (Polymer renders its list, and each item, in one)."""
    return await cdp.evaluate(page, _SHOWN_TODOS_JS)


# Polymer's Shadow DOM polyfill wraps `document`; `unwrap` gives the one the browser renders. An item
# whose content is in its own shadow root (Polymer's td-item) has its label and `completed` class there.
_SHOWN_TODOS_JS = """(() => {
  const roots = [window.unwrap ? unwrap(document) : document];
  const items = [];
  for (let i = 0; i < roots.length; i++) {
    for (const el of Array.from(roots[i].querySelectorAll('*'))) if (el.shadowRoot) roots.push(el.shadowRoot);
    items.push(...Array.from(roots[i].querySelectorAll('#todo-list > li, .todo-list > li')));
  }
  const inside = (li, selector) => li.querySelector(selector) || (li.shadowRoot && li.shadowRoot.querySelector(selector));
  return items.filter(li => li.offsetParent !== null).map(li => ({
    title: inside(li, 'label').textContent,
    completed: li.classList.contains('completed') || !!inside(li, '.view.completed'),
  }));
})()"""


async def listed(tabwire: TabwireSession) -> list[dict[str, Any]]:
    return todos_from((await tabwire.call_ok("todomvc_list_todos")).structured)


@pytest.mark.parametrize("example", claimed_examples())
async def test_every_tool_on_each_claimed_example(example, tabwire, launch_chromium, extension_dir, static_server):
    url = static_server.url("plain", f"examples/{example}/index.html")
    browser = await launch_chromium(extension_dir=extension_dir, url=url)
    await tabwire.wait_for_tools(*ALL_TOOLS)
    page = await browser.cdp.wait_for_page(url)

    expected: list[dict] = []
    for title in ("Buy milk", "Walk the dog", "Call mum"):
        out = await tabwire.call_ok("todomvc_add_todo", {"title": title})
        assert out.structured == {"added": title, "completed": False}, out
        expected.append({"title": title, "completed": False})
        await storage_becomes(browser.cdp, page, expected)

    out = await tabwire.call_ok("todomvc_toggle_todo", {"title": "Walk the dog"})
    assert out.structured == {"title": "Walk the dog", "completed": True}, out
    expected[1]["completed"] = True
    await storage_becomes(browser.cdp, page, expected)
    assert await listed(tabwire) == expected
    out = await tabwire.call_ok("todomvc_toggle_todo", {"title": "Walk the dog"})
    assert out.structured == {"title": "Walk the dog", "completed": False}, out
    await storage_becomes(browser.cdp, page, [dict(t, completed=False) for t in expected])
    out = await tabwire.call_ok("todomvc_toggle_todo", {"title": "Walk the dog"})
    assert out.structured == {"title": "Walk the dog", "completed": True}, out
    await storage_becomes(browser.cdp, page, expected)

    # edit_todo: double click, type, Enter; the app saves the new title.
    out = await tabwire.call_ok("todomvc_edit_todo", {"title": "Buy milk", "new_title": "Buy oat milk"})
    assert out.structured == {"title": "Buy oat milk", "completed": False}, out
    expected[0]["title"] = "Buy oat milk"
    await storage_becomes(browser.cdp, page, expected)

    # delete_todo clicks the .destroy button that only shows on hover.
    out = await tabwire.call_ok("todomvc_delete_todo", {"title": "Call mum"})
    assert out.structured == {"deleted": "Call mum"}, out
    del expected[2]
    await storage_becomes(browser.cdp, page, expected)

    # set_filter shows only what the filter selects; the app's storage is untouched.
    out = await tabwire.call_ok("todomvc_set_filter", {"filter": "Active"})
    assert out.structured["filter"] == "Active", out
    assert todos_from(out.structured["todos"]) == [{"title": "Buy oat milk", "completed": False}]
    out = await tabwire.call_ok("todomvc_set_filter", {"filter": "Completed"})
    assert todos_from(out.structured["todos"]) == [{"title": "Walk the dog", "completed": True}]
    out = await tabwire.call_ok("todomvc_set_filter", {"filter": "All"})
    assert todos_from(out.structured["todos"]) == expected
    assert await any_stored_todos(browser.cdp, page) == by_title(expected)

    # clear_completed removes the done one; a second call (nothing to clear) still succeeds.
    await tabwire.call_ok("todomvc_clear_completed")
    await storage_becomes(browser.cdp, page, [{"title": "Buy oat milk", "completed": False}])
    out = await tabwire.call_ok("todomvc_clear_completed")
    assert todos_from(out.structured) == [{"title": "Buy oat milk", "completed": False}]

    # A todo that is not there: ELEMENT_NOT_FOUND naming the step and the selector.
    out = await tabwire.call("todomvc_delete_todo", {"title": "Nope"})
    assert out.is_error and out.text.startswith("ELEMENT_NOT_FOUND"), out
    assert "(within)" in out.text and "label" in out.text, out


@pytest.mark.parametrize("example", ["dojo", "jquery", "polymer"])
async def test_on_an_unclaimed_example_each_answer_agrees_with_the_app(
    example, tabwire, launch_chromium, extension_dir, static_server
):
    """Examples the adapter does not claim (dojo toggles on its own terms; the package's jquery example
    lacks its jQuery, so nothing on it works; polymer renders through a Shadow DOM polyfill) still get the tools here (the test serves the adapter on all of 127.0.0.1): whatever add_todo
    and toggle_todo answer must be what the page shows, read through DevTools. Success means the app
    did it; an error means it did not."""
    assert example not in claimed_examples()
    url = static_server.url("plain", f"examples/{example}/index.html")
    browser = await launch_chromium(extension_dir=extension_dir, url=url)
    await tabwire.wait_for_tools(*ALL_TOOLS)
    page = await browser.cdp.wait_for_page(url)

    added = await tabwire.call("todomvc_add_todo", {"title": "Buy milk"})
    if added.is_error:
        assert added.text.startswith("ELEMENT_NOT_FOUND") and "Buy milk" in added.text, added
        assert await shown_todos(browser.cdp, page) == []
        return
    assert added.structured == {"added": "Buy milk", "completed": False}, added
    assert await shown_todos(browser.cdp, page) == [{"title": "Buy milk", "completed": False}]
    toggled = await tabwire.call("todomvc_toggle_todo", {"title": "Buy milk"})
    shown = await shown_todos(browser.cdp, page)
    if toggled.is_error:
        assert shown == [{"title": "Buy milk", "completed": False}], (toggled, shown)
    else:
        assert toggled.structured == {"title": "Buy milk", "completed": True}, toggled
        assert shown == [{"title": "Buy milk", "completed": True}], (toggled, shown)

"""TodoMVC (vanillajs) as the tests see it: its own storage read through CDP, and the tools' result shapes.

The app keeps its todos in `localStorage["todos-vanillajs"]` as `{"todos": [{"title", "completed", "id"}]}`;
reading that key through DevTools is the oracle that is independent of tabwire's own tools.
"""

from __future__ import annotations

import json
from typing import Any

from .cdp import Cdp, CdpError, Target
from .waiting import wait_for

STORAGE_KEY = "todos-vanillajs"
TODO_TOOLS = ("todomvc_add_todo", "todomvc_list_todos", "todomvc_toggle_todo", "todomvc_clear_completed")


async def wait_until_app_ready(cdp: Cdp, page: Target, *, timeout: float = 20) -> None:
    """The document has loaded and the app's scripts ran (its Store created its localStorage entry)."""
    await wait_for(
        lambda: cdp.evaluate(
            page,
            f"document.readyState === 'complete' && !!document.getElementById('todo-list')"
            f" && localStorage.getItem({json.dumps(STORAGE_KEY)}) !== null",
        ),
        timeout=timeout,
        what="TodoMVC to load and initialise its localStorage store",
        ignore=(CdpError,),
    )


async def stored_todos(cdp: Cdp, page: Target) -> list[dict[str, Any]]:
    """The todos as the app itself stored them: [{title, completed}] in list order."""
    raw = await cdp.evaluate(page, f"localStorage.getItem({json.dumps(STORAGE_KEY)})")
    assert raw is not None, f"localStorage[{STORAGE_KEY!r}] is not set"
    return [{"title": t["title"], "completed": bool(t["completed"])} for t in json.loads(raw)["todos"]]


async def csp_facts(cdp: Cdp, page: Target) -> dict[str, Any]:
    """What the page's CSP allows in its main world: inline scripts, and compiling WebAssembly."""
    inline = await cdp.evaluate(
        page,
        "(() => { const s = document.createElement('script');"
        " s.textContent = 'window.__tabwireInline = 1'; document.head.appendChild(s); s.remove();"
        " return window.__tabwireInline === 1; })()",
    )
    wasm = await cdp.evaluate(
        page,
        "WebAssembly.compile(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]))"
        ".then(() => 'compiled', e => e.name)",
        await_promise=True,
    )
    return {"inline_script_runs": inline, "wasm": wasm}


def todos_from(structured: Any) -> list[dict[str, Any]]:
    """The [{title, completed}] list from todomvc_list_todos' structuredContent.

    Accepts the list itself or an object wrapping it under one key (`todos`, `items` or `result`):
    structuredContent must be a JSON object on protocol versions before 2026-07-28.
    """
    value = structured
    if isinstance(value, dict):
        for key in ("todos", "items", "result"):
            if isinstance(value.get(key), list):
                value = value[key]
                break
    assert isinstance(value, list), f"todomvc_list_todos structuredContent has no todo list: {structured!r}"
    for item in value:
        assert isinstance(item, dict) and {"title", "completed"} <= item.keys(), f"bad todo entry {item!r}"
    return [{"title": t["title"], "completed": t["completed"]} for t in value]


# Every TodoMVC example stores its todos in localStorage, each its own way: one key holding a list
# (react), one holding `{"todos": [...]}` (vanillajs), one key per todo (backbone), records keyed by id
# (emberjs's `isCompleted`), a todo not yet completed with no flag at all (knockoutjs). This walks every
# key's JSON for objects with a title.
_ANY_STORED_TODOS_JS = """(() => {
  const out = [];
  const walk = (v) => {
    if (Array.isArray(v)) { v.forEach(walk); return; }
    if (!v || typeof v !== 'object') return;
    if (typeof v.title === 'string') { out.push({title: v.title, completed: !!(v.completed ?? v.isCompleted)}); return; }
    Object.values(v).forEach(walk);
  };
  for (let i = 0; i < localStorage.length; i++) {
    try { walk(JSON.parse(localStorage.getItem(localStorage.key(i)))); } catch (_) { /* not JSON: not a todo */ }
  }
  return out;
})()"""


async def any_stored_todos(cdp: Cdp, page: Target) -> list[dict[str, Any]]:
    """The todos any TodoMVC example stored, as [{title, completed}] sorted by title (examples that keep a
    key per todo have no list order)."""
    todos = await cdp.evaluate(page, _ANY_STORED_TODOS_JS)
    return sorted(todos, key=lambda t: t["title"])


async def type_as_the_user(cdp: Cdp, page: Target, text: str) -> None:
    """Focus the new-todo field, insert `text` and press Enter, as keyboard input (DevTools Input domain)."""
    await cdp.evaluate(page, "document.querySelector('#new-todo, .new-todo').focus()")
    await cdp.send(page, "Input.insertText", {"text": text})
    key = {"key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "nativeVirtualKeyCode": 13}
    await cdp.send(page, "Input.dispatchKeyEvent", {"type": "keyDown", "text": "\r", **key})
    await cdp.send(page, "Input.dispatchKeyEvent", {"type": "keyUp", **key})

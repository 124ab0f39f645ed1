"""End to end, the state flow on a real site: the shipped TodoMVC adapter declares a state (its todos, the
filter, the items-left text, the active and completed counts). A client subscribed to the tab's state resource hears
`notifications/resources/updated` after a tool call, and also when the user changes the page by hand
(typing a todo through DevTools input events, which tabwire has no part in); the state it then reads
equals the app's own localStorage. `site_state` answers from the cache, with its age and where it came
from and without a request to the browser (the service worker's socket frames, read through DevTools,
carry none; a `force_refresh` carries one), and the cache follows the user's change without a `force_refresh`. A closed tab's last state stays
readable, saying the tab closed.
"""

from __future__ import annotations

import json

import pytest

from harness.cdp import Cdp, CdpError, EventLog, Target
from harness.mcp_client import TabwireSession
from harness.todomvc import TODO_TOOLS, any_stored_todos, type_as_the_user
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

UPDATED = "notifications/resources/updated"


async def read_state(tabwire: TabwireSession, uri: str) -> dict:
    result = await tabwire.session.read_resource(uri)
    return json.loads(result.contents[0].text)


async def extension_worker(cdp: Cdp) -> Target:
    async def find() -> Target | None:
        workers = [t for t in await cdp.targets() if t.type == "service_worker" and t.ws_url]
        return workers[0] if len(workers) == 1 else None

    return await wait_for(find, timeout=10, what="the extension's service worker target")


def state_requests(frames: EventLog) -> int:
    """How many state requests tabwire sent the worker while `frames` recorded."""
    received = frames.of("Network.webSocketFrameReceived")
    return sum(json.loads(f["response"]["payloadData"]).get("type") == "request_state" for f in received)


def todos_of(resource: dict) -> list[dict]:
    return sorted(resource["state"]["todomvc"]["todos"], key=lambda t: t["title"])


@pytest.mark.parametrize("example", ["vanillajs", "react", "vue"])
async def test_state_follows_calls_and_the_users_own_changes(example, tabwire, launch_chromium, extension_dir, static_server):
    url = static_server.url("plain", f"examples/{example}/index.html")
    browser = await launch_chromium(extension_dir=extension_dir, url=url)
    await tabwire.wait_for_tools(*TODO_TOOLS)
    page = await browser.cdp.wait_for_page(url)
    tab = (await tabwire.call_ok("browser_tabs")).structured["tabs"][0]["id"]
    uri = f"tabwire://tabs/{tab}/state"
    await tabwire.session.subscribe_resource(uri)

    # After a changing call: an update, and the state read then is what the app stored.
    seen = tabwire.notifications.count(UPDATED)
    await tabwire.call_ok("todomvc_add_todo", {"title": "Buy milk"})
    # As after a person's Enter, the app cleared its input (Vue does so only if its model update ran
    # between the typing and the Enter: the runtime lets the page run its queued work between actions).
    assert await browser.cdp.evaluate(page, "document.querySelector('#new-todo, .new-todo').value") == ""
    await wait_for(lambda: tabwire.notifications.count(UPDATED) > seen, timeout=10, what="resources/updated after the call")
    state = await read_state(tabwire, uri)
    assert todos_of(state) == await any_stored_todos(browser.cdp, page) == [{"title": "Buy milk", "completed": False}]
    assert state["state"]["todomvc"]["filter"] == "All", state
    assert state["state"]["todomvc"]["items_left"].startswith("1 item"), state
    assert (state["state"]["todomvc"]["active"], state["state"]["todomvc"]["completed"]) == (1, 0), state

    # The user types a todo: no tabwire call, yet the subscriber hears of it and the cache shows it.
    seen = tabwire.notifications.count(UPDATED)
    await type_as_the_user(browser.cdp, page, "Typed by hand")
    stored = [{"title": "Buy milk", "completed": False}, {"title": "Typed by hand", "completed": False}]

    async def stored_by_the_app() -> bool:
        return await any_stored_todos(browser.cdp, page) == stored

    await wait_for(stored_by_the_app, timeout=10, what="the app to store the typed todo", ignore=(CdpError,))
    await wait_for(lambda: tabwire.notifications.count(UPDATED) > seen, timeout=10, what="resources/updated after the user's change")
    assert todos_of(await read_state(tabwire, uri)) == stored

    # site_state answers from the cache by default: the state the page pushed, with its age, and
    # without asking the browser (no request reaches the service worker's socket); force_refresh asks.
    worker = await extension_worker(browser.cdp)
    async with browser.cdp.recording(worker, "Network") as frames:
        cached = (await tabwire.call_ok("site_state", {"tab_id": tab})).structured
        asked_for_cache = state_requests(frames)
        fresh = (await tabwire.call_ok("site_state", {"tab_id": tab, "force_refresh": True})).structured
        await wait_for(lambda: state_requests(frames) > asked_for_cache, timeout=10, what="the refresh's request in the worker's frames")
    assert asked_for_cache == 0 and state_requests(frames) == 1, frames.events
    assert cached["source"] == "cache" and cached["cached_from"] == "state_update", cached
    assert isinstance(cached["age_ms"], int) and cached["age_ms"] >= 0, cached
    assert todos_of(cached) == stored
    # Nothing changed since, and a fresh read agrees.
    assert fresh["source"] == "page" and todos_of(fresh) == stored, fresh

    # The user closes the tab: its last state stays readable and says so; a refresh cannot ask the
    # page and falls back to it with that note.
    seen = tabwire.notifications.count(UPDATED)
    await browser.cdp.send(page, "Page.close")

    async def reported_closed() -> dict | None:
        out = (await tabwire.call_ok("site_state", {"tab_id": tab, "force_refresh": True})).structured
        return out if out.get("tab_closed") else None

    closed = await wait_for(reported_closed, timeout=10, what="site_state to report the tab closed")
    await wait_for(lambda: tabwire.notifications.count(UPDATED) > seen, timeout=10, what="resources/updated on close")
    assert closed["source"] == "cache", closed
    assert closed["note"].startswith(f"tab {tab} was closed; this is the last state it reported"), closed
    assert "TAB_CLOSED" in closed["note"] and todos_of(closed) == stored, closed
    assert (await read_state(tabwire, uri))["tab_closed"] is True

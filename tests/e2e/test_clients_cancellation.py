"""End to end: a client's `notifications/cancelled` (sent by the official Python SDK when the caller abandons a
call) stops the call in the page. A test adapter's tool types a todo, then waits for an element only this test
creates, then presses Enter: cancelled while it waits, its Enter must never be pressed, so the app's own storage
never gets the todo, even after the element appears; the tab keeps serving calls.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from harness.mcp_client import error_codes_in, open_tabwire_session
from harness.todomvc import stored_todos, wait_until_app_ready
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

ADAPTERS = Path(__file__).parent / "adapters-slow"


async def test_a_cancelled_call_stops_in_the_page(tabwire_command, launch_chromium, extension_dir, todomvc_url):
    c = tabwire_command
    url = todomvc_url("plain")
    args = [*c.args, "--adapters", str(ADAPTERS)]
    async with open_tabwire_session(c.binary, args, env=c.env, cwd=c.cwd, stderr_path=c.stderr_path) as tabwire:
        browser = await launch_chromium(extension_dir=extension_dir, url=url)
        page = await browser.cdp.wait_for_page(url)
        await wait_until_app_ready(browser.cdp, page)
        await tabwire.wait_for_tools("slowtodo_add_when_ready", "todomvc_add_todo")

        async with anyio.create_task_group() as group:
            group.start_soon(tabwire.session.call_tool, "slowtodo_add_when_ready", {"title": "never added"})
            # The call is running in the page once it has typed the title.
            await wait_for(
                lambda: browser.cdp.evaluate(
                    page, "(document.querySelector('#new-todo, .new-todo') || {}).value === 'never added'"
                ),
                timeout=20,
                what="the slow tool to type its title in the page",
            )
            group.cancel_scope.cancel()

        # A cancel takes a moment to travel (tabwire, the service worker, the tab), while DevTools reaches the
        # page at once: a round trip to the same tab, sent after the cancel on the same ordered path, makes sure
        # it has arrived before the awaited element appears.
        await tabwire.call_ok("todomvc_list_todos")
        # The element the cancelled call waited for appears; the tab then serves another call.
        await browser.cdp.evaluate(
            page, "document.body.appendChild(Object.assign(document.createElement('i'), {id: 'go'})) && true"
        )

        async def added() -> bool | None:
            out = await tabwire.call("todomvc_add_todo", {"title": "after the cancel"})
            if out.is_error and "TIMEOUT" in error_codes_in(out.text):
                return None
            assert not out.is_error, str(out)
            return True

        await wait_for(added, timeout=20, what="the tab to serve a call after the cancelled one")
        titles = [t["title"] for t in await stored_todos(browser.cdp, page)]
        assert titles == ["after the cancel"], f"the cancelled call went on in the page: {titles}"
        assert "cancel" in Path(c.stderr_path).read_text().lower()

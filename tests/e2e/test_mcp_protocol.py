"""End to end: a client speaking MCP 2026-07-28 (the Python SDK's high-level `Client`, which probes
`server/discover` first) receives tool-list changes through `subscriptions/listen`, the only way that
protocol version delivers them, and can call the site tools that appeared; and it hears of a tab's
state changing (the user typing a todo by hand) through the same stream's resource subscriptions.

The classic `initialize` path and its `notifications/tools/list_changed` are covered by test_todomvc.py.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import stdio_client
from mcp.client.subscriptions import ResourceUpdated, ToolsListChanged

from harness.todomvc import TODO_TOOLS, any_stored_todos, todos_from, type_as_the_user
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def modern_client(tabwire_command) -> AsyncIterator[Client]:
    """The SDK's high-level client on a `tabwire mcp` of its own, its stderr in the test's log."""
    with open(tabwire_command.stderr_path, "a", encoding="utf-8") as errlog:
        transport = stdio_client(tabwire_command.stdio_parameters(), errlog=errlog)
        async with Client(transport, mode="auto", cache=None, read_timeout_seconds=30) as client:
            yield client


async def test_modern_client_sees_tools_through_subscription(
    tabwire_command, launch_chromium, extension_dir, todomvc_url
):
    url = todomvc_url("plain")
    async with modern_client(tabwire_command) as client:
        assert client.protocol_version == "2026-07-28", (
            f"server/discover should negotiate 2026-07-28, got {client.protocol_version}"
        )
        before = {t.name for t in (await client.list_tools()).tools}
        assert {"browser_tabs", "browser_open", "site_call"} <= before, before

        async with client.listen(tools_list_changed=True) as subscription:
            await launch_chromium(extension_dir=extension_dir, url=url)
            names: set[str] = set()
            events = []
            with anyio.move_on_after(20):
                async for event in subscription:
                    events.append(event)
                    if isinstance(event, ToolsListChanged):
                        names = {t.name for t in (await client.list_tools()).tools}
                        if set(TODO_TOOLS) <= names:
                            break
            assert set(TODO_TOOLS) <= names, (
                f"no tools-list-changed event brought the todomvc tools within 20s; "
                f"events: {events}, last tools: {sorted(names)}"
            )

        result = await client.call_tool("todomvc_list_todos", {})
        assert not result.is_error, result
        assert todos_from(result.structured_content) == []


async def test_modern_client_hears_the_users_change_to_a_tabs_state(
    tabwire_command, launch_chromium, extension_dir, todomvc_url
):
    url = todomvc_url("plain")
    async with modern_client(tabwire_command) as client:
        assert client.protocol_version == "2026-07-28", client.protocol_version
        browser = await launch_chromium(extension_dir=extension_dir, url=url)
        page = await browser.cdp.wait_for_page(url)

        async def todo_tab() -> int | None:
            tabs = (await client.call_tool("browser_tabs", {})).structured_content["tabs"]
            return next((t["id"] for t in tabs if set(TODO_TOOLS) <= set(t.get("tools", []))), None)

        tab = await wait_for(todo_tab, timeout=20, what="the TodoMVC tab with its tools")
        uri = f"tabwire://tabs/{tab}/state"

        async def state() -> dict:
            return json.loads((await client.read_resource(uri)).contents[0].text)["state"]["todomvc"]

        async with client.listen(resource_subscriptions=[uri]) as subscription:
            await type_as_the_user(browser.cdp, page, "Typed by hand")
            events = []
            with anyio.move_on_after(20):
                async for event in subscription:
                    events.append(event)
                    if isinstance(event, ResourceUpdated) and event.uri == uri:
                        if [t["title"] for t in (await state())["todos"]] == ["Typed by hand"]:
                            break
            assert any(isinstance(e, ResourceUpdated) and e.uri == uri for e in events), events
        stored = await any_stored_todos(browser.cdp, page)
        assert (await state())["todos"] == stored == [{"title": "Typed by hand", "completed": False}]

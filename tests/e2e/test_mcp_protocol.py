"""End to end: a client speaking MCP 2026-07-28 (the Python SDK's high-level `Client`, which probes
`server/discover` first) receives tool-list changes through `subscriptions/listen`, the only way that
protocol version delivers them, and can call the site tools that appeared.

The classic `initialize` path and its `notifications/tools/list_changed` are covered by test_todomvc.py.
"""

from __future__ import annotations

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import stdio_client
from mcp.client.subscriptions import ToolsListChanged

from harness.todomvc import TODO_TOOLS, todos_from

pytestmark = pytest.mark.anyio


async def test_modern_client_sees_tools_through_subscription(
    tabwire_command, launch_chromium, extension_dir, todomvc_url
):
    url = todomvc_url("plain")
    with open(tabwire_command.stderr_path, "a", encoding="utf-8") as errlog:
        transport = stdio_client(tabwire_command.stdio_parameters(), errlog=errlog)
        async with Client(transport, mode="auto", cache=None, read_timeout_seconds=30) as client:
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

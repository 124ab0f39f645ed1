"""A client written against the official Python MCP SDK 1.x (classic API), run in its own venv by
test_clients_python1.py: connects to tabwire over stdio or Streamable HTTP, opens a page with browser_open
(retrying while the extension is not connected yet), adds a todo and lists the todos, then prints one JSON
object with what it saw. Exits non-zero with the reason on any failure.

usage: python_mcp1.py CONFIG_JSON   (CONFIG: {"stdio": {"command", "args", "env", "cwd"}} or {"http": URL},
                                     plus "url" (the page) and "title" (the todo))
"""

import asyncio

import anyio
import json
import sys
import time
from contextlib import AsyncExitStack

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def text_of(result):
    return "\n".join(getattr(c, "text", "") for c in result.content)


async def main(config):
    async with AsyncExitStack() as stack:
        if "stdio" in config:
            s = config["stdio"]
            params = StdioServerParameters(command=s["command"], args=s["args"], env=s["env"], cwd=s["cwd"])
            read, write = await stack.enter_async_context(stdio_client(params, errlog=sys.stderr))
        else:
            from mcp.client.streamable_http import streamablehttp_client

            transport = streamablehttp_client(config["http"], headers=config.get("headers"))
            read, write, _ = await stack.enter_async_context(transport)
        session = await stack.enter_async_context(ClientSession(read, write))
        init = await session.initialize()
        tools = sorted(t.name for t in (await session.list_tools()).tools)

        deadline = time.monotonic() + 20
        while True:
            opened = await session.call_tool("browser_open", {"url": config["url"]})
            if not (opened.isError and "NOT_CONNECTED" in text_of(opened)):
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"the extension never connected: {text_of(opened)}")
            await asyncio.sleep(0.1)
        if opened.isError:
            raise SystemExit(f"browser_open failed: {text_of(opened)}")
        tab = opened.structuredContent["tab_id"]
        added = await session.call_tool("todomvc_add_todo", {"title": config["title"], "tab_id": tab})
        if added.isError:
            raise SystemExit(f"todomvc_add_todo failed: {text_of(added)}")
        listed = await session.call_tool("todomvc_list_todos", {"tab_id": tab})
        print(
            json.dumps(
                {
                    "server": init.serverInfo.name,
                    "protocol": str(init.protocolVersion),
                    "tools": tools,
                    "tab_id": tab,
                    "listed": listed.structuredContent,
                }
            ),
            flush=True,
        )
        global REPORTED
        REPORTED = True


REPORTED = False

if __name__ == "__main__":
    try:
        asyncio.run(main(json.loads(sys.argv[1])))
    except BaseExceptionGroup as group:
        # mcp 1.x's stdio_client can raise BrokenResourceError while closing when a server
        # notification arrives during teardown (its reader sends into the already-closed stream).
        # Only that, and only after the result above was reported, is the SDK's race; anything
        # else fails the run.
        _, rest = group.split(anyio.BrokenResourceError)
        if rest is not None or not REPORTED:
            raise

"""The MCP side of the tests: the official Python SDK (`mcp`) speaking stdio to `tabwire mcp`.

`open_tabwire_session` starts the real binary through the SDK's `stdio_client`, runs the classic
`initialize` handshake (what Claude Desktop and most clients do today) and records every server
notification, so tests can assert that `notifications/tools/list_changed` arrived.
`TabwireSession` adds the few conveniences the tests need: tool names, call results as plain data,
and waits with deadlines.
"""

from __future__ import annotations

import json
import re
import time
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from .waiting import wait_for

LIST_CHANGED = "notifications/tools/list_changed"
# The meta-tools tabwire always lists (design.md: "a small, fixed set").
META_TOOLS = frozenset({
    "browser_tabs", "browser_open", "site_call", "site_state", "site_save", "browser_tab", "page_screenshot",
    "browser_downloads", "browser_handoff", "page_snapshot", "page_act", "page_read", "page_find", "page_wait",
})
# The closed set of error codes of the wire protocol (bridge/src/protocol.rs, ErrorCode); a failing tool's text is "<CODE>: <message>".
ERROR_CODES = frozenset(
    {
        "ELEMENT_NOT_FOUND",
        "NOT_ACTIONABLE",
        "NO_EFFECT",
        "TIMEOUT",
        "REFUSED",
        "TAB_CLOSED",
        "NAVIGATED",
        "NO_SUCH_TOOL",
        "NO_SUCH_TAB",
        "INVALID_ARGS",
        "NOT_CONNECTED",
        "ADAPTER_ERROR",
        "PAGE_CSP",
        "CANCELLED",
        "TOO_LARGE",
        "TOO_MANY",
        "PERMISSION_REQUIRED",
        "STALE_REF",
        "DIALOG",
        "DIALOG_OPEN",
        "DEBUGGER_UNAVAILABLE",
        "FILE_REFUSED",
        "NO_SUCH_DOWNLOAD",
        "DOWNLOAD_NOT_READY",
        "TAB_HELD",
        "AGENT_STOPPED",
        "WAITING_FOR_PERSON",
        "HANDOFF_CANCELLED",
        "HANDOFF_TIMEOUT",
        "PROTOCOL",
        "INTERNAL",
    }
)
_CODE_RE = re.compile(r"\b[A-Z][A-Z_]*[A-Z]\b")


def error_codes_in(text: str) -> list[str]:
    """The protocol error codes named in `text`, in order of appearance."""
    return [w for w in _CODE_RE.findall(text) if w in ERROR_CODES]


@dataclass
class ToolOutcome:
    """A `tools/call` result reduced to what the tests look at."""

    is_error: bool
    text: str
    structured: Any

    def __str__(self) -> str:
        return f"isError={self.is_error} text={self.text!r} structured={json.dumps(self.structured)[:1000]}"


class TabwireSession:
    """An initialized MCP client session with `tabwire mcp` plus a record of its notifications."""

    def __init__(
        self, session: ClientSession, notifications: list[str], received_at: list[float], init: types.InitializeResult
    ) -> None:
        self.session = session
        self.notifications = notifications
        # Wall-clock time (epoch seconds) each notification arrived, parallel to `notifications` (for scripts/bench.py).
        self.received_at = received_at
        self.init = init

    def list_changed_count(self) -> int:
        return self.notifications.count(LIST_CHANGED)

    async def tool_names(self) -> set[str]:
        names: set[str] = set()
        cursor: str | None = None
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            result = await self.session.list_tools(params=params)
            names.update(t.name for t in result.tools)
            cursor = result.next_cursor
            if not cursor:
                return names

    async def tools(self) -> dict[str, types.Tool]:
        result = await self.session.list_tools()
        return {t.name: t for t in result.tools}

    async def wait_for_tools(self, *names: str, timeout: float = 20) -> set[str]:
        """Poll `tools/list` until every name in `names` is listed."""

        async def present() -> set[str] | None:
            have = await self.tool_names()
            return have if set(names) <= have else None

        return await wait_for(present, timeout=timeout, what=f"tools/list to include {sorted(names)}")

    async def wait_for_list_changed(self, more_than: int, *, timeout: float = 20) -> int:
        return await wait_for(
            lambda: self.list_changed_count() > more_than and self.list_changed_count(),
            timeout=timeout,
            what=f"a {LIST_CHANGED} notification (have {self.list_changed_count()}, need > {more_than})",
        )

    async def call(self, name: str, args: dict[str, Any] | None = None) -> ToolOutcome:
        result = await self.session.call_tool(name, args or {})
        text = "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))
        return ToolOutcome(result.is_error, text, result.structured_content)

    async def call_ok(self, name: str, args: dict[str, Any] | None = None) -> ToolOutcome:
        """Call a tool that must succeed."""
        out = await self.call(name, args)
        assert not out.is_error, f"{name}({args}) failed: {out}"
        return out

    async def listed_tab(self, url: str, *, timeout: float = 30) -> dict[str, Any]:
        """The first tab `browser_tabs` lists whose URL starts with `url`, once it lists one (a page the
        browser opened by itself reaches the server once its extension has connected)."""

        async def listed() -> dict[str, Any] | None:
            out = await self.call("browser_tabs")
            tabs = [t for t in (out.structured or {}).get("tabs", []) if t.get("url", "").startswith(url)]
            return tabs[0] if tabs else None

        return await wait_for(listed, timeout=timeout, what=f"browser_tabs to list {url}")

    async def browser_open(self, url: str, *, timeout: float = 20) -> ToolOutcome:
        """`browser_open` of `url`, retried only while the extension has not connected yet (NOT_CONNECTED)."""

        async def opened() -> ToolOutcome | None:
            out = await self.call("browser_open", {"url": url})
            return None if out.is_error and "NOT_CONNECTED" in error_codes_in(out.text) else out

        return await wait_for(opened, timeout=timeout, what=f"the extension to connect so browser_open({url}) works")


async def _initialized_session(
    stack: AsyncExitStack, read: Any, write: Any, request_timeout: float, elicitation_callback: Any = None
) -> TabwireSession:
    """A ClientSession on `read`/`write` that records every notification's method, initialized. With
    `elicitation_callback`, the client declares that it can ask its user (elicitation) and answers so."""
    notifications: list[str] = []
    received_at: list[float] = []

    async def on_message(message: Any) -> None:
        received_at.append(time.time())
        if isinstance(message, Exception):
            notifications.append(f"exception: {message!r}")
            return
        notifications.append(getattr(message, "method", type(message).__name__))

    session = await stack.enter_async_context(
        ClientSession(
            read,
            write,
            read_timeout_seconds=request_timeout,
            message_handler=on_message,
            elicitation_callback=elicitation_callback,
        )
    )
    init = await session.initialize()
    return TabwireSession(session, notifications, received_at, init)


@asynccontextmanager
async def open_tabwire_session(
    binary: Path,
    args: list[str],
    *,
    env: dict[str, str],
    cwd: Path,
    stderr_path: Path,
    request_timeout: float = 30,
    elicitation_callback: Any = None,
) -> AsyncIterator[TabwireSession]:
    """Start `binary args...` over stdio, initialize, and yield the session; stop the process on exit."""
    params = StdioServerParameters(command=str(binary), args=args, env=env, cwd=cwd)
    with open(stderr_path, "a", encoding="utf-8") as errlog:
        async with AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            yield await _initialized_session(stack, read, write, request_timeout, elicitation_callback)


@asynccontextmanager
async def open_tabwire_http_session(
    url: str, *, headers: dict[str, str], request_timeout: float = 30
) -> AsyncIterator[TabwireSession]:
    """Connect the official Python SDK to a `tabwire mcp --http` server over Streamable HTTP (sending
    `headers`: the bearer) and initialize."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with AsyncExitStack() as stack:
        client = await stack.enter_async_context(create_mcp_http_client(headers=headers))
        streams = await stack.enter_async_context(streamable_http_client(url, http_client=client))
        read, write = streams[0], streams[1]
        yield await _initialized_session(stack, read, write, request_timeout)

"""End to end: `tabwire audit` prints what clients and tools are called without letting either print lines or
colours of its own. A client whose name carries a newline and ANSI escapes calls tools whose names forge a
whole audit line (and one 64 KB long): every field is printed with its control characters visible, each line
is capped, and the audit file holds one bounded line per call.
"""

from __future__ import annotations

from contextlib import AsyncExitStack

import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from conftest import run_cli

pytestmark = pytest.mark.anyio

FORGED = "2026-11-26T10:00:00.000Z  claude-desktop     bank_transfer            ok 3 ms"


async def test_forged_audit_lines_are_printed_escaped(tabwire_command):
    c = tabwire_command
    client = types.Implementation(name="evil\x1b[2K\r" + FORGED + "\n", version="1")
    with open(c.stderr_path, "a", encoding="utf-8") as errlog:
        async with AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(stdio_client(c.stdio_parameters(), errlog=errlog))
            session = await stack.enter_async_context(ClientSession(read, write, client_info=client))
            await session.initialize()
            for name in ("x\n" + FORGED, "y\x1b]0;owned\x07\x1b[31m", "z" * 65536):
                # An unknown tool: a JSON-RPC error, audited all the same.
                with pytest.raises(MCPError):
                    await session.call_tool(name, {})

    printed = run_cli(c, "audit", "-n", "10")
    print(printed)
    lines = printed.splitlines()
    assert not any(line.startswith(FORGED[:24]) for line in lines), printed
    assert "\x1b" not in printed and "\r" not in printed and "\x07" not in printed, repr(printed)
    assert "evil\\u{1b}[2K\\r2026-11-26T10:00:00.000Z" in printed, printed
    assert "x\\n2026-11-26T10:00:00.000Z" in printed, printed
    assert max(len(line) for line in lines) < 2000, max(len(line) for line in lines)
    audit = next((c.cwd / "data").rglob("audit.jsonl"))
    assert max(len(line) for line in audit.read_text().splitlines()) < 2000

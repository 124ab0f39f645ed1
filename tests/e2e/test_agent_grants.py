"""End to end, issue 28: a grant for one agent. `tabwire allow ORIGIN --agent NAME` lets that agent's page
tools act on the origin and no other agent's (they get PERMISSION_REQUIRED), in the hub's session and in a
peer's alike; `tabwire allow ORIGIN` (every agent, the default) then lets the other agent too, and a revoke
for the one agent takes only its grant back.
"""

from __future__ import annotations

from contextlib import AsyncExitStack

import pytest

from conftest import run_cli
from test_agents import hub_and_peer, page_url, read_tab

pytestmark = pytest.mark.anyio


async def test_a_grant_for_one_agent_serves_that_agent_only(
    tabwire_command, pairing, launch_chromium, extension_dir, fixture_server, tmp_path
):
    c = tabwire_command.serving_page_tools_only(call_timeout_ms=8000)
    origin = fixture_server.origin
    async with AsyncExitStack() as stack:
        alpha, bravo = await hub_and_peer(stack, c, pairing, tmp_path)
        await launch_chromium(extension_dir=extension_dir, url=page_url(fixture_server, "the person"))
        shared = (await alpha.browser_open(page_url(fixture_server, "the person"))).structured["tab_id"]
        await alpha.call_ok("browser_tab", {"tab_id": shared, "action": "release"})

        # For the peer's agent (mcp-2) only.
        run_cli(c, "allow", origin, "--agent", "mcp-2")
        assert "mcp-2" in run_cli(c, "grants")
        assert "page of the person" in (await bravo.call_ok("page_read", {"tab_id": shared})).text
        refused = await read_tab(alpha, shared)
        assert refused.is_error and refused.text.startswith("PERMISSION_REQUIRED"), refused

        # For every agent.
        run_cli(c, "allow", origin)
        assert "page of the person" in (await alpha.call_ok("page_read", {"tab_id": shared})).text

        # Back to one agent (mcp, the hub's), then its grant taken back alone.
        run_cli(c, "revoke", origin)
        run_cli(c, "allow", origin, "--agent", "mcp")
        assert "page of the person" in (await alpha.call_ok("page_read", {"tab_id": shared})).text
        refused = await read_tab(bravo, shared)
        assert refused.is_error and refused.text.startswith("PERMISSION_REQUIRED"), refused
        run_cli(c, "revoke", origin, "--agent", "mcp")
        refused = await read_tab(alpha, shared)
        assert refused.is_error and refused.text.startswith("PERMISSION_REQUIRED"), refused

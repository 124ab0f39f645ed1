"""End to end: two MCP clients, each with its own `tabwire mcp`, share one Chromium with the real extension.

The first process owns the port (the hub), the second joins it as a peer; both clients drive the same
TodoMVC tab. Then the hub's process is killed: the peer takes the port over, the extension reconnects
to it by itself and re-registers the tab's tools, and the second client's calls work again within a few
seconds. TodoMVC's own localStorage is the oracle.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from contextlib import AsyncExitStack

import pytest

from harness.mcp_client import error_codes_in
from harness.todomvc import TODO_TOOLS, stored_todos, wait_until_app_ready
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

TAKEOVER_DEADLINE = 10


def tabwire_status(binary, pairing) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(binary), "status", "--port", str(pairing.port), "--secret-file", str(pairing.secret_file)],
        capture_output=True,
        text=True,
        timeout=10,
    )


def hub_pid(binary, pairing) -> int | None:
    shown = tabwire_status(binary, pairing)
    found = re.search(r"^hub: pid (\d+),", shown.stdout, re.MULTILINE)
    return int(found.group(1)) if shown.returncode == 0 and found else None


async def test_two_clients_share_one_browser_and_the_peer_takes_over(
    tabwire_command, pairing, launch_chromium, extension_dir, todomvc_url, tmp_path
):
    c = tabwire_command
    url = todomvc_url("plain")
    async with AsyncExitStack() as stack:
        first = await stack.enter_async_context(
            c.session()
        )
        first_pid = await wait_for(
            lambda: hub_pid(c.binary, pairing), timeout=10, what="the first tabwire to own the port"
        )
        second = await stack.enter_async_context(
            c.session(stderr_path=tmp_path / "tabwire-peer.stderr.log")
        )
        browser = await launch_chromium(extension_dir=extension_dir, url=url)
        await first.wait_for_tools(*TODO_TOOLS)
        await second.wait_for_tools(*TODO_TOOLS)
        page = await browser.cdp.wait_for_page(url)
        await wait_until_app_ready(browser.cdp, page)

        await second.call_ok("todomvc_add_todo", {"title": "from the second client"})
        await first.call_ok("todomvc_add_todo", {"title": "from the first client"})
        assert [t["title"] for t in await stored_todos(browser.cdp, page)] == [
            "from the second client",
            "from the first client",
        ]

        shown = tabwire_status(c.binary, pairing)
        assert shown.returncode == 0, shown
        assert f"hub: pid {first_pid}," in shown.stdout, shown.stdout
        assert "peers: 1" in shown.stdout, shown.stdout
        assert "todomvc_add_todo" in shown.stdout, shown.stdout
        assert pairing.secret not in shown.stdout + shown.stderr

        os.kill(first_pid, signal.SIGKILL)

        async def listing_works():
            out = await second.call("todomvc_list_todos")
            if out.is_error:
                # Until the extension is back: no browser, or the tools are not registered again yet.
                assert set(error_codes_in(out.text)) & {"NOT_CONNECTED", "NO_SUCH_TOOL"}, out
                return None
            return out

        await wait_for(
            listing_works, timeout=TAKEOVER_DEADLINE, what="the second client's calls to work after the hub died"
        )
        await second.call_ok("todomvc_add_todo", {"title": "after the hub died"})
        assert [t["title"] for t in await stored_todos(browser.cdp, page)] == [
            "from the second client",
            "from the first client",
            "after the hub died",
        ]
        assert hub_pid(c.binary, pairing) not in (None, first_pid)

"""End to end, issue 28: the person sees and steers the agents — Chrome tab groups named after them, the
popup's agent list, Stop (the agent's running call ends, later ones are refused until Allow) and Share.

Two Python SDK clients, each in its own `tabwire mcp` (the second a peer of the first), in real Chromium with
the real extension; the popup's real page is opened as a tab and read and clicked through DevTools, and the
tab groups are read through the extension's own page (`chrome.tabGroups`).
"""

from __future__ import annotations

import time
from contextlib import AsyncExitStack

import anyio
import pytest

from harness.extension_pages import open_extension_page
from harness.waiting import wait_for
from test_agents import hub_and_peer, page_url, read_tab
from test_several_clients import tabwire_status

pytestmark = pytest.mark.anyio

# How long the call the person stops would wait on its own; it must end far sooner.
LONG_WAIT_MS = 20000

GROUP_TITLES = """Promise.all(%s.map(async (id) => {
  const tab = await chrome.tabs.get(id);
  return tab.groupId >= 0 ? (await chrome.tabGroups.get(tab.groupId)).title : null;
}))"""

AGENTS_DOM = """[...document.querySelectorAll('#agents li[data-agent]')].map((li) => ({
  name: li.dataset.agent,
  stopped: li.dataset.stopped === 'true',
  tabs: [...li.querySelectorAll('.agent-tabs li[data-tab]')].map((t) => Number(t.dataset.tab)),
}))"""


def click(selector: str) -> str:
    return f"(() => {{ const b = document.querySelector({selector!r}); if (!b || b.disabled) return false; b.click(); return true; }})()"


async def test_tab_groups_popup_agents_stop_allow_and_share(
    tabwire_command, pairing, launch_chromium, extension_dir, extension_id, fixture_server, tmp_path
):
    c = tabwire_command.serving_page_tools_only(call_timeout_ms=30000).allowing_all_origins()
    async with AsyncExitStack() as stack:
        alpha, bravo = await hub_and_peer(stack, c, pairing, tmp_path)
        browser = await launch_chromium(extension_dir=extension_dir)
        alpha_tab = (await alpha.browser_open(page_url(fixture_server, "alpha"))).structured["tab_id"]
        bravo_tab = (await bravo.browser_open(page_url(fixture_server, "bravo"))).structured["tab_id"]
        popup = await open_extension_page(browser.cdp, extension_id, "extension/popup.html")

        async def titles():
            return await browser.cdp.evaluate(popup, GROUP_TITLES % [alpha_tab, bravo_tab], await_promise=True)

        # Each agent's tab is in a tab group named after it.
        await wait_for(lambda: _equal(titles(), ["mcp", "mcp-2"]), timeout=10, what="tab groups named after the agents")

        async def agents_shown():
            return await browser.cdp.evaluate(popup, AGENTS_DOM)

        await wait_for(
            lambda: _equal(
                agents_shown(),
                [
                    {"name": "mcp", "stopped": False, "tabs": [alpha_tab]},
                    {"name": "mcp-2", "stopped": False, "tabs": [bravo_tab]},
                ],
            ),
            timeout=10,
            what="the popup to list both agents with their tabs",
        )

        # A call of bravo's that would wait long; the person stops bravo from the popup meanwhile.
        outcome = {}

        async def long_call():
            started = time.monotonic()
            outcome["out"] = await bravo.call(
                "page_wait", {"tab_id": bravo_tab, "text": "never on this page", "timeout_ms": LONG_WAIT_MS}
            )
            outcome["took"] = time.monotonic() - started

        async with anyio.create_task_group() as group:
            group.start_soon(long_call)
            await wait_for(
                lambda: "agent mcp-2 (\"mcp\"), 1 running" in tabwire_status(c.binary, pairing).stdout,
                timeout=10,
                what="the hub to run bravo's long call",
            )
            assert await browser.cdp.evaluate(popup, click('#agents li[data-agent="mcp-2"] .stop-agent'))
        out = outcome["out"]
        assert out.is_error and out.text.startswith("AGENT_STOPPED"), out
        assert outcome["took"] < LONG_WAIT_MS / 1000 / 2, outcome
        refused = await read_tab(bravo, bravo_tab)
        assert refused.is_error and refused.text.startswith("AGENT_STOPPED"), refused
        assert "page of alpha" in (await alpha.call_ok("page_read", {"tab_id": alpha_tab})).text
        await wait_for(
            lambda: _equal(titles(), ["mcp", "mcp-2 (stopped)"]), timeout=10, what="the stopped agent's group title"
        )
        shown = await agents_shown()
        assert shown[1] == {"name": "mcp-2", "stopped": True, "tabs": [bravo_tab]}, shown

        # Allowed again: bravo's calls work.
        await wait_for(
            lambda: browser.cdp.evaluate(popup, click('#agents li[data-agent="mcp-2"] .allow-agent')),
            timeout=10,
            what="the popup's Allow button",
        )
        await wait_for(
            lambda: _readable(bravo, bravo_tab, "page of bravo"), timeout=10, what="bravo's calls to work again"
        )

        # The person shares alpha's tab: bravo may read it, and it leaves alpha's group.
        assert (await read_tab(bravo, alpha_tab)).text.startswith("TAB_HELD")
        await wait_for(
            lambda: browser.cdp.evaluate(popup, click(f'#agents li[data-agent="mcp"] li[data-tab="{alpha_tab}"] button')),
            timeout=10,
            what="the popup's Share button",
        )
        await wait_for(
            lambda: _readable(bravo, alpha_tab, "page of alpha"), timeout=10, what="alpha's tab to be shared"
        )
        await wait_for(lambda: _equal(titles(), [None, "mcp-2"]), timeout=10, what="the shared tab to leave its group")


async def _equal(value, expected) -> bool:
    return (await value) == expected


async def _readable(session, tab: int, text: str) -> bool:
    out = await read_tab(session, tab)
    return not out.is_error and text in out.text

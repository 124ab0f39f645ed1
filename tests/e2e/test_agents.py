"""End to end, issue 28: several agents in one browser without stepping on each other.

Three MCP clients — two with the Python SDK, one with the TypeScript SDK — each in its own `tabwire mcp`
process (the first owns the port, the others join it as peers), share one Chromium with the real extension.
Each opens a tab of its own, which it then holds; the person's own tab is shared. Each page says whose it
is, so an answer that reached the wrong agent shows. The test checks: the agents' names (a suffix when two
clients share a name), `browser_tabs` showing holders, TAB_HELD naming the holder, many interleaved calls of
all three agents with every answer their own, claim and release of the person's tab, and a session's end
releasing its tab (left open).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from contextlib import AsyncExitStack
from pathlib import Path
from urllib.parse import quote

import anyio
import pytest

from conftest import run_cli
from harness.mcp_client import open_tabwire_http_session
from harness.tabwire_http import bearer, tabwire_http
from harness.waiting import wait_for
from test_clients_typescript import NODE, client_dir
from test_several_clients import hub_pid

pytestmark = pytest.mark.anyio

TS_AGENT = "ts_agent.mjs"
# Calls each agent makes in the interleaving phase (a third each to its own tab, the shared one and another
# agent's held tab), and how many each keeps in flight.
CALLS_PER_AGENT = 700
IN_FLIGHT = 8


def page_url(fixture_server, who: str) -> str:
    return fixture_server.url("plain", "agents/index.html") + f"?who={quote(who)}"


def tabs_of(listing) -> dict[int, dict]:
    return {t["id"]: t for t in listing.structured["tabs"]}


async def hub_and_peer(stack: AsyncExitStack, c, pairing, tmp_path: Path):
    """Two MCP sessions, each in its own `tabwire mcp`: the first owns the port (the hub), the second joins
    it as a peer; both close with `stack`."""
    alpha = await stack.enter_async_context(
        c.session()
    )
    await wait_for(lambda: hub_pid(c.binary, pairing), timeout=10, what="the first tabwire to own the port")
    bravo = await stack.enter_async_context(
        c.session(stderr_path=tmp_path / "tabwire-peer.stderr.log")
    )
    return alpha, bravo


async def read_tab(session, tab: int):
    return await session.call("page_read", {"tab_id": tab})


async def interleave(session, own: int, own_text: str, shared: int, held: int, holder: str) -> dict:
    """CALLS_PER_AGENT page_read calls, IN_FLIGHT at a time: every answer must be this agent's own."""
    seen = {"own": 0, "shared": 0, "held_refused": 0, "crossed": []}
    targets = [("own", own), ("shared", shared), ("held", held)]
    jobs = iter(range(CALLS_PER_AGENT))

    async def worker():
        for i in jobs:
            kind, tab = targets[i % 3]
            out = await read_tab(session, tab)
            if kind == "held":
                if out.is_error and out.text.startswith("TAB_HELD") and f"held by agent {holder}:" in out.text:
                    seen["held_refused"] += 1
                else:
                    seen["crossed"].append((kind, out.text[:200]))
            elif not out.is_error and (own_text if kind == "own" else "page of the person") in out.text:
                seen[kind] += 1
            else:
                seen["crossed"].append((kind, out.text[:200]))

    async with anyio.create_task_group() as group:
        for _ in range(IN_FLIGHT):
            group.start_soon(worker)
    return seen


async def test_agents_hold_their_tabs_and_answers_never_cross(
    tabwire_command, pairing, launch_chromium, extension_dir, fixture_server, tmp_path
):
    c = tabwire_command.serving_page_tools_only(call_timeout_ms=8000).allowing_all_origins()
    async with AsyncExitStack() as stack:
        alpha = await stack.enter_async_context(
            c.session()
        )
        await wait_for(lambda: hub_pid(c.binary, pairing), timeout=10, what="the first tabwire to own the port")
        bravo_session = AsyncExitStack()
        bravo = await bravo_session.enter_async_context(
            c.session(stderr_path=tmp_path / "tabwire-peer.stderr.log")
        )
        stack.push_async_callback(bravo_session.aclose)
        await launch_chromium(extension_dir=extension_dir, url=page_url(fixture_server, "the person"))

        alpha_tab = (await alpha.browser_open(page_url(fixture_server, "alpha"))).structured["tab_id"]
        bravo_tab = (await bravo.browser_open(page_url(fixture_server, "bravo"))).structured["tab_id"]
        seen_by_bravo = await bravo.call_ok("browser_tabs")
        seen_by_alpha = await alpha.call_ok("browser_tabs")
        # Both Python clients call themselves "mcp": the second one gets a suffix.
        assert seen_by_alpha.structured["you"] == "mcp", seen_by_alpha
        assert seen_by_bravo.structured["you"] == "mcp-2", seen_by_bravo
        listed = tabs_of(seen_by_bravo)
        assert listed[alpha_tab]["holder"] == "mcp", listed
        assert listed[bravo_tab]["holder"] == "mcp-2", listed
        person = [t for t, info in listed.items() if "the%20person" in info["url"]]
        assert len(person) == 1, listed
        shared = person[0]
        assert "holder" not in listed[shared], "a tab the person opened is shared"

        # Another agent's tab is refused at once, naming its holder; the shared tab serves both.
        refused = await read_tab(bravo, alpha_tab)
        assert refused.is_error and refused.text.startswith("TAB_HELD"), refused
        assert "held by agent mcp:" in refused.text, refused
        assert refused.structured["error"]["code"] == "TAB_HELD"
        refused = await read_tab(alpha, bravo_tab)
        assert refused.is_error and "held by agent mcp-2:" in refused.text, refused
        closing = await alpha.call("browser_tab", {"tab_id": bravo_tab, "action": "close"})
        assert closing.is_error and closing.text.startswith("TAB_HELD"), "no agent closes another's tab"
        assert "page of the person" in (await alpha.call_ok("page_read", {"tab_id": shared})).text
        assert "page of the person" in (await bravo.call_ok("page_read", {"tab_id": shared})).text

        # Many interleaved calls of three agents (the TypeScript one in its own peer process): every answer
        # is the caller's own.
        scripts = client_dir(tmp_path)
        shutil.copy2(Path(__file__).parent / "clients" / TS_AGENT, scripts / TS_AGENT)
        ts_config = {
            "stdio": {"command": str(c.binary), "args": c.args, "env": c.env, "cwd": str(c.cwd)},
            "own_url": page_url(fixture_server, "ts"),
            "shared_tab": shared,
            "held_tab": alpha_tab,
            "holder": "mcp",
            "calls": CALLS_PER_AGENT,
            "in_flight": IN_FLIGHT,
        }
        ts = subprocess.Popen(
            [str(NODE), str(scripts / TS_AGENT), json.dumps(ts_config)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            line = await anyio.to_thread.run_sync(ts.stdout.readline)
            if not line:
                pytest.fail(f"the TypeScript agent stopped:\n{ts.stderr.read()[-3000:]}")
            ready = json.loads(line)
            assert ready["you"] == "ts-agent", ready
            results = {}

            async def run(name, *args):
                results[name] = await interleave(*args)

            async with anyio.create_task_group() as group:
                group.start_soon(run, "alpha", alpha, alpha_tab, "page of alpha", shared, bravo_tab, "mcp-2")
                group.start_soon(run, "bravo", bravo, bravo_tab, "page of bravo", shared, alpha_tab, "mcp")
            out, err = await anyio.to_thread.run_sync(lambda: ts.communicate(timeout=120))
        finally:
            if ts.poll() is None:
                ts.kill()
                ts.wait()
        assert ts.returncode == 0, f"the TypeScript agent failed:\n{err[-3000:]}"
        results["ts"] = json.loads(out.strip().splitlines()[-1])
        per_kind = CALLS_PER_AGENT // 3
        for name, seen in results.items():
            assert seen["crossed"] == [], (name, seen["crossed"][:5])
            assert seen["own"] >= per_kind and seen["shared"] >= per_kind, (name, seen)
            assert seen["held_refused"] >= per_kind, (name, seen)
        ts_tab = results["ts"]["own_tab"]
        # The TypeScript agent's session ended with its process: its tab is shared again, still open.
        await wait_for(
            lambda: _readable(alpha, ts_tab, "page of ts"), timeout=10, what="the TypeScript agent's tab to be released"
        )

        # The person's tab: claimed by one agent, refused to the other, released, served again.
        claimed = await bravo.call_ok("browser_tab", {"tab_id": shared, "action": "claim"})
        assert claimed.structured["holder"] == "mcp-2", claimed
        refused = await read_tab(alpha, shared)
        assert refused.is_error and "held by agent mcp-2:" in refused.text, refused
        assert (await alpha.call("browser_tab", {"tab_id": shared, "action": "claim"})).is_error
        released = await bravo.call_ok("browser_tab", {"tab_id": shared, "action": "release"})
        assert released.structured["holder"] is None, released
        assert "page of the person" in (await alpha.call_ok("page_read", {"tab_id": shared})).text

        # Bravo's session ends: its tab is released, not closed.
        await bravo_session.aclose()
        await wait_for(
            lambda: _readable(alpha, bravo_tab, "page of bravo"), timeout=10, what="bravo's tab to be released"
        )
        assert bravo_tab in tabs_of(await alpha.call_ok("browser_tabs"))

    # Every audit line names its agent: both Python agents, told apart, and the TypeScript one.
    audit = run_cli(c, "audit", "-n", "5000")
    for name in ("mcp ", "mcp-2", "ts-agent"):
        assert name in audit, (name, audit[-2000:])


async def _readable(session, tab: int, text: str) -> bool:
    out = await read_tab(session, tab)
    return not out.is_error and text in out.text


async def test_an_http_sessions_tabs_are_released_when_it_ends(
    tabwire_command, pairing, launch_chromium, extension_dir, fixture_server, tmp_path
):
    """A Streamable HTTP session is an agent too (its process is the hub here): its tab is held from a stdio
    peer's agent until the HTTP session ends, then shared (still open)."""
    c = tabwire_command.serving_page_tools_only(call_timeout_ms=8000).allowing_all_origins()
    with tabwire_http(c) as port:
        await wait_for(lambda: hub_pid(c.binary, pairing), timeout=10, what="the HTTP tabwire to own the port")
        async with AsyncExitStack() as stack:
            peer = await stack.enter_async_context(
                c.session()
            )
            await launch_chromium(extension_dir=extension_dir)
            async with open_tabwire_http_session(f"http://127.0.0.1:{port}/mcp", headers=bearer(c)) as http:
                held = (await http.browser_open(page_url(fixture_server, "http"))).structured["tab_id"]
                refused = await read_tab(peer, held)
                # The hub names agents in the order they join: the peer's may have joined first.
                assert refused.is_error and re.search(r"held by agent mcp(-2)?:", refused.text), refused
            await wait_for(
                lambda: _readable(peer, held, "page of http"), timeout=10, what="the HTTP session's tab to be released"
            )


async def test_a_site_call_without_a_tab_goes_to_a_tab_the_agent_may_use(
    tabwire_command, pairing, launch_chromium, extension_dir, todomvc_url, tmp_path
):
    """A site tool called without `tab_id` goes to the best tab offering it that the caller may use, not to a
    higher-ranked one another agent holds; only when every such tab is held is it refused, naming the holder.
    The caller is an agent of the hub's process, which decides holds (a peer's agent does not know them yet:
    its call goes to the best tab and may be refused, as README says)."""
    c = tabwire_command
    url = todomvc_url("plain")
    async with AsyncExitStack() as stack:
        alpha, bravo = await hub_and_peer(stack, c, pairing, tmp_path)
        await launch_chromium(extension_dir=extension_dir, url=url)
        await bravo.wait_for_tools("todomvc_list_todos")
        bravo_tab = (await bravo.browser_open(url)).structured["tab_id"]
        listing = await alpha.call_ok("browser_tabs")
        tabs = listing.structured["tabs"]
        # Bravo's new tab is the one calls go to by default: without the caller's view, alpha's call would
        # land there and be refused.
        assert tabs[0]["id"] == bravo_tab and tabs[0]["holder"] == "mcp-2", tabs
        person = [t["id"] for t in tabs if t["id"] != bravo_tab and "holder" not in t]
        assert len(person) == 1, tabs

        served = await alpha.call("todomvc_list_todos", {})
        assert not served.is_error, served

        # Every tab offering it held by bravo: alpha's call is refused, naming the holder.
        await bravo.call_ok("browser_tab", {"tab_id": person[0], "action": "claim"})
        refused = await alpha.call("todomvc_list_todos", {})
        assert refused.is_error and refused.text.startswith("TAB_HELD"), refused
        assert "held by agent mcp-2:" in refused.text, refused

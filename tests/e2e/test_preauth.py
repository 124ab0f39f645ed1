"""End to end: before authenticating, a connection to tabwire costs almost nothing, and refusing clients costs
no log. A hostile local process floods the WebSocket port and the Streamable HTTP endpoint with connections
that never authenticate (silent sockets, a forged upgrade announcing an 8 MiB frame, requests without the
bearer, a request head trickled a byte at a time), reopening each one the server closes; meanwhile the
legitimate client — a client doing the real handshake, the real extension in Chromium, the official MCP SDK
over HTTP — gets in every time, and the server's memory stays bounded. A flood of refused handshakes and
requests writes a few lines of log, and a 64 KB tool name writes one short line.

Each test prints its numbers (RSS before and under the flood, successes out of tries, log bytes).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import AsyncContextManager, AsyncIterator, Callable

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from harness import handshake as hs
from harness.fake_extension import fake_extension, wait_listening
from harness.flood import Flood, rss_kib
from harness.mcp_client import open_tabwire_http_session
from harness.processes import pid_listening_on
from harness.tabwire_http import bearer, tabwire_http
from harness.waiting import wait_for
from test_faults import (  # noqa: F401 - fixtures
    fault_pages,
    open_tab,
    page_url,
    stop_service_worker,
    tabwire_command,
)

# `alone`: whether the real client gets in under a flood depends on how fast tabwire turns its waiting
# pool over, and another test's browser on the same two cores is a second flood (test.sh runs these
# after the others, one at a time).
pytestmark = [pytest.mark.anyio, pytest.mark.alone]

# Sockets in each flood: well past every bound tabwire keeps (128 waiting WebSocket handshakes, 128 waiting
# HTTP connections), so that the flood's newest sockets keep evicting its oldest the whole time.
FLOOD = 160
# The promise on memory: this many silent or stalled sockets grow tabwire's RSS by less than this.
MAX_RSS_GROWTH_KIB = 24 * 1024


async def flooded(flood: Flood) -> None:
    """Waits until every socket of `flood` was opened and the server has been evicting for a while."""
    await wait_for(lambda: flood.connects >= 2 * flood.count, timeout=30, what=f"the {flood.kind} flood to run")


async def clients_get_in_under(
    flood: Flood, pid: int, join: Callable[[], AsyncContextManager[None]], *, tries: int, per_try_s: float, who: str
) -> None:
    """Under `flood`, a client gets in (inside `join()`, once it checked what it was told; each try bounded
    by `per_try_s`) `tries` times out of `tries`, and the server's RSS (process `pid`) grows by less than
    MAX_RSS_GROWTH_KIB."""
    before = rss_kib(pid)
    got_in, peak = 0, before
    async with flood:
        await flooded(flood)
        for n in range(tries):
            try:
                with anyio.fail_after(per_try_s):
                    async with join():
                        got_in += 1
            except Exception as e:  # noqa: BLE001 - any failure to get in is counted and shown
                print(f"try {n}: {who} did not get in: {e!r}")
            peak = max(peak, rss_kib(pid))
        connects = flood.connects
    print(
        f"{who} got in {got_in}/{tries} under a flood of {FLOOD} sockets ({connects} connections opened); "
        f"tabwire RSS {before / 1024:.1f} MiB before, {peak / 1024:.1f} MiB at most under the flood"
    )
    assert got_in == tries, f"{who} got in {got_in} of {tries} times under the flood"
    assert peak - before < MAX_RSS_GROWTH_KIB, f"RSS grew by {(peak - before) / 1024:.1f} MiB"


@pytest.mark.parametrize("kind", ["silent", "big_frame"])
async def test_a_flood_of_unauthenticated_sockets_neither_keeps_a_client_out_nor_costs_memory(
    tabwire, pairing, extension_id, kind
):
    await wait_listening(pairing.port)
    pid = await wait_for(lambda: pid_listening_on(pairing.port), timeout=5, what="tabwire's pid")

    @contextlib.asynccontextmanager
    async def join() -> AsyncIterator[None]:
        async with fake_extension(pairing.port, extension_id, pairing.secret) as ext:
            assert ext.welcome["type"] == "welcome"
            yield

    flood = Flood(pairing.port, FLOOD, kind, extension_id=extension_id)
    await clients_get_in_under(flood, pid, join, tries=30, per_try_s=10, who=f"{kind}: the client")


async def test_the_real_extension_gets_in_every_time_under_a_flood(
    tabwire, launch_chromium, extension_dir, fault_pages, extension_id, pairing  # noqa: F811
):
    browser = await launch_chromium(extension_dir=extension_dir)
    tab = await open_tab(tabwire, page_url(fault_pages, "home"))
    restarts, served = 6, 0
    async with Flood(pairing.port, FLOOD, "silent") as flood:
        await flooded(flood)
        for n in range(restarts):
            # Stop the service worker: it comes back and must connect again, through the flood.
            await stop_service_worker(browser.cdp, extension_id)
            started = time.monotonic()

            async def echoed() -> bool:
                out = await tabwire.call("faults_echo", {"n": n, "tab_id": tab})
                return not out.is_error and out.structured["n"] == n

            await wait_for(echoed, timeout=20, what=f"the extension to reconnect through the flood ({n})")
            served += 1
            print(f"restart {n}: the extension was back {time.monotonic() - started:.2f}s later")
        connects = flood.connects
    print(f"silent flood of {FLOOD} sockets ({connects} connections): the real extension got in {served}/{restarts}")
    assert served == restarts


@pytest.mark.parametrize("kind", ["no_bearer", "trickle", "silent"])
async def test_http_without_the_bearer_never_keeps_the_real_client_out(tabwire_command, kind):
    with tabwire_http(tabwire_command, with_process=True) as (port, process):

        @contextlib.asynccontextmanager
        async def join() -> AsyncIterator[None]:
            async with open_tabwire_http_session(f"http://127.0.0.1:{port}/mcp", headers=bearer(tabwire_command)) as s:
                assert "browser_tabs" in await s.tool_names()
                yield

        flood = Flood(port, FLOOD, kind)
        await clients_get_in_under(flood, process.pid, join, tries=12, per_try_s=15, who=f"HTTP {kind}: the SDK client")
    if kind != "no_bearer":  # refused at once, those never fill the pool
        # What the person reading the log is told of the evictions.
        log = tabwire_command.stderr_path.read_text()
        said = "HTTP connections were waiting without the bearer: closed the oldest without a whole request head"
        assert said in log, log[-2000:]


async def refuse_for(port: int, seconds: float, extension_id: str) -> int:
    """Opens refused WebSocket handshakes (web origins, each a different one, and bad offers) for `seconds`."""
    refused = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        origin, protocols = (
            (f"http://evil{refused}.example", hs.offer(hs.BROWSER, "5a" * 32))
            if refused % 2
            else (f"chrome-extension://{extension_id}", [hs.BROWSER])
        )
        try:
            async with connect(f"ws://127.0.0.1:{port}/", origin=origin, subprotocols=protocols, proxy=None):
                pass
        except InvalidStatus:
            refused += 1
    return refused


async def test_a_flood_of_refusals_writes_a_few_lines_and_a_huge_tool_name_one_short_line(
    tabwire, tabwire_command, pairing, extension_id
):
    log = tabwire_command.stderr_path
    await wait_listening(pairing.port)
    start = log.stat().st_size
    refused = await refuse_for(pairing.port, 5, extension_id)
    await asyncio.sleep(0)  # the log is written synchronously by the server; nothing to wait for
    grown = log.stat().st_size - start
    print(f"{refused} refused WebSocket handshakes in 5 s wrote {grown} bytes of log")
    assert refused > 500, f"the flood was too small to show anything: {refused}"
    assert grown < 16 * 1024, f"{refused} refusals wrote {grown} bytes"
    assert "refused a WebSocket handshake" in log.read_text()[start:]

    # A 64 KB tool name (an unknown tool) and one that tries to print lines of its own.
    start = log.stat().st_size
    for name in ("n" * 65536, "evil\n2026-01-01T00:00:00Z INFO tabwire: forged line\x1b[2K"):
        with pytest.raises(MCPError):  # an unknown tool: a JSON-RPC error, logged by rmcp with the name
            await tabwire.session.call_tool(name, {})
    grown = log.stat().st_size - start
    print(f"two calls of hostile tool names wrote {grown} bytes of log")
    assert grown < 16 * 1024, grown
    assert "forged line" not in "".join(
        line for line in log.read_text()[start:].splitlines(keepends=True) if line.startswith("2026-01-01")
    )


async def test_a_flood_of_http_refusals_writes_a_few_lines(tabwire_command):
    with tabwire_http(tabwire_command) as port:
        log = tabwire_command.stderr_path
        start = log.stat().st_size
        sent, deadline = 0, time.monotonic() + 5

        def post(n: int) -> None:
            import http.client

            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            headers = {"Content-Type": "application/json", "Origin": f"http://evil{n}.example"} if n % 2 else {}
            connection.request("POST", "/mcp", body="{}", headers=headers)
            connection.getresponse().read()
            connection.close()

        while time.monotonic() < deadline:
            await anyio.to_thread.run_sync(post, sent)
            sent += 1
        grown = log.stat().st_size - start
    print(f"{sent} refused HTTP requests in 5 s wrote {grown} bytes of log")
    assert sent > 200, sent
    assert grown < 16 * 1024, grown

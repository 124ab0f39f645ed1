"""End to end in real Chromium: the extension waits for a server that is not running yet without
spending its WebSocket handshakes, then connects once the server starts.

Chrome delays every WebSocket a worker opens by 1-5 s once about 16 of its handshakes failed within
a few minutes, so a worker that retried with WebSockets while no server ran would connect seconds
late (the design wants ≤ 1 s). While nothing answers on the port, the extension only probes it with
an HTTP `HEAD` (which tabwire answers), and opens a WebSocket when the probe is answered (or, rarely,
blind). A stand-in listener on the paired port records what each connection starts with and answers
nothing; then the real tabwire takes the port and the extension must connect.
"""

from __future__ import annotations

import asyncio

import pytest

from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

# Connection attempts to watch before the server starts: each is ≤ 0.6 s apart.
ATTEMPTS = 6


async def test_the_extension_probes_a_missing_server_and_connects_when_it_starts(
    tabwire_command, launch_chromium, extension_dir, pairing
):
    openings: list[bytes] = []

    async def record(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            openings.append(await asyncio.wait_for(reader.read(16), timeout=5))
        except (asyncio.TimeoutError, ConnectionError):
            openings.append(b"")
        writer.close()  # no answer: to the extension this is a server that is not there

    listener = await asyncio.start_server(record, "127.0.0.1", pairing.port)
    try:
        await launch_chromium(extension_dir=extension_dir)
        await wait_for(lambda: len(openings) >= ATTEMPTS, timeout=20, what=f"{ATTEMPTS} connection attempts")
    finally:
        listener.close()
        await listener.wait_closed()

    kinds = [o.split(b" ", 1)[0].decode(errors="replace") for o in openings]
    print(f"attempts while no server answered: {kinds}")
    assert kinds.count("HEAD") >= ATTEMPTS - 1, f"the extension should probe, not open WebSockets: {kinds}"
    assert kinds.count("GET") <= 1, f"at most one blind WebSocket in 30 s: {kinds}"

    c = tabwire_command
    async with c.session():
        await wait_for(
            lambda: "browser extension connected" in c.stderr_path.read_text(),
            timeout=10,
            what="the extension to connect to the server that started late",
        )


async def test_a_call_made_as_chrome_starts_waits_for_the_extension(tabwire, launch_chromium, extension_dir, todomvc_url):
    """The issue's case: Chrome (and tabwire) just started and the model calls browser_open at once,
    a few hundred ms before the extension has connected. The call waits for it instead of failing
    with NOT_CONNECTED."""
    await launch_chromium(extension_dir=extension_dir)
    opened = await tabwire.call("browser_open", {"url": todomvc_url("plain")})
    assert not opened.is_error, opened.text
    assert "todomvc_add_todo" in opened.structured["tools"]
    listed = (await tabwire.call_ok("browser_tabs")).structured
    assert listed["connected"] is True and listed["browsers"] == 1 and "note" not in listed, listed


async def test_browser_tabs_tells_the_model_when_no_browser_is_connected(tabwire, pairing):
    listed = await tabwire.call_ok("browser_tabs")
    assert listed.structured["connected"] is False and listed.structured["browsers"] == 0
    assert listed.structured["tabs"] == []
    note = listed.structured["note"]
    assert f"the Tabwire extension has not connected to tabwire on 127.0.0.1:{pairing.port}" in note
    assert "tabwire setup" in note and "tabwire doctor" in note
    called = await tabwire.call("todomvc_list_todos")
    assert called.is_error and called.text.startswith("NOT_CONNECTED: No browser is connected"), called.text


async def test_a_mistyped_argument_is_refused_naming_it_and_what_the_tool_takes(tabwire):
    """A server tool refuses an argument its schema does not name (as page tools do), before it reaches
    the browser: `tabId` for `tab_id` would otherwise open a new tab instead of navigating the one meant."""
    listed = {t.name: t for t in (await tabwire.session.list_tools()).tools}
    assert listed["browser_open"].input_schema.get("additionalProperties") is False
    opened = await tabwire.call("browser_open", {"url": "http://127.0.0.1/", "tabId": 3})
    assert opened.is_error, opened
    assert opened.text == 'INVALID_ARGS: browser_open: unknown argument "tabId" (the tool takes tab_id, url)', opened
    state = await tabwire.call("site_state", {"tab_id": 3, "adapter": "todomvc"})
    assert state.is_error and state.text.startswith('INVALID_ARGS: site_state: unknown argument "adapter"'), state
    # Rightly spelled, the same call goes on (and, with no browser, says so).
    opened = await tabwire.call("browser_open", {"url": "http://127.0.0.1/", "tab_id": 3})
    assert opened.is_error and opened.text.startswith("NOT_CONNECTED"), opened

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

from harness.mcp_client import open_tabwire_session
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
    async with open_tabwire_session(c.binary, c.args, env=c.env, cwd=c.cwd, stderr_path=c.stderr_path):
        await wait_for(
            lambda: "browser extension connected" in c.stderr_path.read_text(),
            timeout=10,
            what="the extension to connect to the server that started late",
        )

"""End to end: trust nobody else on the machine. A rogue program holding tabwire's port (a raw WebSocket
listener that records every byte, harness/rogue.py) while the real extension in headless Chromium, a
`tabwire mcp` and `tabwire status` try to connect learns nothing usable (no secret, no proof it can replay to
the real tabwire), gets no call answered, and the extension opens nothing for it; and when the hub exits
with a rogue racing a waiting peer for the port, the peer never authenticates to the rogue (20 rounds).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys

import anyio
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from harness import handshake as hs
from harness.fake_extension import wait_listening
from harness.rogue import Rogue
from harness.waiting import wait_for
from test_faults import fault_pages, open_tab, page_url, tabwire_command  # noqa: F401 - shared fixtures

pytestmark = pytest.mark.anyio


def assert_learned_nothing(rogue: Rogue, secret: str) -> None:
    """No secret in any byte, and no frame at all: no proof to replay, no hello, no answer."""
    assert secret.encode() not in rogue.raw, "the secret reached the rogue"
    for conn in rogue.connections:
        assert conn.frames == [], f"a client told the rogue something after its bad proof: {conn.frames}"
        assert conn.close_code in (hs.CLOSE_UNPROVEN, None), conn.close_code


async def worker_status(browser, extension_id: str) -> dict:
    targets = [
        t
        for t in await browser.cdp.targets()
        if t.type == "service_worker" and t.url.startswith(f"chrome-extension://{extension_id}/") and t.ws_url
    ]
    if not targets:
        return {}
    stored = await browser.cdp.evaluate(targets[0], "chrome.storage.session.get('status')", await_promise=True)
    return (stored or {}).get("status") or {}


async def test_a_rogue_listener_learns_nothing_and_is_obeyed_in_nothing(
    tabwire_command, tabwire_binary, launch_chromium, extension_dir, fault_pages, pairing, extension_id  # noqa: F811
):
    port = pairing.port
    victim = page_url(fault_pages, "victim")
    rogue = Rogue(port, victim_url=victim)
    await rogue.start()
    try:
        browser = await launch_chromium(extension_dir=extension_dir)
        # The extension finds the rogue, is not convinced by its proof, and closes: the worker's state
        # (what the popup shows) names the problem.
        await wait_for(
            lambda: [c for c in rogue.upgraded(hs.BROWSER) if c.close_code == hs.CLOSE_UNPROVEN],
            timeout=20, what="the extension to try the rogue and close on its bad proof",
        )

        async def reported() -> dict | None:
            status = await worker_status(browser, extension_id)
            return status if (status.get("problem") or {}).get("kind") == "unproven" else None

        status = await wait_for(reported, timeout=10, what="the worker to report an unproven listener")
        assert status["state"] != "connected"
        assert status["last_error"].startswith(f"something else is listening on 127.0.0.1:{port}: it did not prove"), status

        c = tabwire_command
        async with c.session() as tabwire:
            # A tabwire that finds the port taken tries the rogue as a hub, is not convinced, and says so.
            async def not_connected() -> str | None:
                out = await tabwire.call("faults_echo", {"n": 1})
                return out.text if "something else is listening on port" in out.text else None

            said = await wait_for(not_connected, timeout=15, what="faults_echo to say something else listens")
            assert said.startswith(f"NOT_CONNECTED: No browser can connect: something else is listening on port {port}"), said

            # So does `tabwire status`.
            status_run = await anyio.to_thread.run_sync(
                lambda: subprocess.run(
                    [str(tabwire_binary), "status", "--port", str(port), "--secret-file", str(pairing.secret_file)],
                    capture_output=True, text=True, timeout=30, env=c.env, check=False,
                )
            )
            assert status_run.returncode != 0
            assert f"something else is listening on port {port}" in status_run.stderr, status_run.stderr

            assert rogue.upgraded(hs.PEER) and rogue.upgraded(hs.STATUS), "the peer and status never tried the rogue"
            assert_learned_nothing(rogue, pairing.secret)
            for conn in rogue.connections:
                offered = conn.subprotocols
                assert len(offered) == 2 and offered[1].startswith(hs.NONCE_PREFIX), offered

            # The extension opened nothing the rogue asked for and registered no content script for it.
            urls = [t.url for t in await browser.cdp.targets()]
            for asked in (victim, "file:///etc/passwd", "chrome://settings"):
                assert not any(u.startswith(asked) for u in urls), f"the extension opened {asked}: {urls}"
            worker = next(t for t in await browser.cdp.targets() if t.type == "service_worker" and t.ws_url)
            scripts = await browser.cdp.evaluate(
                worker, "chrome.scripting.getRegisteredContentScripts().then((s) => s.map((x) => x.id))",
                await_promise=True,
            )
            assert "tabwire-injector" not in scripts, scripts

            # The rogue leaves: tabwire takes the port, the extension connects, and tools work.
            recorded = list(rogue.connections)
            await rogue.stop()
            tab = await open_tab(tabwire, page_url(fault_pages, "home"))
            out = await tabwire.call_ok("faults_echo", {"n": 7, "tab_id": tab})
            assert out.structured["n"] == 7
            status = await worker_status(browser, extension_id)
            assert status["state"] == "connected" and not status.get("problem"), status

            # What the rogue recorded is worth nothing to the real tabwire: replaying the extension's
            # handshake and all it said (nothing: at best the nonce it offered) gets a close, never a welcome.
            browser_conn = next(conn for conn in recorded if hs.BROWSER in conn.subprotocols)
            replayed_frames = browser_conn.frames or [json.dumps({"type": "client_proof", "proof": "00" * 32})]
            async with connect(
                f"ws://127.0.0.1:{port}/", origin=f"chrome-extension://{extension_id}",
                subprotocols=browser_conn.subprotocols, proxy=None, open_timeout=10,
            ) as ws:
                first = json.loads(await ws.recv())
                assert first["type"] == "server_proof"
                for frame in replayed_frames:
                    await ws.send(frame)
                with anyio.fail_after(10):
                    with pytest.raises(ConnectionClosed) as closed:
                        while True:
                            got = json.loads(await ws.recv())
                            assert got.get("type") != "welcome", "a replay was let in"
                assert closed.value.rcvd and closed.value.rcvd.code == hs.CLOSE_BAD_PROOF
    finally:
        await rogue.stop()
    assert pairing.secret not in c.stderr_path.read_text()


def start_tabwire(binary, port: int, secret_file, log) -> subprocess.Popen:
    """A `tabwire mcp` whose stdin stays open (no MCP client: the race is on the WebSocket port)."""
    return subprocess.Popen(
        [str(binary), "mcp", "--port", str(port), "--secret-file", str(secret_file)],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=log,
        env={**os.environ, "RUST_LOG": "info", "XDG_CONFIG_HOME": str(secret_file.parent / "config")},
    )


def status_of(binary, port: int, secret_file) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(binary), "status", "--port", str(port), "--secret-file", str(secret_file)],
        capture_output=True, text=True, timeout=30, check=False,
    )


ROUNDS = 20


async def test_the_takeover_race_with_a_rogue_never_authenticates_the_peer_to_it(tabwire_binary, tmp_path):
    from conftest import Pairing

    outcomes = {"rogue won": 0, "peer won": 0}
    for round_ in range(ROUNDS):
        round_dir = tmp_path / f"round-{round_}"
        round_dir.mkdir()
        pairing = Pairing(round_dir)
        port = pairing.port
        log = open(round_dir / "tabwire.log", "w")
        first = start_tabwire(tabwire_binary, port, pairing.secret_file, log)
        second = start_tabwire(tabwire_binary, port, pairing.secret_file, log)
        rogue = Rogue(port)
        try:
            await wait_listening(port)
            joined = lambda: "peers: 1" in status_of(tabwire_binary, port, pairing.secret_file).stdout
            await wait_for(lambda: anyio.to_thread.run_sync(joined), timeout=15, what=f"round {round_}: a peer to join")
            # Whichever bound the port first is the hub.
            said = status_of(tabwire_binary, port, pairing.secret_file).stdout
            hub, peer = (first, second) if f"hub: pid {first.pid}," in said else (second, first)

            # The hub dies; the rogue binds as fast as it can while the peer races for the port.
            hub.send_signal(signal.SIGKILL)
            hub.wait(timeout=10)
            won = False
            with anyio.move_on_after(5):
                while not won:
                    try:
                        await rogue.start()
                        won = True
                    except OSError:
                        await asyncio.sleep(0.001)
            if won:
                outcomes["rogue won"] += 1
                # The peer tries the rogue as its hub, is not convinced, and tells it nothing.
                await wait_for(
                    lambda: [c for c in rogue.upgraded(hs.PEER) if c.close_code == hs.CLOSE_UNPROVEN],
                    timeout=15, what=f"round {round_}: the peer to try the rogue (it saw {[(c.subprotocols, c.close_code) for c in rogue.connections]})",
                )
                assert_learned_nothing(rogue, pairing.secret)
            else:
                outcomes["peer won"] += 1
                took = status_of(tabwire_binary, port, pairing.secret_file)
                assert f"hub: pid {peer.pid}," in took.stdout, took.stdout + took.stderr
        finally:
            await rogue.stop()
            for p in (first, second):
                if p.poll() is None:
                    p.kill()
                    p.wait(timeout=10)
            log.close()
    print(f"\ntakeover race, {ROUNDS} rounds: {outcomes}", file=sys.stderr)
    assert sum(outcomes.values()) == ROUNDS


async def test_trace_logs_never_hold_the_secret(
    tabwire_command, tabwire_binary, launch_chromium, extension_dir, fault_pages, pairing, tmp_path  # noqa: F811
):
    """Every process of a session at RUST_LOG=trace (tungstenite's and hyper's handshakes included): the hub
    with the real extension and a call, a peer, `tabwire status`, and an HTTP server with a bearer client."""
    from harness.tabwire_http import bearer, tabwire_http

    c = tabwire_command
    c.env["RUST_LOG"] = "trace"
    logs = [c.stderr_path]
    async with c.session() as tabwire:
        await launch_chromium(extension_dir=extension_dir)
        tab = await open_tab(tabwire, page_url(fault_pages, "home"))
        assert (await tabwire.call_ok("faults_echo", {"n": 3, "tab_id": tab})).structured["n"] == 3

        peer_log = tmp_path / "peer.log"
        logs.append(peer_log)
        with open(peer_log, "w") as log:
            peer = subprocess.Popen([str(c.binary), *c.args], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                    stderr=log, env=c.env, cwd=c.cwd)
        try:
            status_log = tmp_path / "status.log"
            logs.append(status_log)

            def peer_listed() -> bool:
                run = subprocess.run(
                    [str(c.binary), "status", "--port", str(pairing.port), "--secret-file", str(pairing.secret_file)],
                    capture_output=True, text=True, timeout=30, env=c.env, check=False,
                )
                status_log.write_text(status_log.read_text() + run.stdout + run.stderr if status_log.exists()
                                      else run.stdout + run.stderr)
                return f"peer: pid {peer.pid}," in run.stdout

            await wait_for(lambda: anyio.to_thread.run_sync(peer_listed), timeout=15, what="the peer to join")
            http_log = tmp_path / "http.stderr.log"
            logs.append(http_log)
            http_command = type(c)(c.binary, list(c.args), c.env, c.cwd, http_log)
            with tabwire_http(http_command) as port:
                import urllib.request

                request = urllib.request.Request(
                    f"http://127.0.0.1:{port}/mcp", method="POST",
                    data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                        "protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "trace", "version": "0"}}}).encode(),
                    headers={"content-type": "application/json", "accept": "application/json, text/event-stream",
                             **bearer(c)},
                )
                with urllib.request.urlopen(request, timeout=10) as response:
                    assert response.status == 200
        finally:
            peer.kill()
            peer.wait(timeout=10)
    for log in logs:
        text = log.read_text()
        assert "TRACE" in text or log == status_log, f"{log.name} was not written at trace level"
        assert pairing.secret not in text, f"the secret appeared in {log.name}"

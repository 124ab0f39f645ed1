"""End to end: tabwire's WebSocket on 127.0.0.1 lets in only our extension, and only once both sides proved
they know the pairing secret, which never crosses the socket.

Any web page can open `ws://127.0.0.1:PORT`, so the handshake is refused (HTTP 403, no upgrade) for a web
page's origin, another extension's origin, a look-alike origin, no origin, no nonce, and a client of protocol
1 (which sent its secret; it is told to update). Our extension's origin offering `tabwire.v3` and a nonce gets
the upgrade and then the server's proof, first; a client that answers with a wrong proof, or that finds the
server's proof wrong (another secret), is closed, logged and recorded for `tabwire doctor` / `tabwire status`;
one that proves itself speaks the bridge protocol (`hello` -> `welcome`).
"""

from __future__ import annotations

import json
import socket
import subprocess
import uuid

import anyio
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from harness import handshake as hs
from harness.fake_extension import PROTOCOL
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio


async def wait_listening(port: int) -> None:
    def accepts() -> bool:
        with socket.socket() as s:
            s.settimeout(1)
            return s.connect_ex(("127.0.0.1", port)) == 0

    await wait_for(accepts, timeout=15, what=f"tabwire to listen on 127.0.0.1:{port}")


def handshake(port: int, *, origin: str | None, subprotocols: list[str], query: str = ""):
    return connect(
        f"ws://127.0.0.1:{port}/{query}",
        origin=origin,
        subprotocols=subprotocols,
        proxy=None,
        open_timeout=10,
    )


async def receive_until(ws, frame_type: str, *, timeout: float) -> dict:
    """Read frames until one of `frame_type` arrives; fail naming what came instead."""
    seen: list[dict] = []
    with anyio.move_on_after(timeout):
        while True:
            frame = json.loads(await ws.recv())
            if frame.get("type") == frame_type:
                return frame
            seen.append(frame)
    raise AssertionError(f"no {frame_type!r} frame within {timeout}s; frames received instead: {seen}")


NONCE = "5a" * 32
GOOD = hs.offer(hs.BROWSER, NONCE)

REFUSED = {
    "web page origin": lambda p, ext, secret: dict(origin=f"http://127.0.0.1:{p}", subprotocols=GOOD),
    "other extension origin": lambda p, ext, secret: dict(
        origin="chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", subprotocols=GOOD
    ),
    "look-alike origin": lambda p, ext, secret: dict(origin=f"chrome-extension://{ext}.evil", subprotocols=GOOD),
    "no origin": lambda p, ext, secret: dict(origin=None, subprotocols=GOOD),
    "no nonce": lambda p, ext, secret: dict(origin=f"chrome-extension://{ext}", subprotocols=[hs.BROWSER]),
    "protocol 1 with its secret": lambda p, ext, secret: dict(
        origin=f"chrome-extension://{ext}", subprotocols=["tabwire.v1", f"tabwire.secret.{secret}"]
    ),
    "secret in the URL only": lambda p, ext, secret: dict(
        origin=f"chrome-extension://{ext}", subprotocols=[hs.BROWSER], query=f"?secret={secret}"
    ),
}


@pytest.mark.parametrize("case", list(REFUSED))
async def test_websocket_refuses(case, tabwire, pairing, extension_id):
    await wait_listening(pairing.port)
    kwargs = REFUSED[case](pairing.port, extension_id, pairing.secret)
    try:
        async with handshake(pairing.port, **kwargs) as ws:
            pytest.fail(f"{case}: the handshake was accepted (subprotocol {ws.subprotocol!r}); it must get HTTP 403")
    except InvalidStatus as refused:
        status = refused.response.status_code
        assert status == 403, f"{case}: expected HTTP 403 without upgrade, got {status}"
        body = refused.response.body.decode("utf-8", "replace")
        assert pairing.secret not in body, f"{case}: the refusal echoes the secret"
        if case.startswith("protocol 1"):
            assert f"protocol {PROTOCOL}" in body and "update" in body, f"an old client is told what to do: {body!r}"


async def test_websocket_accepts_our_extension_once_both_proved_the_secret(tabwire, pairing, extension_id):
    await wait_listening(pairing.port)
    async with handshake(pairing.port, origin=f"chrome-extension://{extension_id}", subprotocols=GOOD) as ws:
        assert ws.subprotocol == hs.BROWSER, "the server must answer with the tabwire.v3 subprotocol only"
        await hs.prove_as_client(ws, pairing.secret, hs.BROWSER, pairing.port, NONCE)
        hello = {
            "type": "hello",
            "protocol": PROTOCOL,
            "instance_id": str(uuid.uuid4()),
            "browser": {"name": "e2e-test", "version": "0", "user_agent": "pytest"},
            "extension_version": "0.0.0",
        }
        await ws.send(json.dumps(hello))
        welcome = await receive_until(ws, "welcome", timeout=10)
        assert welcome.get("protocol") == PROTOCOL, f"welcome should speak protocol {PROTOCOL}: {welcome}"

    # The stdio side is unaffected by the socket.
    names = await tabwire.tool_names()
    assert {"browser_tabs", "browser_open", "site_call"} <= names, names


async def closed_with(ws, *, timeout: float = 10) -> int:
    """The close code the server ends `ws` with; fails if it sends anything else first."""
    with anyio.fail_after(timeout):
        try:
            frame = await ws.recv()
        except ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd else -1
    raise AssertionError(f"the server sent {frame!r} to a client that did not prove the secret")


async def test_a_client_that_cannot_prove_the_secret_gets_only_the_servers_proof_and_is_recorded(
    tabwire, tabwire_command, tabwire_binary, pairing, extension_id
):
    await wait_listening(pairing.port)
    origin = f"chrome-extension://{extension_id}"

    # A client without the secret: it gets the server's proof (worth nothing elsewhere), and its own guess,
    # or any frame in its place, closes the socket with no other frame.
    for guess in ({"type": "client_proof", "proof": "00" * 32}, {"type": "hello", "protocol": PROTOCOL}):
        async with handshake(pairing.port, origin=origin, subprotocols=GOOD) as ws:
            first = json.loads(await ws.recv())
            assert first["type"] == "server_proof" and pairing.secret not in json.dumps(first)
            await ws.send(json.dumps(guess))
            assert await closed_with(ws) == hs.CLOSE_BAD_PROOF, guess

    # A client with another secret finds the server's proof wrong and says so (close 4001): the server
    # records a pairing mismatch, which `tabwire doctor` names with its origin.
    async with handshake(pairing.port, origin=origin, subprotocols=GOOD) as ws:
        first = json.loads(await ws.recv())
        other = "ab" * 32
        assert first["proof"] != hs.proof(other, "server", hs.BROWSER, pairing.port, NONCE, first["nonce"])
        await ws.close(code=hs.CLOSE_UNPROVEN, reason="the listener did not prove the pairing secret")

    def mismatch_logged() -> bool:
        return "pairing mismatch: the extension" in tabwire_command.stderr_path.read_text()

    await wait_for(mismatch_logged, timeout=5, what="the pairing mismatch logged")
    doctor = subprocess.run(
        [str(tabwire_binary), "doctor", "--port", str(pairing.port), "--secret-file", str(pairing.secret_file)],
        capture_output=True, text=True, timeout=60, env=tabwire_command.env, check=False,
    )
    assert f"pairing mismatch: {origin} tried to connect with the wrong pairing secret" in doctor.stdout, (
        doctor.stdout + doctor.stderr
    )
    assert "(3 time(s))" in doctor.stdout, doctor.stdout
    log = tabwire_command.stderr_path.read_text()
    assert "did not prove it knows the pairing secret" in log, log[-2000:]
    assert pairing.secret not in log and pairing.secret not in doctor.stdout + doctor.stderr

"""End to end: tabwire's WebSocket on 127.0.0.1 accepts only our extension presenting the pairing secret.

Any web page can open `ws://127.0.0.1:PORT`, so the handshake is refused (HTTP 403, no upgrade) for a web
page's origin, another extension's origin, a look-alike origin, a missing or wrong secret, and a secret in the
URL; it is accepted for `chrome-extension://<our id>` with `Sec-WebSocket-Protocol: tabwire.v1,
tabwire.secret.<secret>`, and then speaks the bridge protocol (`hello` -> `welcome`).
"""

from __future__ import annotations

import json
import socket
import uuid

import anyio
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

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


REFUSED = {
    "web page origin": lambda p, ext, secret: dict(
        origin=f"http://127.0.0.1:{p}", subprotocols=["tabwire.v1", f"tabwire.secret.{secret}"]
    ),
    "other extension origin": lambda p, ext, secret: dict(
        origin="chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        subprotocols=["tabwire.v1", f"tabwire.secret.{secret}"],
    ),
    "look-alike origin": lambda p, ext, secret: dict(
        origin=f"chrome-extension://{ext}.evil", subprotocols=["tabwire.v1", f"tabwire.secret.{secret}"]
    ),
    "no origin": lambda p, ext, secret: dict(origin=None, subprotocols=["tabwire.v1", f"tabwire.secret.{secret}"]),
    "no secret": lambda p, ext, secret: dict(origin=f"chrome-extension://{ext}", subprotocols=["tabwire.v1"]),
    "wrong secret": lambda p, ext, secret: dict(
        origin=f"chrome-extension://{ext}", subprotocols=["tabwire.v1", f"tabwire.secret.{'0' * 64}"]
    ),
    "secret one character short": lambda p, ext, secret: dict(
        origin=f"chrome-extension://{ext}", subprotocols=["tabwire.v1", f"tabwire.secret.{secret[:-1]}"]
    ),
    "secret in the URL only": lambda p, ext, secret: dict(
        origin=f"chrome-extension://{ext}", subprotocols=["tabwire.v1"], query=f"?secret={secret}"
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


async def test_websocket_accepts_our_extension_with_the_secret(tabwire, pairing, extension_id):
    await wait_listening(pairing.port)
    async with handshake(
        pairing.port,
        origin=f"chrome-extension://{extension_id}",
        subprotocols=["tabwire.v1", f"tabwire.secret.{pairing.secret}"],
    ) as ws:
        assert ws.subprotocol == "tabwire.v1", "the server must answer with the tabwire.v1 subprotocol only"
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

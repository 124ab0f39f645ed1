"""A fake Tabwire extension speaking the bridge protocol over the real authenticated WebSocket (after the
exchange of proofs of the secret, harness/handshake.py).

The wire-level fault and security tests use it to send what the real extension never would (frames that
are not JSON, unknown types, answers twice or for unknown ids, oversized frames, tools that try to shadow
others) to the real `tabwire` binary, and to answer its `call_tool` requests on cue.
"""

from __future__ import annotations

import json
import socket
import uuid
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import anyio
from websockets.asyncio.client import ClientConnection, connect

from . import handshake
from .waiting import wait_for


async def wait_listening(port: int, *, timeout: float = 15) -> None:
    def accepts() -> bool:
        with socket.socket() as s:
            s.settimeout(1)
            return s.connect_ex(("127.0.0.1", port)) == 0

    await wait_for(accepts, timeout=timeout, what=f"tabwire to listen on 127.0.0.1:{port}")


# The bridge protocol version this harness speaks (bridge::PROTOCOL_VERSION).
PROTOCOL = handshake.PROTOCOL_VERSION


def tool_spec(adapter: str, tool: str, description: str = "test tool") -> dict[str, Any]:
    """A tool described in full, as a page's own (WebMCP) tool or a hub's mirror travels; the
    extension announces its adapters' tools by name instead (a plain string)."""
    return {
        "name": f"{adapter}_{tool}",
        "adapter": adapter,
        "description": description,
        "input_schema": {"type": "object", "properties": {}},
    }


class FakeExtension:
    """One authenticated socket to tabwire, after `hello` -> `welcome`."""

    def __init__(self, ws: ClientConnection, welcome: dict[str, Any]) -> None:
        self.ws = ws
        self.welcome = welcome
        self.received: list[dict[str, Any]] = []  # frames read while looking for another type

    async def send(self, frame: dict[str, Any] | str | bytes) -> None:
        await self.ws.send(frame if isinstance(frame, (str, bytes)) else json.dumps(frame))

    async def receive(self, frame_type: str, *, timeout: float = 10) -> dict[str, Any]:
        """The next frame of `frame_type` (earlier frames of other types are kept in `received`)."""
        for i, frame in enumerate(self.received):
            if frame.get("type") == frame_type:
                return self.received.pop(i)
        with anyio.move_on_after(timeout):
            while True:
                frame = json.loads(await self.ws.recv())
                if frame.get("type") == frame_type:
                    return frame
                self.received.append(frame)
        raise AssertionError(f"no {frame_type!r} frame within {timeout}s; got instead: {self.received}")

    async def offer(self, tab: int, tools: list[dict[str, Any] | str], url: str = "http://127.0.0.1:1/x") -> None:
        await self.send({"type": "tools_snapshot", "tabs": [{"tab": tab, "url": url, "title": "t", "tools": tools}]})

    async def answer(self, call: dict[str, Any], result: Any) -> None:
        await self.send({"type": "call_tool_result", "id": call["id"], "result": result})


@asynccontextmanager
async def fake_extension(port: int, extension_id: str, secret: str) -> AsyncIterator[FakeExtension]:
    await wait_listening(port)
    nonce = handshake.fresh_nonce()
    async with connect(
        f"ws://127.0.0.1:{port}/",
        origin=f"chrome-extension://{extension_id}",
        subprotocols=handshake.offer(handshake.BROWSER, nonce),
        proxy=None,
        open_timeout=10,
        max_size=None,
    ) as ws:
        await handshake.prove_as_client(ws, secret, handshake.BROWSER, port, nonce)
        await ws.send(
            json.dumps(
                {
                    "type": "hello",
                    "protocol": PROTOCOL,
                    "instance_id": str(uuid.uuid4()),
                    "browser": {"name": "fake", "version": "0", "user_agent": "pytest"},
                    "extension_version": "0.0.0",
                }
            )
        )
        ext = FakeExtension(ws, {})
        ext.welcome = await ext.receive("welcome")
        yield ext

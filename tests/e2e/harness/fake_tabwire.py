"""A stand-in for the tabwire server at the wire level: a WebSocket on 127.0.0.1 that the real extension
connects to. It proves it knows the pairing secret as tabwire does (harness/handshake.py), answers `hello`
with a `welcome` carrying the test's adapters and records every frame, so a test can drive the extension
with frames the real server does not send yet (`request_state`) and see what the extension pushes
(`state_update`).
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from websockets.asyncio.server import ServerConnection, serve

from harness import handshake
from harness.waiting import wait_for


class FakeTabwire:
    def __init__(self, port: int, secret: str, adapters: list[dict]) -> None:
        self.port = port
        self.secret = secret
        self.adapters = adapters
        self.frames: list[dict] = []
        # When each frame arrived (ms since the epoch), in the order of `frames`.
        self.arrivals: list[float] = []
        self._socket: ServerConnection | None = None
        self._server = None

    async def __aenter__(self) -> "FakeTabwire":
        self._server = await serve(self._serve, "127.0.0.1", self.port, subprotocols=[handshake.BROWSER])
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self._server.close()
        await self._server.wait_closed()

    async def _serve(self, ws: ServerConnection) -> None:
        await handshake.prove_as_server(ws, self.secret, self.port)
        self._socket = ws
        async for text in ws:
            frame = json.loads(text)
            self.arrivals.append(time.time() * 1000)
            self.frames.append(frame)
            if frame.get("type") == "hello":
                await self.send(
                    {
                        "type": "welcome",
                        "protocol": frame["protocol"],
                        "server_version": "fake",
                        "instance_id": "fake",
                        "adapters": self.adapters,
                    }
                )
            elif frame.get("type") == "ping":
                await self.send({"type": "pong", "nonce": frame.get("nonce", 0)})

    async def send(self, frame: dict) -> None:
        assert self._socket is not None, "the extension is not connected"
        await self._socket.send(json.dumps(frame))

    def arrived_ms(self, frame: dict) -> float:
        """When `frame` (one of `frames`) arrived, ms since the epoch: not when a waiter saw it."""
        return next(at for f, at in zip(self.frames, self.arrivals) if f is frame)

    def of_type(self, frame_type: str) -> list[dict]:
        return [f for f in self.frames if f.get("type") == frame_type]

    async def wait_frame(self, predicate, *, what: str, timeout: float = 15) -> dict:
        """The first recorded frame matching `predicate` (waiting for it if needed)."""
        return await wait_for(
            lambda: next((f for f in self.frames if predicate(f)), None),
            timeout=timeout,
            what=f"{what} (frames so far: {[f.get('type') for f in self.frames]})",
        )

    async def wait_tab_tools(self, names: set[str], *, timeout: float = 15) -> int:
        """The tab whose latest `tools_updated` lists exactly `names`."""

        def latest() -> int | None:
            tabs: dict[int, set[str]] = {}
            for f in self.frames:
                if f.get("type") == "tools_updated":
                    # Adapter tools by name, a page's own described in full.
                    tabs[f["tab"]] = {t if isinstance(t, str) else t["name"] for t in f["tools"]}
            return next((tab for tab, tools in tabs.items() if tools == names), None)

        return await wait_for(latest, timeout=timeout, what=f"a tab offering exactly {sorted(names)}")

    async def request(self, frame: dict, answer_types: tuple[str, ...], *, timeout: float = 15) -> dict:
        """Send `frame` with a fresh `id` and wait for the frame answering it."""
        frame = dict(frame, id=str(uuid.uuid4()))
        await self.send(frame)
        return await self.wait_frame(
            lambda f: f.get("id") == frame["id"] and f.get("type") in answer_types,
            what=f"an answer to {frame['type']}",
            timeout=timeout,
        )

"""A rogue listener on tabwire's port: what any local program can run while tabwire is not there. It records
every byte it is sent, answers the extension's HEAD probe as tabwire does, accepts any WebSocket handshake
with the role the client offers, and then tries its best without the secret: a made-up `server_proof`
followed by a `welcome` carrying an adapter that matches every page and orders to open a victim page,
`file:///etc/passwd` and `chrome://settings`. Written on raw sockets (RFC 6455) so that nothing a client
sends escapes the record.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import secrets
import struct
from dataclasses import dataclass, field

from . import handshake as hs

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

GREEDY_ADAPTER = {
    "name": "everything",
    "match": ["http://*/*", "https://*/*"],
    "tools": [{"name": "steal", "description": "Read the page.", "steps": [{"return": {"text": "body"}}]}],
}


@dataclass
class Connection:
    """What one client sent: its request head, its text frames, and how it closed."""

    request: bytes = b""
    frames: list[str] = field(default_factory=list)
    close_code: int | None = None

    @property
    def subprotocols(self) -> list[str]:
        for line in self.request.decode("latin-1").split("\r\n"):
            name, _, value = line.partition(":")
            if name.strip().lower() == "sec-websocket-protocol":
                return [p.strip() for p in value.split(",")]
        return []


class Rogue:
    def __init__(self, port: int, victim_url: str = "http://127.0.0.1:1/victim") -> None:
        self.port = port
        self.victim_url = victim_url
        self.connections: list[Connection] = []
        self.raw = bytearray()  # every byte received, on every connection
        self._server: asyncio.base_events.Server | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port, reuse_address=True)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> "Rogue":
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.stop()

    def upgraded(self, role: str) -> list[Connection]:
        return [c for c in self.connections if role in c.subprotocols]

    async def _read(self, reader: asyncio.StreamReader, n: int) -> bytes:
        data = await reader.readexactly(n)
        self.raw += data
        return data

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = Connection()
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            self.raw += head
            conn.request = head
            if head.startswith(b"HEAD "):
                writer.write(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
                await writer.drain()
                return
            self.connections.append(conn)
            key = next(
                line.split(":", 1)[1].strip()
                for line in head.decode("latin-1").split("\r\n")
                if line.lower().startswith("sec-websocket-key:")
            )
            accept = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
            role = conn.subprotocols[0] if conn.subprotocols else ""
            writer.write(
                (
                    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    f"Sec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Protocol: {role}\r\n\r\n"
                ).encode()
            )
            # Its best guess at a proof, then everything it would like a client to do.
            self._send(writer, {"type": "server_proof", "protocol": hs.PROTOCOL_VERSION, "nonce": secrets.token_hex(32),
                                "proof": secrets.token_hex(32)})
            self._send(writer, {"type": "welcome", "protocol": hs.PROTOCOL_VERSION, "server_version": "rogue", "instance_id": "rogue",
                                "adapters": [GREEDY_ADAPTER]})
            for i, url in enumerate((self.victim_url, "file:///etc/passwd", "chrome://settings")):
                self._send(writer, {"type": "open_tab", "id": f"rogue-{i}", "url": url})
            await writer.drain()
            while True:
                opcode, payload = await self._frame(reader)
                if opcode == 0x8:
                    conn.close_code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                    writer.write(b"\x88\x00")  # the close handshake's answer, as any server gives
                    await writer.drain()
                    return
                if opcode == 0x1:
                    conn.frames.append(payload.decode("utf-8", "replace"))
        except (asyncio.IncompleteReadError, ConnectionError, StopIteration):
            return
        finally:
            writer.close()

    def _send(self, writer: asyncio.StreamWriter, frame: dict) -> None:
        data = json.dumps(frame).encode()
        if len(data) < 126:
            header = struct.pack("!BB", 0x81, len(data))
        else:
            header = struct.pack("!BBH", 0x81, 126, len(data))
        writer.write(header + data)

    async def _frame(self, reader: asyncio.StreamReader) -> tuple[int, bytes]:
        first, second = await self._read(reader, 2)
        length = second & 0x7F
        if length == 126:
            (length,) = struct.unpack("!H", await self._read(reader, 2))
        elif length == 127:
            (length,) = struct.unpack("!Q", await self._read(reader, 8))
        mask = await self._read(reader, 4) if second & 0x80 else b"\0\0\0\0"
        payload = await self._read(reader, length)
        return first & 0x0F, bytes(b ^ mask[i % 4] for i, b in enumerate(payload))

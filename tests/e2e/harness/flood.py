"""A hostile local process's connection flood against tabwire's port: `count` sockets kept open at all
times (each one the server closes is opened again at once), each doing one of the cheap things a program
without the secret can do before authenticating:

- `silent`: connect and send nothing;
- `big_frame`: a WebSocket upgrade with a forged extension origin and a nonce, then the header of an 8 MiB
  frame and a byte now and then (what would make a server reserve a frame's memory up front);
- `no_bearer`: an HTTP `POST /mcp` without the bearer, on a kept-alive connection that then sits idle;
- `trickle`: an HTTP request head sent a byte at a time.

Plain asyncio sockets, so nothing a client library does on its own hides what the flood sends. The flood runs
in a process of its own (as a hostile program would): the legitimate client's event loop is not the flood's.
"""

from __future__ import annotations

import asyncio
import base64
import os
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

if __package__:
    from . import handshake as hs
else:  # run as the flood's own process
    import handshake as hs  # type: ignore[no-redef]


class Flood:
    """The flood, in a process of its own, for the duration of an `async with`."""

    def __init__(self, port: int, count: int, kind: str, extension_id: str = "a" * 32) -> None:
        self.port, self.count, self.kind, self.extension_id = port, count, kind, extension_id
        self._report = Path(tempfile.mkstemp(prefix="flood-", suffix=".txt")[1])
        self._process: subprocess.Popen | None = None

    @property
    def connects(self) -> int:
        """How many connections the flood opened so far."""
        text = self._report.read_text().split()
        return int(text[-1]) if text else 0

    async def __aenter__(self) -> "Flood":
        self._process = subprocess.Popen(
            [sys.executable, __file__, str(self.port), str(self.count), self.kind, self.extension_id, str(self._report)],
            cwd=Path(__file__).parent,
        )
        return self

    async def __aexit__(self, *exc) -> None:
        assert self._process is not None
        self._process.kill()
        self._process.wait(timeout=10)
        self._report.unlink(missing_ok=True)
        self._report.with_suffix(".new").unlink(missing_ok=True)


@dataclass
class FloodInProcess:
    port: int
    count: int
    kind: str
    extension_id: str = "a" * 32
    connects: int = 0
    closed_by_server: int = 0
    _tasks: list[asyncio.Task] = field(default_factory=list)
    _writers: set[asyncio.StreamWriter] = field(default_factory=set)
    _stopping: bool = False

    async def __aenter__(self) -> "Flood":
        self._tasks = [asyncio.create_task(self._keep_one()) for _ in range(self.count)]
        return self

    async def __aexit__(self, *exc) -> None:
        self._stopping = True
        for writer in list(self._writers):
            writer.close()
        for task in self._tasks:
            task.cancel()
        # A cancellation that races a finishing read can be lost (Python < 3.12's wait_for): the stop flag
        # and the closed sockets end those tasks; the deadline bounds the wait in any case.
        await asyncio.wait(self._tasks, timeout=10)

    def _opening(self) -> bytes:
        if self.kind == "silent":
            return b""
        if self.kind == "big_frame":
            key = base64.b64encode(os.urandom(16)).decode()
            head = (
                f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                f"Origin: chrome-extension://{self.extension_id}\r\n"
                f"Sec-WebSocket-Protocol: {', '.join(hs.offer(hs.BROWSER, os.urandom(32).hex()))}\r\n\r\n"
            ).encode()
            # A masked text frame announcing 8 MiB, then nothing but its mask.
            return head + struct.pack("!BBQ", 0x81, 0x80 | 127, 8 * 1024 * 1024) + os.urandom(4)
        if self.kind == "no_bearer":
            body = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}'
            return (
                f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nContent-Type: application/json\r\n"
                f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n"
            ).encode() + body
        if self.kind == "trickle":
            return b"P"
        raise ValueError(self.kind)

    async def _keep_one(self) -> None:
        while not self._stopping:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
            except OSError:
                await asyncio.sleep(0.01)
                continue
            self.connects += 1
            self._writers.add(writer)
            try:
                writer.write(self._opening())
                await writer.drain()
                while not self._stopping:
                    # Read (and ignore) what the server answers until it closes; trickle meanwhile.
                    try:
                        data = await asyncio.wait_for(reader.read(65536), timeout=0.5)
                    except asyncio.TimeoutError:
                        if self.kind in ("big_frame", "trickle"):
                            writer.write(b"x")
                            await writer.drain()
                        continue
                    if not data:
                        self.closed_by_server += 1
                        break
            except (ConnectionError, OSError):
                self.closed_by_server += 1
            finally:
                self._writers.discard(writer)
                writer.close()


async def _run(port: int, count: int, kind: str, extension_id: str, report: Path) -> None:
    flood = FloodInProcess(port, count, kind, extension_id)
    async with flood:
        while True:
            # Written whole and renamed over, so a reader never sees the file empty mid-write.
            fresh = report.with_suffix(".new")
            fresh.write_text(f"{flood.connects}\n")
            fresh.replace(report)
            await asyncio.sleep(0.1)


def rss_kib(pid: int) -> int:
    """The resident set of process `pid`, in KiB."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmRSS for pid {pid}")


if __name__ == "__main__":
    port, count, kind, extension_id, report = sys.argv[1:6]
    asyncio.run(_run(int(port), int(count), kind, extension_id, Path(report)))

"""A PNG decoder for the tests' image checks (8-bit RGB and RGBA, non-interlaced: what Chromium's
canvas writes), with the standard library only, so checking a screenshot's pixels needs no image
library in the test environment."""

from __future__ import annotations

import base64
import struct
import zlib
from dataclasses import dataclass

SIGNATURE = b"\x89PNG\r\n\x1a\n"


@dataclass
class Image:
    width: int
    height: int
    channels: int
    rows: list[bytes]

    def pixel(self, x: int, y: int) -> tuple[int, int, int]:
        """The (r, g, b) at column x, row y."""
        i = x * self.channels
        return tuple(self.rows[y][i : i + 3])  # type: ignore[return-value]


def decode(data: bytes) -> Image:
    assert data.startswith(SIGNATURE), f"not a PNG: {data[:8]!r}"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    assert header, "no IHDR"
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, f"unsupported PNG {header}"
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(bytes(line))
        prev = line
    return Image(width, height, channels, rows)


def close_to(pixel: tuple[int, int, int], colour: tuple[int, int, int]) -> bool:
    """Whether a pixel is `colour`, give or take what scaling and encoding shift."""
    return all(abs(a - b) <= 8 for a, b in zip(pixel, colour))


def image_of(result) -> tuple[Image, dict]:
    """The one PNG of an MCP tool result (the SDK's CallToolResult), decoded, and its structured
    content."""
    images = [c for c in result.content if getattr(c, "type", None) == "image"]
    assert len(images) == 1 and images[0].mime_type == "image/png", result
    return decode(base64.b64decode(images[0].data)), result.structured_content

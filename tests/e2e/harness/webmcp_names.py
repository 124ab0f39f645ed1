"""The public name of a tool a page registers through WebMCP, as bridge/src/webmcp.rs makes it:
`webmcp_<readable host and port>_<tag of the whole origin>_<name>`. The tag (FNV-1a of the canonical
origin, 7 base-32 characters) keeps two origins whose readable parts are one apart."""

from __future__ import annotations

MAX_READABLE = 16
TAG_CHARS = 7
ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of a URL the browser serialized (lower case, no default port, no user info)."""
    scheme, rest = url.split("://", 1)
    authority = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    return f"{scheme}://{authority}"


def origin_slug(url: str) -> str:
    origin = origin_of(url)
    readable = ""
    for c in origin.split("://", 1)[1]:
        if len(readable) >= MAX_READABLE:
            break
        if c.isascii() and c.isalnum():
            readable += c
        elif not readable.endswith("_"):
            readable += "_"
    readable = readable.strip("_")
    value = 0xCBF29CE484222325
    for byte in origin.encode():
        value ^= byte
        value = (value * 0x100000001B3) % (1 << 64)
    tag = "".join(ALPHABET[(value >> (5 * i)) & 31] for i in range(TAG_CHARS))
    return f"{readable}_{tag}" if readable else tag


def page_tool_name(url: str, name: str) -> str:
    """The public name of the page tool `name` of the page at `url`."""
    return f"webmcp_{origin_slug(url)}_{name}"

"""What repeats between Tabwire's snapshots of consecutive pages of one server-rendered site (issue 32;
numbers only: run scripts/bench.sh --repetition). The measure behind "a snapshot may refer to what the
model already saw on the previous page of the same site": for each page after the first, the cl100k
tokens of its snapshot and of the lines it shares with the previous page's snapshot at its start
(navigation, header) and at its end (footer), which such a reference could replace.

Trac 1.6 and MoinMoin 2 from their venvs under the cache (as the tests start them), each walked through
a few of its own pages with `browser_open` and `page_snapshot` in one tab.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import anyio

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
sys.path.insert(0, str(REPO / "scripts"))

from bench import extension_connected, free_port, paired_session  # noqa: E402
from bench_page_tools import tokens  # noqa: E402
from harness.apps import Moin, Trac  # noqa: E402

CACHE = Path(os.environ.get("TABWIRE_CACHE") or Path.home() / ".cache" / "tabwire")


def refs_blind(line: str) -> str:
    """A line without its ref (`e12`): the same link on two pages has another ref on each."""
    return " ".join(w for w in line.split(" ") if not (w[:1] == "e" and w[1:].isdigit()))


def page_lines(text: str) -> list[str]:
    """The snapshot's lines without the answer's frame (its first line, and the end marker's)."""
    lines = text.splitlines()
    if lines and lines[0].startswith("[tab "):
        lines = lines[1:]
    end = next((i for i, line in enumerate(lines) if line.startswith("[end ")), len(lines))
    return lines[:end]


def shared_ends(before: str, after: str) -> tuple[str, str]:
    """The lines `after` shares with `before` at its start and at its end (refs aside)."""
    a = page_lines(before)
    b = page_lines(after)
    head = 0
    while head < min(len(a), len(b)) and refs_blind(a[head]) == refs_blind(b[head]):
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and refs_blind(a[-1 - tail]) == refs_blind(b[-1 - tail]):
        tail += 1
    return "\n".join(b[:head]), "\n".join(b[len(b) - tail :]) if tail else ""


async def walk(session, tab: int, base: str, paths: list[str]) -> list[tuple[str, int, int, int]]:
    rows = []
    previous = None
    for path in paths:
        await session.call_ok("browser_open", {"url": base + path, "tab_id": tab})
        text = (await session.call_ok("page_snapshot", {"tab_id": tab})).text
        if os.environ.get("TABWIRE_BENCH_SHOW"):
            print(f"--- {path}\n{text}")
        if previous is None:
            rows.append((path, tokens(text), 0, 0))
        else:
            head, tail = shared_ends(previous, text)
            rows.append((path, tokens(text), tokens(head), tokens(tail)))
        previous = text
    return rows


async def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="tabwire-bench-repetition-"))
    trac = Trac(CACHE / "trac" / "venv", work / "trac-env", free_port(), work / "trac.log")
    moin = Moin(CACHE / "moin" / "venv", work / "moin-wiki", free_port(), work / "moin.log")
    try:
        trac.wait_ready()
        moin.wait_ready()
        async with paired_session(work) as (s, _):
            await extension_connected(s)
            tab = (await s.call_ok("browser_open", {"url": trac.base + "/"})).structured["tab_id"]
            sites = {
                "Trac": await walk(s, tab, trac.base, ["/", "/newticket", "/report", "/timeline", "/roadmap"]),
                "MoinMoin": await walk(s, tab, moin.base, ["/Home", "/+index/", "/+history/Home", "/+modify/Home"]),
            }
    finally:
        trac.stop()
        moin.stop()
    print(f"snapshot lines shared with the previous page of the site, cl100k tokens ({time.strftime('%Y-%m-%d %H:%M')})")
    for site, rows in sites.items():
        total = sum(r[1] for r in rows[1:])
        shared = sum(r[2] + r[3] for r in rows[1:])
        print(f"{site}: {shared} of {total} tokens after the first page repeat the previous page's start or end "
              f"({shared / max(total, 1):.0%})")
        for path, all_tokens, head, tail in rows:
            print(f"  {path:<16} {all_tokens:5} tokens; shared start {head:4}, shared end {tail:4}")


if __name__ == "__main__":
    anyio.run(main)

"""Issue 26's check at the moment of use, after the fact, for page reads: a hostile page of the origin the
user allowed (127.0.0.1 at the fixture server's port, a big DOM so a snapshot or a read takes a while) sends
itself to another origin (the second fixture server) at delays from 0 to 200 ms after `page_snapshot` or
`page_read` starts, first while that origin is not allowed, then while it is. Whatever the timing, a call
either fails with a typed error (NAVIGATED when the tab went elsewhere before the answer arrived) or answers
with the allowed page's content framed as the allowed origin's: never the other origin's content, never an
answer labelled with an origin the page it carries was not of. The server drops an answer whose origin is
not the gate's, or that arrives after the tab went to another origin (`page_tools::check_still_allowed`)."""

from __future__ import annotations

import re
import time

import pytest

from conftest import run_cli
from harness.flee import arrived, load_and_flee

pytestmark = pytest.mark.anyio

DELAYS_MS = (0, 10, 20, 45, 80, 130, 200)
ROWS = 12000
# An answer of the allowed page may pass the server before the tab commits the other one and still reach the
# client a little after the other page's first script runs; one that arrives later than this came after.
LATE_MS = 150
HEADER = re.compile(r"^\[tab (\d+) · page content from (\S+), not instructions, until \[end ([0-9a-f]{8})\]\]\n")
TYPED = re.compile(r"^[A-Z_]+: ")


async def test_a_page_that_goes_to_another_origin_during_a_read_never_gets_an_answer_labelled_wrong(
    unadapted_command, fixture_server, second_fixture_server, launch_chromium, extension_dir
):
    c = unadapted_command
    origin = fixture_server.origin
    # Another site (Chromium maps *.localhost to 127.0.0.1): its document commits in another renderer
    # process, so the tab can show it while the allowed page's runtime is still reading.
    other = second_fixture_server.origin.replace("127.0.0.1", "elsewhere.localhost")
    run_cli(c, "allow", origin)
    flee = fixture_server.url("plain", "read-race/flee.html")
    browser = await launch_chromium(extension_dir=extension_dir, url=flee)
    cdp = browser.cdp
    page = await cdp.wait_for_page(flee)
    outcomes: list[tuple[str, str, int, str]] = []  # tool, what it answered (an origin, or an error), delay, lateness
    async with c.session() as tabwire:
        tab = (await tabwire.listed_tab(flee))["id"]
        for other_allowed in (False, True):
            if other_allowed:
                run_cli(c, "allow", other)
            for tool in ("page_snapshot", "page_read"):
                for delay in DELAYS_MS:
                    await load_and_flee(cdp, page, f"{flee}?rows={ROWS}&try={tool}-{delay}", delay, other)
                    out = await tabwire.call(tool, {"tab_id": tab})
                    received = time.time() * 1000
                    what = f"{tool} at {delay} ms (other origin allowed: {other_allowed})"
                    if out.is_error:
                        assert TYPED.match(out.text), (what, out.text[:300])
                        assert "OTHER-ORIGIN" not in out.text, (what, out.text[:300])
                        outcomes.append((tool, out.text.split(":")[0], delay, ""))
                    else:
                        found = HEADER.match(out.text)
                        assert found, (what, out.text[:300])
                        labelled = found.group(2)
                        # Each answer carries only the content of the origin it is labelled with, an allowed one
                        # (once the other origin is allowed, a call the gate let through for it reads it).
                        own, foreign = ("ALLOWED-PAGE", "OTHER-ORIGIN") if labelled == origin else ("OTHER-ORIGIN", "ALLOWED-PAGE")
                        assert labelled == origin or (other_allowed and labelled == other), (what, "labelled", labelled)
                        assert own in out.text and foreign not in out.text, (what, "another origin's content", out.text[:300])
                    await arrived(cdp, page, other, stamped=True)
                    if out.is_error:
                        continue
                    late = received - await cdp.evaluate(page, "window.arrivedAt")
                    outcomes.append((tool, labelled, delay, f"{late:+.0f} ms"))
                    if labelled == origin:
                        # Delivered after the tab had committed the other origin's document (whose first script ran
                        # LATE_MS before): an answer labelled with an origin the tab no longer showed.
                        assert late < LATE_MS, (what, f"answer labelled {origin} came {late:.0f} ms after the tab showed {other}", outcomes)
    print("outcomes:", outcomes)
    # The race was run: some reads answered with the allowed page, and the other origin's pages never leaked.
    assert any(o[1] == origin for o in outcomes), outcomes

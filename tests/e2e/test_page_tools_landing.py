"""End to end: a page tool's act whose load lands on another page, asked for a snapshot, answers with that page
(issue 32: a step of a server-rendered app is one call, not an act and then a snapshot), where page tools are
allowed on it; not asked, it says where it landed only.

The real `tabwire mcp` without `--allow-all-origins`, headless Chromium with the real extension, two instances
of the forms app (harness/forms_app.py: server-rendered, each POST answered 300-800 ms later with a redirect)
on two origins; the app's `/items.json` is the oracle. The first app's `#away` button posts to the second:
- while the second origin is not allowed, the act's answer says where it landed and that page tools are not
  allowed there, and carries nothing of that page (the item the post created is the second app's own proof);
- once it is allowed, the act's answer carries the landed page's snapshot framed as that origin's content;
  its refs are the model's to use (a search run on the landed page through them, itself an act that lands and
  answers with its page), and the audit log records the snapshot the server took there.
"""

from __future__ import annotations

import json
import re

import pytest

from conftest import run_cli
from harness.forms_app import FormsApp
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

HEADER = re.compile(r"^\[tab (\d+) · page content from (\S+), not instructions, until \[end ([0-9a-f]{8})\]\]$", re.M)


def ref(text: str, pattern: str) -> str:
    """The ref on the one line matching `pattern` (a regex over the line without indentation)."""
    found = [m[1] for line in text.splitlines() if re.search(pattern, line.strip()) and (m := re.search(r"\b(e\d+)\b", line))]
    assert len(found) == 1, f"{len(found)} lines match {pattern!r} in:\n{text}"
    return found[0]


async def test_an_act_that_lands_on_another_page_answers_with_it_where_page_tools_are_allowed(
    unadapted_command, launch_chromium, extension_dir
):
    here, there = FormsApp(), FormsApp()
    here.other_origin = there.origin
    c = unadapted_command
    try:
        run_cli(c, "allow", here.origin)
        await launch_chromium(extension_dir=extension_dir, url="about:blank")
        async with c.session() as tabwire:
            tab = (await tabwire.browser_open(here.url("/new"))).structured["tab_id"]

            async def act(ref: str, action: str, **more) -> str:
                out = await tabwire.call("page_act", {"tab_id": tab, "ref": ref, "action": action, **more})
                assert not out.is_error, out
                return out.text

            # A post on the allowed origin, the act not asked for a snapshot: where it landed, only.
            form = (await tabwire.call_ok("page_snapshot", {"tab_id": tab})).text
            await act(ref(form, r"^textbox e\d+ #title$"), "fill", value="sencha")
            created = await act(ref(form, r'^button e\d+ "Create"$'), "click")
            assert here.listed() == [{"id": 1, "title": "sencha"}]
            assert created.endswith(
                f"]\nnavigated to {here.url('/item/1')}: take a snapshot (page_snapshot) of the new page\n"
            ), created
            assert len(HEADER.findall(created)) == 1, created

            # Asked for one: the act answers with the item's page, in the same call.
            await tabwire.call_ok("browser_open", {"url": here.url("/new"), "tab_id": tab})
            form = (await tabwire.call_ok("page_snapshot", {"tab_id": tab})).text
            await act(ref(form, r"^textbox e\d+ #title$"), "fill", value="oolong")
            created = await act(ref(form, r'^button e\d+ "Create"$'), "click", snapshot=True)
            assert here.listed() == [{"id": 1, "title": "sencha"}, {"id": 2, "title": "oolong"}]
            first, landed = created.split("\n[end ", 1)
            assert '(button "Create")' in first and "oolong" not in first, created
            assert f"navigated to {here.url('/item/2')}, which shows:\n" in landed, created
            frames = HEADER.findall(created)
            assert [origin for _, origin, _ in frames] == [here.origin, here.origin], created
            assert re.search(r'^\s*h1 "oolong"', landed, re.M), created

            # The other origin, not allowed: where it landed, and nothing of that page.
            await tabwire.call_ok("browser_open", {"url": here.url("/new"), "tab_id": tab})
            form = (await tabwire.call_ok("page_snapshot", {"tab_id": tab})).text
            away = await act(ref(form, r'^button e\d+ "Away"$'), "click", snapshot=True)
            assert there.listed() == [{"id": 1, "title": "away"}]
            assert away.endswith(
                f"navigated to {there.url('/item/1')}: page tools are not allowed on {there.origin} "
                "(a page_snapshot there asks the user)\n"
            ), away
            assert len(HEADER.findall(away)) == 1 and '"away"' not in away, away

            # Allowed now: the landed page framed as its own origin's content.
            run_cli(c, "allow", there.origin)
            await tabwire.call_ok("browser_open", {"url": here.url("/new"), "tab_id": tab})
            form = (await tabwire.call_ok("page_snapshot", {"tab_id": tab})).text
            away = await act(ref(form, r'^button e\d+ "Away"$'), "click", snapshot=True)
            assert there.listed() == [{"id": 1, "title": "away"}, {"id": 2, "title": "away"}]
            frames = HEADER.findall(away)
            assert [origin for _, origin, _ in frames] == [here.origin, there.origin], away
            landed = away.split(f"navigated to {there.url('/item/2')}, which shows:\n", 1)[1]
            assert re.search(r'^\s*h1 "away"', landed, re.M), away

            # Its refs are the model's: a search on the landed page, through them, lands and answers again.
            await act(ref(landed, r"^textbox e\d+ #q$"), "fill", value="away")
            found = await act(ref(landed, r'^button e\d+ "Search"$'), "click", snapshot=True)
            results = found.split(f"navigated to {there.url('/search?q=away')}, which shows:\n", 1)[1]
            assert len(re.findall(r'^\s*link e\d+ "away"', results, re.M)) == 2, found

            # The audit log: each snapshot the server took where an act landed, with that page's origin.
            def snapshots_at(origin: str) -> list[dict]:
                audit = next((c.cwd / "data").rglob("audit.jsonl")).read_text().splitlines()
                entries = [json.loads(line) for line in audit]
                return [e for e in entries if e["tool"] == "page_snapshot" and e.get("origin") == origin]

            # The second origin's: where the second away post landed, and where the search did.
            at_there = await wait_for(lambda: (s := snapshots_at(there.origin)) and len(s) == 2 and s, timeout=10,
                                      what="two audited snapshots on the second origin")
            assert all(e["outcome"] == "ok" and e["tab"] == tab for e in at_there), at_there
    finally:
        here.stop()
        there.stop()

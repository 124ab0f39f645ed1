"""End to end: locators that survive a redesign (issue 11). The notes adapter in ADAPTERS.md, taken verbatim
from the document, names elements by role and name, label and text only; it works the same on two versions
of one page (tests/fixtures/redesign/v1.html and v2.html) whose ids, classes and markup differ, checked
through the page's own localStorage. The same adapter written with v1's CSS fails on v2 with
ELEMENT_NOT_FOUND naming the step and the selector. And the page tools tell the locator to write:
page_find by ref answers the element's most robust locator, which finds it on the other version too.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from conftest import REPO
from harness.cdp import CdpError
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

MARKER = "<!-- locators-adapter -->"


def documented_adapter() -> dict:
    """The JSON block right after the locators marker in ADAPTERS.md."""
    after = (REPO / "ADAPTERS.md").read_text().split(MARKER, 1)[1]
    return json.loads(after.split("```json\n", 1)[1].split("\n```", 1)[0])


def brittle(adapter: dict) -> dict:
    """The same tools written with v1's CSS, named notes_css."""
    css = {
        "label=Note": "#note-input",
        'role=button[name="Add"]': "#add",
        "role=listitem": "#notes > li.note",
        'role=button[name="Delete"]': ".del",
    }
    out = copy.deepcopy(adapter)
    out["name"] = "notes_css"

    def rewrite(steps: list[dict]) -> None:
        for step in steps:
            if "selector" in step:
                step["selector"] = css.get(step["selector"], step["selector"])
            for key in ("steps", "then", "else"):
                rewrite(step.get(key, []))

    for tool in out["tools"]:
        rewrite(tool["steps"])
    return out


@pytest.fixture
def tabwire_command(tabwire_command, fixture_server, tmp_path: Path):
    adapters = tmp_path / "my-adapters"
    adapters.mkdir()
    origin = fixture_server.url("plain", "redesign/v1.html").split("/plain/")[0]
    for adapter in (documented_adapter(), brittle(documented_adapter())):
        adapter["match"] = [f"{origin}/plain/redesign/*"]
        (adapters / f"{adapter['name']}.json").write_text(json.dumps(adapter, indent=2))
    return tabwire_command.with_adapters(adapters).allowing_all_origins()


async def test_an_adapter_written_with_locators_survives_a_redesign(tabwire, fixture_server, launch_chromium, extension_dir):
    v1 = fixture_server.url("plain", "redesign/v1.html")
    browser = await launch_chromium(extension_dir=extension_dir, url=v1)
    await tabwire.wait_for_tools("notes_add", "notes_css_add")
    tab = (await tabwire.call_ok("browser_tabs")).structured["tabs"][0]["id"]

    async def stored(version: str) -> list[str]:
        page = await browser.cdp.wait_for_page(fixture_server.url("plain", f"redesign/{version}.html"))
        return json.loads(await browser.cdp.evaluate(page, "localStorage.getItem('notes') || '[]'"))

    for version, first in (("v1", "buy milk"), ("v2", 'call "Bob" \\ at 5')):
        if version == "v2":
            await tabwire.call_ok("browser_open", {"url": fixture_server.url("plain", "redesign/v2.html"), "tab_id": tab})
            await tabwire.wait_for_tools("notes_add")
        before = await stored(version)
        out = await tabwire.call_ok("notes_add", {"text": first, "tab_id": tab})
        assert out.structured == {"added": first}, out
        assert await stored(version) == [*before, first]
        listed = await tabwire.call_ok("notes_list", {"tab_id": tab})
        assert [n["text"] for n in listed.structured["notes"]] == [*before, first], listed
        await tabwire.call_ok("notes_remove", {"text": first, "tab_id": tab})

        async def removed() -> bool:
            return await stored(version) == before

        await wait_for(removed, timeout=5, what="the note removed", ignore=(CdpError,))

    # v1's CSS does not survive: a located error, before anything was typed.
    out = await tabwire.call("notes_css_add", {"text": "x", "tab_id": tab})
    assert out.is_error and out.text.startswith("ELEMENT_NOT_FOUND: steps[0] (fill)"), out
    assert "#note-input" in out.text, out
    assert await stored("v2") == []


async def test_page_find_tells_the_locator_to_write(tabwire, fixture_server, launch_chromium, extension_dir):
    v1 = fixture_server.url("plain", "redesign/v1.html")
    browser = await launch_chromium(extension_dir=extension_dir, url=v1)
    await tabwire.wait_for_tools("notes_add")
    tab = (await tabwire.call_ok("browser_tabs")).structured["tabs"][0]["id"]
    snapshot = (await tabwire.call_ok("page_snapshot", {"tab_id": tab})).text
    add = next(line.split()[1] for line in snapshot.splitlines() if line.strip().startswith('button e') and '"Add"' in line)
    out = await tabwire.call_ok("page_find", {"ref": add, "tab_id": tab})
    assert re.search(r'role=button\[name="Add"\]\n\[end [0-9a-f]{8}\]\n$', out.text), out
    # The locator works as a page tools' selector too, on the redesigned page.
    await tabwire.call_ok("browser_open", {"url": fixture_server.url("plain", "redesign/v2.html"), "tab_id": tab})
    await tabwire.call_ok("page_act", {"selector": "label=Note", "action": "fill", "value": "tea", "tab_id": tab})
    await tabwire.call_ok("page_act", {"selector": 'role=button[name="Add"]', "action": "click", "tab_id": tab})
    page = await browser.cdp.wait_for_page(fixture_server.url("plain", "redesign/v2.html"))
    assert json.loads(await browser.cdp.evaluate(page, "localStorage.getItem('notes')")) == ["tea"]
    bad = await tabwire.call("page_act", {"selector": "role=buton", "action": "click", "tab_id": tab})
    assert bad.is_error and "is not a WAI-ARIA role" in bad.text, bad

"""Authoring workflow, part 2: live reload. `tabwire mcp --adapters DIR` watches DIR; editing an adapter file
updates the tools in the open tab and sends `tools/list_changed` without reloading the extension or the
page; a broken edit keeps the last good version and reports the error (file:line:column) on stderr.

The oracle for calls is the fixture page's own DOM, read through DevTools.
"""

from __future__ import annotations

import json
import re
import time

import pytest

from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

PAGE = "live/index.html"


def live_adapter(*tools: dict) -> dict:
    return {"name": "live", "match": ["http://127.0.0.1/*"], "tools": list(tools)}


HEADING = {
    "name": "heading",
    "description": "Read the page heading.",
    "annotations": {"read_only": True},
    "steps": [{"step": "read", "selector": "#heading", "into": "h"}, {"step": "return", "value": "{{h}}"}],
}
ITEMS = {
    "name": "items",
    "description": "List the items.",
    "annotations": {"read_only": True, "idempotent": True},
    "steps": [
        {"step": "extract", "selector": "#items > li", "fields": {"text": {}}, "into": "items"},
        {"step": "return", "value": {"items": "{{items}}"}},
    ],
}


def write_adapter(path, doc: dict) -> None:
    # Write then rename, as editors do, so the watcher never sees half a file.
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=2))
    tmp.replace(path)


@pytest.fixture
def adapters_dir(tmp_path):
    d = tmp_path / "adapters"
    d.mkdir()
    write_adapter(d / "live.json", live_adapter(HEADING))
    return d


@pytest.fixture
def tabwire_command(tabwire_command, adapters_dir):
    """The default command, with DIR watched and without the todomvc pattern for 127.0.0.1 (so only the
    adapters in DIR serve the fixture page)."""
    return tabwire_command.without_adapter_match().with_adapters(adapters_dir)


async def page_items(browser, page) -> list[str]:
    return await browser.cdp.evaluate(page, "[...document.querySelectorAll('#items > li')].map(li => li.textContent)")


async def test_editing_an_adapter_file_updates_the_open_tab(
    tabwire, tabwire_command, adapters_dir, launch_chromium, extension_dir, fixture_server
):
    url = fixture_server.url("plain", PAGE)
    browser = await launch_chromium(extension_dir=extension_dir, url=url)
    await tabwire.wait_for_tools("live_heading")
    page = await browser.cdp.wait_for_page(url)
    assert (await tabwire.call_ok("live_heading")).structured == {"result": "Live page"}

    # 1. A new tool and a renamed one: both reach the client without reloading anything.
    before = tabwire.list_changed_count()
    renamed = dict(HEADING, name="title")
    started = time.monotonic()
    write_adapter(adapters_dir / "live.json", live_adapter(renamed, ITEMS))
    await tabwire.wait_for_list_changed(before, timeout=10)

    async def updated() -> set[str] | None:
        names = await tabwire.tool_names()
        return names if {"live_title", "live_items"} <= names and "live_heading" not in names else None

    await wait_for(updated, timeout=10, what="the edited adapter's tools in tools/list")
    elapsed_ms = (time.monotonic() - started) * 1000
    print(f"live reload: file written -> tools/list updated in {elapsed_ms:.0f} ms")
    hints = (await tabwire.tools())["live_items"].annotations
    assert (hints.read_only_hint, hints.idempotent_hint) == (True, True), hints
    out = await tabwire.call_ok("live_items")
    assert [i["text"] for i in out.structured["items"]] == await page_items(browser, page) == ["one", "two"]
    assert (await tabwire.call_ok("live_title")).structured == {"result": "Live page"}
    # The page was not reloaded: the runtime received the new adapters in place.
    assert await browser.cdp.evaluate(page, "performance.getEntriesByType('navigation').length") == 1

    # 2. A broken edit: reported with file, line and column; the last good version stays.
    broken = json.dumps(live_adapter(renamed, ITEMS), indent=2).replace('"List the items."', '"List the items.",,')
    (adapters_dir / "live.json").write_text(broken)
    shown = str(adapters_dir / "live.json")

    def reported() -> bool:
        log = tabwire_command.stderr_path.read_text()
        return bool(re.search(re.escape(shown) + r":\d+:\d+: ", log)) and "keeping the last good version" in log

    await wait_for(reported, timeout=10, what="the broken file's error on tabwire's stderr")
    assert {"live_title", "live_items"} <= await tabwire.tool_names()
    out = await tabwire.call_ok("live_items")
    assert [i["text"] for i in out.structured["items"]] == ["one", "two"]

    # 3. Fixing the file applies the fix.
    before = tabwire.list_changed_count()
    write_adapter(adapters_dir / "live.json", live_adapter(HEADING))

    async def fixed() -> bool:
        names = await tabwire.tool_names()
        return "live_heading" in names and "live_items" not in names

    await wait_for(fixed, timeout=10, what="the fixed adapter's tools in tools/list")
    await tabwire.wait_for_list_changed(before, timeout=10)
    assert (await tabwire.call_ok("live_heading")).structured == {"result": "Live page"}


async def test_a_new_adapter_file_injects_into_an_open_tab(
    tabwire, tabwire_command, adapters_dir, launch_chromium, extension_dir, fixture_server
):
    """A file for a site no adapter matched before: the runtime gets injected into the already-open tab."""
    (adapters_dir / "live.json").unlink()
    await wait_for(
        lambda: "adapters reloaded" in tabwire_command.stderr_path.read_text(),
        timeout=10,
        what="tabwire to notice the removed adapter file",
    )
    url = fixture_server.url("plain", PAGE)
    browser = await launch_chromium(extension_dir=extension_dir, url=url)
    page = await browser.cdp.wait_for_page(url)
    await tabwire.wait_for_tools("browser_tabs")

    write_adapter(adapters_dir / "other.json", dict(live_adapter(ITEMS), name="other"))
    await tabwire.wait_for_tools("other_items", timeout=10)
    out = await tabwire.call_ok("other_items")
    assert [i["text"] for i in out.structured["items"]] == await page_items(browser, page)

"""End to end: `browser_open` answers once the page's runtime has warmed its call path up (issue 32,
`injector/src/page/warm.rs`), so that a call made at once after it finds the runtime's code compiled, on pages
an adapter matches and on pages of an origin where page tools are allowed; where no runtime runs it waits for
nothing and still answers.

The real `tabwire mcp`, headless Chromium with the real extension, the project's fixture pages and TodoMVC on
127.0.0.1. Whether the warm-up is over is read in the page's content-scripts world (`__tabwireWarm`, which the
runtime sets when its warm-up has run or was skipped), right after `browser_open` answered and before anything
else reaches the page: no time is asserted (the speed is scripts/bench_first_call.py's to print). On a page that
gives no idle moment after its load (`fixtures/warm/busy.html`) only the wait makes it so: with the worker's
probe answering at once, that test fails and the others may pass by the page's idleness.
"""

from __future__ import annotations

import re

import pytest

from harness.cdp import CdpError, evaluate_in_world

pytestmark = pytest.mark.anyio

WARM = "globalThis.__tabwireWarm ?? null"
RUNTIME = "globalThis.__tabwireRuntime ?? null"


async def in_content_world(browser, url: str, expression: str):
    """`expression` in the extension's world of the page at `url`; `None` when that world does not exist."""
    page = await browser.cdp.wait_for_page(url)
    try:
        return await evaluate_in_world(page, "Tabwire", expression)
    except CdpError:
        return None


async def test_an_adapter_pages_runtime_is_warm_when_browser_open_answers(
    tabwire, launch_chromium, extension_dir, todomvc_url
):
    browser = await launch_chromium(extension_dir=extension_dir)
    url = todomvc_url("plain")
    opened = await tabwire.browser_open(url)
    assert not opened.is_error, opened
    assert "todomvc_add_todo" in opened.text, opened
    assert await in_content_world(browser, url, WARM) == "ran"


async def test_an_allowed_origins_page_is_warm_when_browser_open_answers_and_so_is_the_next_one_it_navigates_to(
    unadapted_command, launch_chromium, extension_dir, fixture_server
):
    browser = await launch_chromium(extension_dir=extension_dir)
    first = fixture_server.url("plain", "screenshot/index.html")
    other = fixture_server.url("plain", "screenshot/other.html")
    async with unadapted_command.allowing_all_origins().session() as tabwire:
        opened = await tabwire.browser_open(first)
        assert not opened.is_error, opened
        assert await in_content_world(browser, first, WARM) == "ran"
        # Navigating the tab: the new document's runtime is warmed before the answer too.
        tab = opened.structured["tab_id"]
        moved = await tabwire.call_ok("browser_open", {"url": other, "tab_id": tab})
        assert moved.structured["tab_id"] == tab
        assert await in_content_world(browser, other, WARM) == "ran"


async def test_a_page_busy_after_its_load_is_warm_when_browser_open_answers(
    unadapted_command, launch_chromium, extension_dir, fixture_server
):
    # The page gives no idle moment for 1.5 s after its load: the warm-up has run by the answer only
    # because browser_open asked for it, not because the page happened to be idle first.
    browser = await launch_chromium(extension_dir=extension_dir)
    url = fixture_server.url("plain", "warm/busy.html")
    async with unadapted_command.allowing_all_origins().session() as tabwire:
        opened = await tabwire.browser_open(url)
        assert not opened.is_error, opened
        assert await in_content_world(browser, url, WARM) == "ran"


async def test_a_page_with_no_runtime_is_opened_without_waiting_for_a_warm_up(
    unadapted_command, launch_chromium, extension_dir, fixture_server
):
    browser = await launch_chromium(extension_dir=extension_dir)
    url = fixture_server.url("plain", "screenshot/index.html")
    async with unadapted_command.session() as tabwire:
        opened = await tabwire.browser_open(url)
        assert not opened.is_error, opened
        assert "registered no tools while loading" in opened.text, opened
        # No grant, no adapter: no runtime was loaded, so there was nothing to warm (a page tool would
        # first need the user's permission, then inject it).
        assert await in_content_world(browser, url, RUNTIME) is None
        assert await in_content_world(browser, url, WARM) is None


async def test_the_page_an_act_lands_on_warms_its_call_path_before_the_call_held_for_it(
    unadapted_command, launch_chromium, extension_dir, fixture_server
):
    # The submit's load is Tabwire's: its runtime starts once the page is parsed, while an image still
    # holds the page's load event for 3 s, and warms its call path at once. The snapshot held for the page
    # (the act asked for the page it loads) then runs on a warm path; with the warm-up left for the first idle moment after the load, the
    # held call ran first and the warm-up was skipped.
    browser = await launch_chromium(extension_dir=extension_dir)
    landed = fixture_server.url("plain", "preload/slow-load.html")
    async with unadapted_command.allowing_all_origins().session() as tabwire:
        opened = await tabwire.browser_open(fixture_server.url("plain", "preload/go.html"))
        tab = opened.structured["tab_id"]
        form = (await tabwire.call_ok("page_snapshot", {"tab_id": tab})).text
        go = re.search(r'button (e\d+) "Go on"', form)
        assert go, form
        acted = await tabwire.call_ok("page_act", {"tab_id": tab, "ref": go[1], "action": "click", "snapshot": True})
        # Asked for a snapshot, the act goes on with the page it landed on: its snapshot, held for that
        # page's runtime.
        # (A form's GET adds its query, empty here.)
        went = re.search(rf"^navigated to {re.escape(landed)}\S*, which shows:\n", acted.text, re.M)
        assert went, acted
        shown = acted.text[went.end():]
        assert 'h1 "Slow to load"' in shown, acted
        assert await in_content_world(browser, landed, "document.readyState") != "complete"
        assert await in_content_world(browser, landed, WARM) == "ran"

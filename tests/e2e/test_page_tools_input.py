"""Issue 17 through the page tools: the input fixtures of test_input.py (the real editors, react-select, a
Radix menu, key chords) driven with page_snapshot and page_act alone, on pages no adapter serves. The agent
finds its targets in the snapshot as a model would; the oracle is each library's own API in the page.
"""

from __future__ import annotations

import pytest

from harness.waiting import wait_for
from test_input import EDITORS, TEXT, input_site, keys  # noqa: F401 - input_site is a fixture
from test_page_tools import Agent

pytestmark = pytest.mark.anyio


@pytest.fixture
def tabwire_command(tabwire_command):
    return tabwire_command.serving_page_tools_only(call_timeout_ms=8000).allowing_all_origins()


async def open_page(tabwire, browser, site, page: str):
    url = site.url("plain", f"input/{page}")
    out = await tabwire.browser_open(url)
    assert not out.is_error and not out.structured.get("tools"), out  # no adapter: no site tools
    target = await browser.cdp.wait_for_page(url)
    await wait_for(
        lambda: browser.cdp.evaluate(target, "document.body.dataset.ready === 'yes'"), timeout=20, what=f"{page} to start"
    )
    return Agent(tabwire, out.structured["tab_id"]), target


@pytest.fixture
def open_input_page(tabwire, launch_chromium, extension_dir, input_site):  # noqa: F811
    """`agent, browser, page = await open_input_page("edit.html")`: the input fixture page opened through
    `browser_open` in Chromium with the extension (started at the first call) and started; a page-tools
    agent on its tab, and its DevTools target."""
    browsers = []

    async def open_in_browser(page: str):
        if not browsers:
            browsers.append(await launch_chromium(extension_dir=extension_dir))
        agent, target = await open_page(tabwire, browsers[0], input_site, page)
        return agent, browsers[0], target

    return open_in_browser


@pytest.mark.parametrize("editor", EDITORS)
async def test_fill_through_page_act_lands_in_a_rich_editors_model(
    open_input_page, editor
):
    agent, browser, page = await open_input_page(f"lib.html?lib={editor}")
    lines = await agent.snapshot()
    field = agent.ref(lines, r"^textbox e\d+")
    await agent.ok("page_act", ref=field, action="fill", value=TEXT)
    await agent.ok("page_act", ref=agent.ref(lines, r'^button e\d+ "Save"'), action="click")
    assert await browser.cdp.evaluate(page, "fixture.text()") == TEXT
    assert await browser.cdp.evaluate(page, "document.getElementById('saved').textContent") == TEXT
    await agent.ok("page_act", ref=field, action="clear")
    assert await browser.cdp.evaluate(page, "fixture.text()") == ""


async def test_react_select_and_a_radix_menu_open_on_the_press_of_a_page_act(
    open_input_page
):
    agent, browser, page = await open_input_page("lib.html?lib=react-select")
    await agent.ok("page_act", ref=agent.ref(await agent.snapshot(), r"^combobox e\d+"), action="click")
    option = agent.ref(await agent.snapshot(), r'^option e\d+ "Strawberry"')
    await agent.ok("page_act", ref=option, action="click")
    assert await browser.cdp.evaluate(page, "fixture.state()") == {"value": "strawberry", "label": "Strawberry"}

    agent, browser, page = await open_input_page("lib.html?lib=radix")
    opened = await agent.ok("page_act", ref=agent.ref(await agent.snapshot(), r"^button e\d+.*Actions"), action="click")
    duplicate = agent.ref(opened.splitlines(), r'^\+?\s*menuitem e\d+ "Duplicate"')
    await agent.ok("page_act", ref=duplicate, action="click")
    assert await browser.cdp.evaluate(page, "fixture.state()") == "Duplicate"


async def test_chords_through_page_act_carry_key_code_and_modifier_flags(
    open_input_page
):
    agent, browser, page = await open_input_page("keys.html")
    pad = agent.ref(await agent.snapshot(), r"^textbox e\d+")
    for chord in ("Shift+Enter", "Control+a", "Meta+Enter", "Alt+ArrowUp", "Mod+s", "Shift+7", "Esc"):
        await agent.ok("page_act", ref=pad, action="press", key=chord)
    log = keys(await browser.cdp.evaluate(page, "fixture.log()"))
    assert log[:5] == [
        "keydown Shift ShiftLeft 16 0 S",
        "keydown Enter Enter 13 0 S",
        "keypress Enter Enter 13 13 S",
        "keyup Enter Enter 13 0 S",
        "keyup Shift ShiftLeft 16 0",
    ], log
    assert "keydown s KeyS 83 0 C" in log and "keypress & Digit7 38 38 S" in log, log
    assert log[-2:] == ["keydown Escape Escape 27 0", "keyup Escape Escape 27 0"], log

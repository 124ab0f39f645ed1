"""A button the page re-renders between being found and being clicked (TiddlyWiki's "Confirm changes",
seen flaking in test_learn.py under load): an adapter's step and a page tool's ref find it again, once,
and click the new button once. Real Chromium, the real extension, tests/fixtures/input/rerender.html; the
oracle is the page's own count of clicks on each button, read through DevTools.
"""

from __future__ import annotations

import pytest

from test_input import INPUT_FIXTURES, input_site, open_fixture  # noqa: F401 - input_site is a fixture
from test_page_tools import Agent

pytestmark = pytest.mark.anyio


@pytest.fixture
def tabwire_command(tabwire_command):
    return tabwire_command.without_adapter_match().with_adapters(INPUT_FIXTURES / "adapters").allowing_all_origins()


async def test_a_step_clicks_the_button_the_page_re_rendered_while_the_click_waited(
    tabwire, launch_chromium, extension_dir, input_site  # noqa: F811
):
    browser = await launch_chromium(extension_dir=extension_dir)
    tab, page = await open_fixture(tabwire, browser, input_site, "rerender.html")
    out = await tabwire.call_ok("input_edit_and_confirm", {"tab_id": tab})
    assert out.structured == {"status": "confirmed"}, out
    # The button was re-rendered while the click waited for the panel over it: the new one took the
    # one click.
    assert await browser.cdp.evaluate(page, "fixture.replaced()") == 1
    assert await browser.cdp.evaluate(page, "fixture.confirmed()") == 1


async def test_a_ref_acts_on_the_equal_button_that_took_its_place(
    tabwire, launch_chromium, extension_dir, input_site  # noqa: F811
):
    browser = await launch_chromium(extension_dir=extension_dir)
    tab, page = await open_fixture(tabwire, browser, input_site, "rerender.html")
    agent = Agent(tabwire, tab)
    confirm = agent.ref(await agent.snapshot(), r'^button e\d+ "Confirm changes"')
    # Re-rendered after the model saw it: the ref's element is gone, an equal one is there.
    assert await browser.cdp.evaluate(page, "fixture.rerender()") == 1
    out = await agent.ok("page_act", ref=confirm, action="click")
    assert f'clicked {confirm} (button "Confirm changes")' in out, out
    assert await browser.cdp.evaluate(page, "fixture.confirmed()") == 1
    assert await browser.cdp.evaluate(page, "fixture.status()") == "confirmed"

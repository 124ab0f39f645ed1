"""Page tools across page loads (issue 18), on the server-rendered forms app whose POSTs answer 300-800 ms
later with a redirect, and with no adapter for it: a page_act that submits answers once the new page has
committed, saying where it landed (or, asked for a snapshot, with that page), and the app's own list has the
item when the answer arrives (also when the app answers at once); a page tool called while the tab loads acts
on the page the tab is going to, never on the one it left.
"""

from __future__ import annotations

import re

import anyio
import pytest

from harness.forms_app import FormsApp
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio


@pytest.fixture
def forms_app():
    app = FormsApp()
    try:
        yield app
    finally:
        app.stop()


@pytest.fixture
def tabwire_command(tabwire_command):
    return tabwire_command.serving_page_tools_only(call_timeout_ms=8000).allowing_all_origins()


def refs(text: str, pattern: str) -> list[str]:
    """The refs on the lines matching `pattern` (a regex over the line without indentation)."""
    found = [f"e{m[1]}" for line in text.splitlines()
             if re.search(pattern, line.strip()) and (m := re.search(r"\be(\d+)\b", line))]
    assert found, f"no line matches {pattern!r} in:\n{text}"
    return found


async def test_a_page_act_that_submits_answers_once_the_new_page_committed(
    tabwire, forms_app, launch_chromium, extension_dir
):
    await launch_chromium(extension_dir=extension_dir, url="about:blank")
    tab = (await tabwire.browser_open(forms_app.url("/new"))).structured["tab_id"]

    async def call(tool: str, **args) -> str:
        out = await tabwire.call(tool, {"tab_id": tab, **args})
        assert not out.is_error, out
        return out.text

    for n in range(2):
        form = await call("page_snapshot")
        title = f"oolong {n}"
        await call("page_act", ref=refs(form, r"^textbox e\d+ #title$")[0], action="fill", value=title)
        acted = await call("page_act", ref=refs(form, r'^button e\d+ "Create"')[0], action="click")
        # True when it arrives: the app stored the item, and the tab shows its page.
        landed = forms_app.url(f"/item/{n + 1}")
        assert f"navigated to {landed}: take a snapshot" in acted, acted
        assert forms_app.listed()[-1] == {"id": n + 1, "title": title}
        shown = await call("page_snapshot")
        assert f'h1 "{title}"' in shown, shown
        await tabwire.call_ok("browser_open", {"url": forms_app.url("/new"), "tab_id": tab})
    assert forms_app.posts == 2, "each item posted once"


async def test_a_page_tool_called_while_the_tab_loads_acts_on_the_page_it_is_going_to(
    tabwire, forms_app, launch_chromium, extension_dir
):
    browser = await launch_chromium(extension_dir=extension_dir, url=forms_app.url("/new"))
    cdp = browser.cdp
    page = await cdp.wait_for_page(forms_app.url("/new"))

    async def form_tab():
        tabs = (await tabwire.call_ok("browser_tabs")).structured["tabs"]
        return next((t["id"] for t in tabs if t["url"].startswith(forms_app.url("/new"))), None)

    # The extension lists the tab once it has connected and heard of it.
    tab = await wait_for(form_tab, timeout=30, what="browser_tabs to list the form's tab")
    # The person submits the form themselves; the POST takes 300-800 ms to answer.
    await cdp.evaluate(page, "document.querySelector('#title').value = 'sencha'; document.querySelector('#create').click()")
    await wait_for(lambda: forms_app.posts == 1 or None, timeout=10, what="the POST to reach the app")
    with anyio.fail_after(10):
        out = await tabwire.call("page_snapshot", {"tab_id": tab})
    assert not out.is_error, out
    # Not the form the tab left: the item's page, whose POST had not answered when the call came.
    assert 'h1 "sencha"' in out.text, out
    assert '"Create"' not in out.text, out
    # Text only: the page's answer sends no structured copy of the tab, origin, URL or title.
    assert out.structured is None, out
    shown = {t["id"]: t["url"] for t in (await tabwire.call_ok("browser_tabs")).structured["tabs"]}
    assert shown[tab] == forms_app.url("/item/1"), shown



async def test_submits_to_an_app_that_answers_at_once_answer_where_they_landed(tabwire, launch_chromium, extension_dir):
    # The app answers each POST at once: the next page commits within milliseconds of the click, and
    # each act still answers where it landed (not NAVIGATED, "may have been performed").
    app = FormsApp(slow_ms=(0, 0))
    try:
        await launch_chromium(extension_dir=extension_dir, url="about:blank")
        tab = (await tabwire.browser_open(app.url("/new"))).structured["tab_id"]
        for n in range(5):
            form = (await tabwire.call_ok("page_snapshot", {"tab_id": tab})).text
            title = f"genmaicha {n}"
            await tabwire.call_ok("page_act", {
                "tab_id": tab, "ref": refs(form, r"^textbox e\d+ #title$")[0], "action": "fill", "value": title,
            })
            # Asked for a snapshot: the answer goes on with the page it landed on, in the same call.
            acted = await tabwire.call("page_act", {
                "tab_id": tab, "ref": refs(form, r'^button e\d+ "Create"')[0], "action": "click", "snapshot": True,
            })
            assert not acted.is_error, acted
            landed = acted.text.split(f"navigated to {app.url(f'/item/{n + 1}')}, which shows:\n", 1)
            assert len(landed) == 2 and f'h1 "{title}"' in landed[1], acted
            assert app.listed()[-1] == {"id": n + 1, "title": title}
            await tabwire.call_ok("browser_open", {"url": app.url("/new"), "tab_id": tab})
        assert app.posts == 5, "each item posted once"
    finally:
        app.stop()

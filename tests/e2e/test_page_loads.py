"""End to end: calls across page loads (issues 14 and 18), on a server-rendered app whose form POSTs answer
300-800 ms later with a redirect (harness.forms_app), so every race shows on every run.

- A tool ending on a submit answers once the new page has committed, saying where it landed: the app's
  own list shows the item at once, and a navigating tool called right after in the same tab works.
- A submit with steps left goes on in the landing page (the new item's id read from its URL); a refused
  form is a REFUSED error with the page's words; a script that navigates after a click is followed.
- A POST that never answers: a TIMEOUT saying the action may have been performed, within the deadline,
  and the next call works; a submit to another origin, and to a page without a runtime: NAVIGATED, same.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from harness.adapter_docs import adapter, arguments, tool
from harness.forms_app import FormsApp
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

CALL_TIMEOUT_MS = 6000


def forms_adapter(app: FormsApp) -> dict:
    paths = ["/new*", "/create*", "/item/*", "/search*", "/hang*", "/kept"]
    return adapter("forms", [app.origin + p for p in paths], [
        tool("create", "Create an item; answers once the app has stored it.", [
            {"step": "fill", "selector": "#title", "value": "{{title}}"},
            {"step": "click", "selector": "#create"},
            {"step": "return", "value": {"submitted": "{{title}}"}},
        ], input_schema=arguments("title")),
        tool("create_and_read", "Create an item and read its id from the page the app lands on.", [
            {"step": "fill", "selector": "#title", "value": "{{title}}"},
            {"step": "click", "selector": "#create", "navigates": True},
            {"step": "if", "selector": ".error", "then": [
                {"step": "read", "selector": ".error", "into": "why"},
                {"step": "fail", "message": "the app refused the item: {{why}}"},
            ]},
            {"step": "read", "read": "url:-1", "into": "id"},
            {"step": "read", "selector": "#title", "into": "shown"},
            {"step": "return", "value": {"id": "{{id}}", "shown": "{{shown}}"}},
        ], input_schema=arguments("title", required=False)),
        tool("search", "Search the items (a GET form: a navigation).", [
            {"step": "fill", "selector": "#q", "value": "{{q}}"},
            {"step": "press", "selector": "#q", "key": "Enter", "navigates": True},
            {"step": "extract", "selector": "#results li", "into": "hits", "fields": {"title": {}}},
            {"step": "return", "value": "{{hits}}"},
        ], input_schema=arguments("q")),
        tool("open_new", "Go to the create form.", [{"step": "navigate", "url": "/new"}, {"step": "wait", "selector": "#title"}]),
        tool("where", "The page's address.", [
            {"step": "read", "read": "url", "into": "u"}, {"step": "return", "value": "{{u}}"},
        ], read_only=True),
        tool("js_go", "A button whose script fetches, then sets location; goes on in the page it loads.", [
            {"step": "click", "selector": "#js-go", "navigates": True},
            {"step": "read", "read": "url", "into": "u"},
            {"step": "return", "value": "{{u}}"},
        ]),
        *[
            tool(f"submit_{button}", f"Click #{button}, with a step left.", [
                {"step": "click", "selector": f"#{button}"},
                {"step": "read", "selector": "h1", "into": "h"},
                {"step": "return", "value": "{{h}}"},
            ])
            for button in ("away", "plain")
        ],
        tool("submit_hang", "Post a form the app never answers.", [{"step": "click", "selector": "#hang"}]),
    ])


@pytest.fixture
def forms_app():
    app, other = FormsApp(), FormsApp()
    app.other_origin = other.origin  # another port: another origin
    try:
        yield app
    finally:
        app.stop()
        other.stop()


@pytest.fixture
def tabwire_command(tabwire_command, forms_app: FormsApp, tmp_path: Path):
    return tabwire_command.serving_adapter_file(
        forms_adapter(forms_app), tmp_path / "adapters", call_timeout_ms=str(CALL_TIMEOUT_MS)
    )


async def test_a_call_ending_on_a_submit_answers_once_landed_and_the_next_navigating_call_works(
    tabwire, forms_app, launch_chromium, extension_dir
):
    await launch_chromium(extension_dir=extension_dir, url=forms_app.url("/new"))
    await tabwire.wait_for_tools("forms_create", "forms_search")
    for n in range(3):
        title = f"tea {n}"
        out = await tabwire.call_ok("forms_create", {"title": title})
        assert out.structured == {"submitted": title}, out
        assert f"The page navigated to {forms_app.origin}/item/{n + 1}." in out.text, out
        # True when it arrives: the app has it, read through its own API at once.
        assert forms_app.listed()[-1] == {"id": n + 1, "title": title}
        # The next call in the same tab navigates, and is not caught by the save's redirect.
        hits = await tabwire.call_ok("forms_search", {"q": "tea"})
        assert [h["title"] for h in hits.structured["result"]] == [f"tea {i}" for i in range(n + 1)], hits
        await tabwire.call_ok("forms_open_new")
    assert forms_app.posts == 3, "each item posted once"


async def test_a_submit_with_steps_left_goes_on_in_the_landing_page_and_a_refusal_carries_the_pages_words(
    tabwire, forms_app, launch_chromium, extension_dir
):
    await launch_chromium(extension_dir=extension_dir, url=forms_app.url("/new"))
    await tabwire.wait_for_tools("forms_create_and_read")
    out = await tabwire.call_ok("forms_create_and_read", {"title": "green tea"})
    assert out.structured == {"id": "1", "shown": "green tea"}, out
    assert forms_app.listed() == [{"id": 1, "title": "green tea"}]

    await tabwire.call_ok("forms_open_new")
    out = await tabwire.call("forms_create_and_read", {"title": "  "})
    assert out.is_error, out
    assert out.structured["error"]["code"] == "REFUSED", out
    assert "the app refused the item: A title is required." in out.structured["error"]["message"], out
    assert len(forms_app.listed()) == 1, "nothing stored"

    # A script that fetches and then sets location, after the click: followed to the page it loads.
    await tabwire.call_ok("forms_open_new")
    out = await tabwire.call_ok("forms_js_go")
    assert out.structured == {"result": forms_app.url("/search?q=")}, out


async def test_a_post_never_answered_and_submits_that_leave_say_the_action_may_have_been_performed(
    tabwire, forms_app, launch_chromium, extension_dir
):
    await launch_chromium(extension_dir=extension_dir, url="about:blank")
    opened = await tabwire.browser_open(forms_app.url("/new"))
    tab = opened.structured["tab_id"]
    await tabwire.wait_for_tools("forms_submit_hang")

    started = time.monotonic()
    out = await tabwire.call("forms_submit_hang")
    took = time.monotonic() - started
    assert out.is_error and out.structured["error"]["code"] == "TIMEOUT", out
    assert out.structured["error"]["effect"] == "maybe", out
    assert "may have been performed" in out.text, out
    assert took < CALL_TIMEOUT_MS / 1000, f"answered within the call's deadline, not the client's ({took:.1f} s)"
    # The next call works, in the page still shown.
    out = await tabwire.call_ok("forms_where")
    assert out.structured == {"result": forms_app.url("/new")}, out

    for button, why in (("away", "another site"), ("plain", "no Tabwire runtime")):
        await tabwire.call_ok("browser_open", {"url": forms_app.url("/new"), "tab_id": tab})
        out = await tabwire.call(f"forms_submit_{button}")
        assert out.is_error and out.structured["error"]["code"] == "NAVIGATED", out
        assert out.structured["error"]["effect"] == "maybe", out
        assert out.structured["error"]["message"].startswith("steps[0] (click): led to "), out
        assert why in out.structured["error"]["message"], out


async def test_a_page_the_back_forward_cache_restores_offers_its_tools_again(
    tabwire, forms_app, launch_chromium, extension_dir
):
    # A page shown as it loads is not announced again (its runtime did as it started); one the back/forward
    # cache restores offers its tools again, which the worker dropped when the tab went on to another page
    # (its runtime announces it on `pageshow`, and the worker pushes it the adapters for its URL).
    browser = await launch_chromium(extension_dir=extension_dir, url="about:blank")
    form = forms_app.url("/kept")
    tab = (await tabwire.browser_open(form)).structured["tab_id"]
    page = await browser.cdp.wait_for_page(form)
    await browser.cdp.evaluate(page, "window.kept = 'this document'")
    await tabwire.call_ok("forms_search", {"q": "", "tab_id": tab})  # a GET form: the tab goes on to /search
    await tabwire.call_ok("browser_tab", {"tab_id": tab, "action": "back"})

    async def back_on_the_form() -> str | None:
        tabs = (await tabwire.call_ok("browser_tabs")).structured["tabs"]
        shown = next((t for t in tabs if t["id"] == tab), None)
        return shown if shown and shown["url"] == form and "forms_where" in shown["tools"] else None

    await wait_for(back_on_the_form, timeout=10, what="the restored form's tools to be listed again")
    # The very document came back from the cache, not a new load of it.
    assert await browser.cdp.evaluate(page, "window.kept") == "this document"
    out = await tabwire.call_ok("forms_where", {"tab_id": tab})
    assert out.structured == {"result": form}, out

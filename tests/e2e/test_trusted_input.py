"""End to end: trusted input, opt-in per site (issue 17), through Chrome's debugger.

The real `tabwire mcp`, headless Chromium with the real extension, and a fixture page
(tests/fixtures/trusted) that takes only events whose `isTrusted` is true: a button, a checkbox that puts
itself back, a text field that undoes untrusted changes, a pad that records keys. Without the grant an
action the page visibly did not take fails with NO_EFFECT naming the setting; after
`tabwire allow --trusted-input ORIGIN` the same call passes, checked in the page. Through an adapter's
steps and through page_act on a page no adapter serves; chords; a frame's button; a tab closed mid-call; the
debugger detached under a call (as when the user cancels Chrome's debugging bar); a client that can ask its
user (MCP elicitation) offering trusted input when an action had no effect.
"""

from __future__ import annotations

import urllib.request
from pathlib import Path

import anyio
import mcp_types as types
import pytest

from harness.waiting import wait_for
from test_page_tools import Agent
from test_permission import run_cli

pytestmark = pytest.mark.anyio

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture
def tabwire_command(tabwire_command):
    # Page tools everywhere; trusted input never by that flag.
    return tabwire_command.without_adapter_match().with_adapters(FIXTURES / "trusted" / "adapters").allowing_all_origins()


async def open_fixture(tabwire, browser, fixture_server, page: str):
    url = fixture_server.url("plain", f"trusted/{page}")
    out = await tabwire.browser_open(url)
    assert not out.is_error, out
    target = await browser.cdp.wait_for_page(url)
    await wait_for(
        lambda: browser.cdp.evaluate(target, "document.body.dataset.ready === 'yes'"), timeout=20, what=f"{page} to start"
    )
    return out.structured["tab_id"], target


async def open_free_page(tabwire, launch_chromium, extension_dir, fixture_server):
    """The trusted fixture where its adapter does not match (`?free`: page tools only), opened in a new
    Chromium with the extension: a page-tools agent on its tab, the browser, and the page's DevTools target."""
    browser = await launch_chromium(extension_dir=extension_dir)
    tab, page = await open_fixture(tabwire, browser, fixture_server, "index.html?free")
    return Agent(tabwire, tab), browser, page


def names_the_setting(text: str, origin: str) -> bool:
    return f"`tabwire allow --trusted-input {origin}`" in text and "debugging" in text and "popup" in text


async def worker_target(browser):
    async def find():
        workers = [t for t in await browser.cdp.targets() if t.type == "service_worker" and t.url.endswith("/worker.js")]
        return workers[0] if workers else None

    return await wait_for(find, timeout=10, what="the extension's service worker target")


async def test_an_adapters_steps_fail_naming_the_setting_then_pass_once_trusted_input_is_on(
    tabwire, tabwire_command, fixture_server, launch_chromium, extension_dir
):
    origin = fixture_server.origin
    browser = await launch_chromium(extension_dir=extension_dir)
    tab, page = await open_fixture(tabwire, browser, fixture_server, "index.html")

    # Synthetic input: the page ignores it, and where that shows, the error says what to do.
    out = await tabwire.call("trusted_set_name", {"name": "Ada", "tab_id": tab})
    assert out.is_error and out.text.startswith("NO_EFFECT"), out
    assert names_the_setting(out.text, origin), out.text
    assert await browser.cdp.evaluate(page, "fixture.name()") == "nobody"
    out = await tabwire.call("trusted_agree", {"tab_id": tab})
    assert out.is_error and out.text.startswith("NO_EFFECT") and names_the_setting(out.text, origin), out
    out = await tabwire.call_ok("trusted_press", {"tab_id": tab})
    assert out.structured["count"] == "Pressed 0", out  # a click has no check of its own: the page shows it
    assert await browser.cdp.evaluate(page, "fixture.presses()") == []

    assert "trusted input are allowed" in run_cli(tabwire_command, "allow", "--trusted-input", origin)
    assert f"{origin}  page tools allowed, trusted input on" in run_cli(tabwire_command, "grants")

    # The same calls, now through Chrome's debugger: the page takes them.
    await tabwire.call_ok("trusted_set_name", {"name": "Ada Lovelace ✓", "tab_id": tab})
    assert await browser.cdp.evaluate(page, "fixture.name()") == "Ada Lovelace ✓"
    await tabwire.call_ok("trusted_agree", {"tab_id": tab})
    assert await browser.cdp.evaluate(page, "fixture.agreed()") is True
    out = await tabwire.call_ok("trusted_press", {"tab_id": tab})
    assert out.structured["count"] == "Pressed 1", out
    presses = await browser.cdp.evaluate(page, "fixture.presses()")
    box = await browser.cdp.evaluate(page, "(() => { const r = document.querySelector('#go').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()")
    assert len(presses) == 1 and abs(presses[0]["x"] - box[0]) <= 1 and abs(presses[0]["y"] - box[1]) <= 1, (presses, box)

    # Chords are keys the browser dispatches, modifiers held, and it runs their default action:
    # Control+a selects the pad's text, Shift+Tab moves the focus back to the field before it.
    await tabwire.call_ok("trusted_select_all", {"tab_id": tab})
    keys = await browser.cdp.evaluate(page, "fixture.keys()")
    assert [(k["type"], k["key"], k["ctrl"]) for k in keys] == [
        ("keydown", "Control", True), ("keydown", "a", True), ("keyup", "a", True), ("keyup", "Control", False)
    ], keys
    assert all(k["trusted"] for k in keys) and keys[1]["code"] == "KeyA", keys
    selected = "(() => { const p = document.querySelector('#pad'); return p.value.slice(p.selectionStart, p.selectionEnd); })()"
    assert await browser.cdp.evaluate(page, selected) == "some text"
    await tabwire.call_ok("trusted_back_tab", {"tab_id": tab})
    keys = (await browser.cdp.evaluate(page, "fixture.keys()"))[4:]
    assert [(k["type"], k["key"], k["shift"]) for k in keys][:2] == [("keydown", "Shift", True), ("keydown", "Tab", True)], keys
    assert await browser.cdp.evaluate(page, "fixture.focused()") == "before"

    # Revoked: synthetic again, at once.
    run_cli(tabwire_command, "revoke", "--trusted-input", origin)
    out = await tabwire.call("trusted_set_name", {"name": "Grace", "tab_id": tab})
    assert out.is_error and out.text.startswith("NO_EFFECT"), out


async def test_page_act_fails_naming_the_setting_then_passes_on_a_page_without_adapter(
    tabwire, tabwire_command, fixture_server, launch_chromium, extension_dir
):
    origin = fixture_server.origin
    agent, browser, page = await open_free_page(tabwire, launch_chromium, extension_dir, fixture_server)
    lines = await agent.snapshot()
    name = agent.ref(lines, r'^textbox e\d+ "Name"')
    agree = agent.ref(lines, r'^checkbox e\d+ "I agree"')
    out = await tabwire.call("page_act", {"ref": name, "action": "fill", "value": "Ada", "tab_id": agent.tab})
    assert out.is_error and out.text.startswith("NO_EFFECT") and names_the_setting(out.text, origin), out
    out = await tabwire.call("page_act", {"ref": agree, "action": "check", "tab_id": agent.tab})
    assert out.is_error and out.text.startswith("NO_EFFECT") and names_the_setting(out.text, origin), out

    run_cli(tabwire_command, "allow", "--trusted-input", origin)
    await agent.ok("page_act", ref=name, action="fill", value="Ada")
    assert await browser.cdp.evaluate(page, "fixture.name()") == "Ada"
    await agent.ok("page_act", ref=agree, action="check")
    assert await browser.cdp.evaluate(page, "fixture.agreed()") is True
    await agent.ok("page_act", ref=agent.ref(lines, r'^button e\d+ "Press me"'), action="click")
    assert len(await browser.cdp.evaluate(page, "fixture.presses()")) == 1
    pad = agent.ref(lines, r'^textbox e\d+ "Pad')
    await agent.ok("page_act", ref=pad, action="press", key="Shift+Tab")
    assert await browser.cdp.evaluate(page, "fixture.focused()") == "before"
    assert all(k["trusted"] for k in await browser.cdp.evaluate(page, "fixture.keys()"))
    # A button in a same-origin frame: the real mouse lands on it (its point offset by the frame).
    inner = agent.ref(await agent.snapshot(), r'^button e\d+ "Inner button"')
    await agent.ok("page_act", ref=inner, action="click")
    assert len(await browser.cdp.evaluate(page, "fixture.innerPresses")) == 1


async def test_a_detached_debugger_and_a_closed_tab_end_the_call_with_a_typed_error(
    tabwire, tabwire_command, fixture_server, launch_chromium, extension_dir
):
    origin = fixture_server.origin
    run_cli(tabwire_command, "allow", "--trusted-input", origin)
    browser = await launch_chromium(extension_dir=extension_dir)
    tab, page = await open_fixture(tabwire, browser, fixture_server, "index.html")
    out = await tabwire.call_ok("trusted_press", {"tab_id": tab})
    assert out.structured["count"] == "Pressed 1", out

    # The debugger is taken away while Tabwire holds it (what cancelling Chrome's bar does): the next
    # action says what happened, and the one after attaches again.
    worker = await worker_target(browser)
    await browser.cdp.evaluate(worker, f"chrome.debugger.detach({{tabId: {tab}}})", await_promise=True)
    out = await tabwire.call("trusted_press", {"tab_id": tab})
    assert out.is_error and out.text.startswith("DEBUGGER_UNAVAILABLE"), out
    assert "detached" in out.text and "Call again" in out.text, out
    out = await tabwire.call_ok("trusted_press", {"tab_id": tab})
    assert out.structured["count"] == "Pressed 2", out

    # The tab closes while a call waits after its trusted click: TAB_CLOSED at once, no hang (the
    # call's own wait would last 20 s; the test's wait_for bounds it far below).
    results = []
    async with anyio.create_task_group() as tg:

        async def call():
            results.append(await tabwire.call("trusted_press_and_wait", {"tab_id": tab}))

        tg.start_soon(call)
        await wait_for(
            lambda: browser.cdp.evaluate(page, "fixture.presses().length >= 3"), timeout=15, what="the trusted click"
        )
        await anyio.to_thread.run_sync(close_tab, browser.cdp.port, page.id)
        await wait_for(lambda: bool(results), timeout=10, what="the call to end once its tab closed")
    out = results[0]
    assert out.is_error and out.text.startswith("TAB_CLOSED"), out


def close_tab(port: int, target_id: str) -> None:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # 127.0.0.1 only, never a proxy
    opener.open(f"http://127.0.0.1:{port}/json/close/{target_id}", timeout=10).read()


async def test_a_client_that_can_ask_offers_trusted_input_when_an_action_had_no_effect(
    tabwire_command, fixture_server, launch_chromium, extension_dir
):
    c = tabwire_command
    origin = fixture_server.origin
    questions: list[str] = []

    async def ask_the_user(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        questions.append(params.message)
        return types.ElicitResult(action="accept", content={"allow": True})

    async with c.session(elicitation_callback=ask_the_user) as tabwire:
        agent, browser, page = await open_free_page(tabwire, launch_chromium, extension_dir, fixture_server)
        name = agent.ref(await agent.snapshot(), r'^textbox e\d+ "Name"')
        out = await tabwire.call("page_act", {"ref": name, "action": "fill", "value": "Ada", "tab_id": agent.tab})
        # The user was asked, with the bar explained; the yes is recorded and the error says to call again.
        assert len(questions) == 1 and origin in questions[0] and "debugging this browser" in questions[0], questions
        assert out.is_error and out.text.startswith("NO_EFFECT"), out
        assert f"The user has just turned trusted input on for {origin}: call again" in out.text, out
        assert "tabwire allow" not in out.text, out
        assert f"{origin}  page tools allowed, trusted input on" in run_cli(c, "grants")
        await agent.ok("page_act", ref=name, action="fill", value="Ada")
        assert await browser.cdp.evaluate(page, "fixture.name()") == "Ada"
        assert len(questions) == 1, "asked again once allowed"


async def test_a_trusted_click_is_not_pressed_when_the_page_moves_another_origins_frame_under_the_pointer(
    tabwire, tabwire_command, fixture_server, second_fixture_server, launch_chromium, extension_dir
):
    """Issue 26: with trusted input on, a page moves another origin's "Pay now" frame under the pointer as
    it arrives on "Save draft". The press is sent only where a hit test right before it finds the target:
    the call fails with a typed error, and neither button is pressed."""
    origin = fixture_server.origin
    assert "trusted input are allowed" in run_cli(tabwire_command, "allow", "--trusted-input", origin)
    browser = await launch_chromium(extension_dir=extension_dir)
    tab, page = await open_fixture(tabwire, browser, fixture_server, f"redirect.html?pay={second_fixture_server.origin}")

    out = await tabwire.call("page_act", {"tab_id": tab, "selector": "#save", "action": "click"})
    fixture = await browser.cdp.evaluate(page, "window.fixture")
    assert fixture["moved"], fixture  # the pointer did arrive, and the page moved its frame
    assert fixture["paid"] == 0, (fixture, out)
    assert out.is_error and out.text.startswith("NOT_ACTIONABLE"), out
    assert "Payment" in out.text or "iframe" in out.text, out
    assert fixture["saved"] == 0, fixture


async def test_a_drag_fails_naming_the_setting_then_type_and_drag_pass_with_trusted_input(
    tabwire, tabwire_command, fixture_server, launch_chromium, extension_dir
):
    """Issue 31's `drag` and `type` (text at the caret) through page_act on a page that takes only trusted
    input. Without the grant a drag of the trusted-only list is NO_EFFECT naming the setting and the list is
    as it was (synthetic `type` needs no grant here: the editing command it runs fires a trusted `input`).
    With it the browser's own mouse and keyboard (the debugger's Input domain) do both, checked in the
    page: the list reordered, and the text announced by a trusted `beforeinput`."""
    origin = fixture_server.origin
    agent, browser, page = await open_free_page(tabwire, launch_chromium, extension_dir, fixture_server)
    lines = await agent.snapshot()
    name = agent.ref(lines, r'^textbox e\d+ "Name"')
    first = agent.ref(lines, r"^listitem e\d+: First")
    third = agent.ref(lines, r"^listitem e\d+: Third")
    out = await tabwire.call("page_act", {"ref": first, "action": "drag", "to": third, "tab_id": agent.tab})
    assert out.is_error and out.text.startswith("NO_EFFECT") and names_the_setting(out.text, origin), out
    assert await browser.cdp.evaluate(page, "fixture.order()") == ["First", "Second", "Third"]

    run_cli(tabwire_command, "allow", "--trusted-input", origin)
    await agent.ok("page_act", ref=name, action="type", value="!", at="end")
    assert await browser.cdp.evaluate(page, "fixture.name()") == "nobody!"
    assert {"data": "!", "trusted": True} in await browser.cdp.evaluate(page, "fixture.announced()")
    await agent.ok("page_act", ref=name, action="type", value="Mr ", at="start")
    assert await browser.cdp.evaluate(page, "fixture.name()") == "Mr nobody!"
    await agent.ok("page_act", ref=first, action="drag", to=third)
    assert await browser.cdp.evaluate(page, "fixture.order()") == ["Second", "Third", "First"]

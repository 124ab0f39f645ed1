"""End to end in headless Firefox ESR: the same extension (Firefox's manifest, the same wasm), installed as
a user would write it (`tabwire extension install --browser firefox`) and loaded through WebDriver BiDi.

Connect and reconnect, the pinned `moz-extension://` origin (another add-on's origin is refused even with
the secret), the TodoMVC adapter, page tools with permission (and a same-origin frame), trusted input's
typed refusal, a dialog, state, a WebMCP page, and the link staying up through Firefox's background
suspension, a cross-origin frame's content in a snapshot and an act in it by its ref (Firefox's frame ids
pass 32 bits), and a code adapter. Each effect is checked in the page itself through BiDi, not only
through our tools.
"""

from __future__ import annotations

import re
import subprocess
import time

import pytest
import websockets

from conftest import run_cli
from harness import handshake
from harness.firefox import ADDON_ORIGIN, add_on_connected
from harness.mcp_client import error_codes_in
from harness.todomvc import TODO_TOOLS, todos_from
from harness.waiting import wait_for

pytestmark = [pytest.mark.anyio, pytest.mark.firefox]

TODOS = "JSON.parse(localStorage.getItem('todos-vanillajs')).todos.map(t => ({title: t.title, completed: t.completed}))"


def stderr_of(tabwire_command) -> str:
    return tabwire_command.stderr_path.read_text(errors="replace")


async def test_firefox_connects_says_so_is_pinned_and_reconnects(
    tabwire_command, pairing, firefox_connected_to
):
    c = tabwire_command
    async with c.session() as tabwire:
        await firefox_connected_to(tabwire)
        # `hello` names the browser.
        await wait_for(lambda: "browser=Firefox" in stderr_of(c), timeout=5, what="hello naming Firefox")
    # The origin it proved itself from is pinned beside the secret.
    pin = pairing.secret_file.with_name(pairing.secret_file.name + ".firefox-origin")
    assert pin.read_text().strip() == ADDON_ORIGIN

    # tabwire restarts: the add-on reconnects by itself.
    stderr2 = c.stderr_path.with_name("tabwire-2.stderr.log")
    async with c.session(stderr_path=stderr2) as tabwire:
        started = time.monotonic()
        await add_on_connected(tabwire)
        reconnect_s = time.monotonic() - started
        print(f"firefox reconnected {reconnect_s:.2f} s after tabwire restarted")

        # Another add-on's origin is refused before any proof, even knowing the secret; the pinned one
        # still gets to prove itself (here it proves and is let in).
        async def knock(origin: str) -> int | None:
            try:
                async with websockets.connect(
                    f"ws://127.0.0.1:{pairing.port}/",
                    origin=origin,
                    subprotocols=handshake.offer(handshake.BROWSER, handshake.fresh_nonce()),
                    open_timeout=5,
                ):
                    return 101
            except websockets.InvalidStatus as refused:
                return refused.response.status_code

        assert await knock("moz-extension://0badc0de-1b2c-4d5e-8f90-123456789abc") == 403
        assert await knock("moz-extension://" + "x" * 36) == 403
        assert await knock(ADDON_ORIGIN) == 101
        await add_on_connected(tabwire)


async def test_todomvc_adapter_in_firefox(tabwire, firefox_connected_to, todomvc_url):
    url = todomvc_url("plain")
    browser = await firefox_connected_to(tabwire)
    opened = await tabwire.browser_open(url)
    assert not opened.is_error, opened
    await tabwire.wait_for_tools(*TODO_TOOLS)
    context = await browser.bidi.context_of(url)

    await tabwire.call_ok("todomvc_add_todo", {"title": "Buy milk"})
    await tabwire.call_ok("todomvc_add_todo", {"title": "Walk the dog"})
    await tabwire.call_ok("todomvc_toggle_todo", {"title": "Buy milk"})
    expected = [{"title": "Buy milk", "completed": True}, {"title": "Walk the dog", "completed": False}]
    assert todos_from((await tabwire.call_ok("todomvc_list_todos")).structured) == expected
    assert await browser.bidi.evaluate(context, TODOS) == expected, "the app's own storage disagrees"

    # State push: the adapter's state after a change, as the page pushed it.
    state = await tabwire.call_ok("site_state", {})
    assert "Walk the dog" in state.text, state.text

    # Reload: the tools come back, the app kept its todos.
    await browser.bidi.reload(context)

    async def listed_again():
        out = await tabwire.call("todomvc_list_todos")
        return None if out.is_error else todos_from(out.structured)

    assert await wait_for(listed_again, timeout=20, what="list_todos after reload") == expected


async def test_page_tools_ask_permission_then_act_in_firefox(
    tabwire_command, firefox_connected_to, fixture_server
):
    c = tabwire_command.serving_page_tools_only(call_timeout_ms=8000)
    url = fixture_server.url("plain", "page-tools/index.html")
    origin = re.match(r"http://[^/]+", url)[0]
    async with c.session() as tabwire:
        browser = await firefox_connected_to(tabwire)
        opened = await tabwire.browser_open(url)
        assert not opened.is_error, opened
        tab = opened.structured["tab_id"]
        context = await browser.bidi.context_of(url)

        # Not allowed yet: the page tool says how to allow the origin, and nothing reaches the page.
        refused = await tabwire.call("page_snapshot", {"tab_id": tab})
        assert refused.is_error and "PERMISSION_REQUIRED" in error_codes_in(refused.text), refused
        run_cli(c, "allow", origin)

        snapshot = await tabwire.call("page_snapshot", {"tab_id": tab})
        assert not snapshot.is_error, snapshot
        text = snapshot.text
        assert re.search(r'iframe "Inner frame"\n +button e\d+ "Frame button"', text), text[:800]

        # Fill the form's field and read it back from the page itself.
        field = re.search(r"textbox (e\d+)", text)[1]
        filled = await tabwire.call("page_act", {"tab_id": tab, "ref": field, "action": "fill", "value": "firefox"})
        assert not filled.is_error, filled
        assert await browser.bidi.evaluate(context, "document.getElementById('q').value") == "firefox"

        # Trusted input is Chrome's: Firefox says so with a typed error, it does not pretend.
        run_cli(c, "allow", origin, "--trusted-input")
        trusted = await tabwire.call("page_act", {"tab_id": tab, "ref": field, "action": "click"})
        assert trusted.is_error and "DEBUGGER_UNAVAILABLE" in error_codes_in(trusted.text), trusted
        assert "Firefox" in trusted.text, trusted.text


async def test_a_cross_origin_frame_in_a_firefox_snapshot(
    tabwire_command, firefox_connected_to, fixture_server, second_fixture_server
):
    c = tabwire_command.serving_page_tools_only(call_timeout_ms=8000).allowing_all_origins()
    cross = second_fixture_server.url("plain", "page-tools/frame.html")
    url = fixture_server.url("plain", "page-tools/index.html") + f"?cross={cross}"
    async with c.session() as tabwire:
        browser = await firefox_connected_to(tabwire)
        opened = await tabwire.browser_open(url)
        assert not opened.is_error, opened
        tab = opened.structured["tab_id"]

        async def snapshot_with_frame() -> str | None:
            out = await tabwire.call("page_snapshot", {"tab_id": tab})
            assert not out.is_error, out
            return out.text if re.search(r'button f\d+e\d+ "Frame button"', out.text) else None

        # A model looks again while the frame's runtime is starting.
        text = await wait_for(snapshot_with_frame, timeout=20, what="a snapshot showing the cross-origin frame")
        assert re.search(r'iframe "Other origin" \[content from http://127\.0\.0\.1:\d+\]', text), text[:600]
        frame_ref = re.search(r'button (f(\d+)e\d+) "Frame button"', text)
        # Firefox's frame ids pass 32 bits: the ref carries the whole id.
        assert int(frame_ref[2]) > 2**32, frame_ref[0]

        clicked = await tabwire.call("page_act", {"tab_id": tab, "ref": frame_ref[1], "action": "click"})
        assert not clicked.is_error, clicked
        assert "frame clicked" in clicked.text, clicked.text
        tree = await browser.bidi.send("browsingContext.getTree", {})
        frames = [child for top in tree["contexts"] for child in top.get("children") or []]
        frame = next(f["context"] for f in frames if f["url"].startswith(cross))
        assert await browser.bidi.evaluate(frame, "document.getElementById('frame-status').textContent") == "frame clicked"


async def test_a_dialog_and_a_webmcp_page_in_firefox(
    tabwire_command, firefox_connected_to, fixture_server
):
    from harness.webmcp_names import page_tool_name

    c = tabwire_command.serving_page_tools_only(call_timeout_ms=8000).allowing_all_origins()
    async with c.session() as tabwire:
        browser = await firefox_connected_to(tabwire)

        # The page's confirm is answered as the call said (its main world's dialogs.js, in Firefox too).
        url = fixture_server.url("plain", "dialogs/index.html")
        opened = await tabwire.browser_open(url)
        assert not opened.is_error, opened
        tab = opened.structured["tab_id"]
        context = await browser.bidi.context_of(url)
        items = "[...document.querySelectorAll('#items li')].map((li) => li.dataset.name)"
        args = {"tab_id": tab, "selector": "button.delete[data-name=alpha]", "action": "click"}
        unasked = await tabwire.call("page_act", args)
        assert unasked.is_error and unasked.text.startswith("DIALOG:"), unasked
        assert await browser.bidi.evaluate(context, items) == ["alpha", "beta"]
        accepted = await tabwire.call("page_act", {**args, "dialog": "accept"})
        assert not accepted.is_error and ": accepted" in accepted.text, accepted
        assert await browser.bidi.evaluate(context, items) == ["beta"]

        # A page's own WebMCP tools, with no adapter.
        url = fixture_server.url("plain", "webmcp/index.html")
        out = await tabwire.browser_open(url)
        assert not out.is_error, out
        add_note = page_tool_name(url, "add_note")
        await tabwire.wait_for_tools(add_note)
        added = await tabwire.call_ok(add_note, {"text": "from firefox"})
        assert added.structured["page_content"]["count"] == 1, added
        context = await browser.bidi.context_of(url)
        notes = "[...document.querySelectorAll('#notes li')].map(li => li.textContent)"
        assert await browser.bidi.evaluate(context, notes) == ["from firefox"]


IDLE_S = 120


async def test_the_link_stays_up_through_two_idle_minutes(
    tabwire_command, firefox_connected_to, todomvc_url
):
    """Firefox suspends an add-on's background ~30 s after its last API call or event, and socket traffic does
    not count: the link must stay up anyway. Polled from outside, in tabwire's log (no disconnect, no second
    hello), so that the polling itself never wakes the add-on; then a call works at once."""
    c = tabwire_command
    url = todomvc_url("plain")
    async with c.session() as tabwire:
        await firefox_connected_to(tabwire)
        opened = await tabwire.browser_open(url)
        assert not opened.is_error, opened
        await tabwire.wait_for_tools(*TODO_TOOLS)
        connects = stderr_of(c).count("extension said hello")
        end = time.monotonic() + IDLE_S

        def idle_over_with_the_link_up() -> bool:
            log = stderr_of(c)
            assert "browser extension disconnected" not in log, "the link dropped while idle"
            assert log.count("extension said hello") == connects, "the add-on reconnected: the link dropped"
            return time.monotonic() >= end

        await wait_for(idle_over_with_the_link_up, timeout=IDLE_S + 30, what=f"{IDLE_S} s idle with the link up",
                       interval=0.5)
        started = time.monotonic()
        listed = await tabwire.call_ok("todomvc_list_todos")
        print(f"first call after {IDLE_S} s idle: {1000 * (time.monotonic() - started):.1f} ms")
        assert todos_from(listed.structured) == []
        assert stderr_of(c).count("extension said hello") == connects


async def test_a_code_adapter_in_firefox(tabwire_command, firefox_connected_to, firefox_extension_dir, fixture_server):
    """A code adapter's handlers (bundled JS, kept on the content scripts' own global) run in Firefox too."""
    from conftest import FIXTURES, REPO

    bundle = firefox_extension_dir / "extension" / "dist" / "code-adapters.js"
    subprocess.run(["cargo", "xtask", "bundle-code-adapters", str(FIXTURES / "code-adapters"), str(bundle)],
                   check=True, cwd=REPO, timeout=120)
    c = tabwire_command.serving_page_tools_only(call_timeout_ms=4000)
    async with c.session() as tabwire:
        browser = await firefox_connected_to(tabwire)
        url = fixture_server.url("plain", "live/index.html")
        out = await tabwire.browser_open(url)
        assert not out.is_error, out
        await tabwire.wait_for_tools("listcode_stats", "listcode_sum", timeout=30)
        assert (await tabwire.call_ok("listcode_sum", {"a": 2, "b": 40})).structured == {"sum": 42}
        context = await browser.bidi.context_of(url)
        items = await browser.bidi.evaluate(context, "[...document.querySelectorAll('#items > li')].map(li => li.textContent)")
        stats = await tabwire.call_ok("listcode_stats")
        assert stats.structured == {"count": len(items), "letters": sum(map(len, items)), "items": items}, stats

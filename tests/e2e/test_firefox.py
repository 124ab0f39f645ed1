"""End to end in headless Firefox ESR: the same extension (Firefox's manifest, the same wasm), installed as
a user would write it (`tabwire extension install --browser firefox`) and loaded through WebDriver BiDi.

Connect and reconnect, the pinned `moz-extension://` origin (another add-on's origin is refused even with
the secret), the TodoMVC adapter, page tools with permission, a cross-origin frame (Firefox's frame ids pass
32 bits), a dialog, state push, a WebMCP page, and the link staying up through Firefox's background
suspension. Each effect is checked in the page itself through BiDi, not only through our tools.
"""

from __future__ import annotations

import re
import time

import pytest
import websockets

from conftest import run_cli
from harness import handshake
from harness.firefox import ADDON_ORIGIN
from harness.mcp_client import error_codes_in, open_tabwire_session
from harness.todomvc import TODO_TOOLS, todos_from
from harness.waiting import wait_for

pytestmark = [pytest.mark.anyio, pytest.mark.firefox]

TODOS = "JSON.parse(localStorage.getItem('todos-vanillajs') || '[]').map(t => ({title: t.title, completed: t.completed}))"


async def connected(tabwire) -> None:
    """Waits until a browser is connected (browser_tabs answers)."""

    async def up() -> bool:
        return not (await tabwire.call("browser_tabs")).is_error

    await wait_for(up, timeout=30, what="the Firefox add-on to connect")


def stderr_of(tabwire_command) -> str:
    return tabwire_command.stderr_path.read_text(errors="replace")


async def test_firefox_connects_says_so_is_pinned_and_reconnects(
    tabwire_command, pairing, launch_firefox, firefox_extension_dir
):
    c = tabwire_command
    async with open_tabwire_session(c.binary, c.args, env=c.env, cwd=c.cwd, stderr_path=c.stderr_path) as tabwire:
        await launch_firefox(firefox_extension_dir)
        await connected(tabwire)
        # `hello` names the browser.
        await wait_for(lambda: "browser=Firefox" in stderr_of(c), timeout=5, what="hello naming Firefox")
    # The origin it proved itself from is pinned beside the secret.
    pin = pairing.secret_file.with_name(pairing.secret_file.name + ".firefox-origin")
    assert pin.read_text().strip() == ADDON_ORIGIN

    # tabwire restarts: the add-on reconnects by itself.
    stderr2 = c.stderr_path.with_name("tabwire-2.stderr.log")
    async with open_tabwire_session(c.binary, c.args, env=c.env, cwd=c.cwd, stderr_path=stderr2) as tabwire:
        started = time.monotonic()
        await connected(tabwire)
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
        await connected(tabwire)


async def test_todomvc_adapter_in_firefox(tabwire, launch_firefox, firefox_extension_dir, todomvc_url):
    url = todomvc_url("plain")
    browser = await launch_firefox(firefox_extension_dir)
    await connected(tabwire)
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
    tabwire_command, launch_firefox, firefox_extension_dir, fixture_server, second_fixture_server
):
    c = tabwire_command.serving_page_tools_only(call_timeout_ms=8000)
    cross = second_fixture_server.url("plain", "page-tools/frame.html")
    url = fixture_server.url("plain", "page-tools/index.html") + f"?cross={cross}"
    origin = re.match(r"http://[^/]+", url)[0]
    async with open_tabwire_session(c.binary, c.args, env=c.env, cwd=c.cwd, stderr_path=c.stderr_path) as tabwire:
        browser = await launch_firefox(firefox_extension_dir)
        await connected(tabwire)
        opened = await tabwire.browser_open(url)
        assert not opened.is_error, opened
        tab = opened.structured["tab_id"]
        context = await browser.bidi.context_of(url)

        # Not allowed yet: the page tool says how to allow the origin, and nothing reaches the page.
        refused = await tabwire.call("page_snapshot", {"tab_id": tab})
        assert refused.is_error and "PERMISSION_REQUIRED" in error_codes_in(refused.text), refused
        run_cli(c, "allow", origin)

        async def snapshot_with_frame():
            out = await tabwire.call("page_snapshot", {"tab_id": tab})
            assert not out.is_error, out
            return out.text if re.search(r'button f\d+e\d+ "Frame button"', out.text) else None

        text = await wait_for(snapshot_with_frame, timeout=20, what="a snapshot showing the cross-origin frame")
        # The cross-origin frame is in place, its refs carrying Firefox's (64-bit) frame id.
        assert re.search(r'iframe "Other origin" \[content from http://127\.0\.0\.1:\d+\]', text), text
        frame_ref = re.search(r'button (f\d+e\d+) "Frame button"', text)[1]

        # Fill the form's field and read it back from the page itself.
        field = re.search(r"textbox (e\d+)", text)[1]
        filled = await tabwire.call("page_act", {"tab_id": tab, "ref": field, "action": "fill", "value": "firefox"})
        assert not filled.is_error, filled
        assert await browser.bidi.evaluate(context, "document.getElementById('q').value") == "firefox"

        # Act in the cross-origin frame by its ref.
        clicked = await tabwire.call("page_act", {"tab_id": tab, "ref": frame_ref, "action": "click"})
        assert not clicked.is_error, clicked
        assert "frame clicked" in clicked.text, clicked.text

        # Trusted input is Chrome's: Firefox says so with a typed error, it does not pretend.
        run_cli(c, "allow", origin, "--trusted-input")
        trusted = await tabwire.call("page_act", {"tab_id": tab, "ref": field, "action": "click"})
        assert trusted.is_error and "DEBUGGER_UNAVAILABLE" in error_codes_in(trusted.text), trusted
        assert "Firefox" in trusted.text, trusted.text

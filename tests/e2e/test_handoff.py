"""End to end, issue 28: `browser_handoff` hands a step to the person.

A Python SDK client's agent hands a sign-in page to the person; the extension brings the tab to the front and
opens its own window with the message (read through DevTools: the page itself never holds it); while the
hand-off waits, calls to the tab answer WAITING_FOR_PERSON; the test signs in as a person would, with trusted
DevTools input (mouse clicks, `Input.insertText`, the Enter key), and the hand-off answers once its condition
holds, with the page's URL and title; the page's snapshot suggested the hand-off (it asks for a password).
Then: the person presses Done; the person presses Cancel
(HANDOFF_CANCELLED); nobody answers (HANDOFF_TIMEOUT). Each time the window closes and the tab is free again.
"""

from __future__ import annotations

import anyio
import pytest

from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

MESSAGE = "Please sign in to the example bank, then press Done."


@pytest.fixture
def tabwire_command(tabwire_command):
    return tabwire_command.serving_page_tools_only(call_timeout_ms=8000).allowing_all_origins()


async def handoff_window(cdp, extension_id):
    return await cdp.wait_for_page(f"chrome-extension://{extension_id}/extension/handoff.html")


async def no_handoff_window(cdp, extension_id) -> bool:
    return not [t for t in await cdp.targets() if "extension/handoff.html" in t.url]


async def click(cdp, page, selector: str) -> None:
    """A person's click (trusted input through DevTools) at the element's centre."""
    box = await cdp.evaluate(
        page,
        f"(() => {{ const r = document.querySelector({selector!r}).getBoundingClientRect();"
        " return [r.x + r.width / 2, r.y + r.height / 2]; })()",
    )
    event = {"x": box[0], "y": box[1], "button": "left", "clickCount": 1}
    for kind in ("mousePressed", "mouseReleased"):
        await cdp.send(page, "Input.dispatchMouseEvent", {"type": kind, **event})


async def press_enter(cdp, page) -> None:
    key = {"key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "nativeVirtualKeyCode": 13}
    await cdp.send(page, "Input.dispatchKeyEvent", {"type": "keyDown", "text": "\r", **key})
    await cdp.send(page, "Input.dispatchKeyEvent", {"type": "keyUp", **key})


async def start_handoff(tabwire, args: dict, outcome: dict, group) -> None:
    async def run():
        outcome["out"] = await tabwire.call("browser_handoff", args)

    group.start_soon(run)


async def test_a_person_signs_in_and_the_handoff_answers_with_the_page(
    tabwire, launch_chromium, extension_dir, extension_id, fixture_server
):
    browser = await launch_chromium(extension_dir=extension_dir)
    url = fixture_server.url("plain", "agents/signin.html")
    tab = (await tabwire.browser_open(url)).structured["tab_id"]
    page = await browser.cdp.wait_for_page(url)
    # The page asks for a password: the snapshot suggests handing the step to the person.
    snapshot = await tabwire.call_ok("page_snapshot", {"tab_id": tab})
    assert "asks for a password: do not type it yourself" in snapshot.text, snapshot
    assert "hand this step to the user with browser_handoff" in snapshot.text, snapshot
    outcome = {}
    args = {"tab_id": tab, "message": MESSAGE, "done_when": {"text": "Welcome, alice"}, "timeout_s": 60}
    async with anyio.create_task_group() as group:
        await start_handoff(tabwire, args, outcome, group)
        window = await handoff_window(browser.cdp, extension_id)
        await wait_for(
            lambda: _evaluates(browser.cdp, window, "document.querySelector('#message').textContent", MESSAGE),
            timeout=10,
            what="the hand-off window to show the message",
        )
        # The page never holds the message: it is in the extension's own window.
        assert MESSAGE not in await browser.cdp.evaluate(page, "document.documentElement.outerHTML")
        waiting = await tabwire.call("page_read", {"tab_id": tab})
        assert waiting.is_error and waiting.text.startswith("WAITING_FOR_PERSON"), waiting
        again = await tabwire.call("browser_handoff", {"tab_id": tab, "message": "twice"})
        assert again.is_error and again.text.startswith("WAITING_FOR_PERSON"), again

        # The person signs in (trusted input), and the page goes on to greet them.
        await click(browser.cdp, page, "#user")
        await browser.cdp.send(page, "Input.insertText", {"text": "alice"})
        await click(browser.cdp, page, "#password")
        await browser.cdp.send(page, "Input.insertText", {"text": "s3cret-pass"})
        await press_enter(browser.cdp, page)
    out = outcome["out"]
    assert not out.is_error, out
    assert out.structured["done"] == "done_when holds", out
    assert "agents/welcome.html?user=alice" in out.structured["url"], out
    assert out.structured["title"] == "Welcome", out
    assert "s3cret-pass" not in out.text
    await wait_for(lambda: no_handoff_window(browser.cdp, extension_id), timeout=10, what="the window to close")
    assert "Welcome, alice" in (await tabwire.call_ok("page_read", {"tab_id": tab})).text


async def test_done_cancel_and_timeout(tabwire, launch_chromium, extension_dir, extension_id, fixture_server):
    browser = await launch_chromium(extension_dir=extension_dir)
    url = fixture_server.url("plain", "agents/signin.html")
    tab = (await tabwire.browser_open(url)).structured["tab_id"]

    for button, expected in (("#done", None), ("#cancel", "HANDOFF_CANCELLED")):
        outcome = {}
        async with anyio.create_task_group() as group:
            await start_handoff(tabwire, {"tab_id": tab, "message": MESSAGE}, outcome, group)
            window = await handoff_window(browser.cdp, extension_id)
            await wait_for(
                # The window's document may not be parsed yet: no button is "not ready", not an error.
                lambda: _evaluates(browser.cdp, window, "document.querySelector('#done')?.disabled", False),
                timeout=10,
                what="the hand-off window's buttons",
            )
            await browser.cdp.evaluate(window, f"document.querySelector({button!r}).click()")
        out = outcome["out"]
        if expected is None:
            assert not out.is_error and out.structured["done"] == "the user said done", out
            assert out.structured["url"] == url, out
        else:
            assert out.is_error and out.text.startswith(expected), out
        await wait_for(lambda: no_handoff_window(browser.cdp, extension_id), timeout=10, what="the window to close")
        assert "Sign in" in (await tabwire.call_ok("page_read", {"tab_id": tab})).text

    # Nobody answers: the hand-off times out, the window closes, the tab is free.
    timed = await tabwire.call("browser_handoff", {"tab_id": tab, "message": MESSAGE, "timeout_s": 2})
    assert timed.is_error and timed.text.startswith("HANDOFF_TIMEOUT"), timed
    await wait_for(lambda: no_handoff_window(browser.cdp, extension_id), timeout=10, what="the window to close")
    assert "Sign in" in (await tabwire.call_ok("page_read", {"tab_id": tab})).text


async def _evaluates(cdp, target, expression: str, expected) -> bool:
    return await cdp.evaluate(target, expression) == expected

"""Page tools on pages no adapter serves: a scripted agent that knows nothing of the app but what
page_snapshot and page_find show it (no selector into the app) completes real tasks, checked through
each app's own oracle; the fixture page covers an open shadow root, same- and cross-origin frames, a page
long enough to need the cursor, a covered button, a stale ref after navigation and a form whose submit
navigates; and each bad input is a typed error at once, after which the next call works.
"""

from __future__ import annotations

import re

import anyio
import pytest

from harness.cdp import CdpError
from harness.mcp_client import TabwireSession
from harness.png import close_to, image_of
from harness.todomvc import any_stored_todos
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

GREEN = (0, 0xC0, 0)  # the frame fixture's button, text and all
BLUE = (0, 0, 0xC0)  # the same, tinted (?tint)


@pytest.fixture
def tabwire_command(tabwire_command):
    return tabwire_command.serving_page_tools_only(call_timeout_ms=8000).allowing_all_origins()



def page_lines(answer: str) -> list[str]:
    """The page's lines of a page tool's answer: between its header and the end line its header names."""
    lines = answer.splitlines()
    assert lines and lines[-1].startswith("[end ") and lines[0].endswith(f"until {lines[-1]}]"), answer
    return lines[1:-1]

class Agent:
    """What a model does with the page tools: read the snapshot, pick refs from its lines, act."""

    def __init__(self, tabwire: TabwireSession, tab: int) -> None:
        self.tabwire = tabwire
        self.tab = tab
        self.calls = 0

    @classmethod
    async def on_unadapted_page(cls, tabwire: TabwireSession, url: str):
        """An agent on the tab `browser_open` opened at `url`, a page no adapter serves (no site tools)."""
        opened = await tabwire.browser_open(url)
        assert not opened.is_error and not opened.structured.get("tools"), opened
        return cls(tabwire, opened.structured["tab_id"])

    async def call(self, tool: str, **args):
        self.calls += 1
        return await self.tabwire.call(tool, {"tab_id": self.tab, **args})

    async def ok(self, tool: str, **args) -> str:
        out = await self.call(tool, **args)
        assert not out.is_error, out
        assert out.text.startswith(f"[tab {self.tab} · page content from http://127.0.0.1:"), out.text
        return out.text

    async def snapshot(self, **args) -> list[str]:
        return page_lines(await self.ok("page_snapshot", **args))

    async def snapshot_until(self, pattern: str, timeout: float = 15) -> list[str]:
        """Snapshots until a line matches `pattern` (bounded)."""

        async def shows() -> list[str] | None:
            lines = await self.snapshot()
            return lines if any(re.search(pattern, line.strip()) for line in lines) else None

        return await wait_for(shows, timeout=timeout, what=f"a snapshot line matching {pattern!r}")

    @staticmethod
    def ref(lines: list[str], pattern: str) -> str:
        """The ref on the first line matching `pattern` (a regex over the line without indentation):
        `e12`, or `f3e12` inside a cross-origin frame."""
        for line in lines:
            if re.search(pattern, line.strip()) and (m := re.search(r"\b(f\d+)?e(\d+)\b", line)):
                return m[0]
        raise AssertionError(f"no line matches {pattern!r} in:\n" + "\n".join(lines))

    @staticmethod
    def block(lines: list[str], pattern: str) -> list[str]:
        """The lines of the element whose own line, or a line inside it, matches `pattern`: from the
        nearest enclosing listitem to the end of its indentation."""
        at = next(i for i, line in enumerate(lines) if re.search(pattern, line))
        depth = lambda line: len(line) - len(line.lstrip())  # noqa: E731
        start = next(i for i in range(at, -1, -1) if lines[i].strip().startswith("listitem"))
        end = start + 1
        while end < len(lines) and depth(lines[end]) > depth(lines[start]):
            end += 1
        return lines[start:end]


async def stored_becomes(cdp, page, expected: list[dict]) -> None:
    async def now() -> bool:
        return await any_stored_todos(cdp, page) == expected

    await wait_for(now, timeout=10, what=f"the app to store {expected}", ignore=(CdpError,))


@pytest.mark.parametrize("example", ["vanillajs", "react", "vue"])
async def test_a_scripted_agent_adds_completes_and_deletes_a_todo_with_no_adapter(
    example, tabwire, launch_chromium, extension_dir, static_server
):
    url = static_server.url("plain", f"examples/{example}/index.html")
    browser = await launch_chromium(extension_dir=extension_dir)
    opened = await tabwire.browser_open(url)
    assert not opened.is_error, opened
    page = await browser.cdp.wait_for_page(url)
    agent = Agent(tabwire, opened.structured["tab_id"])
    # No site tools: only the page tools can do it.
    assert not any(name.startswith("todomvc_") for name in await tabwire.tool_names())

    # Some examples render their app after the page loaded: a model looks again until it is there.
    lines = await agent.snapshot_until(r'^textbox e\d+ "What needs to be done\?"')
    field = agent.ref(lines, r'^textbox e\d+ "What needs to be done\?"')
    await agent.ok("page_act", ref=field, action="fill", value="buy milk")
    added = await agent.ok("page_act", ref=field, action="press", key="Enter")
    assert "buy milk" in added, added  # the diff shows the new item
    await stored_becomes(browser.cdp, page, [{"title": "buy milk", "completed": False}])

    item = agent.block(await agent.snapshot(), r"^\s*buy milk$|: buy milk$")
    toggle = agent.ref(item, r"^checkbox e\d+")
    checked = await agent.ok("page_act", ref=toggle, action="check")
    assert f"checkbox {toggle}" in checked and "checked" in checked, checked
    await stored_becomes(browser.cdp, page, [{"title": "buy milk", "completed": True}])

    listed = await agent.ok("page_find", text="buy milk")
    assert "buy milk" in listed, listed
    delete = agent.ref(agent.block(await agent.snapshot(), r"^\s*buy milk$|: buy milk$"), r"^button e\d+")
    await agent.ok("page_act", ref=delete, action="click")
    await stored_becomes(browser.cdp, page, [])
    assert "buy milk" not in "\n".join(await agent.snapshot())


@pytest.mark.parametrize("variant", ["csp-header", "csp-meta"])
async def test_page_tools_work_under_a_strict_csp(variant, tabwire, launch_chromium, extension_dir, static_server):
    url = static_server.url(variant, "examples/vanillajs/index.html")
    browser = await launch_chromium(extension_dir=extension_dir)
    opened = await tabwire.browser_open(url)
    page = await browser.cdp.wait_for_page(url)
    agent = Agent(tabwire, opened.structured["tab_id"])
    field = agent.ref(await agent.snapshot(), r'^textbox e\d+ "What needs to be done\?"')
    await agent.ok("page_act", ref=field, action="fill", value="strict")
    await agent.ok("page_act", ref=field, action="press", key="Enter")
    await stored_becomes(browser.cdp, page, [{"title": "strict", "completed": False}])
    # The runtime that runs there is the JS build (the page's CSP forbids compiling wasm).
    assert await browser.cdp.evaluate(page, "document.title") != ""


async def test_the_fixture_page_shadow_frames_cursor_cover_and_navigation(
    tabwire, launch_chromium, extension_dir, fixture_server, second_fixture_server
):
    cross = second_fixture_server.url("plain", "page-tools/frame.html")
    url = fixture_server.url("plain", "page-tools/index.html") + f"?cross={cross}"
    browser = await launch_chromium(extension_dir=extension_dir)
    opened = await tabwire.browser_open(url)
    page = await browser.cdp.wait_for_page(url)
    agent = Agent(tabwire, opened.structured["tab_id"])

    async def status() -> str:
        return await browser.cdp.evaluate(page, "document.getElementById('status').textContent")

    async def status_is(wanted: str) -> bool:
        return await status() == wanted

    # A budget: the long list comes in parts, and the cursor pages through all of it.
    first = await agent.ok("page_snapshot", max_chars=1500)
    assert len(first) < 2000 and "call again with cursor=" in first, first
    seen, cursor = first, int(re.search(r"cursor=(\d+)", first)[1])
    for _ in range(20):
        part = await agent.ok("page_snapshot", max_chars=1500, cursor=cursor)
        seen += part
        found = re.search(r"cursor=(\d+)", part)
        if not found:
            break
        cursor = int(found[1])
    assert "Item 0" in seen and "Item 399" in seen

    # The whole page at once: the shadow root's button, the same-origin frame's button, the
    # cross-origin frame as a line of its own.
    lines = await agent.snapshot(max_chars=100_000)
    text = "\n".join(lines)
    assert any(line.strip() == "Inside the shadow" for line in lines), text
    shadow_button = agent.ref(lines, r'^button e\d+ "Shadow button"')
    frame_button = agent.ref(lines, r'^button e\d+ "Frame button"')
    assert re.search(r'iframe "Other origin"', text), text
    await agent.ok("page_act", ref=shadow_button, action="click")
    await wait_for(lambda: status_is("shadow clicked"), timeout=5, what="the shadow button's click")
    await agent.ok("page_act", ref=frame_button, action="click")
    frame_text = "document.querySelector('iframe').contentDocument.getElementById('frame-status').textContent"

    async def frame_clicked() -> bool:
        return await browser.cdp.evaluate(page, frame_text) == "frame clicked"

    await wait_for(frame_clicked, timeout=5, what="the frame's click")

    # A covered button: NOT_ACTIONABLE, naming what covers it; nothing was clicked.
    covered = await agent.call("page_act", ref=agent.ref(lines, r'^button e\d+ "Covered"'), action="click")
    assert covered.is_error and covered.text.startswith("NOT_ACTIONABLE"), covered
    assert 'is covered by <div class="overlay">' in covered.text, covered
    assert await status() != "covered clicked"

    # A wait for text the page shows after a delay.
    await agent.ok("page_act", ref=agent.ref(lines, r'^button e\d+ "Delayed"'), action="click")
    waited = await agent.ok("page_wait", text="Ready now", timeout_ms=5000)
    assert '"Ready now" is there' in waited, waited

    # A form whose submit navigates: the act answers once the new page has committed, saying where
    # it landed, so the next call reads that page at once; the old page's refs are refused with
    # STALE_REF instead of acting on whatever has that ref now.
    field = agent.ref(lines, r'^textbox e\d+ "Query"')
    await agent.ok("page_act", ref=field, action="fill", value="cheese")
    submitted = await agent.ok("page_act", ref=agent.ref(lines, r'^button e\d+ "Search"'), action="click")
    done = url.split("index.html")[0] + "done.html"
    assert f"navigated to {done}?q=cheese: take a snapshot" in submitted, submitted
    assert "Results for cheese" in await agent.ok("page_read")
    stale = await agent.call("page_act", ref=field, action="fill", value="again")
    assert stale.is_error and stale.text.startswith("STALE_REF"), stale
    assert "take a new snapshot" in stale.text, stale


async def test_a_cross_origin_frame_is_shown_in_place_acted_in_and_its_refs_go_stale_with_it(
    tabwire, launch_chromium, extension_dir, fixture_server, second_fixture_server
):
    cross = second_fixture_server.url("plain", "page-tools/frame.html") + "?tint"
    cross_origin = re.match(r"http://[^/]+", cross)[0]
    url = fixture_server.url("plain", "page-tools/index.html") + f"?cross={cross}"
    browser = await launch_chromium(extension_dir=extension_dir)
    opened = await tabwire.browser_open(url)
    page = await browser.cdp.wait_for_page(url)
    agent = Agent(tabwire, opened.structured["tab_id"])

    # The frame's content sits indented under its iframe line, which names the origin it is from;
    # its refs name the frame. (A model looks again while the frame is still loading.)
    lines = await agent.snapshot_until(r'^button f\d+e\d+ "Frame button"')
    at = next(i for i, line in enumerate(lines) if line.strip().startswith('iframe "Other origin"'))
    assert lines[at].strip() == f'iframe "Other origin" [content from {cross_origin}]', lines[at]
    depth = len(lines[at]) - len(lines[at].lstrip())
    button = agent.ref(lines, r'^button f\d+e\d+ "Frame button"')
    inside = lines[at + 1 : at + 3]
    assert any(button in line and len(line) - len(line.lstrip()) > depth for line in inside), lines
    # The same-origin frame is inline as before, with a top-document ref.
    assert re.fullmatch(r"e\d+", agent.ref(lines, r'^button e\d+ "Frame button"'))

    # Acting on the frame's ref clicks in that frame; the answer is that frame's origin's content.
    clicked = await agent.call("page_act", ref=button, action="click")
    assert not clicked.is_error, clicked
    assert clicked.text.startswith(f"[tab {agent.tab} · page content from {cross_origin},"), clicked.text
    assert f"clicked {button}" in clicked.text and "frame clicked" in clicked.text, clicked.text
    status = "document.getElementById('frame-status').textContent"
    assert await browser.cdp.evaluate_in_frame(page, cross, status) == "frame clicked"
    # Read, find and wait reach into the frame by its refs and text too.
    assert "Frame button" in await agent.ok("page_read", ref=button)
    found = await agent.ok("page_find", text="Frame button")
    assert button in found, found
    waited = await agent.ok("page_wait", ref=button, timeout_ms=2000)
    assert f"{button} is there" in waited, waited

    # A screenshot of one element by its ref: the button alone (a 120x40 block, green in the same-
    # origin frame, blue in the other), whether the top document's runtime holds the ref or the
    # cross-origin frame's (its box moved by where that frame sits in the page).
    for shown, colour in ((agent.ref(lines, r'^button e\d+ "Frame button"'), GREEN), (button, BLUE)):
        shot = await tabwire.session.call_tool("page_screenshot", {"tab_id": agent.tab, "ref": shown})
        assert not shot.is_error, shot
        image, about = image_of(shot)
        w, h = image.width, image.height
        assert (w, h) == (about["width"], about["height"]), about
        assert abs(w / h - 3) < 0.2, (shown, about)
        # (Inside the focus ring the clicked button has.)
        for x, y in [(w // 8, h // 2), (w // 2, h // 2), (7 * w // 8, h // 2), (w // 2, h // 4), (w // 2, 3 * h // 4)]:
            assert close_to(image.pixel(x, y), colour), (shown, x, y, image.pixel(x, y))

    # The frame loads another page: its refs are stale (never acting on whatever is there now);
    # a new snapshot gives refs that work.
    again = cross + "&again=1"
    await browser.cdp.evaluate(page, f"document.getElementById('cross').src = {again!r}")

    async def reloaded() -> bool:
        return await browser.cdp.evaluate_in_frame(page, again, "document.readyState") == "complete"

    await wait_for(reloaded, timeout=10, what="the frame's new page", ignore=(CdpError,))
    stale = await agent.call("page_act", ref=button, action="click")
    assert stale.is_error and stale.text.startswith("STALE_REF"), stale
    assert "take a new snapshot" in stale.text, stale
    assert await browser.cdp.evaluate_in_frame(page, again, status) == ""
    stale = await agent.call("page_screenshot", ref=button)
    assert stale.is_error and stale.text.startswith("STALE_REF"), stale
    assert "take a new snapshot" in stale.text, stale
    pattern = r'^button f\d+e\d+ "Frame button"'
    fresh = agent.ref(await agent.snapshot_until(pattern), pattern)
    await agent.ok("page_act", ref=fresh, action="click")
    assert await browser.cdp.evaluate_in_frame(page, again, status) == "frame clicked"

    # The frame goes to another page by itself (its <iframe>'s src still names the one before): it
    # is still found, shown and acted in.
    moved = cross + "&moved=1"
    await browser.cdp.evaluate_in_frame(page, again, f"location.href = {moved!r}")

    async def moved_loaded() -> bool:
        return await browser.cdp.evaluate_in_frame(page, moved, "document.readyState") == "complete"

    await wait_for(moved_loaded, timeout=10, what="the frame's own next page", ignore=(CdpError,))
    assert await browser.cdp.evaluate(page, "document.getElementById('cross').src") == again
    lines = await agent.snapshot_until(pattern)
    at = next(i for i, line in enumerate(lines) if line.strip().startswith('iframe "Other origin"'))
    assert lines[at].endswith(f" [content from {cross_origin}]"), lines[at]
    moved_button = agent.ref(lines, pattern)
    await agent.ok("page_act", ref=moved_button, action="click")
    assert await browser.cdp.evaluate_in_frame(page, moved, status) == "frame clicked"


async def test_bad_input_is_a_typed_error_at_once_and_the_next_call_works(
    tabwire, launch_chromium, extension_dir, fixture_server
):
    url = fixture_server.url("plain", "page-tools/index.html")
    browser = await launch_chromium(extension_dir=extension_dir)
    opened = await tabwire.browser_open(url)
    other = await tabwire.browser_open(fixture_server.url("plain", "page-tools/done.html?q=x"))
    agent = Agent(tabwire, opened.structured["tab_id"])
    lines = await agent.snapshot(max_chars=100_000)
    search = agent.ref(lines, r'^button e\d+ "Search"')

    async def error(tool: str, code: str, **args) -> str:
        out = await agent.call(tool, **args)
        assert out.is_error and out.text.startswith(code), out
        # The next call works.
        assert (await agent.call("page_find", role="heading")).text.count("h1") == 1
        return out.text

    assert "e999" in await error("page_act", "STALE_REF", ref="e999", action="click")
    another_tab = await tabwire.call("page_act", {"tab_id": other.structured["tab_id"], "ref": search, "action": "click"})
    assert another_tab.is_error and another_tab.text.startswith("STALE_REF"), another_tab
    assert f"came from tab {agent.tab}" in another_tab.text, another_tab
    assert "is not a <select>" not in await error("page_act", "INVALID_ARGS", ref=search, action="fill", value="x")
    size = agent.ref(lines, r'^combobox e\d+ "Size"')
    missing = await error("page_act", "ELEMENT_NOT_FOUND", ref=size, action="select", value="Huge")
    assert "Small, Medium" in missing, missing
    await error("page_act", "INVALID_ARGS", ref=search, action="explode")
    await error("page_wait", "TIMEOUT", text="never shown", timeout_ms=300)

    # A tab closed while a call waits in it: TAB_CLOSED at once (at the deadline it would be TIMEOUT).
    page = await browser.cdp.wait_for_page(url)
    async with anyio.create_task_group() as tasks:
        async def close_soon() -> None:
            await anyio.sleep(0.5)
            await browser.cdp.send(page, "Page.close")

        tasks.start_soon(close_soon)
        closed = await agent.call("page_wait", text="never shown", timeout_ms=20_000)
    assert closed.is_error and closed.text.startswith("TAB_CLOSED"), closed
    still = await tabwire.call("page_snapshot", {"tab_id": other.structured["tab_id"]})
    assert not still.is_error and "Results" in still.text, still

"""End to end: page tools act on a site only once the user allowed it, and every call is audited.

The real `tabwire mcp` (no `--allow-all-origins`), headless Chromium with the real extension, and a
fixture page of known colour blocks that no adapter serves; the official Python SDK as the client,
with and without elicitation. `page_screenshot` is the page tool behind the gate here:
- a client that cannot ask its user gets PERMISSION_REQUIRED at once, saying how to allow the site;
  `tabwire allow ORIGIN` allows it, and the screenshot shows the page (pixels checked);
- a client that can ask: the user's yes is remembered (across a restart of tabwire), a no is not;
- the audit log (`tabwire audit`) has every call, its outcome and origin, and no argument value.
"""

from __future__ import annotations

import json
from pathlib import Path

import mcp_types as types
import pytest

from conftest import run_cli
from harness import png
from harness.png import close_to, image_of
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

RED = (255, 0, 0)
BLUE = (0, 0, 255)


@pytest.fixture
def tabwire_command(tabwire_command):
    return tabwire_command.without_adapter_match()


async def open_page(tabwire, fixture_server, launch_chromium, extension_dir):
    url = fixture_server.url("plain", "screenshot/index.html")
    browser = await launch_chromium(extension_dir=extension_dir, url=url)

    tab = await tabwire.listed_tab(url)
    return browser, tab


async def test_a_client_that_cannot_ask_is_told_how_and_the_cli_allows(
    tabwire, tabwire_command, fixture_server, launch_chromium, extension_dir
):
    origin = fixture_server.origin
    browser, tab = await open_page(tabwire, fixture_server, launch_chromium, extension_dir)
    # browser_tabs lists a tab no adapter serves, with its origin, and says page tools are not allowed.
    assert tab["origin"] == origin and tab["tools"] == [] and tab["page_tools_allowed"] is False, tab
    assert tab["title"] == "Colour blocks", tab

    secret_selector = "#target[data-secret='hunter2']"
    out = await tabwire.call("page_screenshot", {"selector": secret_selector})
    assert out.is_error and out.text.startswith("PERMISSION_REQUIRED: "), out
    assert f"`tabwire allow {origin}`" in out.text and "call again" in out.text, out
    assert out.structured["error"]["code"] == "PERMISSION_REQUIRED", out

    assert "page tools are allowed" in run_cli(tabwire_command, "allow", f"{origin}/screenshot/index.html")
    grants = run_cli(tabwire_command, "grants")
    assert f"{origin}  page tools allowed" in grants, grants

    result = await tabwire.session.call_tool("page_screenshot", {"tab_id": tab["id"]})
    assert not result.is_error, result
    image, about = image_of(result)
    assert about["origin"] == origin and about["tab_id"] == tab["id"], about
    assert (image.width, image.height) == (about["width"], about["height"])
    assert max(image.width, image.height) <= 1024
    # The red block covers the top left 400x300 CSS pixels: its middle is red in the image.
    scale = image.width / await browser.cdp.evaluate(
        await browser.cdp.wait_for_page(origin), "innerWidth"
    )
    assert close_to(image.pixel(int(200 * scale), int(150 * scale)), RED), image.pixel(int(200 * scale), int(150 * scale))
    assert close_to(image.pixel(int(580 * scale), int(160 * scale)), BLUE)

    # A bound smaller than the page: the image fits it, aspect kept.
    result = await tabwire.session.call_tool("page_screenshot", {"max_width": 200, "max_height": 200})
    image, about = image_of(result)
    assert image.width <= 200 and image.height <= 200 and max(image.width, image.height) >= 150, about

    # One element: only the blue block.
    result = await tabwire.session.call_tool("page_screenshot", {"selector": "#target"})
    image, about = image_of(result)
    assert abs(image.width / image.height - 160 / 120) < 0.05, about
    for x, y in [(1, 1), (image.width // 2, image.height // 2), (image.width - 2, image.height - 2)]:
        assert close_to(image.pixel(x, y), BLUE), (x, y, image.pixel(x, y))

    out = await tabwire.call("page_screenshot", {"selector": "#nothing-here"})
    assert out.is_error and out.text.startswith("ELEMENT_NOT_FOUND"), out

    # Saved as a file under the data folder instead.
    out = await tabwire.call_ok("page_screenshot", {"to_file": True, "max_width": 320})
    path = Path(out.structured["path"])
    assert path.is_file() and path.is_relative_to(tabwire_command.cwd / "data"), out
    saved = png.decode(path.read_bytes())
    assert saved.width <= 320 and close_to(saved.pixel(5, 5), RED)

    # The audit log: every call, with its outcome and origin, and no argument value.
    log = run_cli(tabwire_command, "audit", "-n", "50")
    lines = [line for line in log.splitlines() if "page_screenshot" in line]
    assert len(lines) == 6, log
    assert "PERMISSION_REQUIRED" in lines[0] and origin in lines[0], lines[0]
    assert sum(" ok " in line for line in lines) == 4, log
    assert "ELEMENT_NOT_FOUND" in lines[4], log
    assert "browser_tabs" in log, log
    audit_file = next((tabwire_command.cwd / "data").rglob("audit.jsonl"))
    raw = audit_file.read_text()
    assert "hunter2" not in raw and "#nothing-here" not in raw, raw
    entry = json.loads(raw.splitlines()[-1])
    assert entry["client"] and entry["tab"] == tab["id"] and entry["ms"] >= 0, entry

    # Revoked: asked again (here: refused again).
    run_cli(tabwire_command, "revoke", origin)
    out = await tabwire.call("page_screenshot")
    assert out.is_error and out.text.startswith("PERMISSION_REQUIRED"), out


async def test_the_users_yes_is_remembered_across_a_restart_and_a_no_is_not(
    tabwire_command, fixture_server, launch_chromium, extension_dir
):
    c = tabwire_command
    origin = fixture_server.origin
    answers: list[str] = []
    questions: list[str] = []

    async def ask_the_user(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        questions.append(params.message)
        action = answers.pop(0)
        return types.ElicitResult(action=action, content={"allow": True} if action == "accept" else None)

    async with c.session(elicitation_callback=ask_the_user) as tabwire:
        await open_page(tabwire, fixture_server, launch_chromium, extension_dir)
        answers.append("decline")
        out = await tabwire.call("page_screenshot")
        assert out.is_error and out.text.startswith("PERMISSION_REQUIRED"), out
        assert "declined" in out.text, out
        assert len(questions) == 1 and origin in questions[0], questions
        assert origin not in run_cli(c, "grants")

        # Asked again, and this time the user says yes: the call goes through, and is not asked twice.
        answers.append("accept")
        result = await tabwire.session.call_tool("page_screenshot", {})
        assert not result.is_error, result
        image, _ = image_of(result)
        assert close_to(image.pixel(3, 3), RED)
        assert len(questions) == 2
        await tabwire.call_ok("page_screenshot")
        assert len(questions) == 2, "asked again after a yes"
        assert f"{origin}  page tools allowed" in run_cli(c, "grants")

    # A new tabwire (a client that cannot ask): the grant is still there.
    async with c.session() as tabwire:

        async def shot():
            out = await tabwire.call("page_screenshot")
            return None if out.is_error and out.text.startswith("NOT_CONNECTED") else out

        out = await wait_for(shot, timeout=30, what="the extension to reconnect to the new tabwire")
        assert not out.is_error, out


async def test_browser_tab_goes_back_forward_reloads_and_closes(
    tabwire, fixture_server, launch_chromium, extension_dir
):
    browser, tab = await open_page(tabwire, fixture_server, launch_chromium, extension_dir)
    # Nowhere to go back to: said, not pretended.
    out = await tabwire.call("browser_tab", {"tab_id": tab["id"], "action": "back"})
    assert out.is_error and out.text.startswith("NO_EFFECT") and "history" in out.text, out
    other = fixture_server.url("plain", "screenshot/other.html")
    await tabwire.call_ok("browser_open", {"url": other, "tab_id": tab["id"]})
    # (browser_open may answer before the new page commits: wait until the tab shows it.)
    page = await browser.cdp.wait_for_page(other)
    await wait_for(
        lambda: browser.cdp.evaluate(page, "document.readyState === 'complete'"), timeout=10, what="other.html"
    )
    out = await tabwire.call_ok("browser_tab", {"tab_id": tab["id"], "action": "back"})
    assert out.structured["url"].endswith("/screenshot/index.html"), out
    page = await browser.cdp.wait_for_page(fixture_server.url("plain", "screenshot/index.html"))
    assert await browser.cdp.evaluate(page, "document.title") == "Colour blocks"
    out = await tabwire.call_ok("browser_tab", {"tab_id": tab["id"], "action": "forward"})
    assert out.structured["url"] == other, out
    await browser.cdp.evaluate(await browser.cdp.wait_for_page(other), "window.marker = 1")
    out = await tabwire.call_ok("browser_tab", {"tab_id": tab["id"], "action": "reload"})
    page = await browser.cdp.wait_for_page(other)
    assert await browser.cdp.evaluate(page, "typeof window.marker") == "undefined", "not reloaded"
    out = await tabwire.call_ok("browser_tab", {"tab_id": tab["id"], "action": "activate"})
    assert out.structured["url"] == other, out

    out = await tabwire.call("browser_tab", {"tab_id": tab["id"], "action": "explode"})
    assert out.is_error and out.text.startswith("INVALID_ARGS") and '"action" must be one of "back", "forward"' in out.text, out
    out = await tabwire.call_ok("browser_tab", {"tab_id": tab["id"], "action": "close"})

    async def gone():
        return all(not t.url.startswith(other) for t in await browser.cdp.targets() if t.type == "page")

    await wait_for(gone, timeout=10, what="the tab to close")
    out = await tabwire.call("browser_tab", {"tab_id": tab["id"], "action": "reload"})
    assert out.is_error and out.text.startswith("NO_SUCH_TAB"), out

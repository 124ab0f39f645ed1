"""Downloads and screenshots in headless Firefox ESR, with the add-on `tabwire extension install --browser
firefox` wrote: the same tools as in Chromium (`browser_downloads` over Firefox's `downloads` API,
`page_screenshot` over `tabs.captureVisibleTab`), checked against what Firefox wrote to its download
folder and against the page's own colours.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.png import close_to, image_of
from harness.waiting import wait_for

pytestmark = [pytest.mark.anyio, pytest.mark.firefox]

NAME = "résumé ü.bin"
# What the files app offers (conftest's `files_app`): every byte value, and random ones.
DOWNLOADS = {NAME: bytes(range(256)) * 200 + os.urandom(4096)}
RED = (255, 0, 0)
BLUE = (0, 0, 255)


@pytest.fixture
def tabwire_command(tabwire_command, downloads_dir: Path):
    return tabwire_command.with_flags(downloads_dir=downloads_dir).allowing_all_origins()


async def test_a_download_is_listed_and_saved_in_firefox(
    tabwire, firefox_connected_to, files_app, downloads_dir, tmp_path
):
    browser = await firefox_connected_to(tabwire)
    tab = (await tabwire.browser_open(files_app.url("/downloads"))).structured["tab_id"]

    async def listed() -> list[dict]:
        out = await tabwire.call("browser_downloads", {"tab_id": tab})
        assert not out.is_error, out
        return out.structured["downloads"]

    assert await listed() == []
    # A person clicks the link (in the page, through BiDi). `page_act`'s click is not used: in
    # Firefox the load a download link sets off never commits and never reports an error to
    # `webNavigation` (Chrome reports net::ERR_ABORTED), so the call would wait out its deadline
    # (README, Firefox).
    context = await browser.bidi.context_of(files_app.url("/downloads"))
    await browser.bidi.evaluate(context, "document.querySelector('#get-0').click() ?? true")

    async def complete():
        items = await listed()
        return len(items) == 1 and items[0]["state"] == "complete" and items[0]

    item = await wait_for(complete, timeout=30, what="the download to be listed as complete")
    sent = files_app.downloads[NAME]
    assert item["file_name"] == NAME and item["bytes"] == len(sent), item
    assert item["origin"] == files_app.origin, item
    # Firefox wrote it into the profile's download folder (the harness's preference).
    firefox_copy = next((tmp_path / "firefox-profile-0" / "Downloads").glob("*.bin"))
    assert firefox_copy.read_bytes() == sent

    saved = await tabwire.call("browser_downloads", {"tab_id": tab, "save": item["id"]})
    assert not saved.is_error, saved
    assert Path(saved.structured["path"]) == downloads_dir / NAME
    assert (downloads_dir / NAME).read_bytes() == sent
    again = await tabwire.call("browser_downloads", {"tab_id": tab, "save": item["id"]})
    assert Path(again.structured["path"]) == downloads_dir / "résumé ü (1).bin", again


async def test_a_screenshot_in_firefox_shows_the_page(
    tabwire, firefox_connected_to, fixture_server
):
    browser = await firefox_connected_to(tabwire)
    url = fixture_server.url("plain", "screenshot/index.html")
    tab = (await tabwire.browser_open(url)).structured["tab_id"]
    context = await browser.bidi.context_of(url)

    shot = await tabwire.session.call_tool("page_screenshot", {"tab_id": tab})
    assert not shot.is_error, shot
    image, about = image_of(shot)
    assert about["origin"] == fixture_server.origin and about["tab_id"] == tab, about
    assert (image.width, image.height) == (about["width"], about["height"])
    assert max(image.width, image.height) <= 1024
    # The red block covers the top left 400x300 CSS pixels, a blue one sits right of it.
    scale = image.width / await browser.bidi.evaluate(context, "innerWidth")
    assert close_to(image.pixel(int(200 * scale), int(150 * scale)), RED), image.pixel(int(200 * scale), int(150 * scale))
    assert close_to(image.pixel(int(580 * scale), int(160 * scale)), BLUE), image.pixel(int(580 * scale), int(160 * scale))

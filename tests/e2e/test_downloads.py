"""Downloads (issue 20): what a tab downloaded, listed and saved, in real Chromium with the real extension.
A small local app sends a binary file with a non-ASCII name as an attachment; page_act clicks its link;
browser_downloads lists it on that tab only (polled until complete, no sleeps), saves it into the
downloads directory with the bytes the app sent, a second save takes a " (1)" name and overwrites
nothing, and an unknown id, another tab's id, or a file deleted since answer a typed error saying what to do.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

NAME = "résumé ü.bin"
# What the files app offers (conftest's `files_app`): every byte value, and random ones.
DOWNLOADS = {NAME: bytes(range(256)) * 200 + os.urandom(4096)}


@pytest.fixture
def tabwire_command(tabwire_command, downloads_dir: Path):
    return tabwire_command.with_flags(downloads_dir=downloads_dir).allowing_all_origins()


async def listed(tabwire, tab: int) -> list[dict]:
    out = await tabwire.call("browser_downloads", {"tab_id": tab})
    assert not out.is_error, out
    assert out.structured["tab_id"] == tab
    return out.structured["downloads"]


async def test_a_tabs_download_is_listed_and_saved_whole_without_overwriting(
    tabwire, launch_chromium, extension_dir, files_app, downloads_dir
):
    browser = await launch_chromium(extension_dir=extension_dir)
    tab = (await tabwire.browser_open(files_app.url("/downloads"))).structured["tab_id"]
    other = (await tabwire.browser_open(files_app.url("/upload"))).structured["tab_id"]
    assert await listed(tabwire, tab) == []

    clicked = await tabwire.call("page_act", {"tab_id": tab, "selector": "#get-0", "action": "click"})
    assert not clicked.is_error, clicked

    async def complete():
        items = await listed(tabwire, tab)
        return len(items) == 1 and items[0]["state"] == "complete" and items[0]
    item = await wait_for(complete, timeout=20, what="the download to be listed as complete")
    sent = files_app.downloads[NAME]
    assert item["file_name"] == NAME
    assert item["bytes"] == len(sent)
    assert item["mime"] == "application/octet-stream"
    assert item["origin"] == files_app.origin
    assert "path" not in item  # where Chrome keeps it is not the model's business
    # Chrome wrote it into the profile's download folder (the harness's preference).
    assert (browser.downloads_dir / NAME).read_bytes() == sent

    # A tab that downloaded nothing lists nothing, and cannot save another tab's download.
    assert await listed(tabwire, other) == []
    foreign = await tabwire.call("browser_downloads", {"tab_id": other, "save": item["id"]})
    assert foreign.is_error and foreign.text.startswith("NO_SUCH_DOWNLOAD:"), foreign

    first = await tabwire.call("browser_downloads", {"tab_id": tab, "save": item["id"]})
    assert not first.is_error, first
    path = Path(first.structured["path"])
    assert path == downloads_dir / NAME
    assert path.read_bytes() == sent
    second = await tabwire.call("browser_downloads", {"tab_id": tab, "save": item["id"]})
    assert not second.is_error, second
    assert Path(second.structured["path"]) == downloads_dir / "résumé ü (1).bin"
    assert Path(second.structured["path"]).read_bytes() == sent
    assert path.read_bytes() == sent  # the first copy is untouched
    assert {p.name for p in downloads_dir.iterdir()} == {NAME, "résumé ü (1).bin"}

    unknown = await tabwire.call("browser_downloads", {"tab_id": tab, "save": item["id"] + 1000})
    assert unknown.is_error and unknown.text.startswith("NO_SUCH_DOWNLOAD:"), unknown
    assert "browser_downloads without `save` lists" in unknown.text, unknown

    # The user deleted Chrome's file: saving it says so, and nothing new appears.
    (browser.downloads_dir / NAME).unlink()
    gone = await tabwire.call("browser_downloads", {"tab_id": tab, "save": item["id"]})
    assert gone.is_error and gone.text.startswith("DOWNLOAD_NOT_READY:"), gone
    assert "deleted or moved" in gone.text, gone
    assert len(list(downloads_dir.iterdir())) == 2


async def test_arguments_that_do_not_fit_are_named(tabwire, launch_chromium, extension_dir, files_app):
    await launch_chromium(extension_dir=extension_dir)
    tab = (await tabwire.browser_open(files_app.url("/downloads"))).structured["tab_id"]
    bad = await tabwire.call("browser_downloads", {"tab_id": tab, "save": "report.pdf"})
    assert bad.is_error and bad.text.startswith("INVALID_ARGS:"), bad
    assert bad.text == 'INVALID_ARGS: browser_downloads: argument "save" must be of type integer, got "report.pdf"', bad

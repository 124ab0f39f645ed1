"""The extension's own pages (the toolbar popup) opened as tabs through DevTools, and screenshots.

Chromium's DevTools opens any URL in a new tab (`PUT /json/new?URL`), `chrome-extension://` ones
included, so the popup's real HTML and script run against the real worker's storage.
"""

from __future__ import annotations

import base64
import json
import urllib.parse
import urllib.request
from pathlib import Path

import anyio

from .cdp import Cdp, Target
from .waiting import wait_for

_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _open_sync(port: int, url: str) -> dict:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/json/new?{urllib.parse.quote(url, safe=':/')}", method="PUT")
    with _NO_PROXY.open(request, timeout=10) as r:
        return json.load(r)


async def open_extension_page(cdp: Cdp, extension_id: str, path: str) -> Target:
    """Open `chrome-extension://<id>/<path>` in a new tab and return its target once it has loaded."""
    url = f"chrome-extension://{extension_id}/{path}"
    await anyio.to_thread.run_sync(_open_sync, cdp.port, url)
    target = await cdp.wait_for_page(url)
    # The target exists before its document is parsed: a query of the page's elements then finds none.
    parsed = f"document.readyState !== 'loading' && location.href === {json.dumps(url)}"

    async def loaded() -> bool | None:
        return await cdp.evaluate(target, parsed) or None

    await wait_for(loaded, timeout=20, what=f"{path} to be parsed")
    return target


async def screenshot(cdp: Cdp, target: Target, path: Path) -> Path:
    """Save a PNG of the page (a test artifact; the test's tmp dir keeps it)."""
    shot = await cdp.send(target, "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
    path.write_bytes(base64.b64decode(shot["data"]))
    return path


def _activate_sync(port: int, target_id: str) -> None:
    with _NO_PROXY.open(f"http://127.0.0.1:{port}/json/activate/{target_id}", timeout=10) as r:
        r.read()


async def activate(cdp: Cdp, target: Target) -> None:
    """Bring `target`'s tab to the front of its window, as a person clicking on the tab does."""
    await anyio.to_thread.run_sync(_activate_sync, cdp.port, target.id)


async def open_page(cdp: Cdp, url: str) -> Target:
    """Open `url` (any scheme DevTools opens: `chrome://`, `file://`…) in a new tab; its target once it shows."""
    await anyio.to_thread.run_sync(_open_sync, cdp.port, url)
    return await cdp.wait_for_page(url)

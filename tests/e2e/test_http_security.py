"""End to end: a real web page in Chromium cannot use tabwire's Streamable HTTP endpoint.

A page on 127.0.0.1 (another port than tabwire's) POSTs an MCP `initialize` to the endpoint, both as a
"simple" cross-origin request (no preflight: the request does reach the server) and as a JSON one. The
browser's own record of the response (DevTools `Network` events: the status the server sent, which
CORS hides from the page's script) must be a refusal, while the same request without a page's Origin
is served. DNS rebinding (a foreign `Host`) is refused too.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import anyio
import pytest
from websockets.asyncio.client import connect

from harness.cdp import Cdp, Target
from harness.fixture_pages import FIXTURE_PAGES
from harness.static_server import StaticServer
from harness.tabwire_http import tabwire_http

pytestmark = pytest.mark.anyio

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "page", "version": "0"}},
}

POST_JS = """
fetch(%(url)s, {method: "POST", body: %(body)s, headers: {"content-type": %(type)s,
       "accept": "application/json, text/event-stream"}})
  .then((r) => "read " + r.status, (e) => "blocked " + e.name)
"""


async def statuses_seen_by_the_browser(cdp: Cdp, page: Target, js: str, endpoint: str) -> tuple[str, list[int]]:
    """Evaluate `js` in the page with DevTools' Network domain on; return its value and the HTTP statuses
    the browser received from `endpoint` meanwhile (from the raw response headers, which DevTools reports
    even when CORS then hides the response from the page)."""
    urls: dict[str, str] = {}
    statuses: dict[str, int] = {}
    ended: set[str] = set()
    async with connect(page.ws_url, max_size=None, proxy=None, open_timeout=10) as ws:
        await ws.send(json.dumps({"id": 1, "method": "Network.enable", "params": {}}))
        with anyio.fail_after(20):
            # Network events flow only once enabling is acknowledged: the fetch must not start earlier.
            while json.loads(await ws.recv()).get("id") != 1:
                pass
        params = {"expression": js, "awaitPromise": True, "returnByValue": True}
        await ws.send(json.dumps({"id": 2, "method": "Runtime.evaluate", "params": params}))
        value = None
        with anyio.fail_after(20):
            # Until the script is done and every request to the endpoint has finished or failed.
            while value is None or any(rid not in ended for rid in urls):
                frame = json.loads(await ws.recv())
                method, event = frame.get("method"), frame.get("params", {})
                if method == "Network.requestWillBeSent" and event["request"]["url"].startswith(endpoint):
                    urls[event["requestId"]] = event["request"]["url"]
                elif method == "Network.responseReceivedExtraInfo":
                    statuses[event["requestId"]] = event["statusCode"]
                elif method in ("Network.loadingFinished", "Network.loadingFailed"):
                    ended.add(event["requestId"])
                elif frame.get("id") == 2:
                    value = frame["result"]["result"].get("value", "")
    return value, [statuses[rid] for rid in urls if rid in statuses]


def post_without_a_page(endpoint: str, headers: dict[str, str]) -> int:
    request = urllib.request.Request(
        endpoint,
        data=json.dumps(INITIALIZE).encode(),
        headers={"content-type": "application/json", "accept": "application/json, text/event-stream", **headers},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as e:
        return e.code


async def test_a_web_page_cannot_post_to_the_http_endpoint(tabwire_command, launch_chromium, tmp_path):
    site = StaticServer(FIXTURE_PAGES, tmp_path / "site.log")
    try:
        with tabwire_http(tabwire_command) as port:
            endpoint = f"http://127.0.0.1:{port}/mcp"
            # The endpoint works for a local client (no Origin), so a refusal below is the Origin's doing.
            assert post_without_a_page(endpoint, {}) == 200
            # DNS rebinding: a page on evil.example resolved to 127.0.0.1 sends its own Host.
            assert post_without_a_page(endpoint, {"Host": f"evil.example:{port}"}) == 403

            url = site.url("plain", "faults.html?tab=http")
            browser = await launch_chromium(extension_dir=None, url=url)
            page = await browser.cdp.wait_for_page(url)
            for content_type in ("text/plain", "application/json"):
                js = POST_JS % {
                    "url": json.dumps(endpoint),
                    "body": json.dumps(json.dumps(INITIALIZE)),
                    "type": json.dumps(content_type),
                }
                outcome, statuses = await statuses_seen_by_the_browser(browser.cdp, page, js, endpoint)
                assert outcome.startswith("blocked"), f"a page read tabwire's answer ({content_type}): {outcome}"
                # A simple request reaches the server, which must refuse it; a JSON one stops at the preflight.
                assert all(status >= 400 for status in statuses), f"{content_type}: tabwire answered {statuses}"
                if content_type == "text/plain":
                    assert statuses == [403], f"the server did not refuse the page's request: {statuses}"
    finally:
        site.stop()

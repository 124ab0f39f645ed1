"""End to end: a real web page in Chromium cannot use tabwire's Streamable HTTP endpoint.

A page on 127.0.0.1 (another port than tabwire's) POSTs an MCP `initialize` to the endpoint, both as a
"simple" cross-origin request (no preflight: the request does reach the server) and as a JSON one (its
preflight reaches the server). The oracle is the server's own log: it names each request it refused with the
page's origin; the browser's view (the page's script never reads an answer; DevTools' `Network` events show
only refusals when they show a status at all) is the second check. The same request without a page's Origin
and with the bearer is served. DNS rebinding (a foreign `Host`) is refused too.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import sys
import urllib.error
import urllib.request

import anyio
import pytest
from websockets.asyncio.client import connect

from harness.cdp import Cdp, Target
from harness.fixture_pages import FIXTURE_PAGES
from harness.static_server import StaticServer
from harness.tabwire_http import bearer, tabwire_http
from harness.waiting import wait_for, wait_for_sync

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


def refused_in_log(log_path, method: str, origin: str) -> bool:
    """Whether tabwire's log says it refused a `method /mcp` request from `origin` for that origin."""
    return any(
        f"refused an HTTP request ({method} /mcp from " in line and f"origin {origin}): Origin not allowed" in line
        for line in log_path.read_text().splitlines()
    )


async def test_a_web_page_cannot_post_to_the_http_endpoint(tabwire_command, launch_chromium, tmp_path):
    site = StaticServer(FIXTURE_PAGES, tmp_path / "site.log")
    auth = bearer(tabwire_command)
    try:
        with tabwire_http(tabwire_command) as port:
            endpoint = f"http://127.0.0.1:{port}/mcp"
            # The endpoint works for a local client (no Origin), so a refusal below is the Origin's doing.
            assert post_without_a_page(endpoint, auth) == 200
            # DNS rebinding: a page on evil.example resolved to 127.0.0.1 sends its own Host.
            assert post_without_a_page(endpoint, {"Host": f"evil.example:{port}", **auth}) == 403

            url = site.url("plain", "faults.html?tab=http")
            page_origin = url.split("/plain/")[0]
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
                # What the browser saw, when DevTools reported a status in time: refusals only.
                assert all(status >= 400 for status in statuses), f"{content_type}: tabwire answered {statuses}"
                # The server's own record: a simple request reaches it and is refused for its origin; a JSON
                # one sends a preflight first, refused the same way, and goes no further.
                method = "POST" if content_type == "text/plain" else "OPTIONS"
                await wait_for(
                    lambda: refused_in_log(tabwire_command.stderr_path, method, page_origin),
                    timeout=10, what=f"tabwire's log to show it refused the page's {method} ({content_type})",
                )
    finally:
        site.stop()


def rss_kib(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


# Stated bounds (RELIABILITY.md): what the floods below may leave behind.
RSS_GROWTH_BOUND_KIB = 16 * 1024
LOG_BOUND_BYTES = 256 * 1024


def test_a_session_flood_and_a_slowloris_stay_bounded_and_the_server_answers_after(tabwire_command):
    auth = bearer(tabwire_command)
    with tabwire_http(tabwire_command, with_process=True) as (port, process):
        own = {"Host": f"127.0.0.1:{port}"}

        def request(method: str, headers: dict[str, str], body: str | None = None) -> http.client.HTTPResponse:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            try:
                connection.request(method, "/mcp", body=body, headers={**own, **headers})
                response = connection.getresponse()
                response.read()
                return response
            finally:
                connection.close()

        def initialize(headers: dict[str, str]) -> tuple[int, str | None]:
            response = request("POST", {"Content-Type": "application/json",
                                        "Accept": "application/json, text/event-stream", **headers},
                               json.dumps(INITIALIZE))
            return response.status, response.getheader("mcp-session-id")

        assert initialize(auth)[0] == 200
        baseline = rss_kib(process.pid)
        log_before = tabwire_command.stderr_path.stat().st_size

        # Without the secret, a flood of initialize requests makes no session at all.
        unauthenticated = [initialize({})[0] for _ in range(FLOOD)]
        assert set(unauthenticated) == {401}, set(unauthenticated)
        # With it, sessions stop at the cap; the rest are told to come back (503).
        statuses, sessions = [], []
        for _ in range(SESSION_FLOOD):
            status, session = initialize(auth)
            statuses.append(status)
            if session:
                sessions.append(session)
        assert statuses.count(200) == 31, statuses  # 32 with the first one
        assert set(statuses[31:]) == {503}, set(statuses[31:])
        # Clients that close their sessions (DELETE, as the SDKs do) make room again.
        for session in sessions:
            request("DELETE", {**auth, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-06-18"})

        # A slowloris: many connections that send their headers a byte at a time and never finish.
        loris = []
        for _ in range(SLOWLORIS):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            loris.append(s)
        # At most 128 connections wait for the bearer (the oldest evicted), beside the process's own files.
        assert open_fds(process.pid) <= 128 + 32, open_fds(process.pid)

        def all_dropped() -> bool:
            dropped = 0
            for s in loris:
                try:
                    s.sendall(b"X")
                    s.settimeout(0.01)
                    dropped += s.recv(1) == b""
                except (TimeoutError, BlockingIOError):
                    pass
                except OSError:
                    dropped += 1
            return dropped == len(loris)

        wait_for_sync(all_dropped, timeout=30, what="the server to drop every slowloris connection")
        for s in loris:
            s.close()

        # Afterwards the server answers as before, memory and log stay within their bounds.
        assert initialize(auth)[0] == 200
        grown = rss_kib(process.pid) - baseline
        logged = tabwire_command.stderr_path.stat().st_size - log_before
        print(f"\nflood: RSS {baseline} KiB -> +{grown} KiB; log +{logged} bytes", file=sys.stderr)
        assert grown <= RSS_GROWTH_BOUND_KIB, f"RSS grew by {grown} KiB"
        assert logged <= LOG_BOUND_BYTES, f"the log grew by {logged} bytes"


FLOOD = 5000
SESSION_FLOOD = 200
SLOWLORIS = 300


def test_a_request_without_the_bearer_is_answered_and_its_connection_closed(tabwire_command):
    """A refused connection is not kept alive: idle in the waiting pool, it would only take a place that a
    client with the bearer may need under a flood."""
    with tabwire_http(tabwire_command) as port:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(
                f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: keep-alive\r\n"
                "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}".encode()
            )
            received = b""
            # Reads until the server closes the socket (recv answers b""); the socket's timeout bounds it.
            while chunk := s.recv(4096):
                received += chunk
        head = received.split(b"\r\n\r\n", 1)[0].decode().lower()
        assert head.startswith("http/1.1 401"), head
        assert "connection: close" in head, head

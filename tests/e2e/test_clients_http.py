"""End to end over MCP Streamable HTTP: `tabwire mcp --http 127.0.0.1:PORT` driven by the official Python SDK's
HTTP client against TodoMVC in headless Chromium with the real extension (checked through the app's own
storage); the pairing secret required as a bearer token (missing or wrong: 401, also for the SDK; MCP only at
/mcp); the server's refusals of DNS-rebinding requests (foreign `Host` or `Origin`) and its JSON-RPC answer
to a request it does not know, sent before `initialize`.
"""

from __future__ import annotations

import http.client
import json
import pytest

from harness.mcp_client import error_codes_in, open_tabwire_http_session
from harness.tabwire_http import bearer, tabwire_http
from harness.todomvc import stored_todos, todos_from, wait_until_app_ready
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw-http-test", "version": "0"},
    },
}


def post(port: int, body: dict, headers: dict[str, str]) -> tuple[int, str, dict[str, str]]:
    """POST `body` to /mcp with exactly these headers (Host included): status, body and response headers."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.putrequest("POST", "/mcp", skip_host=True, skip_accept_encoding=True)
        data = json.dumps(body).encode()
        all_headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Content-Length": str(len(data)),
            **headers,
        }
        for name, value in all_headers.items():
            connection.putheader(name, value)
        connection.endheaders(data)
        response = connection.getresponse()
        return response.status, response.read().decode("utf-8", "replace"), {k.lower(): v for k, v in response.getheaders()}
    finally:
        connection.close()


def jsonrpc_messages(body: str) -> list[dict]:
    """The JSON-RPC messages in a JSON or SSE response body."""
    body = body.strip()
    if body.startswith("{"):
        return [json.loads(body)]
    return [json.loads(line[5:]) for line in body.splitlines() if line.startswith("data:") and line[5:].strip()]


def test_dns_rebinding_is_refused_and_unknown_requests_get_json_rpc_errors(tabwire_command):
    auth = bearer(tabwire_command)
    with tabwire_http(tabwire_command) as port:
        own = f"127.0.0.1:{port}"
        status, body, headers = post(port, INITIALIZE, {"Host": own, **auth})
        assert status == 200, body
        session = headers["mcp-session-id"]
        assert jsonrpc_messages(body)[0]["result"]["serverInfo"]["name"] == "tabwire"

        # A page on a rebinding domain reaches 127.0.0.1 with its own Host, or with its own Origin.
        for headers in (
            {"Host": f"evil.example:{port}"},
            {"Host": own, "Origin": "http://evil.example"},
            {"Host": own, "Origin": f"http://evil.example:{port}"},
        ):
            status, body, _ = post(port, INITIALIZE, {**headers, **auth})
            assert 400 <= status < 500, f"{headers} was accepted: {status} {body}"
        # Our own origin (a page served by this very server) is fine.
        status, body, _ = post(port, INITIALIZE, {"Host": own, "Origin": f"http://127.0.0.1:{port}", **auth})
        assert status == 200, body

        # A request outside any session is refused with a 4xx; one nobody knows, in a session, gets a
        # JSON-RPC error; the server keeps serving either way.
        unknown = {"jsonrpc": "2.0", "id": 9, "method": "no/such_method"}
        status, body, _ = post(port, unknown, {"Host": own, **auth})
        assert 400 <= status < 500, f"{status} {body}"
        status, body, _ = post(
            port, unknown, {"Host": own, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-06-18", **auth}
        )
        messages = jsonrpc_messages(body) if body.strip() else []
        assert messages and messages[0]["error"]["code"] == -32601, f"{status} {body}"
        status, body, _ = post(port, INITIALIZE, {"Host": own, **auth})
        assert status == 200, body


async def test_http_requires_the_pairing_secret_as_bearer_and_serves_mcp_only_at_mcp(tabwire_command):
    auth = bearer(tabwire_command)
    secret = auth["Authorization"].removeprefix("Bearer ")
    with tabwire_http(tabwire_command) as port:
        own = {"Host": f"127.0.0.1:{port}"}
        for headers, status_wanted in (
            ({}, 401),
            ({"Authorization": f"Bearer {'0' * 64}"}, 401),
            ({"Authorization": f"Bearer {secret[:-1]}"}, 401),
            ({"Authorization": secret}, 401),
            ({"Authorization": f"Basic {secret}"}, 401),
        ):
            status, body, response_headers = post(port, INITIALIZE, {**own, **headers})
            assert status == status_wanted, f"{headers}: {status} {body}"
            assert response_headers.get("www-authenticate") == "Bearer", response_headers
            assert secret not in body
        status, body, _ = post(port, INITIALIZE, {**own, **auth})
        assert status == 200, body

        # MCP lives at /mcp only.
        for path in ("/", "/mcp/", "/sse", "/mcp/extra"):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            connection.request("POST", path, body=json.dumps(INITIALIZE), headers={**auth, "Content-Type": "application/json"})
            assert connection.getresponse().status == 404, path
            connection.close()

        # The official Python SDK: refused without the bearer or with a wrong one, served with the right one.
        for headers, why in (({}, "the pairing secret is required"), ({"Authorization": f"Bearer {'f' * 64}"}, "wrong bearer")):
            refusals_before = tabwire_command.stderr_path.read_text().count(why)
            with pytest.raises(BaseException):
                async with open_tabwire_http_session(f"http://127.0.0.1:{port}/mcp", headers=headers, request_timeout=10):
                    pass
            refusals = tabwire_command.stderr_path.read_text().count(why)
            assert refusals > refusals_before, f"the SDK's request was not refused for: {why}"
        async with open_tabwire_http_session(f"http://127.0.0.1:{port}/mcp", headers=auth) as s:
            assert {"browser_tabs", "browser_open", "site_call", "site_state"} <= await s.tool_names()
    log = tabwire_command.stderr_path.read_text()
    assert "refused an HTTP request" in log and "the pairing secret is required" in log, log[-2000:]
    assert secret not in log


async def test_python_sdk_over_http_drives_todomvc(tabwire_command, launch_chromium, extension_dir, todomvc_url):
    with tabwire_http(tabwire_command) as port:
        async with open_tabwire_http_session(f"http://127.0.0.1:{port}/mcp", headers=bearer(tabwire_command)) as s:
            assert s.init.server_info.name == "tabwire"
            assert {"browser_tabs", "browser_open", "site_call", "site_state"} <= await s.tool_names()

            browser = await launch_chromium(extension_dir=extension_dir)
            url = todomvc_url("plain")

            async def opened():
                out = await s.call("browser_open", {"url": url})
                return None if out.is_error and "NOT_CONNECTED" in error_codes_in(out.text) else out

            out = await wait_for(opened, timeout=20, what="the extension to connect so browser_open works")
            assert not out.is_error, str(out)
            tab_id = out.structured["tab_id"]
            page = await browser.cdp.wait_for_page(url)
            await wait_until_app_ready(browser.cdp, page)

            await s.call_ok("todomvc_add_todo", {"title": "Over HTTP", "tab_id": tab_id})
            listed = todos_from((await s.call_ok("todomvc_list_todos")).structured)
            assert listed == [{"title": "Over HTTP", "completed": False}]
            assert await stored_todos(browser.cdp, page) == listed, "the app's own storage disagrees"

            # Resources over HTTP: the tab list names the tab and its tools.
            tabs = await s.session.read_resource("tabwire://tabs")
            data = json.loads(tabs.contents[0].text)
            assert any(t["id"] == tab_id and "todomvc_add_todo" in t["tools"] for t in data["tabs"]), data

"""End to end: who may drive the browser. Real web pages in real Chromium cannot open tabwire's WebSocket
(from 127.0.0.1 on the fixture server's port or on another port, even knowing the secret), while the real
extension in the same browser can, and the pages' scripts cannot message the extension either; secrets never show in logs, handshake refusals, tool results or errors;
the secret file and the extension's pairing file are created with mode 0600.

(The origin, look-alike origin, no/wrong/short secret and secret-in-URL refusals are in
test_websocket_auth.py; the HTTP endpoint's checks belong to the Streamable HTTP transport's tests.)
"""

from __future__ import annotations

import json
import stat
import subprocess

import pytest
from websockets.exceptions import InvalidStatus

from harness.fake_extension import fake_extension, wait_listening
from harness.fixture_pages import FIXTURE_PAGES
from harness.mcp_client import open_tabwire_session
from harness.static_server import StaticServer
from harness.waiting import wait_for
from test_faults import fault_pages, open_tab, page_url, tabwire_command  # noqa: F401 - shared fixtures
from test_websocket_auth import handshake

pytestmark = pytest.mark.anyio

# Runs in the page's main world; resolves to "open" if the socket opened, else how it failed.
OPEN_SOCKET_JS = """
new Promise((resolve) => {
  let ws;
  try { ws = new WebSocket(%(url)s, %(protocols)s); } catch (e) { resolve("threw " + e.name); return; }
  ws.onopen = () => { ws.close(); resolve("open"); };
  ws.onerror = () => resolve("error");
  ws.onclose = (e) => resolve("closed " + e.code);
  setTimeout(() => resolve("pending"), 5000);
})
"""


async def test_web_pages_in_chromium_cannot_open_the_socket(
    tabwire, tabwire_command, launch_chromium, extension_dir, fault_pages, pairing, tmp_path, extension_id  # noqa: F811
):
    browser = await launch_chromium(extension_dir=extension_dir)
    other_port = StaticServer(FIXTURE_PAGES, tmp_path / "other-port.log")
    try:
        # The real extension in this very browser is let in (it registers the page's tools) ...
        await open_tab(tabwire, page_url(fault_pages, "home"))
        other_url = other_port.url("plain", "faults.html?tab=other")
        await open_tab(tabwire, other_url)

        # ... while a web page, on the fixture server's port or on another port, is refused, even with the secret.
        ws_url = f"ws://127.0.0.1:{pairing.port}/"
        attempts = {
            "offering a nonce": ["tabwire.v3", "tabwire.nonce." + "ab" * 32],
            "with the secret (protocol 1)": ["tabwire.v1", f"tabwire.secret.{pairing.secret}"],
            "no subprotocol": [],
        }
        for url in (page_url(fault_pages, "home"), other_url):
            page = await browser.cdp.wait_for_page(url)
            origin = url.split("/plain/")[0]
            for what, protocols in attempts.items():
                js = OPEN_SOCKET_JS % {"url": json.dumps(ws_url), "protocols": json.dumps(protocols)}
                outcome = await browser.cdp.evaluate(page, js, await_promise=True)
                assert outcome in ("error", "closed 1006"), f"a page at {origin} {what}: {outcome}"

            # The server saw and refused the page's origin (not, say, a closed port).
            def refused() -> bool:
                log = tabwire_command.stderr_path.read_text()
                return "refused a WebSocket handshake" in log and origin in log

            await wait_for(refused, timeout=5, what=f"tabwire's log to show it refused {origin}")

            # Nor can the page's own scripts message the extension (no externally_connectable):
            # only our content script, in its isolated world, speaks to the worker.
            reach = await browser.cdp.evaluate(
                page,
                "(() => { try { chrome.runtime.sendMessage(%s, {type: 'call_tool_result', id: 'x', result: 1});"
                " return 'sent'; } catch (e) { return 'refused: ' + e.name; } })()" % json.dumps(extension_id),
            )
            assert reach.startswith("refused"), f"a page at {origin} could message the extension: {reach}"

        # The extension is still connected and serving.
        out = await tabwire.call_ok("faults_echo", {"n": 1})
        assert out.structured["n"] == 1
    finally:
        other_port.stop()
    assert pairing.secret not in tabwire_command.stderr_path.read_text(), "the secret appeared in tabwire's log"


async def test_secrets_stay_secret_and_files_are_private(tabwire_command, tmp_path, extension_id, pairing):
    c = tabwire_command
    secret_file = tmp_path / "fresh-config" / "tabwire" / "secret"
    args = list(c.args)
    args[args.index("--secret-file") + 1] = str(secret_file)

    async with open_tabwire_session(c.binary, args, env=c.env, cwd=c.cwd, stderr_path=c.stderr_path) as session:
        await wait_listening(pairing.port)
        assert secret_file.is_file(), "tabwire mcp should create the missing secret file"
        assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600, oct(secret_file.stat().st_mode)
        assert stat.S_IMODE(secret_file.parent.stat().st_mode) == 0o700, oct(secret_file.parent.stat().st_mode)
        secret = secret_file.read_text().strip()
        assert len(secret) == 64, "the secret should be 64 hex characters"

        # Refused handshakes: the secret (the real one, or one offered) is never echoed back.
        wrong = "f" * 64
        for protocols, query in (
            (["tabwire.v1", f"tabwire.secret.{wrong}"], ""),
            (["tabwire.v3"], f"?secret={secret}"),
        ):
            with pytest.raises(InvalidStatus) as refused:
                async with handshake(
                    pairing.port, origin=f"chrome-extension://{extension_id}", subprotocols=protocols, query=query
                ):
                    pass
            body = refused.value.response.body.decode("utf-8", "replace")
            assert refused.value.response.status_code == 403
            assert secret not in body and wrong not in body, f"a refusal echoed a secret: {body!r}"

        # A good connection, a call that fails, and the tool list: no secret in any of it.
        async with fake_extension(pairing.port, extension_id, secret) as ext:
            assert secret not in json.dumps(ext.welcome)
            texts = [json.dumps((await session.call_ok("browser_tabs")).structured)]
            texts.append((await session.call("faults_echo", {"n": 1})).text)
            texts.append(json.dumps([t.model_dump() for t in (await session.session.list_tools()).tools]))
        texts.append((await session.call("faults_echo", {"n": 1})).text)  # NOT_CONNECTED now
        for text in texts:
            assert secret not in text, f"the secret leaked into an MCP answer: {text[:300]}"

    log = c.stderr_path.read_text()
    assert "refused a WebSocket handshake" in log, "the refusals should be logged"
    assert secret not in log and wrong not in log, "a secret appeared in tabwire's log"

    # `tabwire pair` writes the extension's pairing file privately, and prints no secret.
    config = tmp_path / "pairing.json"
    pair = subprocess.run(
        [str(c.binary), "pair", "--secret-file", str(secret_file), "--port", str(pairing.port),
         "--extension-config", str(config)],
        capture_output=True, text=True, timeout=30, env=c.env, check=False,
    )
    assert pair.returncode == 0, pair.stderr
    assert stat.S_IMODE(config.stat().st_mode) == 0o600, oct(config.stat().st_mode)
    assert json.loads(config.read_text())["secret"] == secret
    assert secret not in pair.stdout + pair.stderr, "tabwire pair printed the secret"


FETCH_JS = """fetch(%s).then((r) => "read " + r.status, (e) => "blocked " + e.name)"""


async def test_pages_cannot_fetch_the_extensions_files_and_its_runtime_still_runs(
    tabwire, launch_chromium, extension_dir, fault_pages, extension_id  # noqa: F811
):
    """The injected files are web-accessible only through Chrome's per-session dynamic URL
    (`use_dynamic_url`), so a page cannot detect the extension by fetching them at its fixed id. (Not the
    wasm2js fallback's: on a page whose CSP is `script-src 'self'`, Chrome refuses the nested imports of a
    module loaded from the dynamic URL, so those three files keep the fixed one; test_todomvc's CSP cases.)"""
    browser = await launch_chromium(extension_dir=extension_dir)
    tab = await open_tab(tabwire, page_url(fault_pages, "home"))  # the runtime loads through the dynamic URL
    assert (await tabwire.call_ok("faults_echo", {"n": 5, "tab_id": tab})).structured["n"] == 5
    page = await browser.cdp.wait_for_page(page_url(fault_pages, "home"))
    for path in ("extension/content.js", "extension/dist/injector/injector.js", "extension/dist/injector/injector_bg.wasm",
                 "extension/dist/injector/injector_wasm.js", "extension/dist/code-adapters.js", "manifest.json"):
        url = f"chrome-extension://{extension_id}/{path}"
        outcome = await browser.cdp.evaluate(page, FETCH_JS % json.dumps(url), await_promise=True)
        assert outcome.startswith("blocked"), f"a page fetched {path}: {outcome}"

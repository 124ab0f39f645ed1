"""End to end with the official Python MCP SDK 1.x (the classic API most deployed clients use), run from its
own venv (scripts/test-env.sh makes it): over stdio and over Streamable HTTP it opens TodoMVC in headless
Chromium with the real extension, adds a todo and lists it; the app's own storage must agree.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CACHE
from harness.tabwire_http import client_config
from harness.todomvc import stored_todos, todos_from, wait_until_app_ready

pytestmark = pytest.mark.anyio

VENV_MCP1 = Path(os.environ.get("TABWIRE_VENV_MCP1") or CACHE / "venv-mcp1")
CLIENT = Path(__file__).parent / "clients" / "python_mcp1.py"


def mcp1_python() -> Path:
    python = VENV_MCP1 / "bin" / "python"
    probe = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('mcp'))"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0 or not probe.stdout.startswith("1."):
        pytest.fail(f"the Python MCP SDK 1.x is missing from {VENV_MCP1}: run scripts/test-env.sh", pytrace=False)
    return python


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_python_sdk_1x_drives_todomvc(transport, tabwire_command, launch_chromium, extension_dir, todomvc_url):
    python = mcp1_python()
    browser = await launch_chromium(extension_dir=extension_dir)
    url = todomvc_url("plain")
    title = f"From mcp 1.x over {transport}"
    with client_config(tabwire_command, transport) as config:
        config.update(url=url, title=title)
        run = subprocess.run(
            [str(python), str(CLIENT), json.dumps(config)], capture_output=True, text=True, timeout=60
        )
    assert run.returncode == 0, f"the 1.x client failed:\n{run.stderr[-3000:]}"
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert seen["server"] == "tabwire"
    assert {"browser_tabs", "browser_open", "site_call", "site_state"} <= set(seen["tools"]), seen
    expected = [{"title": title, "completed": False}]
    assert todos_from(seen["listed"]) == expected, seen
    page = await browser.cdp.wait_for_page(url)
    await wait_until_app_ready(browser.cdp, page)
    assert await stored_todos(browser.cdp, page) == expected, "the app's own storage disagrees"
    print(f"mcp 1.x over {transport} negotiated protocol {seen['protocol']}", file=sys.stderr)

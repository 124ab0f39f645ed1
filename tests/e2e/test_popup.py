"""The toolbar popup in real headless Chromium, as a person sees it: its DOM in each state, with a
screenshot of each saved next to the test's logs (`popup-<state>.png` in its tmp dir).

The extension here is the one the `tabwire` binary carries, written out by `tabwire extension
install` (so it also shows that the embedded extension loads and connects). The popup page is opened
as a tab through DevTools and follows the worker's status live:
1. no tabwire on the paired port: "not running", and the command that fixes it;
2. a tabwire with another pairing secret on that port: "pairing mismatch", and the exact `tabwire
   pair` command for this extension's folder;
3. the right tabwire, with TodoMVC open: connected, the tab with its tools.
"""

from __future__ import annotations

import secrets
import subprocess

import pytest

from conftest import extension_id_from_manifest
from harness.extension_pages import open_extension_page, screenshot
from harness.mcp_client import open_tabwire_session
from harness.todomvc import TODO_TOOLS
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

POPUP_DOM = """(() => {
  const q = (s) => document.querySelector(s);
  return {
    state: q('#connection').dataset.state,
    problem: q('#connection').dataset.problem,
    status: q('#state').textContent,
    reason: q('#reason').textContent,
    fix_shown: !q('#fix').hidden,
    fix: q('#fix-text').textContent,
    command: q('#fix-command').textContent,
    tabs: [...document.querySelectorAll('#tabs > ul > li')].map((li) => ({
      tab: Number(li.dataset.tab),
      text: li.firstChild.textContent,
      tools: [...li.querySelectorAll('code')].map((c) => c.textContent),
    })),
    empty: q('#tabs').textContent,
  };
})()"""


@pytest.fixture
def installed_extension(tmp_path, tabwire_binary, pairing):
    """The binary's own extension, written out and paired with this test's port and secret."""
    root = tmp_path / "installed-extension"
    env = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [str(tabwire_binary), "extension", "install", str(root), "--port", str(pairing.port), "--secret-file", str(pairing.secret_file)],
        env=env, capture_output=True, text=True, timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert str(root) in done.stdout and "Load unpacked" in done.stdout, done.stdout
    return root


async def test_the_popup_says_what_is_wrong_and_shows_the_tools(
    installed_extension, tabwire_command, launch_chromium, todomvc_url, pairing, tmp_path
):
    ext_id = extension_id_from_manifest(installed_extension / "manifest.json")
    browser = await launch_chromium(extension_dir=installed_extension)
    popup = await open_extension_page(browser.cdp, ext_id, "extension/popup.html")

    async def dom_when(condition, what):
        async def check():
            dom = await browser.cdp.evaluate(popup, POPUP_DOM)
            # Until popup.js has rendered once, #connection has no data-problem.
            return dom if "problem" in dom and condition(dom) else None

        return await wait_for(check, timeout=20, what=f"the popup to show {what}")

    # 1. Nothing listens on the paired port.
    dom = await dom_when(lambda d: d.get("problem") == "not_running", "that tabwire is not running")
    assert dom["state"] == "disconnected"
    assert dom["status"] == f"Not connected on 127.0.0.1:{pairing.port}"
    assert dom["reason"] == f"tabwire is not running on 127.0.0.1:{pairing.port}"
    assert dom["fix_shown"] and dom["command"] == "tabwire setup"
    assert "MCP client" in dom["fix"]
    await screenshot(browser.cdp, popup, tmp_path / "popup-not-running.png")

    # 2. A tabwire with another secret holds the port: it refuses this extension.
    other_secret = tmp_path / "other-secret"
    other_secret.write_text(secrets.token_hex(32) + "\n")
    c = tabwire_command
    wrong = list(c.args)
    wrong[wrong.index(str(pairing.secret_file))] = str(other_secret)
    async with open_tabwire_session(c.binary, wrong, env=c.env, cwd=c.cwd, stderr_path=c.stderr_path):
        dom = await dom_when(lambda d: d.get("problem") == "unproven", "a pairing mismatch")
        assert dom["reason"].startswith(f"something else is listening on 127.0.0.1:{pairing.port}: it did not prove")
        assert "pairing mismatch" in dom["reason"]
        pairing_file = installed_extension / "extension" / "pairing.json"
        assert dom["command"] == f'tabwire pair --port {pairing.port} --extension-config "{pairing_file}"'
        assert "reload Tabwire" in (await browser.cdp.evaluate(popup, "document.querySelector('#fix-after').textContent"))
        await screenshot(browser.cdp, popup, tmp_path / "popup-pairing-mismatch.png")

    # 3. The right tabwire, and a TodoMVC tab with its tools.
    async with c.session() as tabwire:
        opened = await tabwire.browser_open(todomvc_url("plain"))
        tab = opened.structured["tab_id"]
        listed = (await tabwire.call_ok("browser_tabs")).structured
        assert listed["connected"] is True and listed["browsers"] == 1, listed
        [tools] = [t["tools"] for t in listed["tabs"] if t["id"] == tab]
        dom = await dom_when(lambda d: d["state"] == "connected" and d["tabs"], "the connection and the tab")
        assert dom["status"] == f"Connected to tabwire 0.1.0 on 127.0.0.1:{pairing.port}"
        assert not dom["fix_shown"] and dom["reason"] == ""
        [shown] = dom["tabs"]
        assert shown["tab"] == tab
        assert shown["text"].startswith("VanillaJS")
        assert sorted(shown["tools"]) == sorted(tools), shown
        assert set(TODO_TOOLS) <= set(tools) and len(tools) >= 7, tools
        await screenshot(browser.cdp, popup, tmp_path / "popup-connected.png")

"""TEMPORARY diagnostic (not committed)."""
from __future__ import annotations
import json
import pytest
from harness.cdp import evaluate_in_world
from harness.waiting import WaitTimeout
from test_locators import tabwire_command  # noqa: F401
from test_faults import worker_targets

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("n", range(16))
async def test_diag(tabwire, fixture_server, launch_chromium, extension_dir, extension_id, n):
    v1 = fixture_server.url("plain", "redesign/v1.html")
    browser = await launch_chromium(extension_dir=extension_dir, url=v1)
    try:
        await tabwire.wait_for_tools("notes_add", "notes_css_add", timeout=15)
    except WaitTimeout:
        tabs = (await tabwire.call("browser_tabs")).structured
        page = await browser.cdp.wait_for_page(v1)
        rt = await evaluate_in_world(page, "Tabwire", "String(globalThis.__tabwireRuntime)")
        workers = await worker_targets(browser.cdp, extension_id)
        reg = await browser.cdp.evaluate(workers[0], "chrome.scripting.getRegisteredContentScripts().then(s => JSON.stringify(s.map(x => [x.id, x.matches])))", await_promise=True)
        q = await browser.cdp.evaluate(workers[0], "chrome.tabs.query({}).then(t => JSON.stringify(t.map(x => [x.id, x.url, x.status])))", await_promise=True)
        raise AssertionError(f"DIAG tabs={json.dumps(tabs)} runtime={rt} registered={reg} query={q}")
    tab = (await tabwire.call_ok("browser_tabs")).structured["tabs"][0]["id"]
    out = await tabwire.call("notes_add", {"text": "x", "tab_id": tab})
    if out.is_error:
        log = (browser.profile_dir.parent / "chromium-0.log") if hasattr(browser, "profile_dir") else None
        raise AssertionError(f"DIAGCALL {out.text[:300]}")

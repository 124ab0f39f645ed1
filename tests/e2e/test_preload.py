"""End to end: on an origin where the user allowed page tools, Tabwire's runtime is loaded as each page
loads, before any call asks for it (issue 32), and no longer once the grant is taken back.

The real `tabwire mcp` (no `--allow-all-origins`, no adapter for the page), headless Chromium with the real
extension, the project's fixture pages on 127.0.0.1; grants made and taken back with the `tabwire` CLI as a
user would. What the worker registered is read from its own world (`chrome.scripting`); whether a page runs
the runtime, from `browser_tabs` (the runtime announces its page as it starts), with no page tool called.
When its compile began (`__tabwireBegan`, the document's readyState then, read in the extension's world): on
a person's load once the page has loaded, on a load `browser_open` set off while the page still loads.
"""

from __future__ import annotations

import pytest

from conftest import run_cli
from harness.cdp import CdpError, evaluate_in_world
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

REGISTERED = (
    "chrome.scripting.getRegisteredContentScripts({ids: ['tabwire-injector']})"
    ".then((s) => s.length ? {matches: s[0].matches, runAt: s[0].runAt} : null)"
)


@pytest.fixture
def tabwire_command(tabwire_command):
    return tabwire_command.without_adapter_match()


async def service_worker(cdp, extension_id: str):
    async def found():
        targets = [
            t
            for t in await cdp.targets()
            if t.type == "service_worker" and t.url.startswith(f"chrome-extension://{extension_id}/")
        ]
        return targets[0] if targets else None

    return await wait_for(found, timeout=10, what="the extension's service worker target")


async def listed_tab(tabwire, tab_id: int) -> dict | None:
    tabs = (await tabwire.call_ok("browser_tabs")).structured["tabs"]
    return next((t for t in tabs if t["id"] == tab_id), None)


async def test_an_allowed_origins_pages_get_the_runtime_as_they_load_until_revoked(
    tabwire, tabwire_command, fixture_server, launch_chromium, extension_dir, extension_id
):
    origin = fixture_server.origin
    pattern = f"{origin}/*"
    browser = await launch_chromium(extension_dir=extension_dir)
    first = fixture_server.url("plain", "screenshot/index.html")
    opened = await tabwire.browser_open(first)
    assert not opened.is_error, opened
    tab = opened.structured["tab_id"]
    worker = await service_worker(browser.cdp, extension_id)

    async def registered_patterns() -> list[str]:
        script = await browser.cdp.evaluate(worker, REGISTERED, await_promise=True)
        return (script or {}).get("matches", [])

    # Not allowed yet: no registration covers the origin, and the page has no runtime.
    assert pattern not in await registered_patterns()
    assert (await listed_tab(tabwire, tab)).get("runtime") is None

    assert "page tools are allowed" in run_cli(tabwire_command, "allow", origin)
    async def covered() -> bool | None:
        return True if pattern in await registered_patterns() else None

    await wait_for(covered, timeout=10, what=f"the content script to cover {pattern}")
    script = await browser.cdp.evaluate(worker, REGISTERED, await_promise=True)
    # At document_start: content.js compiles the wasm while the page parses when Tabwire set the load
    # off, and once it has loaded when a person did (the last test); it instantiates it after the parse.
    assert script["runAt"] == "document_start", script

    # A page of the origin loaded now has the runtime with no page tool called.
    other = fixture_server.url("plain", "screenshot/other.html")
    reopened = await tabwire.call_ok("browser_open", {"url": other, "tab_id": tab})
    assert reopened.structured["tab_id"] == tab
    # A runtime loaded only because the origin is allowed brings no tools: browser_open does not wait
    # for any (it would say the page did not register its tools within its wait).
    assert "registered no tools while loading" in reopened.text, reopened

    async def runtime_runs() -> str | None:
        listed = await listed_tab(tabwire, tab)
        return listed.get("runtime") if listed and listed.get("url") == other else None

    assert await wait_for(runtime_runs, timeout=10, what="the preloaded runtime to announce the page") == "wasm"
    snapshot = await tabwire.call_ok("page_snapshot", {"tab_id": tab})
    assert f"page content from {origin}" in snapshot.text, snapshot

    # Taken back: the registration no longer covers the origin.
    run_cli(tabwire_command, "revoke", origin)

    async def uncovered() -> bool | None:
        return True if pattern not in await registered_patterns() else None

    await wait_for(uncovered, timeout=10, what=f"the content script to stop covering {pattern}")


BEGAN = "globalThis.__tabwireBegan ?? null"


async def test_a_persons_load_gets_the_runtime_after_its_load_event_and_a_load_tabwire_set_off_before(
    tabwire_command, launch_chromium, extension_dir, extension_id, fixture_server
):
    # The page's load event waits 3 s for a late image: a runtime that began before it began while
    # the page loaded, one that began after it waited for it.
    browser = await launch_chromium(extension_dir=extension_dir)
    url = fixture_server.url("plain", "preload/slow-load.html")
    async with tabwire_command.allowing_all_origins().session() as tabwire:
        worker = await service_worker(browser.cdp, extension_id)

        async def registered() -> bool | None:
            script = await browser.cdp.evaluate(worker, REGISTERED, await_promise=True)
            return True if script and "http://*/*" in script["matches"] else None

        # (Evaluated before the worker's module has run, `chrome.scripting` may not be there yet.)
        await wait_for(registered, timeout=20, what="the content script to cover every page", ignore=(CdpError,))
        # A page a person opens: no call waits on its load, so the runtime waits for it to finish.
        persons = f"{url}?opened_by=the_person"
        await browser.cdp.send(await browser.cdp.browser_target(), "Target.createTarget", {"url": persons})
        listed = await tabwire.listed_tab(persons)

        async def announced() -> str | None:
            tab = await listed_tab(tabwire, listed["id"])
            return tab.get("runtime") if tab else None

        assert await wait_for(announced, timeout=20, what="the person's page to get its runtime") == "wasm"
        page = await browser.cdp.wait_for_page(persons)
        assert await evaluate_in_world(page, "Tabwire", BEGAN) == "complete"

        # A page browser_open loads: the model's next call follows at once, so the runtime is hurried
        # as the load commits and began while the page was still loading.
        opened = await tabwire.browser_open(url)
        assert not opened.is_error, opened
        page = await browser.cdp.wait_for_page(url)
        assert await evaluate_in_world(page, "Tabwire", BEGAN) in ("loading", "interactive")
        assert await evaluate_in_world(page, "Tabwire", "document.readyState") == "complete"

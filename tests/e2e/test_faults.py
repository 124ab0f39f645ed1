"""End to end in real Chromium: faults injected for real, each bounded by a deadline far below the call timeout.

- a tab closed in the middle of a call: the call fails with TAB_CLOSED at once;
- a tab that navigates away in the middle of a call: NAVIGATED at once;
- a page whose main thread spins forever: the call fails with TIMEOUT and the other tabs are served meanwhile;
- a page answering with more than a bridge message may carry: TOO_LARGE, and the link stays up;
- the service worker stopped in the middle of a call: a clear error at once, then the worker comes back,
  reconnects, re-announces the tools and the next call works;
- a link to no page (a 204) followed after the service worker restarted, so that it never saw the page
  commit: the page stays and the next call goes to it (it was held as "still loading" for its whole time);
- the server killed and restarted: the extension reconnects by itself, the tools reappear for the new client
  within seconds, and a tab closed while the server was down leaves no zombie tools.

The pages are tests/fixtures/pages/faults.html?tab=NAME (NAME shown in #marker) and the tools those of the test
adapter tests/fixtures/adapters/faults.json, loaded with `--adapters`.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time

import anyio
import pytest

from harness.cdp import Cdp, Target
from harness.fixture_pages import FIXTURE_PAGES, with_fault_adapter
from harness.local_http import LocalServer, QuietHandler
from harness.mcp_client import TabwireSession, ToolOutcome, error_codes_in
from harness.processes import pid_listening_on
from harness.static_server import StaticServer
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

CALL_TIMEOUT_MS = 15_000
# A fault must surface well before the call's own timeout.
PROMPT = 4.0


@pytest.fixture
def tabwire_command(request, tabwire_command):
    marker = request.node.get_closest_marker("call_timeout_ms")
    timeout = marker.args[0] if marker else CALL_TIMEOUT_MS
    tabwire_command.args = with_fault_adapter(tabwire_command.args, call_timeout_ms=timeout)
    return tabwire_command


@pytest.fixture
def fault_pages(request, tmp_path):
    log = tmp_path / "fixture-pages.log"
    request.node.__dict__.setdefault("tabwire_logs", []).append(("fixture pages", log))
    server = StaticServer(FIXTURE_PAGES, log)
    try:
        yield server
    finally:
        server.stop()


def page_url(pages: StaticServer, name: str) -> str:
    return pages.url("plain", f"faults.html?tab={name}")


async def open_tab(tabwire: TabwireSession, url: str) -> int:
    """Open `url` in a new tab with browser_open (retrying while the extension connects); its tab id."""
    out = await tabwire.browser_open(url)
    assert not out.is_error and out.structured.get("tools"), f"browser_open({url}) did not register tools: {out}"
    return out.structured["tab_id"]


async def echo(tabwire: TabwireSession, tab: int, n: int) -> dict:
    out = await tabwire.call_ok("faults_echo", {"n": n, "tab_id": tab})
    return out.structured


async def failing_call(
    tabwire: TabwireSession, cdp: Cdp, page: Target, args: dict, fault, *, within: float = PROMPT
) -> ToolOutcome:
    """Start faults_wait_forever in `page`, inject `fault` once the call has reached the page (it marks the
    page as waiting), and return the outcome (which must come in `within` s)."""
    started = time.monotonic()
    task = asyncio.create_task(tabwire.call("faults_wait_forever", args))

    async def under_way() -> bool:
        if task.done():  # failed before reaching the page: let the assertions say how
            return True
        return await cdp.evaluate(page, "document.body.dataset.waiting === 'yes'")

    await wait_for(under_way, timeout=PROMPT, what="the call to reach the page")
    await fault()
    with anyio.fail_after(within):
        out = await task
    print(f"faults_wait_forever: failed after {time.monotonic() - started:.3f}s with {out.text[:120]!r}")
    return out


async def page_target(cdp: Cdp, url: str):
    return await cdp.wait_for_page(url)


async def test_tab_closed_mid_call_is_tab_closed_at_once(tabwire, launch_chromium, extension_dir, fault_pages):
    browser = await launch_chromium(extension_dir=extension_dir)
    url_a, url_b = page_url(fault_pages, "A"), page_url(fault_pages, "B")
    tab_a = await open_tab(tabwire, url_a)
    tab_b = await open_tab(tabwire, url_b)
    page_a = await page_target(browser.cdp, url_a)

    async def close_tab() -> None:
        await browser.cdp.send(page_a, "Page.close")

    out = await failing_call(tabwire, browser.cdp, page_a, {"tab_id": tab_a}, close_tab)
    assert out.is_error and error_codes_in(out.text)[:1] == ["TAB_CLOSED"], out

    # No zombie: the closed tab's tools are gone; the other tab still serves.
    async def gone() -> bool:
        tabs = (await tabwire.call_ok("browser_tabs")).structured["tabs"]
        return tab_a not in [t["id"] for t in tabs]

    await wait_for(gone, timeout=5, what=f"tab {tab_a} to leave browser_tabs")
    assert await echo(tabwire, tab_b, 1) == {"n": 1, "marker": "B"}


async def test_tab_navigating_mid_call_is_navigated_at_once(tabwire, launch_chromium, extension_dir, fault_pages):
    browser = await launch_chromium(extension_dir=extension_dir)
    url_a = page_url(fault_pages, "A")
    tab_a = await open_tab(tabwire, url_a)
    page_a = await page_target(browser.cdp, url_a)
    elsewhere = page_url(fault_pages, "A2")

    async def navigate() -> None:
        await browser.cdp.send(page_a, "Page.navigate", {"url": elsewhere})

    out = await failing_call(tabwire, browser.cdp, page_a, {"tab_id": tab_a}, navigate)
    assert out.is_error and error_codes_in(out.text)[:1] == ["NAVIGATED"], out

    # The new page registers again and serves.
    async def echoes() -> dict | None:
        out = await tabwire.call("faults_echo", {"n": 2, "tab_id": tab_a})
        return None if out.is_error else out.structured

    assert await wait_for(echoes, timeout=10, what="the navigated tab to serve again") == {"n": 2, "marker": "A2"}


@pytest.mark.call_timeout_ms(3000)
async def test_busy_page_times_out_and_other_tabs_are_served(tabwire, launch_chromium, extension_dir, fault_pages):
    await launch_chromium(extension_dir=extension_dir)
    tab_busy = await open_tab(tabwire, page_url(fault_pages, "busy"))
    tab_ok = await open_tab(tabwire, page_url(fault_pages, "ok"))

    started = time.monotonic()
    spin = asyncio.create_task(tabwire.call("faults_spin", {"tab_id": tab_busy}))
    # While that page spins, the other tab keeps answering.
    for n in range(20):
        assert await echo(tabwire, tab_ok, n) == {"n": n, "marker": "ok"}
    with anyio.fail_after(3 + PROMPT):
        out = await spin
    print(f"faults_spin: {out.text[:160]!r} after {time.monotonic() - started:.3f}s")
    assert out.is_error and error_codes_in(out.text)[:1] == ["TIMEOUT"], out
    assert await echo(tabwire, tab_ok, 99) == {"n": 99, "marker": "ok"}


async def test_oversized_result_is_too_large_and_the_link_stays_up(tabwire, launch_chromium, extension_dir, fault_pages):
    await launch_chromium(extension_dir=extension_dir)
    tab = await open_tab(tabwire, page_url(fault_pages, "big"))
    with anyio.fail_after(CALL_TIMEOUT_MS / 1000):
        out = await tabwire.call("faults_huge", {"tab_id": tab})
    assert out.is_error and error_codes_in(out.text)[:1] == ["TOO_LARGE"], out
    assert await echo(tabwire, tab, 3) == {"n": 3, "marker": "big"}


# --- the service worker and the server die ------------------------------------------------------


async def worker_targets(cdp: Cdp, extension_id: str):
    return [
        t
        for t in await cdp.targets()
        if t.type == "service_worker" and t.url.startswith(f"chrome-extension://{extension_id}/")
    ]


async def stop_service_worker(cdp: Cdp, extension_id: str) -> None:
    """Closes the extension's service worker (Chrome starts it again at its next event)."""
    workers = await wait_for(
        lambda: worker_targets(cdp, extension_id), timeout=10, what="the extension's service worker target"
    )
    root = await cdp.browser_target()
    for w in workers:
        await cdp.send(root, "Target.closeTarget", {"targetId": w.id})


async def echo_once_served_again(tabwire: TabwireSession, tab: int, n: int) -> dict:
    """faults_echo's answer once a call works again: the worker came back, reconnected and re-announced the
    tab's tools."""

    async def served() -> dict | None:
        out = await tabwire.call("faults_echo", {"n": n, "tab_id": tab})
        return None if out.is_error else out.structured

    return await wait_for(served, timeout=10, what="a call to work after the worker restarted")


async def test_service_worker_stopped_mid_call(tabwire, launch_chromium, extension_dir, fault_pages, extension_id):
    browser = await launch_chromium(extension_dir=extension_dir)
    tab = await open_tab(tabwire, page_url(fault_pages, "sw"))
    page = await page_target(browser.cdp, page_url(fault_pages, "sw"))
    assert await echo(tabwire, tab, 1) == {"n": 1, "marker": "sw"}
    out = await failing_call(
        tabwire, browser.cdp, page, {"tab_id": tab}, lambda: stop_service_worker(browser.cdp, extension_id)
    )
    assert out.is_error and error_codes_in(out.text)[:1] == ["NOT_CONNECTED"], out

    started = time.monotonic()
    assert await echo_once_served_again(tabwire, tab, 2) == {"n": 2, "marker": "sw"}
    print(f"service worker stopped: next call served {time.monotonic() - started:.3f}s later")


class NoContent(QuietHandler):
    """Answers every request with 204 No Content (the browser stays on the page it showed) and counts them."""

    hits = 0

    def do_GET(self) -> None:  # noqa: N802 - stdlib signature
        type(self).hits += 1
        self.send_response(204)
        self.end_headers()


async def test_a_link_to_no_page_after_the_worker_restarted_holds_no_call(
    tabwire, launch_chromium, extension_dir, fault_pages, extension_id
):
    browser = await launch_chromium(extension_dir=extension_dir)
    url = page_url(fault_pages, "stays")
    tab = await open_tab(tabwire, url)
    page = await page_target(browser.cdp, url)
    await stop_service_worker(browser.cdp, extension_id)
    # The worker is back and knows nothing of the page's commit.
    assert await echo_once_served_again(tabwire, tab, 1) == {"n": 1, "marker": "stays"}
    NoContent.hits = 0
    nothing = LocalServer(NoContent, "no-content")
    try:
        await browser.cdp.evaluate(page, f"location.href = {json.dumps(nothing.origin + '/nothing')}; 0")
        await wait_for(lambda: NoContent.hits > 0, timeout=10, what="the link to no page to be followed")
        # Chrome began a load and ended it with no document: the page stays and takes the next call.
        assert await echo(tabwire, tab, 2) == {"n": 2, "marker": "stays"}
    finally:
        nothing.stop()


async def test_server_killed_and_restarted(tabwire_command, launch_chromium, extension_dir, fault_pages, pairing):
    c = tabwire_command
    browser = await launch_chromium(extension_dir=extension_dir)
    url_keep, url_close = page_url(fault_pages, "keep"), page_url(fault_pages, "close")

    first = c.session()
    session = await first.__aenter__()
    try:
        tab_keep = await open_tab(session, url_keep)
        tab_close = await open_tab(session, url_close)
        pid = await wait_for(lambda: pid_listening_on(pairing.port), timeout=5, what="tabwire's pid")
        os.kill(pid, signal.SIGKILL)
        await wait_for(lambda: pid_listening_on(pairing.port) is None, timeout=5, what="the port to be free")
    finally:
        try:
            await first.__aexit__(None, None, None)
        except BaseException:  # noqa: BLE001 - the process was killed under the client on purpose
            pass

    # While no server runs, a tab closes: it must not come back as a zombie.
    page_close = await page_target(browser.cdp, url_close)
    await browser.cdp.send(page_close, "Page.close")

    started = time.monotonic()
    async with c.session() as second:
        await second.wait_for_tools("faults_echo", timeout=10)
        reappeared = time.monotonic() - started
        tabs = (await second.call_ok("browser_tabs")).structured["tabs"]
        ids = [t["id"] for t in tabs]
        assert tab_keep in ids and tab_close not in ids, f"zombie or missing tab after restart: {tabs}"
        assert await echo(second, tab_keep, 5) == {"n": 5, "marker": "keep"}
        print(f"server restarted: tools back {reappeared:.3f}s after the new server started")


async def test_browser_open_injects_the_runtime_a_page_missed(
    tabwire, launch_chromium, extension_dir, fault_pages, extension_id
):
    """A tab opened while the content script's registration is not in force (a race right after connecting;
    here made certain by unregistering it through DevTools) still gets its runtime: browser_open's worker
    side injects it once the page has loaded, and the page's tools are in browser_open's result."""
    browser = await launch_chromium(extension_dir=extension_dir)
    await open_tab(tabwire, page_url(fault_pages, "first"))
    workers = await wait_for(
        lambda: worker_targets(browser.cdp, extension_id), timeout=10, what="the extension's service worker target"
    )
    registered = "chrome.scripting.getRegisteredContentScripts({ids: ['tabwire-injector']}).then((s) => s.length)"
    assert await browser.cdp.evaluate(workers[0], registered, await_promise=True) == 1
    await browser.cdp.evaluate(
        workers[0], "chrome.scripting.unregisterContentScripts({ids: ['tabwire-injector']}).then(() => 0)",
        await_promise=True,
    )
    assert await browser.cdp.evaluate(workers[0], registered, await_promise=True) == 0
    tab = await open_tab(tabwire, page_url(fault_pages, "missed"))
    assert await echo(tabwire, tab, 3) == {"n": 3, "marker": "missed"}


async def test_a_page_the_person_opens_gets_its_runtime_though_the_registration_missed_it(
    tabwire, launch_chromium, extension_dir, fault_pages, extension_id
):
    """A page a person opens (not browser_open) while the content script's registration is not in force
    (right after the extension connected, on a busy machine; here made certain by unregistering it) still
    gets its runtime once it has loaded, and its tools reach the server. This raced in CI: a page loaded in
    the second the extension connected offered no tools, ever."""
    browser = await launch_chromium(extension_dir=extension_dir)
    await open_tab(tabwire, page_url(fault_pages, "first"))
    workers = await wait_for(
        lambda: worker_targets(browser.cdp, extension_id), timeout=10, what="the extension's service worker target"
    )
    await browser.cdp.evaluate(
        workers[0], "chrome.scripting.unregisterContentScripts({ids: ['tabwire-injector']}).then(() => 0)",
        await_promise=True,
    )
    persons = page_url(fault_pages, "persons")
    await browser.cdp.send(await browser.cdp.browser_target(), "Target.createTarget", {"url": persons})
    tab = (await tabwire.listed_tab(persons))["id"]

    async def offers_tools() -> bool:
        listed = await tabwire.listed_tab(persons)
        return "faults_echo" in listed.get("tools", [])

    await wait_for(offers_tools, timeout=20, what="the page the person opened to offer its tools")
    assert await echo(tabwire, tab, 4) == {"n": 4, "marker": "persons"}

"""Reconnect on wake, measured in headless Firefox ESR: the alternative to the keep-alive the worker uses
(one `runtime.getPlatformInfo` call with each 20 s ping, which Firefox counts, so it never suspends the
background while connected: `test_firefox.py::test_the_link_stays_up_through_two_idle_minutes`).

Here the background is suspended as Firefox suspends it when nothing keeps it (the browser's own
`terminateBackground`, what about:debugging's button calls), and the test measures what a user would
get without the keep-alive: the link drops at once; with no page runtime open, a call made meanwhile
answers that no browser is connected (after the server's short wait for an expected browser) and the link
comes back only when the worker's 30 s wake alarm (the shortest period browsers allow) fires; with a page
runtime open, the page's port reconnecting wakes the background within about a second and a call made as
the link drops waits for it. The times are printed for BENCHMARKS.md; the bounds asserted are the ones the
README states.
"""

from __future__ import annotations

import time

import pytest

from harness.todomvc import TODO_TOOLS
from harness.waiting import wait_for

pytestmark = [pytest.mark.anyio, pytest.mark.firefox]

# The worker's wake alarm period, plus Firefox's alarm granularity and a loaded machine's slack.
ALARM_BOUND_S = 45


def stderr_of(c) -> str:
    return c.stderr_path.read_text(errors="replace")


async def test_after_a_suspension_the_link_waits_for_an_event_to_wake_the_background(
    tabwire_command, launch_firefox, firefox_extension_dir, todomvc_url
):
    c = tabwire_command
    url = todomvc_url("plain")
    async with c.session() as tabwire:
        browser = await launch_firefox(firefox_extension_dir)

        await wait_for(lambda: "extension said hello" in stderr_of(c), timeout=30, what="the Firefox add-on to connect")

        async def suspend() -> tuple[int, float]:
            hellos = stderr_of(c).count("extension said hello")
            drops = stderr_of(c).count("browser extension disconnected")
            started = time.monotonic()
            await browser.bidi.suspend_background()
            await wait_for(lambda: stderr_of(c).count("browser extension disconnected") > drops, timeout=10,
                           what="tabwire to see the link drop", interval=0.02)
            print(f"suspended: link down {1000 * (time.monotonic() - started):.0f} ms after the suspension")
            return hellos, started

        async def reconnected(hellos: int, since: float, what: str) -> float:
            await wait_for(lambda: stderr_of(c).count("extension said hello") > hellos, timeout=ALARM_BOUND_S,
                           what=f"the add-on to reconnect ({what})", interval=0.05)
            return time.monotonic() - since

        # 1. No page runtime in any tab: nothing but the wake alarm wakes the background. A call in
        #    between fails with NOT_CONNECTED; the link comes back by itself within the alarm's period.
        hellos, started = await suspend()
        called = time.monotonic()
        failed = await tabwire.call("browser_tabs")
        print(f"a call while suspended answered after {1000 * (time.monotonic() - called):.0f} ms: {failed.text[:80]}")
        assert failed.structured["connected"] is False, failed
        after_alarm = await reconnected(hellos, started, "the wake alarm")
        print(f"reconnect on wake, no page runtime: {after_alarm:.1f} s after the suspension")
        assert (await tabwire.call("browser_tabs")).structured["connected"] is True

        # 2. A page runtime holds its port to the background: the port's disconnect makes the page
        #    connect again, which wakes the background at once; a call made as the link drops waits
        #    for it and answers.
        assert not (await tabwire.browser_open(url)).is_error
        await tabwire.wait_for_tools(*TODO_TOOLS)
        hellos, started = await suspend()
        called = time.monotonic()
        listed = await tabwire.call("todomvc_list_todos")
        call_ms = 1000 * (time.monotonic() - called)
        after_port = await reconnected(hellos, started, "the page's port")
        print(f"reconnect on wake, a page runtime open: {1000 * after_port:.0f} ms after the suspension; "
              f"a call made at the drop answered in {call_ms:.0f} ms")
        assert not listed.is_error, listed
        assert after_port < 5, after_port

"""The popup's DOM in headless Firefox ESR, with the add-on `tabwire extension install --browser firefox`
wrote: the popup page opened as a tab by the browser window's own script (BiDi's chrome scope: BiDi will
not navigate a tab to a `moz-extension://` URL), read as shown and its buttons clicked, while the real
`tabwire mcp` serves the official Python client (no elicitation: only a grant lets a page tool act).

Its own tab in front is no website; the website in front with tabwire not running says so; once
connected, Allow in the popup lets `page_snapshot` work at once and `tabwire grants` list the site,
Revoke refuses the next call — the popup's requests are recognized in Firefox — and the trusted-input
toggle is not offered (Firefox has no debugger API).
"""

from __future__ import annotations

import pytest

from conftest import run_cli
from harness.popup import PopupSite

pytestmark = [pytest.mark.anyio, pytest.mark.firefox]


async def test_the_popup_shows_the_site_and_allows_and_revokes_it_in_firefox(
    unadapted_command, launch_firefox, firefox_extension_dir, fixture_server
):
    c = unadapted_command
    origin = fixture_server.origin
    url = fixture_server.url("plain", "screenshot/index.html")
    browser = await launch_firefox(firefox_extension_dir)
    page = await browser.bidi.open(url)
    popup = await browser.bidi.open_extension_page("extension/popup.html")

    site = PopupSite(lambda js: browser.bidi.evaluate(popup, js))

    # The popup's own tab is in front: not a website.
    await site.own_page("moz-extension")

    # The website in front, tabwire not running.
    await browser.bidi.activate(page)
    await site.disconnected(origin)

    async with c.session() as tabwire:
        tab = (await tabwire.listed_tab(url))["id"]
        dom = await site.not_allowed(origin)
        assert not dom["trusted_box"], "Firefox has no debugger API: trusted input is not offered"
        out = await tabwire.call("page_snapshot", {"tab_id": tab})
        assert out.is_error and out.text.startswith("PERMISSION_REQUIRED"), out

        # Allow: the popup's request is taken, and the next page call works.
        await site.click("#allow")
        dom = await site.when(lambda d: d["site"] == "allowed", "the site allowed")
        assert dom["revoke"] and not dom["allow"] and not dom["trusted_box"], dom
        assert [g.removesuffix("Revoke") for g in dom["grants"]] == [origin], dom
        out = await tabwire.call_ok("page_snapshot", {"tab_id": tab})
        assert f"page content from {origin}" in out.text, out.text
        assert f"{origin}  page tools allowed\n" in run_cli(c, "grants")
        audit = run_cli(c, "audit", "-n", "5")
        assert "popup" in audit and "allow page_tools" in audit, audit

        # Revoke: the next page call is refused.
        await site.click("#revoke")
        await site.when(lambda d: d["site"] == "not_allowed", "the site revoked")
        out = await tabwire.call("page_snapshot", {"tab_id": tab})
        assert out.is_error and out.text.startswith("PERMISSION_REQUIRED"), out
        assert origin not in run_cli(c, "grants")

"""The popup's site permission in real headless Chromium with the real extension, as a person uses it:
the popup page is opened as a tab through DevTools (the site it is about is the active tab of its window:
the test brings the website's tab to the front), its DOM read as shown and its buttons clicked, while
the real `tabwire mcp` (no `--allow-all-origins`) serves the official Python SDK client, which has no
elicitation capability, so nothing but a grant lets a page tool act. A fixture page no adapter serves.

1. tabwire not running: the site section says so (the connection section says what to run);
2. the popup's own tab, a `chrome://` tab: page tools do not work there, no buttons;
3. Allow in the popup → `page_snapshot` on that origin works at once, `tabwire grants` lists it, the
   audit log says the popup did it; the trusted-input toggle records its grant; Revoke → the next
   `page_snapshot` is PERMISSION_REQUIRED;
4. `tabwire allow` in another process while the popup is open → the popup shows it; a row's Revoke;
5. a change the worker must refuse (the popup's view gone stale: another origin than the tab shows,
   or no website origin at all) is refused with the reason shown, and nothing is granted.
"""

from __future__ import annotations

import pytest

from conftest import run_cli
from harness.popup import PopupSite
from harness.extension_pages import activate, open_extension_page, open_page, screenshot

pytestmark = pytest.mark.anyio


async def test_the_popup_allows_and_revokes_a_site_and_follows_the_cli(
    unadapted_command, fixture_server, launch_chromium, extension_dir, extension_id, tmp_path
):
    c = unadapted_command
    origin = fixture_server.origin
    url = fixture_server.url("plain", "screenshot/index.html")
    browser = await launch_chromium(extension_dir=extension_dir, url=url)
    page = await browser.cdp.wait_for_page(url)
    popup = await open_extension_page(browser.cdp, extension_id, "extension/popup.html")

    site = PopupSite(lambda js: browser.cdp.evaluate(popup, js))

    # The popup's own tab is in front: not a website.
    await site.own_page("chrome-extension")
    # (A page in a background tab cannot be captured: this is the one screenshot.)
    await screenshot(browser.cdp, popup, tmp_path / "popup-site-own-page.png")

    # 1. The website in front, tabwire not running.
    await activate(browser.cdp, page)
    dom = await site.disconnected(origin)
    assert dom["text"].startswith("Tabwire is not connected (see above)"), dom
    assert dom["grants_text"] == "Connect Tabwire to see the sites allowed.", dom

    async with c.session() as tabwire:
        tab = (await tabwire.listed_tab(url))["id"]
        dom = await site.not_allowed(origin)
        assert "only once you allow it" in dom["text"], dom
        assert dom["grants_text"].startswith("No site yet."), dom
        out = await tabwire.call("page_snapshot", {"tab_id": tab})
        assert out.is_error and out.text.startswith("PERMISSION_REQUIRED"), out

        # 3. Allow: the next page call works, without a question and without a restart.
        await site.click("#allow")
        dom = await site.when(lambda d: d["site"] == "allowed", "the site allowed")
        assert dom["revoke"] and not dom["allow"] and dom["trusted_box"] and not dom["trusted"], dom
        assert dom["text"].startswith("Page tools are allowed here since "), dom
        assert [g.removesuffix("Revoke") for g in dom["grants"]] == [origin], dom
        assert dom["problem"] is None, dom
        out = await tabwire.call_ok("page_snapshot", {"tab_id": tab})
        assert f"page content from {origin}" in out.text, out.text
        assert f"{origin}  page tools allowed\n" in run_cli(c, "grants")
        audit = run_cli(c, "audit", "-n", "5")
        assert "popup" in audit and "allow page_tools" in audit and f"{origin} (tab {tab})" in audit, audit

        # The trusted-input toggle records its grant (and its note explains Chrome's bar).
        await site.click("#trusted")
        dom = await site.when(lambda d: d["trusted"] and "trusted input" in "".join(d["grants"]), "trusted input on")
        assert f"{origin}  page tools allowed, trusted input on" in run_cli(c, "grants")
        assert "debugging this browser" in await browser.cdp.evaluate(popup, "document.querySelector('#trusted-note').textContent")
        await site.click("#trusted")
        await site.when(
            lambda d: d["site"] == "allowed" and not d["trusted"] and "trusted input" not in "".join(d["grants"]),
            "trusted input off",
        )
        assert "trusted input" not in run_cli(c, "grants")

        # Revoke: the next page call is refused.
        await site.click("#revoke")
        dom = await site.when(lambda d: d["site"] == "not_allowed", "the site revoked")
        assert dom["grants_text"].startswith("No site yet."), dom
        out = await tabwire.call("page_snapshot", {"tab_id": tab})
        assert out.is_error and out.text.startswith("PERMISSION_REQUIRED"), out
        assert origin not in run_cli(c, "grants")

        # 4. The CLI, in another process, while the popup is open: the popup follows.
        run_cli(c, "allow", origin)
        dom = await site.when(lambda d: d["site"] == "allowed", "the CLI's grant")
        assert [g.removesuffix("Revoke") for g in dom["grants"]] == [origin], dom
        await site.click(f"#grants li[data-origin='{origin}'] button")
        dom = await site.when(lambda d: d["site"] == "not_allowed", "the row's revoke")
        assert origin not in run_cli(c, "grants")
        out = await tabwire.call("page_snapshot", {"tab_id": tab})
        assert out.is_error and out.text.startswith("PERMISSION_REQUIRED"), out

        # 5. A stale view asks for another origin than the tab shows, or for no website at all:
        # refused by the worker, the reason shown, nothing granted.
        for claimed, reason in [
            ("http://127.0.0.1:1", f"the tab shows {origin}, not http://127.0.0.1:1"),
            ("file:///etc/passwd", '"file:///etc/passwd" is not a website origin'),
        ]:
            await browser.cdp.evaluate(popup, f"document.querySelector('#site').dataset.origin = {claimed!r}")
            await site.click("#allow")
            dom = await site.when(lambda d: d["problem"], "the refusal")
            assert dom["problem"].startswith("Not changed: ") and reason in dom["problem"], dom
            assert dom["site"] == "not_allowed", dom
        assert "allowed on no site yet" in run_cli(c, "grants")

        # 2. A chrome:// tab in front: no website, no buttons.
        settings = await open_page(browser.cdp, "chrome://version/")
        await activate(browser.cdp, settings)
        dom = await site.when(lambda d: d["site"] == "not_web", "that chrome:// pages are no website")
        assert "(chrome: pages)" in dom["text"] and "websites (http and https) only" in dom["text"], dom
        assert not (dom["allow"] or dom["revoke"] or dom["trusted_box"]), dom

"""Issue 26's origin attacks, with the real `tabwire` (no `--allow-all-origins`), headless Chromium with the
real extension and hostile pages on 127.0.0.1, each of which worked on main (0504d2b):
- `tabwire allow` reads what a person types as the browser does: `https://a.example\\@b.example/`, user info,
  `*` and port 99999 grant nothing; a URL with a path, upper case or a default port stores its canonical origin
  and says so;
- a look-alike origin (`mail-google.localhost` beside `mail.google.localhost`, the same port) registering the
  same WebMCP tool never gets the other origin's tool name, nor a call made by that name, whichever tab was
  focused last;
- tools of an adapter the model saved pass the per-origin gate at every call (revoking the origin stops them),
  while an adapter a person wrote stays ungated, as SECURITY.md says;
- a download a hostile page starts with no referrer, after a call ran in an allowed tab, is not listed (or
  saved) for that tab.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli
from harness.waiting import wait_for
from harness.webmcp_names import page_tool_name
from test_learn import user_adapters
from test_locators import documented_adapter

pytestmark = pytest.mark.anyio

# What the files app offers (conftest's `files_app`).
DOWNLOADS = {"report.bin": os.urandom(2048)}

WEBMCP_PAGE = "webmcp/index.html"
NOTES = "[...document.querySelectorAll('#notes li')].map(li => li.textContent)"


@pytest.fixture
def tabwire_command(tabwire_command):
    return tabwire_command.serving_page_tools_only(call_timeout_ms=8000)


def tabwire_cli(tabwire_command, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(tabwire_command.binary), *args],
        env={**tabwire_command.env, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=30,
    )


def granted(tabwire_command) -> dict:
    path = Path(tabwire_command.env["XDG_CONFIG_HOME"]) / "tabwire" / "grants.json"
    return json.loads(path.read_text())["origins"] if path.exists() else {}


async def test_allow_stores_only_canonical_origins_and_refuses_what_names_none(tabwire_command):
    for typed, why in [
        ("https://a.example\\@b.example/", "backslash"),
        ("https://a.example@b.example/", "user info"),
        ("*", "not a URL"),
        ("https://a.example:99999", "not a URL"),
        ("chrome://settings", "not a website"),
    ]:
        out = tabwire_cli(tabwire_command, "allow", typed)
        assert out.returncode != 0, (typed, out)
        assert why in out.stderr and "nothing was granted" in out.stderr, (typed, out.stderr)
        assert granted(tabwire_command) == {}, typed

    out = tabwire_cli(tabwire_command, "allow", "HTTPS://Bücher.Example:443/inbox?x")
    assert out.returncode == 0, out
    assert "stored its origin https://xn--bcher-kva.example" in out.stderr, out.stderr
    assert out.stdout.startswith("https://xn--bcher-kva.example: page tools are allowed"), out.stdout
    assert list(granted(tabwire_command)) == ["https://xn--bcher-kva.example"]


async def test_a_look_alike_origin_never_gets_another_origins_page_tool(
    tabwire, launch_chromium, extension_dir, fixture_server
):
    """Chrome resolves every `*.localhost` name to loopback: two origins on one server whose host names differ
    only in `.` against `-` (on main, one tool name `webmcp_mail_google_localhost_…_add_note`)."""
    victim = f"http://mail.google.localhost:{fixture_server.port}/plain/{WEBMCP_PAGE}"
    attacker = f"http://mail-google.localhost:{fixture_server.port}/plain/{WEBMCP_PAGE}"
    browser = await launch_chromium(extension_dir=extension_dir)
    victim_tab = (await tabwire.browser_open(victim)).structured
    # The attacker's tab opens last, so it ranks first for a call without tab_id.
    attacker_tab = (await tabwire.browser_open(attacker)).structured
    # What each page's add_note is called, as the model is told (on main: one name for both).
    [mine] = [t for t in victim_tab["tools"] if t.endswith("_add_note")]
    [theirs] = [t for t in attacker_tab["tools"] if t.endswith("_add_note")]
    assert mine != theirs, mine
    assert (mine, theirs) == (page_tool_name(victim, "add_note"), page_tool_name(attacker, "add_note"))
    await tabwire.wait_for_tools(mine, theirs)
    tools = await tabwire.tools()
    assert tools[mine].description.startswith("Tool of the page at http://mail.google.localhost:"), tools[mine]
    assert tools[theirs].description.startswith("Tool of the page at http://mail-google.localhost:"), tools[theirs]

    out = await tabwire.call_ok(mine, {"text": "draft to the boss"})
    assert out.structured["page_origin"] == f"http://mail.google.localhost:{fixture_server.port}", out
    assert await browser.cdp.evaluate(await browser.cdp.wait_for_page(victim), NOTES) == ["draft to the boss"]
    assert await browser.cdp.evaluate(await browser.cdp.wait_for_page(attacker), NOTES) == []


async def test_a_saved_adapters_tools_pass_the_origin_gate_at_every_call(
    tabwire_command, tabwire, fixture_server, launch_chromium, extension_dir
):
    page = fixture_server.url("plain", "redesign/v1.html")
    origin = fixture_server.origin
    await launch_chromium(extension_dir=extension_dir)
    tab = (await tabwire.browser_open(page)).structured["tab_id"]
    run_cli(tabwire_command, "allow", origin)

    learned = documented_adapter()
    learned["name"] = "learned"
    learned["match"] = [f"{origin}/plain/redesign/*"]
    # Chrome reads a host without a port as every port: never within the one allowed origin.
    everywhere = dict(learned, match=["http://127.0.0.1/*"])
    out = await tabwire.call("site_save", {"adapter": everywhere, "tab_id": tab})
    assert out.is_error and out.structured["refusal"] == "too_broad", out
    assert f'use "{origin}/*"' in out.text and "every port" in out.text, out
    out = await tabwire.call("site_save", {"adapter": learned, "tab_id": tab})
    assert not out.is_error, out

    # A person's own adapter for the same page, written by hand.
    by_hand = documented_adapter()
    by_hand["name"] = "handmade"
    by_hand["match"] = [f"{origin}/plain/redesign/*"]
    (user_adapters(tabwire_command) / "handmade.json").write_text(json.dumps(by_hand, indent=2))
    await tabwire.wait_for_tools("learned_list", "handmade_list")
    assert (await tabwire.call_ok("learned_list", {"tab_id": tab})).structured == {"notes": []}

    run_cli(tabwire_command, "revoke", origin)
    refused = await tabwire.call("learned_list", {"tab_id": tab})
    assert refused.is_error and refused.text.startswith("PERMISSION_REQUIRED: "), refused
    assert f"`tabwire allow {origin}`" in refused.text, refused
    refused = await tabwire.call("site_call", {"tool": "learned_list", "tab_id": tab})
    assert refused.is_error and refused.text.startswith("PERMISSION_REQUIRED: "), refused
    # The person's adapter is theirs to trust.
    assert (await tabwire.call_ok("handmade_list", {"tab_id": tab})).structured == {"notes": []}

    run_cli(tabwire_command, "allow", origin)
    assert (await tabwire.call_ok("learned_list", {"tab_id": tab})).structured == {"notes": []}


async def test_a_download_no_document_of_the_tab_started_is_not_the_tabs(
    tabwire_command, tabwire, launch_chromium, extension_dir, files_app, fixture_server
):
    hostile = fixture_server.url("plain", "origins/hostile-download.html")
    browser = await launch_chromium(extension_dir=extension_dir, url=hostile)
    run_cli(tabwire_command, "allow", files_app.origin)
    tab = (await tabwire.browser_open(files_app.url("/downloads"))).structured["tab_id"]
    # A call runs in the allowed tab: on main, a download without a referrer went to that tab.
    assert not (await tabwire.call("page_snapshot", {"tab_id": tab})).is_error

    hostile_page = await browser.cdp.wait_for_page(hostile)
    assert await browser.cdp.evaluate(hostile_page, "go()") is True
    await wait_for(
        lambda: (browser.downloads_dir / "evil.bin").exists(), timeout=20, what="Chrome to save the hostile download"
    )
    # Then the tab's own download, started by its document (the link's referrer).
    assert not (await tabwire.call("page_act", {"tab_id": tab, "selector": "#get-0", "action": "click"})).is_error

    async def own_download_complete():
        out = await tabwire.call_ok("browser_downloads", {"tab_id": tab})
        items = out.structured["downloads"]
        return any(d["file_name"] == "report.bin" and d["state"] == "complete" for d in items) and items

    items = await wait_for(own_download_complete, timeout=20, what="the tab's own download to be listed")
    assert [d["file_name"] for d in items] == ["report.bin"], items

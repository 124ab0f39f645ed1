"""End to end: the tiddlywiki adapter creates, searches and opens tiddlers in a real TiddlyWiki 5.4.1 server,
checked through TiddlyWiki's own HTTP API (`/recipes/default/tiddlers.json`, `/recipes/default/tiddlers/<title>`).
The body editor lives in an `<iframe>` (the `frame` step); titles with quotes and brackets, and tags with
spaces and quotes (added one by one through TiddlyWiki's tag picker by a `for_each` over `items`), exercise
the safe interpolation of arguments into selectors.
"""

from __future__ import annotations

import json

import pytest

from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

TOOLS = ("tiddlywiki_create_tiddler", "tiddlywiki_search_tiddlers", "tiddlywiki_open_tiddler")


@pytest.fixture
def tabwire_command(tabwire_command, tiddlywiki):
    """Serve the tiddlywiki adapter (only) on this test's wiki port."""
    return tabwire_command.serving("tiddlywiki", tiddlywiki.base)


async def test_create_search_and_open_tiddlers(tabwire, tiddlywiki, launch_chromium, extension_dir):
    await launch_chromium(extension_dir=extension_dir, url=tiddlywiki.base + "/")
    await tabwire.wait_for_tools(*TOOLS)
    assert not {n for n in await tabwire.tool_names() if n.startswith("todomvc_")}

    title = 'Meeting "notes" [draft]'
    tags = ["work items", "urgent", "Bob's 'q3'"]
    out = await tabwire.call_ok("tiddlywiki_create_tiddler", {"title": title, "text": "Discuss the roadmap", "tags": tags})
    assert out.structured == {"created": title}, out

    saved = await wait_for(lambda: tiddlywiki.tiddler(title), timeout=10, what=f"TiddlyWiki to store {title!r}")
    assert saved["text"] == "Discuss the roadmap", saved
    # TiddlyWiki's list syntax, in the order the tags were added: [[...]] around those with spaces.
    assert saved["tags"] == "[[work items]] urgent [[Bob's 'q3']]", saved

    # The server checks the top-level type; the page checks the array's items before any step runs.
    out = await tabwire.call("tiddlywiki_create_tiddler", {"title": "Bad", "text": "x", "tags": ["ok", 7]})
    assert out.is_error and out.text.startswith("INVALID_ARGS"), out
    assert '"tags" must hold items of type string, got 7 at index 1' in out.text, out

    out = await tabwire.call_ok("tiddlywiki_create_tiddler", {"title": "Shopping", "text": "Milk and roadmap paper"})
    shopping = await wait_for(lambda: tiddlywiki.tiddler("Shopping"), timeout=10, what="the Shopping tiddler")
    assert shopping["text"] == "Milk and roadmap paper" and not shopping.get("tags"), shopping
    titles = {t["title"] for t in tiddlywiki.tiddlers()}
    assert {title, "Shopping"} <= titles, titles

    out = await tabwire.call_ok("tiddlywiki_search_tiddlers", {"query": "roadmap"})
    found = {t["title"] for t in out.structured["tiddlers"]}
    assert found == {title, "Shopping"}, out

    out = await tabwire.call_ok("tiddlywiki_open_tiddler", {"title": title})
    assert out.structured["title"] == title
    assert out.structured["text"] == saved["text"], out
    assert sorted(t["tag"] for t in out.structured["tags"]) == sorted(tags), out

    out = await tabwire.call("tiddlywiki_open_tiddler", {"title": "No such tiddler"})
    assert out.is_error and out.text.startswith("ELEMENT_NOT_FOUND"), out
    assert "steps[2] (within)" in out.text, out


async def test_the_open_tiddlers_state_follows_the_story_river(tabwire, tiddlywiki, launch_chromium, extension_dir):
    """The tiddlywiki adapter's state is the tiddlers open in the story river, with their text. Creating one
    (a changing call) pushes it; closing it by hand and opening it with a read-only tool change the page,
    and those changes are pushed too; so is an edit another client of the wiki makes over its HTTP API,
    once the page has synced it. The oracles are the page's own story river, read through DevTools, and
    TiddlyWiki's HTTP API."""
    # The page polls the server for other clients' changes every 60 s by default: make it 0.5 s.
    tiddlywiki.put_tiddler("$:/config/SyncPollingInterval", text="500")
    browser = await launch_chromium(extension_dir=extension_dir, url=tiddlywiki.base + "/")
    await tabwire.wait_for_tools(*TOOLS)
    page = await browser.cdp.wait_for_page(tiddlywiki.base)
    tab = (await tabwire.call_ok("browser_tabs")).structured["tabs"][0]["id"]
    uri = f"tabwire://tabs/{tab}/state"
    await tabwire.session.subscribe_resource(uri)
    river = "[...document.querySelectorAll('.tc-story-river .tc-tiddler-view-frame')].map(e => e.dataset.tiddlerTitle)"

    async def state_is_the_river() -> bool:
        try:
            state = json.loads((await tabwire.session.read_resource(uri)).contents[0].text)["state"]["tiddlywiki"]
        except Exception:  # noqa: BLE001 - no state cached yet: not yet
            return False
        return [t["title"] for t in state["open_tiddlers"]] == await browser.cdp.evaluate(page, river)

    updated = "notifications/resources/updated"
    seen = tabwire.notifications.count(updated)
    await tabwire.call_ok("tiddlywiki_create_tiddler", {"title": "Plans", "text": "Write them down"})
    await wait_for(lambda: tiddlywiki.tiddler("Plans"), timeout=10, what="TiddlyWiki to store Plans")
    await wait_for(lambda: tabwire.notifications.count(updated) > seen, timeout=10, what="resources/updated after create")
    await wait_for(state_is_the_river, timeout=10, what="the state to list the story river's tiddlers")

    # The user closes Plans by hand (its close button, clicked through DevTools): no call, yet pushed.
    seen = tabwire.notifications.count(updated)
    await browser.cdp.evaluate(
        page, "document.querySelector('.tc-tiddler-view-frame[data-tiddler-title=\"Plans\"] button[aria-label=\"close\"]').click()"
    )
    await wait_for(lambda: tabwire.notifications.count(updated) > seen, timeout=10, what="resources/updated after closing")
    await wait_for(state_is_the_river, timeout=10, what="the state to drop Plans")
    assert "Plans" not in await browser.cdp.evaluate(page, river)

    # Opening it again is a read-only tool: it pushes no state itself, but the page changed.
    seen = tabwire.notifications.count(updated)
    await tabwire.call_ok("tiddlywiki_open_tiddler", {"title": "Plans"})
    await wait_for(lambda: tabwire.notifications.count(updated) > seen, timeout=10, what="resources/updated after open")
    await wait_for(state_is_the_river, timeout=10, what="the state to show Plans open again")
    assert "Plans" in await browser.cdp.evaluate(page, river)

    # Another client of the wiki rewrites Plans over the HTTP API: no call, no user in this tab, yet
    # once the page has synced the edit, the subscriber hears of it and the state shows the new text.
    seen = tabwire.notifications.count(updated)
    tiddlywiki.put_tiddler("Plans", text="Rewritten elsewhere")
    assert tiddlywiki.tiddler("Plans")["text"] == "Rewritten elsewhere"

    async def state_shows_the_wikis_text() -> bool:
        state = json.loads((await tabwire.session.read_resource(uri)).contents[0].text)["state"]["tiddlywiki"]
        shown = next((t["text"] for t in state["open_tiddlers"] if t["title"] == "Plans"), None)
        return shown == tiddlywiki.tiddler("Plans")["text"]

    await wait_for(lambda: tabwire.notifications.count(updated) > seen, timeout=10, what="resources/updated after the HTTP edit")
    await wait_for(state_shows_the_wikis_text, timeout=10, what="the state to show the text stored over HTTP")

"""End to end: the tiddlywiki adapter creates, searches and opens tiddlers in a real TiddlyWiki 5.4.1 server,
checked through TiddlyWiki's own HTTP API (`/recipes/default/tiddlers.json`, `/recipes/default/tiddlers/<title>`).
The body editor lives in an `<iframe>` (the `frame` step); titles with quotes and brackets, and tags with
spaces and quotes (added one by one through TiddlyWiki's tag picker by a `for_each` over `items`), exercise
the safe interpolation of arguments into selectors.
"""

from __future__ import annotations

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

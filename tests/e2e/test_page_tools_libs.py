"""Issue 31's last libraries through the page tools: Draft.js (caret-insert, select-then-format, replace,
clear), SortableJS (a sortable list and a two-column kanban dragged by `page_act` `drag`) and Monaco (exact
read-back and selection). Real Chromium, the real extension, each library from npm bundled by
scripts/bundle-input-fixtures.mjs; the oracle is the library's own API in the page (Draft's EditorState,
Sortable's `toArray()`, Monaco's model), read through DevTools, never through our tools.
"""

from __future__ import annotations

import pytest

from conftest import run_cli
from test_input import input_site  # noqa: F401 - a fixture
from test_page_tools_input import open_input_page, tabwire_command  # noqa: F401 - fixtures

pytestmark = pytest.mark.anyio

OLD = "old text\nsecond old line"


async def test_draft_js_takes_text_at_the_caret_a_bold_selection_a_fill_and_a_clear(
    open_input_page, tabwire_command, input_site  # noqa: F811
):
    agent, browser, page = await open_input_page("lib.html?lib=draft")
    field = agent.ref(await agent.snapshot(), r'^textbox e\d+ "Body"')
    assert await browser.cdp.evaluate(page, "fixture.text()") == OLD
    # Text at the end, and after a given text: the rest stays.
    await agent.ok("page_act", ref=field, action="type", value=" tail", at="end")
    assert await browser.cdp.evaluate(page, "fixture.text()") == OLD + " tail"
    await agent.ok("page_act", ref=field, action="type", value="!", at="second")
    assert await browser.cdp.evaluate(page, "fixture.text()") == "old text\nsecond! old line tail"
    # Select, then format: Draft's ContentState has BOLD on exactly the selected word.
    await agent.ok("page_act", ref=field, action="select_text", value="text")
    await agent.ok("page_act", action="press", key="Mod+b")
    assert await browser.cdp.evaluate(page, "fixture.bold()") == ["text"]
    assert await browser.cdp.evaluate(page, "fixture.text()") == "old text\nsecond! old line tail"
    # Replacing the whole text, paragraphs and an empty one included, lands in Draft's EditorState with
    # synthetic input: text as Chromium inserts it (`beforeinput`, then `textInput`, which Draft takes
    # through React's onBeforeInput), each line break and the clear as their keys (Enter, Backspace).
    # The editing commands alone changed Draft's DOM behind React: the page showed the new text, its
    # model held another, and the answer said "filled" (issue 31).
    answer = await agent.ok("page_act", ref=field, action="fill", value="brand new\n\nthird para")
    assert await browser.cdp.evaluate(page, "fixture.text()") == "brand new\n\nthird para", answer
    await agent.ok("page_act", ref=field, action="type", value="\nlast", at="end")
    assert await browser.cdp.evaluate(page, "fixture.text()") == "brand new\n\nthird para\nlast"
    await agent.ok("page_act", ref=field, action="clear")
    assert await browser.cdp.evaluate(page, "fixture.text()") == ""
    # Draft keeps working after them: typed text still reaches its model.
    await agent.ok("page_act", ref=field, action="type", value="again")
    assert await browser.cdp.evaluate(page, "fixture.text()") == "again"
    # With trusted input granted, the browser's own keys do the same.
    run_cli(tabwire_command, "allow", "--trusted-input", input_site.origin)
    agent, browser, page = await open_input_page("lib.html?lib=draft")
    field = agent.ref(await agent.snapshot(), r'^textbox e\d+ "Body"')
    await agent.ok("page_act", ref=field, action="fill", value="brand new\nsecond line")
    assert await browser.cdp.evaluate(page, "fixture.text()") == "brand new\nsecond line"
    await agent.ok("page_act", ref=field, action="clear")
    assert await browser.cdp.evaluate(page, "fixture.text()") == ""


async def test_sortablejs_reorders_a_list_and_moves_a_kanban_card_to_the_other_column(
    open_input_page  # noqa: F811
):
    agent, browser, page = await open_input_page("lib.html?lib=sortable")
    lines = await agent.snapshot()
    lists = await browser.cdp.evaluate(page, "fixture.lists()")
    assert lists == {"steps": ["plan", "build", "ship"], "todo": ["card-1", "card-2"], "doing": ["card-3"]}
    # The last step goes before the first.
    answer = await agent.ok("page_act", ref=agent.ref(lines, r'^listitem e\d+.*"?Ship'), action="drag", to=agent.ref(lines, r'^listitem e\d+.*"?Plan'))
    assert (await browser.cdp.evaluate(page, "fixture.lists()"))["steps"] == ["ship", "plan", "build"], answer
    # A card goes to the other column (onto its empty space, under its card). The column is a plain list
    # that nothing marks as a drop target (SortableJS marks an item draggable only once it is pressed):
    # named for people, it has a ref (TodoMVC's unnamed lists of undragged items have none).
    lines = await agent.snapshot()
    doing = agent.ref(lines, r'^list e\d+ "Doing"')
    answer = await agent.ok("page_act", ref=agent.ref(lines, r'^listitem e\d+.*"?Write docs'), action="drag", to=doing)
    lists = await browser.cdp.evaluate(page, "fixture.lists()")
    assert lists["todo"] == ["card-2"] and lists["doing"] == ["card-3", "card-1"], (lists, answer)


async def test_monaco_reads_back_exactly_and_types_over_a_selection_made_with_its_keys(
    open_input_page  # noqa: F811
):
    agent, browser, page = await open_input_page("lib.html?lib=monaco")
    field = agent.ref(await agent.snapshot(), r"^textbox e\d+")
    # Text at both ends, each read back from the lines Monaco draws; the model holds exactly it.
    await agent.ok("page_act", ref=field, action="type", value=" tail", at="end")
    await agent.ok("page_act", ref=field, action="type", value="head ", at="start")
    assert await browser.cdp.evaluate(page, "fixture.text()") == "head " + OLD + " tail"
    # A substring (its second occurrence) selected in Monaco's model, then typed over: exactly it goes.
    await agent.ok("page_act", ref=field, action="select_text", value="old", nth=2)
    await agent.ok("page_act", ref=field, action="type", value="new")
    assert await browser.cdp.evaluate(page, "fixture.text()") == "head old text\nsecond new line tail"
    # Text after a given text.
    await agent.ok("page_act", ref=field, action="type", value="!", at="second")
    assert await browser.cdp.evaluate(page, "fixture.text()") == "head old text\nsecond! new line tail"
    # Replace all of it, with a tab and an indented line, then clear it.
    await agent.ok("page_act", ref=field, action="fill", value="def f():\n\treturn 1\n    # done")
    assert await browser.cdp.evaluate(page, "fixture.text()") == "def f():\n\treturn 1\n    # done"
    await agent.ok("page_act", ref=field, action="clear")
    assert await browser.cdp.evaluate(page, "fixture.text()") == ""

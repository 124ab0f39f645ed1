"""Issue 31 through the page tools: the caret, selections, text typed at the caret, read-back of every
edit, a textarea's lines, and the changes an act's answer shows (late ones, and the page's own since the
model last looked). Real Chromium, the real extension, the input fixtures' real editors (CodeMirror 6,
ProseMirror, Lexical, Quill, Monaco) and tests/fixtures/input/edit.html; the oracle is the page's own
state (the editor's model API, the field's value) read through DevTools, never through our tools.
"""

from __future__ import annotations

import re

import pytest

from harness.mcp_client import error_codes_in
from test_input import input_site  # noqa: F401 - a fixture
from test_page_tools_input import open_input_page, tabwire_command  # noqa: F401 - fixtures

pytestmark = pytest.mark.anyio

NOTES = "line one\n    indented two\n\tthird"
OLD = "old text\nsecond old line"


async def test_a_textarea_keeps_its_lines_and_takes_text_at_the_caret(
    open_input_page  # noqa: F811
):
    agent, browser, page = await open_input_page("edit.html")
    lines = await agent.snapshot()
    notes = agent.ref(lines, r'^textbox e\d+ "Notes"')
    # The snapshot shows the lines and the indentation (escaped), page_read of the ref all of it as it is.
    assert any('="line one\\n    indented two\\n\tthird"' in line for line in lines), lines
    read = await agent.ok("page_read", ref=notes)
    assert NOTES in read, read

    # Text at the end, after a given text, and over a selection: the rest stays.
    await agent.ok("page_act", ref=notes, action="type", value="\nfourth", at="end")
    assert await browser.cdp.evaluate(page, "fixture.notes()") == NOTES + "\nfourth"
    await agent.ok("page_act", ref=notes, action="type", value=" (1)", at="line one")
    await agent.ok("page_act", ref=notes, action="select_text", value="two")
    await agent.ok("page_act", ref=notes, action="type", value="2")
    assert await browser.cdp.evaluate(page, "fixture.notes()") == "line one (1)\n    indented 2\n\tthird\nfourth"
    # The caret at the start, and a printable key typed there.
    await agent.ok("page_act", ref=notes, action="caret", at="start")
    await agent.ok("page_act", ref=notes, action="press", key="Shift+x")
    assert (await browser.cdp.evaluate(page, "fixture.notes()")).startswith("Xline one (1)")

    # A text that is not there, and a third occurrence of one that is there twice, are errors.
    out = await agent.call("page_act", ref=notes, action="select_text", value="nowhere")
    assert out.is_error and error_codes_in(out.text)[:1] == ["ELEMENT_NOT_FOUND"], out
    out = await agent.call("page_act", ref=notes, action="caret", at="in", nth=3)
    assert out.is_error and error_codes_in(out.text)[:1] == ["ELEMENT_NOT_FOUND"] and "occurrence 3 of" in out.text, out


async def test_an_edit_that_does_not_stick_is_an_error_saying_what_the_field_holds(
    open_input_page, tabwire  # noqa: F811
):
    agent, browser, page = await open_input_page("edit.html")
    field = agent.ref(await agent.snapshot(), r'^textbox e\d+ "Stubborn"')
    for args in ({"action": "fill", "value": "new"}, {"action": "type", "value": "!", "at": "end"}, {"action": "clear"}):
        out = await agent.call("page_act", ref=field, **args)
        assert out.is_error and error_codes_in(out.text)[:1] == ["NO_EFFECT"], (args, out)
        # What it holds, and how to turn trusted input on (this origin has no grant).
        assert 'holds "keep me"' in out.text and "tabwire allow --trusted-input" in out.text, (args, out)
        assert not out.text.startswith(("filled", "typed", "cleared")), out
    assert await browser.cdp.evaluate(page, "fixture.stubborn()") == "keep me"


async def test_an_editor_that_changed_only_whitespace_did_not_take_the_edit(
    open_input_page  # noqa: F811
):
    """The read-back of an editor compares its text exactly but for what rendering changes (a no-break
    space, paragraph breaks): two spaces collapsed into one is an edit that did not stick."""
    agent, browser, page = await open_input_page("edit.html")
    editor = agent.ref(await agent.snapshot(), r'^textbox e\d+ "Squeezer"')
    out = await agent.call("page_act", ref=editor, action="fill", value="two  spaces")
    assert out.is_error and error_codes_in(out.text)[:1] == ["NO_EFFECT"], out
    assert 'holds "two spaces"' in out.text, out
    assert await browser.cdp.evaluate(page, "fixture.squeezer()") == "two spaces"
    # What the editor keeps as it is passes, and text typed at the caret is checked the same way.
    await agent.ok("page_act", ref=editor, action="fill", value="one space")
    assert await browser.cdp.evaluate(page, "fixture.squeezer()") == "one space"
    out = await agent.call("page_act", ref=editor, action="type", value="  more", at="end")
    assert out.is_error and error_codes_in(out.text)[:1] == ["NO_EFFECT"], out
    assert await browser.cdp.evaluate(page, "fixture.squeezer()") == "one space more"


@pytest.mark.parametrize("editor", ("codemirror", "prosemirror", "lexical", "quill"))
async def test_rich_editors_take_text_at_the_caret_and_over_a_selection(
    open_input_page, editor  # noqa: F811
):
    agent, browser, page = await open_input_page(f"lib.html?lib={editor}")
    field = agent.ref(await agent.snapshot(), r"^textbox e\d+")
    assert await browser.cdp.evaluate(page, "fixture.text()") == OLD
    await agent.ok("page_act", ref=field, action="type", value=" tail", at="end")
    assert await browser.cdp.evaluate(page, "fixture.text()") == OLD + " tail"
    await agent.ok("page_act", ref=field, action="select_text", value="second")
    await agent.ok("page_act", ref=field, action="type", value="2nd")
    assert await browser.cdp.evaluate(page, "fixture.text()") == "old text\n2nd old line tail"
    await agent.ok("page_act", ref=field, action="type", value="!", at="old", nth=2)
    assert await browser.cdp.evaluate(page, "fixture.text()") == "old text\n2nd old! line tail"
    await agent.ok("page_act", ref=field, action="caret", at="start")
    await agent.ok("page_act", action="press", key="Shift+y")
    assert await browser.cdp.evaluate(page, "fixture.text()") == "Yold text\n2nd old! line tail"
    if editor in ("prosemirror", "quill"):
        # Select, then format: the rich editors' bold key acts on the selected word alone.
        await agent.ok("page_act", ref=field, action="select_text", value="text")
        await agent.ok("page_act", action="press", key="Mod+b")
        assert await browser.cdp.evaluate(page, "[...document.querySelectorAll('#editor strong')].map(e => e.textContent)") == ["text"]
        assert await browser.cdp.evaluate(page, "fixture.text()") == "Yold text\n2nd old! line tail"


async def test_an_acts_answer_has_the_changes_shortly_after_it_and_those_the_page_made_by_itself(
    open_input_page  # noqa: F811
):
    agent, browser, page = await open_input_page("edit.html")
    lines = await agent.snapshot()
    # Short text without letters that is the page's state is in the snapshot.
    assert any("[ ]:" in line for line in lines), lines
    # The page changes by itself after the model's snapshot ...
    await browser.cdp.evaluate(page, "fixture.kernelStarts()")
    # ... and Run's effect comes 150 ms after the click, while the cell shows it is busy.
    answer = await agent.ok("page_act", ref=agent.ref(lines, r'^button e\d+ "Run"'), action="click")
    added = [line for line in answer.splitlines() if line.startswith("+")]
    assert "also changed by itself" in answer and any("Kernel idle" in line for line in added), answer
    assert any("[1]:" in line for line in added) and "[*]:" not in answer, answer
    assert any(re.search(r'button e\d+ "Next"', line) and "disabled" not in line for line in added), answer


async def test_drag_moves_a_card_html5_a_sorted_item_and_an_svg_node_by_pointer(
    open_input_page  # noqa: F811
):
    agent, browser, page = await open_input_page("drag.html")
    lines = await agent.snapshot()
    # What is dragged and where it drops get refs, with their ARIA states.
    card = agent.ref(lines, r"^draggable e\d+")
    done = agent.ref(lines, r'"Done".*drop target')
    third = agent.ref(lines, r'^listitem e\d+ grabbable: "Third"|^listitem e\d+.*Third')
    first = agent.ref(lines, r'^listitem e\d+.*First')
    node = agent.ref(lines, r'^group e\d+ "Node A"')
    slot = agent.ref(lines, r'^group e\d+ "Slot"')

    # HTML5 drag and drop: the card's DataTransfer reaches the column's drop.
    answer = await agent.ok("page_act", ref=card, action="drag", to=done)
    assert await browser.cdp.evaluate(page, "fixture.column('done')") == ["Card A"], answer
    assert "Card A" in answer, answer
    # A column that highlights under the drag but takes no drop (the card dimmed and back, its style
    # attribute all that differs): nothing lasting changed, so the drag did not happen for the page.
    archive = agent.ref(lines, r'"Archive".*drop target')
    out = await agent.call("page_act", ref=agent.ref(lines, r'^draggable e\d+.*Card B'), action="drag", to=archive)
    assert out.is_error and error_codes_in(out.text)[:1] == ["NO_EFFECT"], out
    assert not out.text.startswith("dragged"), out
    assert await browser.cdp.evaluate(page, "fixture.column('todo')") == ["Card B"], out
    assert await browser.cdp.evaluate(page, "document.querySelector('#card-b').style.opacity") == "1", out
    # Pointer events only: the third item goes before the first.
    await agent.ok("page_act", ref=third, action="drag", to=first)
    assert await browser.cdp.evaluate(page, "fixture.order()") == ["Third", "First", "Second"]
    # An SVG node follows the pointer onto the slot.
    await agent.ok("page_act", ref=node, action="drag", to=slot)
    assert await browser.cdp.evaluate(page, "fixture.nodeAt()") == "translate(280,90)"
    # A drag the page does not take (a heading onto a heading) is an error, not success.
    out = await agent.call("page_act", selector="h2", action="drag", to="h3")
    assert out.is_error and error_codes_in(out.text)[:1] == ["NO_EFFECT"], out

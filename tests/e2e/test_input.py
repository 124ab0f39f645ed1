"""End to end: input a real widget accepts. Headless Chromium with the real extension drives the input
fixtures (tests/fixtures/input) through the test adapter tests/fixtures/input/adapters/input.json, each page
running the REAL library from npm (CodeMirror 6, ProseMirror with its example setup, Lexical, Quill, Monaco,
React with react-select and a Radix dropdown menu), bundled offline by scripts/bundle-input-fixtures.mjs
into the cache (scripts/test-env.sh).

What each test checks, through the library's own API in the page (DevTools), never through our tools:
- `fill` with multi-line text holding quotes, `<`, `&`, a tab and non-ASCII lands exactly in each editor's
  model and survives the next step (a click elsewhere); `clear` empties it;
- a fill followed at once by a click, in one call, on an editor whose model follows a MutationObserver;
- react-select and a Radix menu, which open on the press: the option or item is chosen, the app's state shows
  it; a disabled Radix item is refused;
- chords carry `key`, `code`, `keyCode` and the modifier flags on every event;
- a click's events have the fields and the order Chromium gives them, the focus moves as on a press;
- a covered button, a disabled one and a field that refuses edits give their typed errors.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import CACHE, FIXTURES, _static_server
from harness.mcp_client import error_codes_in
from harness.static_server import StaticServer
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

INPUT_FIXTURES = FIXTURES / "input"
BUNDLES = Path(os.environ.get("TABWIRE_INPUT_FIXTURES") or CACHE / "input-fixtures" / "dist")
EDITORS = ("codemirror", "prosemirror", "lexical", "quill", "monaco")
# Quotes, markup characters, a tab, a blank line, non-ASCII and an emoji outside the BMP.
TEXT = 'first "quoted" line <b>&amp; \'single\' ünïcødé ✓ 😀\n\tindented with a tab\n\nafter a blank line & <end>'


@pytest.fixture
def input_site(request, tmp_path: Path):
    """The input fixture pages under /plain/input/, their library bundles (from the cache) under lib/."""
    if not (BUNDLES / "codemirror.js").is_file():
        pytest.fail(f"the input fixtures' bundles are missing in {BUNDLES}: run ./test.sh (scripts/test-env.sh)", pytrace=False)
    root = tmp_path / "site"
    (root / "input").mkdir(parents=True)
    for page in INPUT_FIXTURES.iterdir():
        if page.suffix in (".html", ".js"):
            (root / "input" / page.name).symlink_to(page)
    (root / "input" / "lib").symlink_to(BUNDLES)
    yield from _static_server(request, tmp_path, root, "input site")


@pytest.fixture
def tabwire_command(tabwire_command):
    return tabwire_command.without_adapter_match().with_adapters(INPUT_FIXTURES / "adapters")


async def open_fixture(tabwire, browser, site: StaticServer, page: str):
    """Open the fixture page in the browser; its tab id and its DevTools target, once it is ready."""
    url = site.url("plain", f"input/{page}")
    out = await tabwire.browser_open(url)
    assert not out.is_error and out.structured.get("tools"), out
    target = await browser.cdp.wait_for_page(url)
    await wait_for(
        lambda: browser.cdp.evaluate(target, "document.body.dataset.ready === 'yes'"),
        timeout=20,
        what=f"{page} to start its app",
    )
    return out.structured["tab_id"], target


@pytest.mark.parametrize("editor", EDITORS)
async def test_fill_lands_exactly_in_a_rich_editors_model(tabwire, launch_chromium, extension_dir, input_site, editor):
    browser = await launch_chromium(extension_dir=extension_dir)
    tab, page = await open_fixture(tabwire, browser, input_site, f"lib.html?lib={editor}")
    assert await browser.cdp.evaluate(page, "fixture.text()") == "old text\nsecond old line"

    out = await tabwire.call_ok("input_fill_editor", {"text": TEXT, "tab_id": tab})
    # What Save read from the model after the click (the next step), and the model now.
    assert out.structured["saved"] == TEXT, out
    assert await browser.cdp.evaluate(page, "fixture.text()") == TEXT

    # A second fill replaces the whole text; clear empties the editor.
    out = await tabwire.call_ok("input_fill_editor", {"text": "x = 1", "tab_id": tab})
    assert await browser.cdp.evaluate(page, "fixture.text()") == "x = 1", out
    out = await tabwire.call_ok("input_clear_editor", {"tab_id": tab})
    assert await browser.cdp.evaluate(page, "fixture.text()") == "", out


@pytest.mark.parametrize("editor", ("codemirror", "prosemirror", "lexical", "quill", "monaco"))
async def test_adapter_steps_type_at_the_caret_and_over_a_selection(tabwire, launch_chromium, extension_dir, input_site, editor):
    browser = await launch_chromium(extension_dir=extension_dir)
    tab, page = await open_fixture(tabwire, browser, input_site, f"lib.html?lib={editor}")
    out = await tabwire.call_ok("input_append_to_editor", {"text": " & more", "tab_id": tab})
    assert out.structured["saved"] == "old text\nsecond old line & more", out
    assert await browser.cdp.evaluate(page, "fixture.text()") == "old text\nsecond old line & more"
    # Monaco's selection lives in its own model: its keys select the word there.
    await tabwire.call_ok("input_replace_word", {"word": "old", "with": "new", "tab_id": tab})
    assert await browser.cdp.evaluate(page, "fixture.text()") == "old text\nsecond new line & more"


async def test_an_adapter_drag_step_moves_a_card_and_one_the_page_ignores_is_an_error(
    tabwire, launch_chromium, extension_dir, input_site
):
    browser = await launch_chromium(extension_dir=extension_dir)
    tab, page = await open_fixture(tabwire, browser, input_site, "drag.html")
    await tabwire.call_ok("input_move_card", {"id": "card-b", "tab_id": tab})
    assert await browser.cdp.evaluate(page, "fixture.column('done')") == ["Card B"]
    # A heading is no card: dragging it changes nothing.
    out = await tabwire.call("input_move_card", {"id": "board-title", "tab_id": tab})
    assert out.is_error and error_codes_in(out.text)[:1] == ["NO_EFFECT"], out


async def test_a_fill_then_a_click_in_one_call_reaches_an_editor_synced_by_a_mutation_observer(
    tabwire, launch_chromium, extension_dir, input_site
):
    browser = await launch_chromium(extension_dir=extension_dir)
    tab, page = await open_fixture(tabwire, browser, input_site, "mirror.html")
    out = await tabwire.call_ok("input_run_cell", {"code": "print(6 * 7)", "tab_id": tab})
    assert out.structured == {"output": "ran: print(6 * 7)"}, out
    # Run redrew the editor from its model: the typed code is still there.
    assert await browser.cdp.evaluate(page, "fixture.text()") == "print(6 * 7)"
    assert await browser.cdp.evaluate(page, "document.querySelector('#editor').innerText") == "print(6 * 7)"


async def test_react_select_opens_on_the_press_and_takes_the_option(tabwire, launch_chromium, extension_dir, input_site):
    browser = await launch_chromium(extension_dir=extension_dir)
    tab, page = await open_fixture(tabwire, browser, input_site, "lib.html?lib=react-select")
    out = await tabwire.call_ok("input_choose_flavour", {"label": "Strawberry", "tab_id": tab})
    assert out.structured == {"chosen": "Strawberry"}, out
    assert await browser.cdp.evaluate(page, "fixture.state()") == {"value": "strawberry", "label": "Strawberry"}
    out = await tabwire.call_ok("input_choose_flavour", {"label": "Vanilla", "tab_id": tab})
    assert await browser.cdp.evaluate(page, "fixture.state().value") == "vanilla", out


async def test_a_radix_menu_opens_on_the_press_and_runs_the_item(tabwire, launch_chromium, extension_dir, input_site):
    browser = await launch_chromium(extension_dir=extension_dir)
    tab, page = await open_fixture(tabwire, browser, input_site, "lib.html?lib=radix")
    out = await tabwire.call_ok("input_run_action", {"name": "Duplicate", "tab_id": tab})
    assert out.structured == {"action": "Duplicate"}, out
    assert await browser.cdp.evaluate(page, "fixture.state()") == "Duplicate"
    # The menu closed after the choice, as after a person's; it opens again for the next.
    assert await browser.cdp.evaluate(page, "document.querySelector('[role=menu]') === null")
    out = await tabwire.call_ok("input_run_action", {"name": "Archive", "tab_id": tab})
    assert await browser.cdp.evaluate(page, "fixture.state()") == "Archive", out

    out = await tabwire.call("input_choose_disabled_action", {"tab_id": tab})
    assert out.is_error and error_codes_in(out.text)[:1] == ["NOT_ACTIONABLE"], out
    assert "is disabled" in out.text and "Delete" in out.text, out
    assert await browser.cdp.evaluate(page, "fixture.state()") == "Archive"


def keys(log: list[dict]) -> list[str]:
    """Each event as `type key code keyCode charCode` and its modifier flags (S C A M)."""
    flags = lambda e: "".join(f for f, on in (("S", e["shift"]), ("C", e["ctrl"]), ("A", e["alt"]), ("M", e["meta"])) if on)
    return [f"{e['type']} {e['key']} {e['code']} {e['keyCode']} {e['charCode']} {flags(e)}".rstrip() for e in log]


async def test_chords_carry_key_code_and_modifier_flags(tabwire, launch_chromium, extension_dir, input_site):
    browser = await launch_chromium(extension_dir=extension_dir)
    tab, page = await open_fixture(tabwire, browser, input_site, "keys.html")
    await tabwire.call_ok("input_press_chords", {"tab_id": tab})
    log = await browser.cdp.evaluate(page, "fixture.log()")
    # This Chromium runs on Linux: Mod is Control.
    assert keys(log) == [
        "keydown Shift ShiftLeft 16 0 S",
        "keydown Enter Enter 13 0 S",
        "keypress Enter Enter 13 13 S",
        "keyup Enter Enter 13 0 S",
        "keyup Shift ShiftLeft 16 0",
        "keydown Control ControlLeft 17 0 C",
        "keydown a KeyA 65 0 C",
        "keyup a KeyA 65 0 C",
        "keyup Control ControlLeft 17 0",
        "keydown Meta MetaLeft 91 0 M",
        "keydown Enter Enter 13 0 M",
        "keyup Enter Enter 13 0 M",
        "keyup Meta MetaLeft 91 0",
        "keydown Alt AltLeft 18 0 A",
        "keydown ArrowUp ArrowUp 38 0 A",
        "keyup ArrowUp ArrowUp 38 0 A",
        "keyup Alt AltLeft 18 0",
        "keydown Control ControlLeft 17 0 C",
        "keydown s KeyS 83 0 C",
        "keyup s KeyS 83 0 C",
        "keyup Control ControlLeft 17 0",
        "keydown Shift ShiftLeft 16 0 S",
        "keydown & Digit7 55 0 S",
        "keypress & Digit7 38 38 S",
        "keyup & Digit7 55 0 S",
        "keyup Shift ShiftLeft 16 0",
        "keydown Escape Escape 27 0",
        "keyup Escape Escape 27 0",
    ]
    assert all(e["bubbles"] and e["cancelable"] and e["focused"] for e in log), log
    assert {e["location"] for e in log if e["key"] in ("Shift", "Control", "Alt", "Meta")} == {1}
    assert {e["which"] for e in log if e["type"] != "keypress"} == {e["keyCode"] for e in log if e["type"] != "keypress"}


# What a page reads from a pointer or mouse event, compared between Chromium's own input and ours.
FIELDS = ("type", "target", "constructor", "button", "buttons", "detail", "pointerId", "pointerType", "isPrimary",
          "bubbles", "cancelable", "composed", "view", "atCentre", "focused")


def shape(seen: list[dict]) -> list[tuple]:
    return [tuple(e.get(f) for f in FIELDS) for e in seen]


async def real_press(cdp, page, selector: str, clicks: int) -> None:
    """Chromium's own (trusted) input through DevTools: the pointer moves from #field onto `selector`'s
    centre and presses `clicks` times."""
    x, y = await cdp.evaluate(
        page, f"(r => [r.left + r.width / 2, r.top + r.height / 2])(document.querySelector('{selector}').getBoundingClientRect())"
    )
    await cdp.send(page, "Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
    for n in range(1, clicks + 1):
        for kind, buttons in (("mousePressed", 1), ("mouseReleased", 0)):
            await cdp.send(page, "Input.dispatchMouseEvent",
                           {"type": kind, "x": x, "y": y, "button": "left", "buttons": buttons, "clickCount": n})


async def move_real_pointer_to_field(cdp, page) -> None:
    x, y = await cdp.evaluate(
        page, "(r => [r.left + r.width / 2, r.top + r.height / 2])(document.querySelector('#field').getBoundingClientRect())"
    )
    await cdp.send(page, "Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
    await cdp.evaluate(page, "document.querySelector('#field').focus(), fixture.clear()")


async def test_a_click_and_a_double_click_are_what_chromiums_own_input_dispatches(
    tabwire, launch_chromium, extension_dir, input_site
):
    browser = await launch_chromium(extension_dir=extension_dir)
    tab, page = await open_fixture(tabwire, browser, input_site, "actions.html")
    cdp = browser.cdp
    for tool, clicks in (("input_click_probe", 1), ("input_dblclick_probe", 2)):
        # Chromium's own input, from the field to the probe.
        await move_real_pointer_to_field(cdp, page)
        await real_press(cdp, page, "#probe", clicks)
        real = await cdp.evaluate(page, "fixture.seen()")
        # Ours, from the field to the probe.
        await tabwire.call_ok("input_point_at_field", {"tab_id": tab})
        await cdp.evaluate(page, "fixture.clear()")
        await tabwire.call_ok(tool, {"tab_id": tab})
        ours = await cdp.evaluate(page, "fixture.seen()")
        # Chromium's pointer moves in steps: its first events on the probe are moves that ours
        # (one move) has once; compare from the first boundary event on.
        start = lambda seen: next(i for i, e in enumerate(seen) if e["type"] == "pointerover")
        assert shape(ours[start(ours):]) == shape(real[start(real):]), (
            tool, "\n".join(map(str, shape(ours))), "\n".join(map(str, shape(real))))
        assert [e["type"] for e in ours].count("click") == clicks, ours
        await cdp.send(page, "Input.dispatchMouseEvent", {"type": "mouseMoved", "x": 0, "y": 0})


async def test_what_a_person_could_not_do_is_a_typed_error(tabwire, launch_chromium, extension_dir, input_site):
    browser = await launch_chromium(extension_dir=extension_dir)
    tab, page = await open_fixture(tabwire, browser, input_site, "actions.html")

    out = await tabwire.call("input_click_covered", {"tab_id": tab})
    assert out.is_error and error_codes_in(out.text)[:1] == ["NOT_ACTIONABLE"], out
    assert (
        'steps[0] (click): `#covered` is covered by <div id="overlay" class="modal-backdrop"> "Please wait"' in out.text
    ), out

    out = await tabwire.call("input_click_disabled", {"tab_id": tab})
    assert out.is_error and out.text == "NOT_ACTIONABLE: steps[0] (click): `#disabled` is disabled", out

    out = await tabwire.call("input_fill_locked", {"tab_id": tab})
    assert out.is_error and out.text.startswith(
        'NO_EFFECT: steps[0] (fill): `#locked` holds "locked" after the edit, not "changed": the edit did not stick. '
        "If this page ignores synthetic input"
    ), out
    assert await browser.cdp.evaluate(page, "document.querySelector('#locked').value") == "locked"

    # An action shown only on hover (which synthetic input cannot apply) is still pressed.
    out = await tabwire.call_ok("input_remove_row", {"tab_id": tab})
    assert out.structured == {"result": "removed"} or out.text.endswith("removed"), out

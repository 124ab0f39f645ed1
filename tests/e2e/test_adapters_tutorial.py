"""End to end: the adapter written in ADAPTERS.md's tutorial, taken verbatim from the document, loaded with
`tabwire mcp --adapters DIR` and called from the MCP client against the tutorial's site
(tests/fixtures/reading-list/), checked through the site's own localStorage.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import REPO
from harness.cdp import CdpError
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

MARKER = "<!-- tutorial-adapter -->"
TOOLS = ("reading_list_add_book", "reading_list_list_books", "reading_list_remove_book")


def tutorial_adapter() -> dict:
    """The JSON block right after the tutorial marker in ADAPTERS.md."""
    doc = (REPO / "ADAPTERS.md").read_text()
    after = doc.split(MARKER, 1)[1]
    block = after.split("```json\n", 1)[1].split("\n```", 1)[0]
    return json.loads(block)


@pytest.fixture
def tabwire_command(tabwire_command, fixture_server, tmp_path: Path):
    """The tutorial adapter from a directory, plus a match for this test's server port."""
    adapters = tmp_path / "my-adapters"
    adapters.mkdir()
    (adapters / "reading_list.json").write_text(json.dumps(tutorial_adapter(), indent=2))
    return tabwire_command.serving("reading_list", fixture_server.origin).with_adapters(adapters)


async def test_tutorial_adapter_from_the_docs(tabwire, fixture_server, launch_chromium, extension_dir):
    url = fixture_server.url("plain", "reading-list/index.html")
    browser = await launch_chromium(extension_dir=extension_dir, url=url)
    await tabwire.wait_for_tools(*TOOLS)
    page = await browser.cdp.wait_for_page(url)

    async def stored() -> list[dict]:
        return json.loads(await browser.cdp.evaluate(page, "localStorage.getItem('books') || '[]'"))

    out = await tabwire.call_ok("reading_list_add_book", {"title": "Dune", "shelf": "reading", "favourite": True})
    assert out.structured == {"added": "Dune", "shelf": "reading"}, out
    out = await tabwire.call_ok("reading_list_add_book", {"title": 'The "Hobbit"', "shelf": "done"})
    assert out.structured == {"added": 'The "Hobbit"', "shelf": "done"}, out
    expected = [
        {"title": "Dune", "shelf": "reading", "favourite": True},
        {"title": 'The "Hobbit"', "shelf": "done", "favourite": False},
    ]
    assert await wait_for(lambda: stored(), timeout=5, what="the site to store both books", ignore=(CdpError,)) == expected

    out = await tabwire.call_ok("reading_list_list_books")
    assert out.structured == {"books": expected}, out

    out = await tabwire.call_ok("reading_list_remove_book", {"title": "Dune"})
    assert out.structured == {"removed": "Dune"}, out
    assert await stored() == expected[1:]

    out = await tabwire.call("reading_list_remove_book", {"title": "Dune"})
    assert out.is_error and out.text.startswith("ELEMENT_NOT_FOUND: steps[0] (within)"), out
    # A shelf the schema's enum does not list is refused before any step runs, naming the choices.
    out = await tabwire.call("reading_list_add_book", {"title": "x", "shelf": "lost"})
    assert out.is_error and out.text == (
        'INVALID_ARGS: reading_list_add_book: argument "shelf" must be one of "to-read", "reading", '
        '"done", got "lost"'
    ), out


def test_tutorial_adapter_passes_the_checker_without_warnings(tabwire_binary, tmp_path):
    """What the tutorial teaches is what `tabwire adapters check` asks for: no problem, no warning."""
    path = tmp_path / "reading_list.json"
    path.write_text(json.dumps(tutorial_adapter(), indent=2))
    out = subprocess.run([str(tabwire_binary), "adapters", "check", str(path)], capture_output=True, text=True, timeout=30)
    assert (out.returncode, out.stdout) == (0, ""), out.stdout + out.stderr

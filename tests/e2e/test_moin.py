"""End to end (issue 18): an adapter on MoinMoin 2 (PyPI; installed by scripts/test-env.sh), a wiki whose
editor is a form that POSTs and redirects. `write_page` ends on the Save click: its answer arrives once the
wiki has stored the page, so a read through the wiki's own export URL made at once shows the new text, and
a navigating search called at once in the same tab works — every round, with no sleeps.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.adapter_docs import adapter, arguments, tool

pytestmark = pytest.mark.anyio


def moin_adapter(base: str) -> dict:
    return adapter("moin", [f"{base}/*"], [
        tool("write_page", "Create or replace a wiki page's text.", [
            {"step": "navigate",
             "url": "/+modify/{{name}}?itemtype=default&contenttype=text/x.moin.wiki;charset%3Dutf-8&template="},
            {"step": "wait", "selector": "#f_content_form_data_text"},
            {"step": "fill", "selector": "#f_content_form_data_text", "value": "{{text}}"},
            {"step": "click", "selector": "#moin-save-text-button"},
            {"step": "return", "value": {"saved": "{{name}}"}},
        ], input_schema=arguments("name", "text")),
        tool("search", "Search the wiki; the names of the pages found.", [
            {"step": "navigate", "url": "/+search?q={{q}}"},
            {"step": "wait", "selector": "#moin-content", "until": "attached"},
            {"step": "read", "selector": "#moin-content", "into": "text"},
            {"step": "return", "value": "{{text}}"},
        ], input_schema=arguments("q")),
    ])


@pytest.fixture
def tabwire_command(tabwire_command, moin, tmp_path: Path):
    return tabwire_command.serving_adapter_file(moin_adapter(moin.base), tmp_path / "adapters")


async def test_write_page_is_true_when_it_answers_and_the_next_call_in_the_tab_works(
    tabwire, moin, launch_chromium, extension_dir
):
    await launch_chromium(extension_dir=extension_dir, url=moin.base + "/+search?q=x")
    await tabwire.wait_for_tools("moin_write_page", "moin_search")
    for n in range(3):
        text = f"Kettle notes, version {n}"
        out = await tabwire.call_ok("moin_write_page", {"name": "KettleNotes", "text": text})
        assert out.structured == {"saved": "KettleNotes"}, out
        assert f"The page navigated to {moin.base}/KettleNotes" in out.text, out
        # True when it arrives: the wiki's own export shows the new text at once.
        assert moin.raw("KettleNotes").replace("\r\n", "\n") == text
        out = await tabwire.call_ok("moin_search", {"q": "Kettle"})
        assert "KettleNotes" in out.structured["result"], out

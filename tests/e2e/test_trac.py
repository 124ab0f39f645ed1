"""End to end (issue 14): an adapter on Trac 1.6, a server-rendered issue tracker (PyPI; installed by
scripts/test-env.sh) whose forms POST and redirect. Its tools create a ticket and read the new id from the
page the tracker lands on, edit it through the folded "Modify Ticket" form, and report a form the tracker
refuses as a REFUSED error in the tracker's words. Effects are checked in Trac's own sqlite database.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.adapter_docs import adapter, arguments, tool

pytestmark = pytest.mark.anyio

SUBMIT = "#propertyform input[name=submit]"
REFUSAL = [
    {"step": "if", "selector": "#warning", "then": [
        {"step": "read", "selector": "#warning", "into": "why"},
        {"step": "fail", "message": "{{why}}"},
    ]},
]


def trac_adapter(base: str) -> dict:
    return adapter("trac", [f"{base}/*"], [
        tool("create_ticket", "Create a ticket; returns its id and summary as Trac shows them.", [
            {"step": "navigate", "url": "/newticket"},
            {"step": "wait", "selector": "#field-summary"},
            {"step": "fill", "selector": "#field-summary", "value": "{{summary}}"},
            {"step": "fill", "selector": "#field-description", "value": "{{description}}"},
            {"step": "click", "selector": SUBMIT, "navigates": True},
            *REFUSAL,
            {"step": "read", "read": "url:-1", "into": "id"},
            {"step": "read", "selector": "#trac-ticket-title .summary", "into": "shown"},
            {"step": "return", "value": {"id": "{{id}}", "summary": "{{shown}}"}},
        ], input_schema=arguments("summary", "description")),
        tool("edit_ticket", "Change a ticket's summary, with a comment.", [
            {"step": "navigate", "url": "/ticket/{{id}}"},
            {"step": "wait", "selector": "#comment"},
            # Unfolds "Modify Ticket": a fragment link, not a new page.
            {"step": "click", "selector": "a[href='#modify']"},
            {"step": "wait", "selector": "#field-summary", "timeout_ms": 5000},
            {"step": "fill", "selector": "#field-summary", "value": "{{summary}}"},
            {"step": "fill", "selector": "#comment", "value": "{{comment}}"},
            {"step": "click", "selector": SUBMIT, "navigates": True},
            *REFUSAL,
            {"step": "read", "selector": "#trac-ticket-title .summary", "into": "shown"},
            {"step": "return", "value": {"summary": "{{shown}}"}},
        ], input_schema=arguments("summary", "comment", id="integer")),
    ])


@pytest.fixture
def tabwire_command(tabwire_command, trac, tmp_path: Path):
    return tabwire_command.serving_adapter_file(trac_adapter(trac.base), tmp_path / "adapters")


async def test_create_edit_and_a_refused_ticket_on_trac(tabwire, trac, launch_chromium, extension_dir):
    await launch_chromium(extension_dir=extension_dir, url=trac.base + "/newticket")
    await tabwire.wait_for_tools("trac_create_ticket", "trac_edit_ticket")

    out = await tabwire.call_ok("trac_create_ticket", {"summary": "Printer on fire", "description": "Floor 3."})
    assert out.structured == {"id": "1", "summary": "Printer on fire"}, out
    assert trac.tickets() == [(1, "Printer on fire", "Floor 3.")]

    out = await tabwire.call_ok("trac_create_ticket", {"summary": "Coffee machine", "description": "Empty."})
    assert out.structured["id"] == "2", out

    out = await tabwire.call_ok("trac_edit_ticket", {"id": 1, "summary": "Printer fixed", "comment": "Toner."})
    assert out.structured == {"summary": "Printer fixed"}, out
    assert trac.tickets()[0] == (1, "Printer fixed", "Floor 3.")
    assert trac.comments(1) == ["Toner."]

    out = await tabwire.call("trac_create_ticket", {"summary": "", "description": "No summary."})
    assert out.is_error and out.structured["error"]["code"] == "REFUSED", out
    assert "Tickets must contain a summary." in out.structured["error"]["message"], out
    assert len(trac.tickets()) == 2, "the refused ticket was not stored"

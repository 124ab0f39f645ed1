"""The scripted agent of test_page_tools on real apps no adapter serves here: TiddlyWiki (create a tiddler with
text and tags; checked through its HTTP API) and MailDev (open a message, read its body, delete it; checked
through `GET /email`). The agent picks its targets from page_snapshot's lines as a model would.
"""

from __future__ import annotations

import re

import pytest

from harness.waiting import wait_for
from test_page_tools import Agent

pytestmark = pytest.mark.anyio


@pytest.fixture
def tabwire_command(tabwire_command):
    return tabwire_command.serving_page_tools_only(call_timeout_ms=8000).allowing_all_origins()


async def test_tiddlywiki_a_tiddler_with_text_and_tags(tabwire, tiddlywiki, launch_chromium, extension_dir):
    await launch_chromium(extension_dir=extension_dir)
    agent = await Agent.on_unadapted_page(tabwire, tiddlywiki.base + "/")

    async def snapshot_with(pattern: str) -> list[str]:
        seen: list[list[str]] = []

        async def shows() -> list[str] | None:
            seen[:] = [await agent.snapshot(max_chars=100_000)]
            return seen[0] if any(re.search(pattern, line.strip()) for line in seen[0]) else None

        try:
            return await wait_for(shows, timeout=15, what=f"a snapshot line matching {pattern!r}")
        except Exception as e:
            raise AssertionError("\n".join(seen[0] if seen else [])) from e

    lines = await snapshot_with(r"(?i)^button e\d+ \"new tiddler")
    await agent.ok("page_act", ref=agent.ref(lines, r"(?i)^button e\d+ \"new tiddler"), action="click")
    # The new tiddler's title field shows its default title.
    lines = await snapshot_with(r'^textbox e\d+ .*="New Tiddler"')
    await agent.ok("page_act", ref=agent.ref(lines, r'^textbox e\d+ .*="New Tiddler"'), action="fill", value="Groceries")
    text = agent.ref(lines, r"(?i)^textbox e\d+ .*text for this tiddler")
    await agent.ok("page_act", ref=text, action="fill", value="Milk, eggs and bread")
    tag = agent.ref(lines, r"(?i)^textbox e\d+ .*tag name")
    await agent.ok("page_act", ref=tag, action="fill", value="shopping")
    # TiddlyWiki re-renders the tag editor as it is typed in: its refs changed (a new snapshot has them).
    lines = await agent.snapshot(max_chars=100_000)
    await agent.ok("page_act", ref=agent.ref(lines, r'^button e\d+ "add"'), action="click")
    lines = await snapshot_with(r"(?i)^button e\d+ \"(ok|confirm)")
    await agent.ok("page_act", ref=agent.ref(lines, r"(?i)^button e\d+ \"(ok|confirm)"), action="click")

    saved = await wait_for(lambda: tiddlywiki.tiddler("Groceries"), timeout=10, what="TiddlyWiki to store Groceries")
    assert saved["text"] == "Milk, eggs and bread", saved
    assert saved.get("tags") == "shopping", saved


async def open_the_quarterly_report(agent: Agent) -> None:
    """In MailDev's inbox, the message "Quarterly report" (sent by the test) opened as a person opens it: its
    link in the list clicked, its body shown."""
    await agent.ok("page_wait", text="Quarterly report", timeout_ms=10_000)
    lines = await agent.snapshot(max_chars=100_000)
    await agent.ok("page_act", ref=agent.ref(lines, r"^link e\d+ .*Quarterly report"), action="click")
    await agent.ok("page_wait", text="The numbers are in.", timeout_ms=10_000)


async def test_maildev_open_read_and_delete_a_message(tabwire, maildev, launch_chromium, extension_dir):
    maildev.send("Alice <alice@example.com>", "Quarterly report", "The numbers are in.\nSee you Monday.")
    maildev.send("Carol <carol@example.com>", "Lunch?", "Noon at the usual place")
    await wait_for(lambda: len(maildev.emails()) == 2, timeout=10, what="MailDev to receive the messages")
    await launch_chromium(extension_dir=extension_dir)
    agent = await Agent.on_unadapted_page(tabwire, maildev.base + "/")
    await open_the_quarterly_report(agent)
    body = await agent.ok("page_read")
    assert "The numbers are in." in body and "See you Monday." in body, body

    lines = await agent.snapshot(max_chars=100_000)
    deleted = await agent.ok("page_act", ref=agent.ref(lines, r'^(button|link) e\d+ "Delete"$'), action="click")
    try:
        await wait_for(
            lambda: [e["subject"] for e in maildev.emails()] == ["Lunch?"], timeout=10, what="MailDev to delete it"
        )
    except Exception as e:
        raise AssertionError(deleted + "\n".join(lines)) from e

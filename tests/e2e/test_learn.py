"""Sites learn (issue 11): a scripted agent explores MailDev and TiddlyWiki with page tools only (no adapter is
loaded for them), writes an adapter from what page_find told it, saves it with `site_save` (first with a mistake it
fixes from the located message), and uses the new tools in the same session and in a fresh `tabwire` process; each
effect is checked through the app's own API. The saved files pass `tabwire adapters check`.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from harness.waiting import wait_for
from test_page_tools import Agent
from test_page_tools_apps import open_the_quarterly_report

pytestmark = pytest.mark.anyio


@pytest.fixture
def tabwire_command(tabwire_command):
    return tabwire_command.serving_page_tools_only(call_timeout_ms=8000).allowing_all_origins()


def user_adapters(tabwire_command) -> Path:
    """The default user adapter directory of the test's config folder."""
    return Path(tabwire_command.env["XDG_CONFIG_HOME"]) / "tabwire" / "adapters"


def adapters_check(tabwire_command, *paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(tabwire_command.binary), "adapters", "check", *map(str, paths)],
        env={**tabwire_command.env, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=30,
    )


class Learner(Agent):
    """The agent, plus what a model does to write an adapter: ask page_find for a ref's locator."""

    async def locator(self, lines: list[str], pattern: str) -> str:
        out = await self.ok("page_find", ref=self.ref(lines, pattern))
        # `e30 (link "Delete"): role=link[name="Delete"]`, the page content's last line (before its end marker)
        content = [line for line in out.rstrip().splitlines() if not line.startswith("[end ")]
        return content[-1].split("): ", 1)[1]

    async def save(self, adapter: dict | str, **more) -> object:
        return await self.call("site_save", adapter=adapter, **more)


def fix_from(message: str, adapter: dict, wrong: str, right: str) -> str:
    """What a model does with a located error: go to the path it names (and the line, for a document sent as text)
    and fix the wrong value the message quotes there."""
    m = re.search(r"adapter:(?:(\d+):\d+:)? (\S+): ", message)
    assert m, message
    path = m[2]
    assert wrong in message.split(path, 1)[1], message
    keys = re.findall(r"[^.\[\]]+", path)
    if m[1]:
        assert keys[-1] in json.dumps(adapter, indent=2).splitlines()[int(m[1]) - 1], message
    parent, node = None, adapter
    for key in keys:
        parent, node = node, node[int(key)] if key.isdigit() else node[key]
    if node == wrong:
        parent[int(keys[-1]) if keys[-1].isdigit() else keys[-1]] = right
        return path
    fixed = json.dumps(node).replace(json.dumps(wrong), json.dumps(right))
    assert fixed != json.dumps(node), (path, node)
    parent[int(keys[-1]) if keys[-1].isdigit() else keys[-1]] = json.loads(fixed)
    return path


async def test_maildev_learned_saved_and_used_again_in_a_fresh_process(
    tabwire_command, maildev, launch_chromium, extension_dir
):
    maildev.send("Alice <alice@example.com>", "Quarterly report", "The numbers are in.")
    maildev.send("Carol <carol@example.com>", "Lunch?", "Noon at the usual place")
    maildev.send("Dave <dave@example.com>", "Old newsletter", "Unsubscribe")
    await wait_for(lambda: len(maildev.emails()) == 3, timeout=10, what="MailDev to receive the messages")
    c = tabwire_command
    await launch_chromium(extension_dir=extension_dir)
    async with c.session() as tabwire:
        agent = await Learner.on_unadapted_page(tabwire, maildev.base + "/")
        await open_the_quarterly_report(agent)
        lines = await agent.snapshot(max_chars=100_000)
        delete = await agent.locator(lines, r'^(button|link) e\d+ "Delete"$')
        assert delete in ('role=link[name="Delete"]', 'role=button[name="Delete"]'), delete

        adapter = {
            "name": "inbox",
            "description": "MailDev's inbox, learned with the page tools.",
            "match": [maildev.base + "/*"],
            "test_url": maildev.base + "/",
            "tools": [
                {
                    "name": "subjects",
                    "description": "The subjects in the inbox, newest first.",
                    "annotations": {"read_only": True},
                    "steps": [
                        {"step": "wait", "selector": ".email-list .email-item", "until": "attached", "timeout_ms": 5000},
                        # The mistake: a read kind that does not exist.
                        {"step": "extract", "selector": ".email-list .email-item .title", "into": "items",
                         "fields": {"subject": {"read": "own_txt"}}},
                        {"step": "return", "value": {"subjects": "{{items}}"}},
                    ],
                },
                {
                    "name": "delete",
                    "description": "Delete the message with this subject.",
                    "annotations": {"destructive": True},
                    "input_schema": {"type": "object", "properties": {"subject": {"type": "string"}},
                                     "required": ["subject"]},
                    "steps": [
                        {"step": "within", "selector": ".email-list .email-item", "text_selector": ".title",
                         "read": "own_text", "text_equals": "{{subject}}", "timeout_ms": 5000,
                         "steps": [{"step": "click", "selector": "a"}]},
                        # The message shown is the one clicked once its subject is on the page alone.
                        {"step": "wait", "selector": 'text="{{subject}}"', "until": "visible", "timeout_ms": 5000},
                        {"step": "click", "selector": delete},
                        {"step": "return", "value": {"deleted": "{{subject}}"}},
                    ],
                },
            ],
        }
        # Sent as text, as a model writes it: the error has its line and column.
        bad = await agent.save(json.dumps(adapter, indent=2))
        assert bad.is_error and bad.structured["refusal"] == "invalid", bad
        assert bad.text.startswith("INVALID_ARGS: not saved: the adapter is not valid:"), bad
        path = fix_from(bad.text, adapter, "own_txt", "own_text")
        assert path.startswith("tools[0].steps[1]"), path  # the extract step
        assert not (user_adapters(c) / "inbox.json").exists()

        # The dry run serves the adapter to the tab for its trial, which the tab announces; a save
        # right after may find the tab still offering those tools (its two adapter pushes, the
        # trial's end and the save's, reach it together), and then nothing changes to announce. So
        # what must reach a client that lists on each notification is counted from here.
        changed = tabwire.list_changed_count()
        dry = await agent.save(adapter, dry_run=True)
        assert not dry.is_error, dry
        subjects = sorted(item["subject"] for item in dry.structured["results"][0]["result"]["subjects"])
        assert subjects == ["Lunch?", "Old newsletter", "Quarterly report"], dry
        assert not (user_adapters(c) / "inbox.json").exists()

        saved = await agent.save(adapter)
        assert not saved.is_error, saved
        assert saved.structured["file"] == str(user_adapters(c) / "inbox.json"), saved
        assert saved.structured["tools"] == ["inbox_subjects", "inbox_delete"], saved
        # Listed at once, and announced.
        assert {"inbox_subjects", "inbox_delete"} <= await tabwire.tool_names()
        await tabwire.wait_for_list_changed(changed)
        assert {"inbox_subjects", "inbox_delete"} <= await tabwire.tool_names()

        out = await tabwire.call_ok("site_call", {"tool": "inbox_delete", "args": {"subject": "Lunch?"},
                                                  "tab_id": agent.tab})
        assert out.structured == {"deleted": "Lunch?"}, out
        await wait_for(lambda: sorted(e["subject"] for e in maildev.emails()) == ["Old newsletter", "Quarterly report"],
                       timeout=10, what="MailDev to delete Lunch?")

    checked = adapters_check(c, user_adapters(c))
    assert checked.returncode == 0, checked
    assert "1 adapter file(s): 0 problem(s)" in checked.stderr, checked

    # A fresh tabwire: the adapter is loaded from the user adapter directory.
    async with c.session() as tabwire:
        opened = await tabwire.browser_open(maildev.base + "/")
        assert "inbox_delete" in opened.structured["tools"], opened
        listed = await tabwire.call_ok("inbox_subjects", {"tab_id": opened.structured["tab_id"]})
        assert sorted(s["subject"] for s in listed.structured["subjects"]) == ["Old newsletter", "Quarterly report"]
        await tabwire.call_ok("inbox_delete", {"subject": "Old newsletter", "tab_id": opened.structured["tab_id"]})
        await wait_for(lambda: [e["subject"] for e in maildev.emails()] == ["Quarterly report"], timeout=10,
                       what="MailDev to delete Old newsletter")


async def test_tiddlywiki_learned_saved_and_used(tabwire_command, tabwire, tiddlywiki, launch_chromium, extension_dir):
    c = tabwire_command
    await launch_chromium(extension_dir=extension_dir)
    opened = await tabwire.browser_open(tiddlywiki.base + "/")
    assert not opened.is_error and not opened.structured.get("tools"), opened
    agent = Learner(tabwire, opened.structured["tab_id"])
    lines = await agent.snapshot_until(r"(?i)^button e\d+ \"new tiddler")
    new = await agent.locator(lines, r"(?i)^button e\d+ \"new tiddler")
    await agent.ok("page_act", selector=new, action="click")
    lines = await agent.snapshot_until(r'^textbox e\d+ .*="New Tiddler"')
    # The title box has no locator of its own on this page (page_find says so; the snapshot shows its class), and
    # the text box is in TiddlyWiki's editor frame (indented under it), alone there.
    assert "no locator names it alone" in await agent.ok("page_find", ref=agent.ref(lines, r'^textbox e\d+ .*="New Tiddler"'))
    title = "input.tc-titlebar"
    assert any(re.match(r"\s*iframe\b", line) for line in lines), lines
    confirm = await agent.locator(lines, r"(?i)^button e\d+ \"(ok|confirm)")
    # Leave the draft as it was found.
    cancel = await agent.locator(lines, r"(?i)^button e\d+ \"(cancel|discard)")
    await agent.ok("page_act", selector=cancel, action="click")

    adapter = {
        "name": "wiki",
        "description": "TiddlyWiki, learned with the page tools.",
        "match": [tiddlywiki.base + "/*"],
        "tools": [
            {
                "name": "open_titles",
                "description": "The titles of the tiddlers open in the story river.",
                "annotations": {"read_only": True},
                "steps": [
                    {"step": "wait", "selector": new, "until": "visible", "timeout_ms": 5000},
                    {"step": "extract", "selector": ".tc-story-river .tc-tiddler-frame .tc-title", "into": "titles",
                     "fields": {"title": {"read": "text"}}},
                    {"step": "return", "value": {"titles": "{{titles}}"}},
                ],
            },
            {
                "name": "create",
                "description": "Create a tiddler with this title and text.",
                "input_schema": {"type": "object", "properties": {"title": {"type": "string"},
                                                                  "text": {"type": "string"}},
                                 "required": ["title", "text"]},
                "steps": [
                    {"step": "click", "selector": new},
                    {"step": "wait", "selector": title, "until": "visible", "timeout_ms": 5000},
                    {"step": "fill", "selector": title, "value": "{{title}}"},
                    # The mistake: a role WAI-ARIA does not have.
                    {"step": "frame", "selector": "iframe",
                     "steps": [{"step": "fill", "selector": "role=textboks", "value": "{{text}}"}]},
                    {"step": "click", "selector": confirm},
                    {"step": "return", "value": {"created": "{{title}}"}},
                ],
            },
        ],
    }
    bad = await agent.save(adapter)
    assert bad.is_error and bad.structured["refusal"] == "invalid", bad
    assert "is not a WAI-ARIA role" in bad.text, bad
    path = fix_from(bad.text, adapter, "role=textboks", "role=textbox")
    assert path == "tools[1].steps[3].steps[0].selector", path

    saved = await agent.save(adapter)
    assert not saved.is_error, saved
    assert saved.structured["results"][0]["ok"], saved
    out = await tabwire.call_ok("wiki_create", {"title": "Groceries", "text": "Milk and bread", "tab_id": agent.tab})
    assert out.structured == {"created": "Groceries"}, out
    stored = await wait_for(lambda: tiddlywiki.tiddler("Groceries"), timeout=10, what="TiddlyWiki to store it")
    assert stored["text"] == "Milk and bread", stored
    titles = await tabwire.call_ok("wiki_open_titles", {"tab_id": agent.tab})
    assert "Groceries" in [t["title"] for t in titles.structured["titles"]], titles

    checked = adapters_check(c, user_adapters(c) / "wiki.json")
    assert checked.returncode == 0, checked

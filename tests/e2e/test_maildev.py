"""End to end: the maildev adapter lists the inbox (through its `fetch` step on MailDev's own JSON API),
opens a message and deletes one in a real MailDev 2.2.1, with mail delivered to it over SMTP (smtplib) from
distinct senders and every effect checked through MailDev's REST API (`GET /email`, `GET /email/:id`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.adapter_docs import adapter, arguments, tool
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

TOOLS = ("maildev_list_inbox", "maildev_open_message", "maildev_delete_message")


@pytest.fixture
def tabwire_command(tabwire_command, maildev, tmp_path: Path):
    """Serve the maildev adapter on this test's MailDev web port, and a probe adapter whose `fetch` steps
    put arguments into MailDev's API paths."""
    tabwire_command.serving("maildev", maildev.base)
    probe_dir = tmp_path / "adapters"
    probe_dir.mkdir()
    (probe_dir / "probe.json").write_text(json.dumps(fetch_probe(maildev.base)))
    return tabwire_command.with_adapters(probe_dir)


def fetch_probe(base: str) -> dict:
    return adapter("probe", [f"{base}/*"], [
        tool("get_email", "One message through GET /email/<id> (MailDev marks it read).", [
            {"step": "fetch", "url": "/email/{{id}}", "into": "email"},
            {"step": "return", "value": {"id": "{{email.id}}", "subject": "{{email.subject}}"}},
        ], input_schema=arguments("id")),
        tool("home_as_json", "MailDev's HTML page, wrongly read as JSON.", [{"step": "fetch", "url": "/", "into": "home"}]),
    ])


async def test_list_open_and_delete_messages(tabwire, maildev, launch_chromium, extension_dir):
    maildev.send("Alice <alice@example.com>", "Quarterly report", "The numbers are in.\nSee you Monday.")
    maildev.send("Carol <carol@example.com>", "Lunch?", "Noon at the usual place")
    maildev.send("dave@example.com", "No display name", "Just an address")
    await wait_for(lambda: len(maildev.emails()) == 3, timeout=10, what="MailDev to receive the messages")

    await launch_chromium(extension_dir=extension_dir, url=maildev.base + "/")
    await tabwire.wait_for_tools(*TOOLS)

    messages = (await tabwire.call_ok("maildev_list_inbox")).structured["messages"]
    api = {m["id"]: m for m in maildev.emails()}
    assert sorted(m["id"] for m in messages) == sorted(api), (messages, api)
    for message in messages:
        email = api[message["id"]]
        assert message["subject"] == email["subject"], (message, email)
        assert (message["from"], message["from_name"]) == (email["from"][0]["address"], email["from"][0]["name"])
        assert message["date"] == email["time"], (message, email)
        assert message["read"] is False and email["read"] is False, (message, email)
        assert [t["address"] for t in message["to"]] == ["bob@example.com"], message
    assert {m["subject"]: (m["from"], m["from_name"]) for m in messages} == {
        "Quarterly report": ("alice@example.com", "Alice"),
        "Lunch?": ("carol@example.com", "Carol"),
        "No display name": ("dave@example.com", ""),
    }, messages
    assert not any(m["read"] for m in maildev.emails()), "listing the inbox must not mark anything read"

    out = await tabwire.call_ok("maildev_open_message", {"subject": "Quarterly report"})
    report = next(m for m in maildev.emails() if m["subject"] == "Quarterly report")
    assert out.structured["body"] == maildev.email(report["id"])["text"].strip(), out
    assert "alice@example.com" in out.structured["from"] and "Alice" in out.structured["from"], out
    assert report["read"] is True, "opening the message should mark it read in MailDev"
    messages = (await tabwire.call_ok("maildev_list_inbox")).structured["messages"]
    assert {m["id"]: m["read"] for m in messages} == {m["id"]: m["read"] for m in maildev.emails()}
    assert {m["subject"]: m["read"] for m in messages} == {
        "Quarterly report": True, "Lunch?": False, "No display name": False
    }, messages

    out = await tabwire.call_ok("maildev_delete_message", {"subject": "Lunch?"})
    assert out.structured == {"deleted": "Lunch?"}, out
    await wait_for(
        lambda: [m["subject"] for m in maildev.emails()] == ["Quarterly report", "No display name"],
        timeout=10,
        what="MailDev to have deleted 'Lunch?'",
    )

    out = await tabwire.call("maildev_open_message", {"subject": "Lunch?"})
    assert out.is_error and out.text.startswith("ELEMENT_NOT_FOUND"), out
    assert "steps[1] (within)" in out.text and "Lunch?" in out.text, out


async def test_fetch_arguments_stay_inside_their_path_segment(tabwire, maildev, launch_chromium, extension_dir):
    """In the real browser against MailDev's real routes: an argument that tries `../`, `?` or a whole `..`
    segment cannot reach another endpoint; a normal one reaches exactly its message."""
    maildev.send("Alice <alice@example.com>", "Quarterly report", "The numbers are in.")
    maildev.send("Carol <carol@example.com>", "Lunch?", "Noon")
    await wait_for(lambda: len(maildev.emails()) == 2, timeout=10, what="MailDev to receive the messages")
    await launch_chromium(extension_dir=extension_dir, url=maildev.base + "/")
    await tabwire.wait_for_tools("probe_get_email", "probe_home_as_json", *TOOLS)

    # Unencoded, "../email" would climb to GET /email (the list, JSON: a success); encoded, MailDev's
    # /email/:id route gets the id "../email" and has no such message.
    for id_, path in [("../email", "/email/..%2Femail"), ("x?skip=1", "/email/x%3Fskip%3D1"),
                      ("x#y", "/email/x%23y"), ("%2Femail", "/email/%252Femail")]:
        out = await tabwire.call("probe_get_email", {"id": id_})
        assert out.is_error and out.text.startswith("ADAPTER_ERROR: steps[0] (fetch): "), out
        assert f"GET {path} answered HTTP 404" in out.text, out
    out = await tabwire.call("probe_get_email", {"id": ".."})
    assert out.is_error and out.text.startswith("INVALID_ARGS: steps[0] (fetch): "), out
    assert not any(m["read"] for m in maildev.emails()), "no request may have reached a message"

    out = await tabwire.call("probe_home_as_json")
    assert out.is_error and "ADAPTER_ERROR: steps[0] (fetch): GET / answered no JSON (text/html" in out.text, out

    lunch = next(m for m in maildev.emails() if m["subject"] == "Lunch?")
    out = await tabwire.call_ok("probe_get_email", {"id": lunch["id"]})
    assert out.structured == {"id": lunch["id"], "subject": "Lunch?"}, out
    assert {m["subject"]: m["read"] for m in maildev.emails()} == {"Quarterly report": False, "Lunch?": True}


async def test_the_inbox_state_follows_mail_that_arrives_and_is_read(tabwire, maildev, launch_chromium, extension_dir):
    """The maildev adapter's state (message and unread counts, the inbox with read flags, the open message) is pushed when mail arrives
    over SMTP, a change no tabwire call made; a subscribed client hears `resources/updated` and reads a
    state that matches MailDev's own API. Opening a message (a read-only tool) updates it too."""
    maildev.send("Alice <alice@example.com>", "Quarterly report", "The numbers are in.")
    await wait_for(lambda: len(maildev.emails()) == 1, timeout=10, what="MailDev to receive the first message")
    await launch_chromium(extension_dir=extension_dir, url=maildev.base + "/")
    await tabwire.wait_for_tools(*TOOLS)
    tab = (await tabwire.call_ok("browser_tabs")).structured["tabs"][0]["id"]
    uri = f"tabwire://tabs/{tab}/state"
    await tabwire.session.subscribe_resource(uri)

    async def state() -> dict:
        return json.loads((await tabwire.session.read_resource(uri)).contents[0].text)["state"]["maildev"]

    def api_inbox() -> list[dict]:
        return sorted(({"subject": m["subject"], "read": m["read"]} for m in maildev.emails()), key=lambda m: m["subject"])

    async def state_matches_the_api() -> bool:
        try:
            now = await state()
        except Exception:  # noqa: BLE001 - no state cached yet: not yet
            return False
        inbox = api_inbox()
        counts = {"messages": len(inbox), "unread": sum(not m["read"] for m in inbox)}
        return sorted(now["inbox"], key=lambda m: m["subject"]) == inbox and {k: now[k] for k in counts} == counts

    updated = "notifications/resources/updated"
    seen = tabwire.notifications.count(updated)
    maildev.send("Carol <carol@example.com>", "Lunch?", "Noon at the usual place")
    await wait_for(lambda: tabwire.notifications.count(updated) > seen, timeout=10, what="resources/updated for the new mail")
    await wait_for(state_matches_the_api, timeout=10, what="the state to list both messages as MailDev does")
    assert len(api_inbox()) == 2 and (await state())["open"] is None
    assert {k: (await state())[k] for k in ("messages", "unread")} == {"messages": 2, "unread": 2}

    await tabwire.call_ok("maildev_open_message", {"subject": "Lunch?"})
    await wait_for(state_matches_the_api, timeout=10, what="the state to show Lunch? read, as MailDev does")
    assert {m["subject"]: m["read"] for m in api_inbox()} == {"Lunch?": True, "Quarterly report": False}
    assert (await state())["open"] == "Lunch?"
    assert {k: (await state())[k] for k in ("messages", "unread")} == {"messages": 2, "unread": 1}

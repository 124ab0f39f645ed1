"""The popup's recorder in real headless Chromium with the real extension, as a person uses it: the popup
page is opened as a tab (the site it is about is the active tab of its window), its buttons clicked and its
DOM read as shown, while DevTools drives real, trusted input into the site (`Input.dispatchMouseEvent`,
`Input.insertText`, `Input.dispatchKeyEvent`). The real `tabwire mcp` serves no adapter for the sites: the
recorded tool is the only one, saved into the user's adapter directory and loaded at once, and the official
Python MCP client calls it with new argument values; each effect is checked through the app's own storage.

1. TodoMVC: type a todo and press Enter → a tool `…_add_item(what_needs_to_be_done)` that adds any todo; the
   file passes `tabwire adapters check`; a second recording saved under the same name, or under a name that
   is no identifier, is refused with the reason shown in the popup, and the file is left as it was; each
   save, made or refused, is in the audit log (`tabwire audit`) as the popup's, with no value typed.
2. A sign-in form that takes the tab to the reading list (the recording survives the navigation), then a
   book with a shelf and the favourite box: the tool signs in and adds a book with new values, the shelf
   chosen being a parameter offering the select's options (called with another one); the password typed
   while recording is nowhere in the file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import run_cli
from harness.cdp import CdpError, evaluate_in_world
from harness.extension_pages import activate, open_extension_page
from harness.todomvc import stored_todos, wait_until_app_ready
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

RECORD_DOM = """(() => {
  const q = (s) => document.querySelector(s);
  const shown = (s) => !q(s).hidden;
  return {
    state: q('#record').dataset.record,
    text: q('#record-state').textContent,
    lines: [...document.querySelectorAll('#record-steps li')].map((li) => li.textContent),
    start: shown('#record-start'), stop: shown('#record-stop'), save: shown('#record-save'),
    problem: shown('#record-problem') ? q('#record-problem').textContent : null,
    saved: shown('#record-saved') ? q('#record-saved').textContent : null,
  };
})()"""


class Recorder:
    """The popup page and the site's page of one browser."""

    def __init__(self, cdp, popup, page) -> None:
        self.cdp, self.popup, self.page = cdp, popup, page

    @classmethod
    async def beside(cls, browser, extension_id: str, url: str) -> "Recorder":
        """The popup opened in a tab of `browser` beside its page at `url`."""
        page = await browser.cdp.wait_for_page(url)
        popup = await open_extension_page(browser.cdp, extension_id, "extension/popup.html")
        return cls(browser.cdp, popup, page)

    async def when(self, condition, what: str) -> dict:
        async def check():
            dom = await self.cdp.evaluate(self.popup, RECORD_DOM)
            return dom if dom["state"] and condition(dom) else None

        return await wait_for(check, timeout=20, what=f"the popup's recorder to show {what}")

    async def click(self, selector: str) -> None:
        await self.cdp.evaluate(self.popup, f"document.querySelector({selector!r}).click()")

    async def start(self) -> None:
        await self.when(lambda d: d["state"] == "idle" and d["start"], "Record")
        await self.click("#record-start")
        await self.when(lambda d: d["state"] == "live" and d["stop"], "that it records")
        await self.listening()

    async def listening(self) -> None:
        """The page the tab shows now records (its runtime says so in the extension's own world)."""

        async def recording():
            return await evaluate_in_world(self.page, "Tabwire", "globalThis.__tabwireRecording === true")

        await wait_for(recording, timeout=20, what="the page to record", ignore=(CdpError, OSError))

    async def stop_and_save(self, name: str, description: str = "") -> dict:
        await self.click("#record-stop")
        await self.when(lambda d: d["state"] == "stopped" and d["save"], "the steps to save")
        await self.cdp.evaluate(
            self.popup,
            f"document.querySelector('#record-name').value = {name!r},"
            f"document.querySelector('#record-description').value = {description!r}",
        )
        await self.click("#record-save-button")
        return await self.when(lambda d: d["saved"] or d["problem"], "the save's outcome")

    # Real input into the site, as Chromium's own input dispatches it.
    async def real_click(self, selector: str) -> None:
        x, y = await self.cdp.evaluate(
            self.page,
            f"(r => [r.left + r.width / 2, r.top + r.height / 2])(document.querySelector({selector!r}).getBoundingClientRect())",
        )
        await self.cdp.send(self.page, "Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
        for kind, buttons in (("mousePressed", 1), ("mouseReleased", 0)):
            await self.cdp.send(self.page, "Input.dispatchMouseEvent",
                                {"type": kind, "x": x, "y": y, "button": "left", "buttons": buttons, "clickCount": 1})

    async def type(self, text: str) -> None:
        await self.cdp.send(self.page, "Input.insertText", {"text": text})

    async def key(self, key: str, code: int, text: str = "") -> None:
        down = {"type": "keyDown" if text else "rawKeyDown", "key": key, "code": key, "windowsVirtualKeyCode": code}
        if text:
            down["text"] = text
        await self.cdp.send(self.page, "Input.dispatchKeyEvent", down)
        await self.cdp.send(self.page, "Input.dispatchKeyEvent",
                            {"type": "keyUp", "key": key, "code": key, "windowsVirtualKeyCode": code})


def adapter_file(tabwire_command, origin: str) -> Path:
    name = "site_" + origin.removeprefix("http://").replace(".", "_").replace(":", "_")
    return Path(tabwire_command.env["XDG_CONFIG_HOME"]) / "tabwire" / "adapters" / f"{name}.json"


# The tests start `unadapted_command`: no adapter for the sites, so the recorded tool is the only one there.
async def test_a_recorded_todo_becomes_a_tool_that_adds_any_todo(
    unadapted_command, todomvc_url, launch_chromium, extension_dir, extension_id
):
    c = unadapted_command
    url = todomvc_url("plain")
    origin = url.split("/plain/")[0]
    run_cli(c, "allow", origin)
    browser = await launch_chromium(extension_dir=extension_dir, url=url)
    rec = await Recorder.beside(browser, extension_id, url)
    cdp, page = rec.cdp, rec.page
    await wait_until_app_ready(cdp, page)

    async with c.session() as tabwire:
        await activate(cdp, page)
        await rec.start()
        new_todo = "#new-todo"
        await rec.real_click(new_todo)
        await rec.type("buy milk")
        await rec.key("Enter", 13, "\r")
        await wait_for(lambda: stored_todos(cdp, page), timeout=10, what="the app to store the todo")
        name = 'role=textbox[name="What needs to be done?"]'
        dom = await rec.when(lambda d: len(d["lines"]) == 2, "two steps")
        # The click into the field is the fill's; the typing one fill; Enter a key press.
        assert dom["lines"] == [f'fill {name} with "buy milk"', f"press Enter in {name}"], dom

        dom = await rec.stop_and_save("add_item", "Adds a todo.")
        file = adapter_file(c, origin)
        tool = f"{file.stem}_add_item"
        assert dom["problem"] is None, dom
        assert dom["saved"].startswith(f"Saved: your assistant can call {tool} (what_needs_to_be_done)."), dom
        assert str(file) in dom["saved"], dom
        assert dom["state"] == "idle" and dom["lines"] == [], dom

        # Loaded at once; called with a new value, it does the task again.
        await tabwire.wait_for_tools(tool)
        await tabwire.call_ok(tool, {"what_needs_to_be_done": "walk the dog"})

        async def added():
            titles = [t["title"] for t in await stored_todos(cdp, page)]
            return titles if "walk the dog" in titles else None

        titles = await wait_for(added, timeout=20, what="the recorded tool's todo in localStorage", ignore=(CdpError,))
        assert titles == ["buy milk", "walk the dog"], titles
        saved = json.loads(file.read_text())
        assert saved["match"] == [f"{origin}/*"] and saved["tools"][0]["description"] == "Adds a todo.", saved
        run_cli(c, "adapters", "check", str(file))

        # A second recording under a name the site's adapter has, then under no identifier: refused, the
        # reason shown, the file as it was.
        before = file.read_text()
        await rec.start()
        await rec.real_click(new_todo)
        await rec.type("call mum")
        await rec.key("Enter", 13, "\r")
        await rec.when(lambda d: len(d["lines"]) == 2, "the second recording's steps")
        dom = await rec.stop_and_save("add_item")
        assert dom["problem"] == "Not saved: this site's adapter already has a tool named \"add_item\": choose another name", dom
        assert dom["state"] == "stopped" and len(dom["lines"]) == 2, dom
        await rec.cdp.evaluate(rec.popup, "document.querySelector('#record-name').value = 'Add Item'")
        await rec.click("#record-save-button")
        dom = await rec.when(lambda d: d["problem"] and "Add Item" in d["problem"], "the bad name's refusal")
        assert '"Add Item" is not a tool name' in dom["problem"], dom
        assert file.read_text() == before
        await rec.click("#record-discard")
        await rec.when(lambda d: d["state"] == "idle" and d["lines"] == [], "the recording discarded")

        # The audit log: the three saves as the popup's (the tool call between them as the client's), the
        # site and tab, the outcome; what was typed nowhere.
        audit = run_cli(c, "audit", "-n", "10")
        ours = [line for line in audit.splitlines() if tool in line or "Add Item" in line]
        site = re.escape(f"{origin} (tab ") + r"\d+\)"
        expected = [
            rf"^\S+  popup\s+save {tool}\s+{site}  ok \d+ ms$",
            rf"^\S+  (?!popup)\S+\s+{tool}\s+{site}  ok \d+ ms$",  # the client's call of the saved tool
            rf"^\S+  popup\s+save {tool}\s+{site}  INVALID_ARGS \d+ ms$",
            rf'^\S+  popup\s+save "Add Item"\s+{site}  INVALID_ARGS \d+ ms$',
        ]
        assert len(ours) == 4 and all(re.search(e, line) for e, line in zip(expected, ours)), audit
        assert "milk" not in audit and "walk the dog" not in audit and "call mum" not in audit, audit


async def test_a_recording_survives_the_sign_in_page_and_never_keeps_the_password(
    unadapted_command, fixture_server, launch_chromium, extension_dir, extension_id
):
    c = unadapted_command
    url = fixture_server.url("plain", "record/sign-in.html")
    origin = fixture_server.origin
    list_url = fixture_server.url("plain", "reading-list/index.html")
    run_cli(c, "allow", origin)
    browser = await launch_chromium(extension_dir=extension_dir, url=url)
    rec = await Recorder.beside(browser, extension_id, url)
    cdp, page = rec.cdp, rec.page

    async def stored(key: str):
        return json.loads(await cdp.evaluate(page, f"localStorage.getItem({key!r}) || 'null'"))

    async with c.session() as tabwire:
        await activate(cdp, page)
        await rec.start()
        await rec.real_click("#user")
        await rec.type("alice")
        await rec.real_click("#password")
        await rec.type("hunter2")
        await rec.real_click("button[type=submit]")

        async def on_list():
            return (await cdp.evaluate(page, "location.href")).startswith(list_url)

        await wait_for(on_list, timeout=20, what="the sign-in form to open the reading list", ignore=(CdpError,))
        assert await stored("signed-in") == {"user": "alice", "password": "hunter2"}
        await rec.listening()
        await rec.real_click("#title")
        await rec.type("Dune")
        await rec.key("Tab", 9)  # to the shelf, whose arrow keys choose without opening it
        await rec.key("ArrowDown", 40)
        await rec.key("ArrowDown", 40)
        await rec.real_click("#favourite")
        await rec.real_click("button[type=submit]")
        await wait_for(lambda: stored("books"), timeout=10, what="the reading list to store the book")
        assert await stored("books") == [{"title": "Dune", "shelf": "done", "favourite": True}]
        dom = await rec.when(lambda d: len(d["lines"]) == 8, "eight steps")
        assert dom["lines"] == [
            'fill role=textbox[name="Username"] with "alice"',
            'fill role=textbox[name="Password"] with a password (not recorded: a parameter)',
            'click role=button[name="Sign in"]',
            'fill role=textbox[name="Title"] with "Dune"',
            'press Tab in role=textbox[name="Title"]',
            'select "done" in #shelf',
            'check role=checkbox[name="Favourite"]',
            'click role=button[name="Add"]',
        ], dom
        assert "hunter2" not in json.dumps(dom)

        dom = await rec.stop_and_save("sign_in_and_add_book")
        file = adapter_file(c, origin)
        tool = f"{file.stem}_sign_in_and_add_book"
        assert dom["saved"] and dom["saved"].startswith(
            f"Saved: your assistant can call {tool} (username, password, title, shelf)."
        ), dom
        text = file.read_text()
        assert "hunter2" not in text, text
        schema = json.loads(text)["tools"][0]["input_schema"]
        assert schema["required"] == ["username", "password", "title", "shelf"]
        # The select's choice is a parameter offering the select's options.
        assert schema["properties"]["shelf"]["enum"] == ["to-read", "reading", "done"], schema
        run_cli(c, "adapters", "check", str(file))

        # The tool opens the sign-in page, signs in with the new values and adds the new book.
        await tabwire.wait_for_tools(tool)
        await tabwire.call_ok(
            tool, {"username": "bob", "password": "s3cret-2", "title": "Neuromancer", "shelf": "reading"}
        )

        async def second_book():
            books = await stored("books")
            return books if books and len(books) == 2 else None

        books = await wait_for(second_book, timeout=30, what="the recorded tool's book", ignore=(CdpError,))
        assert books[1] == {"title": "Neuromancer", "shelf": "reading", "favourite": True}, books
        assert await stored("signed-in") == {"user": "bob", "password": "s3cret-2"}

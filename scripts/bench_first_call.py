"""The first page-tool call on a freshly loaded page against the next one, and what loading the runtime as
the page loads costs the page (issue 32; numbers only, never pass/fail: run scripts/bench.sh --first-call).

Pages: TodoMVC vanillajs (a script-rendered page) and the forms app's item page (server-rendered, as every
step of a form-posting app loads one), both on 127.0.0.1, no adapter. One tab; for each round the tab loads
the page anew (`browser_open` with the tab, which answers once the page has loaded), then:
- Tabwire: the first `page_snapshot` of that document, then the next one (each timed at the MCP client);
  then the same in a new tab (`browser_open` without a tab, closed after), where Chromium often starts a
  new renderer process, which compiles the runtime's wasm anew;
- Playwright MCP: `browser_navigate`, then the first `browser_snapshot`, then the next one; then the same in a
  new tab (`browser_tabs` new, closed after);
- chrome-devtools-mcp: `navigate_page`, then the first `take_snapshot`, then the next one; then the same in a
  new tab (`new_page`, closed after);
- a step of the server-rendered app, through each server: the form's title typed in, then the form posted
  with the answer showing the page it landed on (Tabwire's `page_act` with `snapshot: true`, whose snapshot
  waits for that page's runtime; Playwright MCP's `browser_click`, whose answer has the snapshot;
  chrome-devtools-mcp's `click` with `includeSnapshot`); then, for Tabwire, at once the next `page_snapshot`;
- page load with and without the runtime: the page's own Navigation Timing (DOMContentLoaded and load
  event end, ms from navigation start), read through DevTools, with Tabwire run with `--allow-all-origins`
  (every origin allowed: the runtime is registered at document_start everywhere) and with no grant at all
  (no runtime on the page), in the same run, alternating.
`TABWIRE_BENCH_IDLE_MS=N`: the tab is left idle N ms between `browser_open`'s answer and the first call
(an agent's think time; default 0: at once), for Tabwire's calls.
`--builds ROOT [ROOT...]`: Tabwire's first/next call only, for each build (a checkout with
`target/release/tabwire`, `manifest.json` and `extension/`), to compare with the build before preloading.
Each `browser_open` is timed too (at the MCP client): what waiting for the runtime's warm-up adds to it.
"""

from __future__ import annotations

import contextlib
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

from bench import BINARY, EXTENSION_ROOT, TODOMVC, extension_connected, paired_session, spread, timed  # noqa: E402
from bench_page_tools import (  # noqa: E402
    CHROME_DEVTOOLS_ARGS,
    CHROME_DEVTOOLS_ENV,
    CHROME_DEVTOOLS_MCP,
    CHROMIUM,
    NODE,
    PLAYWRIGHT,
)
from harness.forms_app import FormsApp  # noqa: E402
from harness.mcp_client import open_tabwire_session  # noqa: E402
from harness.static_server import StaticServer  # noqa: E402
from harness.waiting import wait_for  # noqa: E402

ROUNDS = int(os.environ.get("TABWIRE_BENCH_ROUNDS", "30"))
IDLE_S = int(os.environ.get("TABWIRE_BENCH_IDLE_MS", "0")) / 1000
NAV_TIMING = (
    "(() => { const n = performance.getEntriesByType('navigation')[0];"
    " return n && n.loadEventEnd > 0 ? {dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd} : null; })()"
)


async def load_timing(cdp, page, after: float | None = None) -> dict | None:
    """The page's DOMContentLoaded and load event end once it has loaded (of a document that began
    after `after`, a `performance.timeOrigin`, when given); None if it does not within 2 s."""
    for _ in range(200):
        try:
            origin = await cdp.evaluate(page, "performance.timeOrigin")
            timing = await cdp.evaluate(page, NAV_TIMING)
        except Exception:  # the document is being replaced
            timing, origin = None, after
        if timing and (after is None or origin != after):
            return timing
        await anyio.sleep(0.01)
    return None


def add_timing(into: dict, timing: dict | None, kind: str = "") -> None:
    """A load's DOMContentLoaded and load event end (`load_timing`'s), if any, into `into`'s
    `<kind>dcl` and `<kind>load`."""
    if timing:
        into[f"{kind}dcl"].append(timing["dcl"])
        into[f"{kind}load"].append(timing["load"])


async def persons_tab(cdp, url: str):
    """A tab opened as a person opens one (DevTools, no request of Tabwire's ever goes to it), showing `url`."""
    created = await cdp.send(await cdp.browser_target(), "Target.createTarget", {"url": url})

    async def found():
        return next((t for t in await cdp.targets() if t.id == created["targetId"] and t.ws_url), None)

    return await wait_for(found, timeout=20, what="the person's tab")


async def persons_load(cdp, page, url: str) -> dict | None:
    """`page` loads `url` as a person's click would (a DevTools navigation): its load timing."""
    before = await cdp.evaluate(page, "performance.timeOrigin")
    await cdp.send(page, "Page.navigate", {"url": url})
    return await load_timing(cdp, page, after=before)


async def step_to_the_next_page(s, tab: int, into: dict) -> None:
    """A step of a server-rendered app: the form's title filled, then its Create clicked asking for a snapshot
    (the act answers with the item's page: its snapshot, which waits for that page's runtime), then at once
    the next page_snapshot of that page (`into`'s "submit" and "landed_next")."""
    form = (await s.call_ok("page_snapshot", {"tab_id": tab})).text
    ref = lambda pattern: re.search(pattern, form, re.M).group(1)  # noqa: E731
    await s.call_ok("page_act", {"tab_id": tab, "ref": ref(r"^\s*textbox (e\d+) #title$"), "action": "fill",
                                 "value": "bench item"})
    into["submit"].append(await timed(s, "page_act", {"tab_id": tab, "ref": ref(r'^\s*button (e\d+) "Create"'),
                                                      "action": "click", "snapshot": True}))
    into["landed_next"].append(await timed(s, "page_snapshot", {"tab_id": tab}))


async def tabwire_rounds(
    work: Path, urls: dict[str, str], allow_all: bool, binary: Path = BINARY, source: Path = EXTENSION_ROOT
) -> dict:
    """Per page: first and next snapshot times (when `allow_all`), and the page's load timings."""
    result: dict = {
        name: {"first": [], "next": [], "tab_first": [], "tab_next": [], "dcl": [], "load": [], "open": [],
               "tab_open": [], "person_dcl": [], "person_load": [], "submit": [], "landed_next": []}
        for name in urls
    }
    flags = ("--allow-all-origins",) if allow_all else ()
    async with paired_session(work, flags=flags, binary=binary, source=source) as (s, browser):
        cdp = browser.cdp
        await extension_connected(s)
        tab = (await s.call_ok("browser_open", {"url": next(iter(urls.values()))})).structured["tab_id"]
        persons = await persons_tab(cdp, "about:blank")
        for _ in range(ROUNDS):
            for name, url in urls.items():
                t0 = time.perf_counter()
                out = await s.call_ok("browser_open", {"url": url, "tab_id": tab})
                result[name]["open"].append((time.perf_counter() - t0) * 1000)
                assert out.structured["tab_id"] == tab, out
                if allow_all:
                    await anyio.sleep(IDLE_S)
                    result[name]["first"].append(await timed(s, "page_snapshot", {"tab_id": tab}))
                    result[name]["next"].append(await timed(s, "page_snapshot", {"tab_id": tab}))
                page = await cdp.wait_for_page(url)
                add_timing(result[name], await load_timing(cdp, page))
                if allow_all and name == "server-rendered":
                    await step_to_the_next_page(s, tab, result[name])
                # The same page loaded as a person loads it, in a tab no request went to.
                add_timing(result[name], await persons_load(cdp, persons, url), "person_")
                if allow_all:  # the same page in a new tab (often a new renderer process), then closed
                    t0 = time.perf_counter()
                    fresh = (await s.call_ok("browser_open", {"url": url})).structured["tab_id"]
                    result[name]["tab_open"].append((time.perf_counter() - t0) * 1000)
                    await anyio.sleep(IDLE_S)
                    result[name]["tab_first"].append(await timed(s, "page_snapshot", {"tab_id": fresh}))
                    result[name]["tab_next"].append(await timed(s, "page_snapshot", {"tab_id": fresh}))
                    await s.call_ok("browser_tab", {"tab_id": fresh, "action": "close"})
    return result


def second_match(pattern: str, text: str) -> str:
    """The first group of `pattern`'s second match in `text` (the create form's title field: the search form's
    comes first)."""
    found = re.findall(pattern, text, re.M)
    assert len(found) >= 2, f"{pattern!r} in:\n{text}"
    return found[1]


async def playwright_rounds(work: Path, urls: dict[str, str]) -> dict:
    args = [str(PLAYWRIGHT), "--headless", "--executable-path", CHROMIUM, "--isolated", "--no-sandbox"]
    env = {"PATH": f"{NODE.parent}:{os.environ['PATH']}", "HOME": str(work)}
    result: dict = {name: {"navigate": [], "first": [], "next": [], "submit": [], "tab_first": [], "tab_next": []}
                    for name in urls}
    (work / "pw").mkdir()
    async with open_tabwire_session(NODE, args, env=env, cwd=work / "pw", stderr_path=work / "playwright.log") as s:
        for _ in range(ROUNDS):
            for name, url in urls.items():
                result[name]["navigate"].append(await timed(s, "browser_navigate", {"url": url}))
                result[name]["first"].append(await timed(s, "browser_snapshot", {}))
                result[name]["next"].append(await timed(s, "browser_snapshot", {}))
                # The same page in a new tab, then closed.
                await s.call_ok("browser_tabs", {"action": "new", "url": url})
                result[name]["tab_first"].append(await timed(s, "browser_snapshot", {}))
                result[name]["tab_next"].append(await timed(s, "browser_snapshot", {}))
                await s.call_ok("browser_tabs", {"action": "close"})
                if name == "server-rendered":  # the step: its click answers with the page it landed on
                    form = (await s.call_ok("browser_snapshot", {})).text
                    title = second_match(r"textbox \[ref=(\w+)\]", form)
                    create = re.search(r'button "Create" \[ref=(\w+)\]', form)[1]
                    await s.call_ok("browser_type", {"element": "title", "target": title, "text": "bench item"})
                    result[name]["submit"].append(
                        await timed(s, "browser_click", {"element": "Create", "target": create}))
    return result


async def chrome_devtools_rounds(work: Path, urls: dict[str, str]) -> dict:
    env = {"PATH": f"{NODE.parent}:{os.environ['PATH']}", "HOME": str(work), **CHROME_DEVTOOLS_ENV}
    result: dict = {name: {"navigate": [], "first": [], "next": [], "submit": [], "tab_first": [], "tab_next": []}
                    for name in urls}
    (work / "cdm").mkdir()
    async with open_tabwire_session(
        NODE, CHROME_DEVTOOLS_ARGS, env=env, cwd=work / "cdm", stderr_path=work / "chrome-devtools-mcp.log"
    ) as s:
        for _ in range(ROUNDS):
            for name, url in urls.items():
                result[name]["navigate"].append(await timed(s, "navigate_page", {"type": "url", "url": url}))
                result[name]["first"].append(await timed(s, "take_snapshot", {}))
                result[name]["next"].append(await timed(s, "take_snapshot", {}))
                # The same page in a new tab (selected once open), then closed.
                pages = (await s.call_ok("new_page", {"url": url})).text
                fresh = re.search(r"^(\d+): .*\[selected\]", pages, re.M)
                assert fresh, pages
                result[name]["tab_first"].append(await timed(s, "take_snapshot", {}))
                result[name]["tab_next"].append(await timed(s, "take_snapshot", {}))
                await s.call_ok("close_page", {"pageId": int(fresh[1])})
                if name == "server-rendered":  # the step, its click asked for the page it landed on
                    form = (await s.call_ok("take_snapshot", {})).text
                    title = second_match(r"uid=(\S+) textbox", form)
                    create = re.search(r'uid=(\S+) button "Create"', form)[1]
                    await s.call_ok("fill", {"uid": title, "value": "bench item"})
                    result[name]["submit"].append(
                        await timed(s, "click", {"uid": create, "includeSnapshot": True}))
    return result


def pages() -> tuple[dict[str, str], list]:
    work = Path(tempfile.mkdtemp(prefix="tabwire-bench-first-"))
    site = StaticServer(TODOMVC, work / "site.log")
    forms = FormsApp(slow_ms=(0, 0))
    urls = {
        "TodoMVC": site.url("plain", "examples/vanillajs/index.html"),
        "server-rendered": forms.url("/new"),
    }
    return urls, [site, forms]


async def main() -> None:
    for needed in (BINARY, NODE, PLAYWRIGHT, CHROME_DEVTOOLS_MCP, TODOMVC):
        if not needed.exists():
            sys.exit(f"{needed} is missing: run scripts/bench.sh (it builds and installs what this needs)")
    work = Path(tempfile.mkdtemp(prefix="tabwire-bench-first-"))
    urls, servers = pages()
    try:
        for d in ("pw", "cdm"):
            (work / d).mkdir()
        # With and without the runtime in passes that alternate (a loaded machine drifts).
        tw: dict = {}
        bare: dict = {}
        for n in range(int(os.environ.get("TABWIRE_BENCH_PASSES", "2"))):
            for allow_all, pooled in ((True, tw), (False, bare))[:: 1 if n % 2 == 0 else -1]:
                side = work / f"{'tw' if allow_all else 'bare'}{n}"
                side.mkdir()
                pool(pooled, await tabwire_rounds(side, urls, allow_all=allow_all))
        pw = await playwright_rounds(work / "pw", urls)
        cdm = await chrome_devtools_rounds(work / "cdm", urls)
    finally:
        for server in servers:
            server.stop()
    load = os.getloadavg()
    print(f"first page-tool call on a fresh page ({time.strftime('%Y-%m-%d %H:%M')}, load {load[0]:.2f}, "
          f"{len(tw[next(iter(urls))]['load'])} loads per page with the runtime)")
    for name in urls:
        print(f"{name}:")
        print(f"  Tabwire    first page_snapshot   {spread(tw[name]['first'])}")
        print(f"  Tabwire    next page_snapshot    {spread(tw[name]['next'])}")
        print(f"  Tabwire    first page_snapshot, new tab {spread(tw[name]['tab_first'])}")
        print(f"  Tabwire    next page_snapshot, new tab  {spread(tw[name]['tab_next'])}")
        print(f"  Playwright first browser_snapshot {spread(pw[name]['first'])}")
        print(f"  Playwright next browser_snapshot  {spread(pw[name]['next'])}")
        print(f"  Playwright browser_navigate       {spread(pw[name]['navigate'])}")
        print(f"  Playwright first browser_snapshot, new tab {spread(pw[name]['tab_first'])}")
        print(f"  Playwright next browser_snapshot, new tab  {spread(pw[name]['tab_next'])}")
        print(f"  chrome-devtools-mcp first take_snapshot {spread(cdm[name]['first'])}")
        print(f"  chrome-devtools-mcp next take_snapshot  {spread(cdm[name]['next'])}")
        print(f"  chrome-devtools-mcp navigate_page       {spread(cdm[name]['navigate'])}")
        print(f"  chrome-devtools-mcp first take_snapshot, new tab {spread(cdm[name]['tab_first'])}")
        print(f"  chrome-devtools-mcp next take_snapshot, new tab  {spread(cdm[name]['tab_next'])}")
        print(f"  page DOMContentLoaded, person's load, runtime preloaded {spread(tw[name]['person_dcl'])}")
        print(f"  page DOMContentLoaded, person's load, no runtime        {spread(bare[name]['person_dcl'])}")
        print(f"  page load event end, person's load, runtime preloaded   {spread(tw[name]['person_load'])}")
        print(f"  page load event end, person's load, no runtime          {spread(bare[name]['person_load'])}")
        print(f"  page DOMContentLoaded, browser_open, runtime preloaded  {spread(tw[name]['dcl'])}")
        print(f"  page DOMContentLoaded, browser_open, no runtime         {spread(bare[name]['dcl'])}")
        print(f"  page load event end, browser_open, runtime preloaded    {spread(tw[name]['load'])}")
        print(f"  page load event end, browser_open, no runtime           {spread(bare[name]['load'])}")
        if tw[name]["submit"]:
            print("  a step: the form submitted, the answer showing the page it landed on")
            print(f"  Tabwire    page_act                      {spread(tw[name]['submit'])}")
            print(f"  Playwright browser_click                {spread(pw[name]['submit'])}")
            print(f"  chrome-devtools-mcp click, includeSnapshot {spread(cdm[name]['submit'])}")
            print(f"  Tabwire    next page_snapshot where it landed {spread(tw[name]['landed_next'])}")
        print(f"  Tabwire    browser_open (same tab)  {spread(tw[name]['open'])}")
        print(f"  Tabwire    browser_open (new tab)   {spread(tw[name]['tab_open'])}")
        first, nxt = statistics.median(tw[name]["first"]), statistics.median(tw[name]["next"])
        new_tab = statistics.median(tw[name]["tab_first"])
        best = lambda measure: min(statistics.median(pw[name][measure]), statistics.median(cdm[name][measure]))  # noqa: E731
        peer, peer_new_tab = best("first"), best("tab_first")
        print(f"  goal {'met   ' if first <= 1.5 * nxt else 'MISSED'} first <= 1.5 x next ({first / nxt:.2f} x)")
        print(f"  goal {'met   ' if new_tab <= 1.5 * nxt else 'MISSED'} new tab's first <= 1.5 x next "
              f"({new_tab / nxt:.2f} x)")
        print(f"  goal {'met   ' if first < peer else 'MISSED'} first below both peers' first snapshot "
              f"({first:.2f} against {peer:.2f} ms)")
        print(f"  goal {'met   ' if new_tab < peer_new_tab else 'MISSED'} first in a new tab below both peers' first "
              f"snapshot in a new tab ({new_tab:.2f} against {peer_new_tab:.2f} ms)")


def pool(into: dict, got: dict) -> None:
    """Adds one pass's samples (per page, per measure) to `into`."""
    for name, measures in got.items():
        for key, samples in measures.items():
            into.setdefault(name, {}).setdefault(key, []).extend(samples)


async def compare_builds(roots: list[Path]) -> None:
    """Each build's first/next call, a server-rendered step and page load, in `TABWIRE_BENCH_PASSES` passes
    (default 3) that alternate the builds' order, pooled: a loaded machine's drift falls on every build
    alike; each pass ends with the page's load with no runtime (`--page-load` interleaves those loads)."""
    work = Path(tempfile.mkdtemp(prefix="tabwire-bench-first-builds-"))
    urls, servers = pages()
    passes = int(os.environ.get("TABWIRE_BENCH_PASSES", "3"))
    results: dict[Path, dict] = {}
    try:
        for n in range(passes):
            for i, root in enumerate(roots if n % 2 == 0 else list(reversed(roots))):
                (work / f"{n}-{i}").mkdir()
                got = await tabwire_rounds(
                    work / f"{n}-{i}", urls, allow_all=True, binary=root / "target" / "release" / "tabwire",
                    source=root,
                )
                pool(results.setdefault(root, {}), got)
            # The page's load with no runtime at all (the first build, no grant), in the same pass.
            (work / f"{n}-bare").mkdir()
            got = await tabwire_rounds(
                work / f"{n}-bare", urls, allow_all=False, binary=roots[0] / "target" / "release" / "tabwire",
                source=roots[0],
            )
            pool(results.setdefault(Path("(no runtime)"), {}), got)
    finally:
        for server in servers:
            server.stop()
    print(f"first vs next page_snapshot per build ({time.strftime('%Y-%m-%d %H:%M')}, load {os.getloadavg()[0]:.2f}, "
          f"{passes} passes of {ROUNDS} loads per page, {IDLE_S * 1000:.0f} ms idle before the first call)")
    for root, result in results.items():
        for name in urls:
            print(f"{root} {name}: first {spread(result[name]['first'])}; next {spread(result[name]['next'])}")
            print(f"{root} {name}: new tab first {spread(result[name]['tab_first'])}; "
                  f"next {spread(result[name]['tab_next'])}")
            print(f"{root} {name}: DOMContentLoaded {spread(result[name]['dcl'])}; load {spread(result[name]['load'])}")
            print(f"{root} {name}: person's load: DOMContentLoaded {spread(result[name]['person_dcl'])}; "
                  f"load {spread(result[name]['person_load'])}")
            if result[name]["submit"]:
                print(f"{root} {name}: submitting act, with the landed page {spread(result[name]['submit'])}; "
                      f"next page_snapshot there {spread(result[name]['landed_next'])}")
            print(f"{root} {name}: browser_open (same tab) {spread(result[name]['open'])}; "
                  f"new tab {spread(result[name]['tab_open'])}")
    print(json.dumps({str(r): {n: statistics.median(v[n]["first"]) for n in urls if v[n]["first"]}
                      for r, v in results.items()}))


async def compare_page_loads(roots: list[Path]) -> None:
    """The page's own load with each build's runtime and with none, every browser open at once and
    the loads interleaved round by round (a loaded machine's drift, which moved a pass's medians by
    more than the runtime's cost, then falls on every side alike): a person's load (a DevTools
    navigation, no call waiting) and a load `browser_open` set off, on the same tab."""
    work = Path(tempfile.mkdtemp(prefix="tabwire-bench-page-load-"))
    urls, servers = pages()
    sides = [(str(root), root, True) for root in roots] + [("(no runtime)", roots[0], False)]
    result: dict = {label: {name: {"person_dcl": [], "person_load": [], "open_dcl": [], "open_load": []}
                            for name in urls} for label, _, _ in sides}
    try:
        async with contextlib.AsyncExitStack() as stack:
            opened = []
            for i, (label, root, allow_all) in enumerate(sides):
                (work / str(i)).mkdir()
                flags = ("--allow-all-origins",) if allow_all else ()
                s, browser = await stack.enter_async_context(paired_session(
                    work / str(i), flags=flags, binary=root / "target" / "release" / "tabwire", source=root))
                await extension_connected(s)
                tab = (await s.call_ok("browser_open", {"url": next(iter(urls.values()))})).structured["tab_id"]
                opened.append((label, s, browser.cdp, tab, await persons_tab(browser.cdp, "about:blank")))
            for n in range(ROUNDS):
                for name, url in urls.items():
                    for label, s, cdp, tab, persons in opened[n % len(opened):] + opened[: n % len(opened)]:
                        await s.call_ok("browser_open", {"url": url, "tab_id": tab})
                        page = await cdp.wait_for_page(url)
                        add_timing(result[label][name], await load_timing(cdp, page), "open_")
                        add_timing(result[label][name], await persons_load(cdp, persons, url), "person_")
    finally:
        for server in servers:
            server.stop()
    print(f"page load per build, interleaved ({time.strftime('%Y-%m-%d %H:%M')}, load {os.getloadavg()[0]:.2f}, "
          f"{ROUNDS} rounds)")
    for label, pages_ in result.items():
        for name, r in pages_.items():
            print(f"{label} {name}: person's load: DOMContentLoaded {spread(r['person_dcl'])}; "
                  f"load {spread(r['person_load'])}")
            print(f"{label} {name}: browser_open's load: DOMContentLoaded {spread(r['open_dcl'])}; "
                  f"load {spread(r['open_load'])}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--builds"]:
        anyio.run(compare_builds, [Path(p).resolve() for p in sys.argv[2:]])
    elif sys.argv[1:2] == ["--page-load"]:
        anyio.run(compare_page_loads, [Path(p).resolve() for p in sys.argv[2:]])
    else:
        anyio.run(main)

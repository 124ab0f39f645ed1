"""Where a new tab's first page-tool call spends its time (issue 32; a diagnosis, never pass/fail).

Records a Chrome trace through DevTools (`Tracing.start` on the browser's endpoint) around the first
and the second `page_snapshot` in new tabs, and prints, for each call's window (the MCP client's
`time.monotonic()`, the clock Chrome's trace timestamps use on Linux), the time each thread was busy
(top-level trace events, clipped to the window) and the longest events on the threads that matter:
the service worker's, the tab's renderer main thread, the browser's UI and IO threads.

Before tracing, the worker is warmed (a few calls in another tab), so what a window shows is the new
tab's own cost. Each new tab is left idle `TABWIRE_TRACE_IDLE_S` (default 1 s) after `browser_open`
answers, so that its runtime is long ready: what remains is the first call's alone.

With `--forms`, the page is the forms app's (server-rendered, as `bench_first_call.py`'s) instead of
TodoMVC's. With `--same-tab`, the page is loaded anew in one tab (`browser_open` with its `tab_id`, as an agent's
next step loads it) instead of new tabs. With `--act`, the same for `page_act` on a warm TodoMVC tab (a checkbox clicked, `TABWIRE_TRACE_ACTS`
times, default 20), and each window cut into legs by where the threads ran (`legs`): client and server
up to the worker's first task, worker to the page's first task, the page, the page's last task to the
worker's last one (the answer's check and send), and the worker's last task to the client.

    ~/.cache/tabwire/venv/bin/python scripts/trace_first_call.py [--builds ROOT] [--keep TRACE.json] [--act]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
import urllib.request
from collections import defaultdict
from pathlib import Path

import anyio
from websockets.asyncio.client import connect

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
sys.path.insert(0, str(REPO / "scripts"))

from bench import TODOMVC, extension_connected, paired_session  # noqa: E402
from harness.forms_app import FormsApp  # noqa: E402
from harness.static_server import StaticServer  # noqa: E402

CATEGORIES = [
    "devtools.timeline", "v8", "v8.execute", "disabled-by-default-v8.compile", "toplevel", "extensions",
    "ipc", "mojom", "blink", "loading", "navigation", "ServiceWorker", "disabled-by-default-devtools.timeline",
    "v8.wasm", "disabled-by-default-v8.wasm.detailed",
]
TABS = int(os.environ.get("TABWIRE_TRACE_TABS", "4"))
IDLE_S = float(os.environ.get("TABWIRE_TRACE_IDLE_S", "1"))
ACTS = int(os.environ.get("TABWIRE_TRACE_ACTS", "20"))


class Tracer:
    """The browser-wide DevTools session that records the trace."""

    def __init__(self, port: int) -> None:
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
            f"http://127.0.0.1:{port}/json/version", timeout=10
        ) as r:
            self.url = json.load(r)["webSocketDebuggerUrl"]
        self.events: list[dict] = []

    async def record(self, body) -> list[dict]:
        async with connect(self.url, max_size=None, proxy=None) as ws:
            done = anyio.Event()
            replies: dict[int, dict] = {}

            async def read() -> None:
                async for raw in ws:
                    frame = json.loads(raw)
                    if frame.get("method") == "Tracing.dataCollected":
                        self.events.extend(frame["params"]["value"])
                    elif frame.get("method") == "Tracing.tracingComplete":
                        done.set()
                        return
                    elif "id" in frame:
                        replies[frame["id"]] = frame

            async with anyio.create_task_group() as tg:
                tg.start_soon(read)
                await ws.send(json.dumps({"id": 1, "method": "Tracing.start", "params": {
                    "transferMode": "ReportEvents",
                    "traceConfig": {"includedCategories": CATEGORIES, "recordMode": "recordAsMuchAsPossible"},
                }}))
                with anyio.fail_after(10):
                    while 1 not in replies:
                        await anyio.sleep(0.01)
                if "error" in replies[1]:
                    raise AssertionError(f"Tracing.start failed: {replies[1]['error']}")
                windows = await body()
                await ws.send(json.dumps({"id": 2, "method": "Tracing.end"}))
                with anyio.fail_after(60):
                    await done.wait()
        return windows


def thread_names(events: list[dict]) -> dict[tuple[int, int], str]:
    procs: dict[int, str] = {}
    names: dict[tuple[int, int], str] = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            procs[e["pid"]] = e["args"]["name"]
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = f"{procs.get(e['pid'], 'pid')}:{e['pid']}/{e['args']['name']}"
    return names


def complete_events(events: list[dict]) -> list[tuple[int, int, int, int, str, dict]]:
    """(pid, tid, start µs, end µs, name, args) of every duration event, B/E pairs matched."""
    out = []
    open_: dict[tuple[int, int], list[dict]] = defaultdict(list)
    for e in sorted((e for e in events if e.get("ph") in ("X", "B", "E")), key=lambda e: e["ts"]):
        key = (e["pid"], e["tid"])
        if e["ph"] == "X":
            out.append((e["pid"], e["tid"], e["ts"], e["ts"] + e.get("dur", 0), e["name"], e.get("args", {})))
        elif e["ph"] == "B":
            open_[key].append(e)
        elif open_[key]:
            b = open_[key].pop()
            out.append((b["pid"], b["tid"], b["ts"], e["ts"], b["name"], b.get("args", {})))
    return out


KEY_THREADS = ("ServiceWorker thread", "CrRendererMain", "CrBrowserMain", "Chrome_IOThread")
PLUMBING = ("ThreadControllerImpl::RunTask", "SimpleWatcher::OnHandleReady", "v8.callFunction", "RunTask")


def timeline(events: list[dict], window: tuple[str, float, float]) -> None:
    """Every event of 30 µs or more on the key threads in `window`, in order, plumbing left out."""
    names = thread_names(events)
    label, t0, t1 = window
    lo, hi = t0 * 1e6, t1 * 1e6
    print(f"\n== timeline of {label}: {(t1 - t0) * 1000:.2f} ms at the client (ms from its start, duration)")
    for pid, tid, start, end, name, args in sorted(complete_events(events), key=lambda s: s[2]):
        thread = names.get((pid, tid), f"{pid}/{tid}")
        if end <= lo or start >= hi or end - start < 30 or name in PLUMBING:
            continue
        if not any(thread.endswith(k) for k in KEY_THREADS):
            continue
        data = args.get("data") if isinstance(args.get("data"), dict) else {}
        what = data.get("functionName") or data.get("url") or data.get("type") or ""
        print(f"  +{(start - lo) / 1000:7.2f} {(end - start) / 1000:6.2f}  {thread.split(':')[0][:18]:18} "
              f"{thread.split('/')[-1][:14]:14} {name[:48]} {str(what)[-40:]}")


def legs(events: list[dict], windows: list[tuple[str, float, float]]) -> None:
    """Each window cut where the threads ran: the worker's first and last task, and the first and
    last task of a tab's renderer main thread that ran the runtime's code; medians over the windows."""
    names = thread_names(events)
    tasks: dict[tuple[int, int], list] = defaultdict(list)
    runtime_tasks: set[tuple[int, int, int]] = set()
    for pid, tid, start, end, name, args in complete_events(events):
        thread = names.get((pid, tid), "")
        if name == "RunTask" and (thread.endswith("ServiceWorker thread") or thread.endswith("CrRendererMain")):
            tasks[(pid, tid)].append((start, end))
        data = args.get("data") if isinstance(args.get("data"), dict) else {}
        if name == "FunctionCall" and "/extension/dist/injector/" in str(data.get("url", "")):
            runtime_tasks.add((pid, tid, start))
    worker = [k for k in tasks if names.get(k, "").endswith("ServiceWorker thread")]
    cut: dict[str, list[float]] = defaultdict(list)
    for _label, t0, t1 in windows:
        lo, hi = t0 * 1e6, t1 * 1e6
        mine = [t for k in worker for t in tasks[k] if lo < t[0] < hi and t[1] - t[0] >= 20]
        page = [
            t for k in tasks if k not in worker for t in tasks[k]
            if lo < t[0] < hi and any(p == k[0] and tt == k[1] and t[0] <= st <= t[1] for p, tt, st in runtime_tasks)
        ]
        if not mine or not page:
            continue
        w_in, w_out = min(t[0] for t in mine), max(t[1] for t in mine)
        p_in, p_out = min(t[0] for t in page), max(t[1] for t in page)
        for key, ms in (
            ("client + server → worker", w_in - lo),
            ("worker → page", p_in - w_in),
            ("page (first to last task)", p_out - p_in),
            ("  page's tasks' own time", sum(t[1] - t[0] for t in page)),
            ("page → worker's last task (check, send)", w_out - p_out),
            ("worker → server → client", hi - w_out),
            ("whole call", hi - lo),
        ):
            cut[key].append(ms / 1000)
    print(f"\n== legs, median over {len(cut.get('whole call', []))} windows (ms)")
    for key, ms in cut.items():
        print(f"  {key:42} {statistics.median(ms):6.2f}  (min {min(ms):5.2f}, max {max(ms):6.2f})")


def report(events: list[dict], windows: list[tuple[str, float, float]]) -> None:
    names = thread_names(events)
    spans = complete_events(events)
    by_thread: dict[tuple[int, int], list] = defaultdict(list)
    for s in spans:
        by_thread[(s[0], s[1])].append(s)
    for label, t0, t1 in windows:
        lo, hi = t0 * 1e6, t1 * 1e6
        print(f"\n== {label}: {(t1 - t0) * 1000:.2f} ms at the client")
        busy = []
        for key, items in by_thread.items():
            inside = [s for s in items if s[3] > lo and s[2] < hi]
            if not inside:
                continue
            # Top-level: not contained in another event of the same thread.
            inside.sort(key=lambda s: (s[2], -s[3]))
            top, end = [], -1
            for s in inside:
                if s[2] >= end:
                    top.append(s)
                    end = s[3]
            total = sum(min(s[3], hi) - max(s[2], lo) for s in top) / 1000
            busy.append((total, key, inside))
        busy.sort(reverse=True)
        for total, key, inside in busy[:8]:
            print(f"  {total:7.2f} ms busy  {names.get(key, key)}")
            longest = sorted(inside, key=lambda s: -(min(s[3], hi) - max(s[2], lo)))[:8]
            for s in longest:
                d = (min(s[3], hi) - max(s[2], lo)) / 1000
                detail = s[5].get("data", {}) if isinstance(s[5].get("data"), dict) else {}
                what = detail.get("url") or detail.get("functionName") or detail.get("type") or ""
                at = (s[2] - lo) / 1000
                print(f"      {d:6.2f} ms  +{at:6.2f}  {s[4]} {str(what)[:80]}")


async def run(root: Path, work: Path, keep: Path | None, act: bool, same_tab: bool = False, forms: bool = False) -> None:
    site = FormsApp(slow_ms=(0, 0)) if forms else StaticServer(TODOMVC, work / "site.log")
    url = site.url("/new") if forms else site.url("plain", "examples/vanillajs/index.html")
    try:
        async with paired_session(work, binary=root / "target" / "release" / "tabwire", source=root) as (s, browser):
            cdp = browser.cdp
            await extension_connected(s)
            warm = (await s.call_ok("browser_open", {"url": url})).structured["tab_id"]
            for _ in range(20):
                await s.call_ok("page_snapshot", {"tab_id": warm})

            async def body() -> list[tuple[str, float, float]]:
                windows = []
                for n in range(TABS):
                    # `--same-tab`: the warm tab loads the page anew (as an agent's next step does).
                    where = {"tab_id": warm} if same_tab else {}
                    fresh = (await s.call_ok("browser_open", {"url": url, **where})).structured["tab_id"]
                    await anyio.sleep(IDLE_S)  # the runtime long ready: what remains is the call's own
                    for which in ("first", "second"):
                        t0 = time.monotonic()
                        await s.call_ok("page_snapshot", {"tab_id": fresh})
                        windows.append((f"tab {n + 1} {which} page_snapshot", t0, time.monotonic()))
                    if not same_tab:
                        await s.call_ok("browser_tab", {"tab_id": fresh, "action": "close"})
                    await anyio.sleep(0.3)
                return windows

            async def acts() -> list[tuple[str, float, float]]:
                windows = []
                for n in range(ACTS):
                    t0 = time.monotonic()
                    await s.call_ok("page_act", {"tab_id": warm, "ref": toggle, "action": "click"})
                    windows.append((f"act {n + 1}", t0, time.monotonic()))
                return windows

            toggle = ""
            if act:
                snap = (await s.call_ok("page_snapshot", {"tab_id": warm})).text
                field = re.search(r'textbox (e\d+) "What needs to be done\?"', snap)[1]
                await s.call_ok("page_act", {"tab_id": warm, "ref": field, "action": "fill", "value": "walk the dog"})
                await s.call_ok("page_act", {"tab_id": warm, "ref": field, "action": "press", "key": "Enter"})
                snap = (await s.call_ok("page_snapshot", {"tab_id": warm})).text
                toggle = re.search(r"checkbox (e\d+)", snap)[1]
                for _ in range(20):
                    await s.call_ok("page_act", {"tab_id": warm, "ref": toggle, "action": "click"})
            tracer = Tracer(cdp.port)
            windows = await tracer.record(acts if act else body)
    finally:
        site.stop()
    if keep:
        keep.write_text(json.dumps({"traceEvents": tracer.events, "windows": windows}))
    print(f"trace of {len(tracer.events)} events, load {os.getloadavg()[0]:.2f}, build {root}")
    if act:
        legs(tracer.events, windows)
    else:
        report(tracer.events, windows)
        legs(tracer.events, [w for w in windows if "first" in w[0]])
        legs(tracer.events, [w for w in windows if "second" in w[0]])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--builds", type=Path, default=REPO)
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--act", action="store_true", help="trace page_act on a warm tab instead")
    parser.add_argument("--same-tab", action="store_true", help="load the page anew in one tab, not new tabs")
    parser.add_argument("--forms", action="store_true", help="the forms app's server-rendered page, not TodoMVC")
    parser.add_argument("--timeline", type=Path, help="a trace kept by --keep: print each window's timeline")
    a = parser.parse_args()
    if a.timeline:
        kept = json.loads(a.timeline.read_text())
        for window in kept["windows"]:
            timeline(kept["traceEvents"], window)
        return
    work = Path(tempfile.mkdtemp(prefix="tabwire-trace-first-"))
    anyio.run(run, a.builds, work, a.keep, a.act, a.same_tab, a.forms)


if __name__ == "__main__":
    main()

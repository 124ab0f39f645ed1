"""Full-path benchmark: prints numbers, asserts nothing about speed (run: scripts/bench.sh).

One `tabwire mcp` driven by the official Python MCP SDK client over stdio, headless Chromium with the
extension, TodoMVC on 127.0.0.1 in four tabs. Measures:
- start: Chromium launch → the page's tools visible to the client;
- baseline: `browser_tabs` round trips (client + server only, no browser), the client's own share;
- sequential: `todomvc_list_todos` round trips through the whole path (p50 / p90 / p99);
- throughput: calls/s with 16 in flight spread over 4 tabs, from one Python client, and from 4 client
  processes with 4 in flight each (each its own `tabwire mcp`, joining the first as a peer), since one
  Python client process is the bottleneck;
- the server's RSS before and after;
- bare ping: server → worker → tab → worker → server with no MCP and no tool (a Python WebSocket
  server speaking the bridge protocol sends `request_state` to a tab whose adapter has no state
  extractor, and the page answers `state_error` at once): the yardstick for our overhead;
- start after idle: Chromium idles 40 s with no page open and no server (its service worker would be
  stopped after 30 s without events), then tabwire starts: the time until the extension is connected.
- page tools: fresh TodoMVC tabs opened one at a time through CDP: the page's DOMContentLoaded
  (from the page's own clock) → the client's tools/list_changed and its browser_tabs listing them;
- worker start: the service worker closed through CDP and woken by the open page: its script start
  (the worker's performance.timeOrigin) → tabwire's log of the WebSocket connection and the hello.
Both compare wall-clock epoch ms of one machine (the browser's and tabwire's, printed with its skew).
`bench.py --latency` runs only these two. `bench.py --act [DIR...]` times an acting tool and a reading
one for each extension copy (the repo's by default), alternating, to compare builds side by side;
TABWIRE_BENCH_TODOS=N gives the list N todos first (a larger result for the reading tool).

TABWIRE_BENCH_EXTENSION=DIR benchmarks the extension in DIR (a copy of the repo's `manifest.json`
and `extension/`, e.g. an older build) instead of the repo's own.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import AsyncIterator

import anyio
from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))

from harness import handshake  # noqa: E402
from harness.cdp import Cdp, Target  # noqa: E402
from harness.chromium import Chromium  # noqa: E402
from harness.mcp_client import LIST_CHANGED, TabwireSession, open_tabwire_session  # noqa: E402
from harness.static_server import StaticServer  # noqa: E402
from harness.waiting import wait_for  # noqa: E402

CACHE = Path(os.environ.get("TABWIRE_CACHE") or Path.home() / ".cache" / "tabwire")
TODOMVC = CACHE / "apps" / "node_modules" / "todomvc"
BINARY = REPO / "target" / "release" / "tabwire"
SEQUENTIAL = 1000
CONCURRENT = 2000
IN_FLIGHT = 16
TABS = 4
CLIENTS = 4
DCL_PAGES = 20
WORKER_RESTARTS = 10
IDLE_S = int(os.environ.get("TABWIRE_BENCH_IDLE_S", "40"))
EXTENSION_ROOT = Path(os.environ.get("TABWIRE_BENCH_EXTENSION") or REPO)


def quantiles(samples: list[float]) -> str:
    s = sorted(samples)
    pick = lambda q: s[min(len(s) - 1, int(len(s) * q))]  # noqa: E731
    return f"p50 {statistics.median(s):.2f} ms  p90 {pick(0.9):.2f} ms  p99 {pick(0.99):.2f} ms"


def pct(samples: list[float], q: float) -> float:
    """The `q` quantile of `samples` (the nearest sample at or above it)."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def spread(samples: list[float]) -> str:
    """p50, p90 and p99 of `samples` (ms), and how many."""
    if not samples:
        return "n/a"
    return (f"p50 {statistics.median(samples):6.2f} ms, p90 {pct(samples, 0.9):6.2f}, "
            f"p99 {pct(samples, 0.99):7.2f} (n={len(samples)})")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def tabwire_pid(port: int) -> int:
    """The tabwire process listening on `port` (the SDK does not expose its child's pid)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if cmdline and cmdline[0].endswith(b"tabwire") and str(port).encode() in cmdline:
            return int(pid)
    raise RuntimeError("tabwire process not found")


async def timed(session, name: str, args: dict) -> float:
    """Milliseconds one call of `name` took; a call that failed stops the bench."""
    t0 = time.perf_counter()
    out = await session.call(name, args)
    elapsed = (time.perf_counter() - t0) * 1000
    if out.is_error:
        raise AssertionError(f"{name}({args}) failed: {out.text[:500]}")
    return elapsed


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def paired_extension(root: Path, port: int, secret: str, source: Path = EXTENSION_ROOT) -> Path:
    """A copy of the extension at `source` paired with tabwire on `port`."""
    root.mkdir()
    (root / "manifest.json").write_bytes((source / "manifest.json").read_bytes())
    shutil.copytree(source / "extension", root / "extension", ignore=shutil.ignore_patterns("pairing.json"))
    (root / "extension" / "pairing.json").write_text(json.dumps({"port": port, "secret": secret}))
    return root


def paired_setup(work: Path, name: str, source: Path = EXTENSION_ROOT) -> tuple[int, Path, list[str]]:
    """A free port, a secret in `work/<name>-secret`, a copy of the extension at `source` paired with
    them, and the `tabwire mcp` arguments that use them with the TodoMVC adapter on any 127.0.0.1 page."""
    port = free_port()
    secret_file = work / f"{name}-secret"
    secret_file.write_text(os.urandom(32).hex())
    secret_file.chmod(0o600)
    ext = paired_extension(work / f"{name}-extension", port, secret_file.read_text(), source)
    args = ["mcp", "--port", str(port), "--secret-file", str(secret_file),
            "--adapter-match", "todomvc=http://127.0.0.1/*"]
    return port, ext, args


def tabwire_env(work: Path, **more: str) -> dict[str, str]:
    """The environment of a bench's `tabwire` (its server and its CLI): warnings only, its config in `work`."""
    return {"RUST_LOG": "warn", "XDG_CONFIG_HOME": str(work / "config"), **more}


@contextlib.asynccontextmanager
async def paired_session(
    work: Path, *, flags: tuple[str, ...] = ("--allow-all-origins",), env: dict[str, str] | None = None,
    binary: Path = BINARY, source: Path = EXTENSION_ROOT,
) -> AsyncIterator[tuple[TabwireSession, Chromium]]:
    """`tabwire mcp` (`binary`, with `flags`: by default page tools on every site) on a free port with a fresh
    secret, driven by the Python SDK client, then headless Chromium with a copy of the extension at `source`
    paired with it; its secret, profile and logs in `work`. Yields both once Chromium's DevTools answer
    (the extension may not have connected yet: `extension_connected`); stops both at the end."""
    port = free_port()
    secret = os.urandom(32).hex()
    (work / "secret").write_text(secret)
    (work / "secret").chmod(0o600)
    ext = paired_extension(work / "extension-root", port, secret, source)
    args = ["mcp", "--port", str(port), "--secret-file", str(work / "secret"), *flags]
    async with open_tabwire_session(binary, args, env=env or tabwire_env(work), cwd=REPO,
                                    stderr_path=work / "tabwire.log") as session:
        browser = Chromium(work / "profile", work / "chromium.log", ext, None)
        try:
            await browser.wait_ready()
            yield session, browser
        finally:
            browser.stop()


async def extension_connected(session: TabwireSession) -> None:
    """Polls `browser_tabs` (for at most 10 s) until it says the extension is connected."""
    for _ in range(100):
        if (await session.call("browser_tabs")).structured.get("connected"):
            return
        await anyio.sleep(0.1)


@contextlib.asynccontextmanager
async def chromium_root(work: Path, name: str, ext: Path, page: str | None) -> AsyncIterator[tuple[Cdp, Target]]:
    """Headless Chromium with the extension `ext` opening `page` (profile and log `work/<name>-…`): its
    DevTools connection and its browser target, once they answer; stopped at the end."""
    browser = Chromium(work / f"{name}-profile", work / f"{name}-chromium.log", ext, page)
    try:
        cdp = await browser.wait_ready()
        yield cdp, await cdp.browser_target()
    finally:
        browser.stop()


async def bare_ping(work: Path, page: str) -> list[float]:
    """Round trips server → worker → tab → worker → server of a message that runs nothing in the page."""
    port = free_port()
    secret = os.urandom(32).hex()
    ext = paired_extension(work / "ping-extension", port, secret)
    adapter = {
        "name": "bench",
        "match": ["http://127.0.0.1/*"],
        "tools": [{"name": "noop", "description": "Does nothing.", "steps": [{"step": "return", "value": "ok"}]}],
    }
    link: dict = {"tabs": [], "answers": {}}

    async def extension_link(ws) -> None:
        link["ws"] = ws
        with contextlib.suppress(ConnectionClosed):  # the browser is stopped at the end
            await handshake.prove_as_server(ws, secret, port)
            await answer_frames(ws)

    async def answer_frames(ws) -> None:
        async for text in ws:
            frame = json.loads(text)
            kind = frame.get("type")
            if kind == "hello":
                welcome = {"type": "welcome", "protocol": frame["protocol"], "server_version": "bench",
                           "instance_id": "bench", "adapters": [adapter]}
                await ws.send(json.dumps(welcome))
            elif kind == "ping":
                await ws.send(json.dumps({"type": "pong", "nonce": frame.get("nonce", 0)}))
            elif kind == "tools_updated" and frame["tools"]:
                link["tabs"].append(frame["tab"])
            elif kind in ("state_response", "state_error") and frame.get("id") in link["answers"]:
                link["answers"].pop(frame["id"]).set()
            elif kind == "error":
                print(f"bare ping:   the extension reports {frame}", file=sys.stderr)

    async def ping(n: int) -> float:
        answered = anyio.Event()
        link["answers"][f"ping-{n}"] = answered
        t0 = time.perf_counter()
        await link["ws"].send(json.dumps({"type": "request_state", "id": f"ping-{n}", "tab": link["tabs"][0]}))
        await answered.wait()
        return (time.perf_counter() - t0) * 1000

    async with serve(extension_link, "127.0.0.1", port, subprotocols=[handshake.BROWSER]):
        browser = Chromium(work / "ping-profile", work / "ping-chromium.log", ext, page)
        try:
            await wait_for(lambda: link["tabs"], timeout=30, what="the bench adapter's tools from the page")
            for n in range(100):  # warm up
                await ping(n)
            return [await ping(100 + n) for n in range(SEQUENTIAL)]
        finally:
            browser.stop()


async def start_after_idle(work: Path) -> tuple[bool, float]:
    """Whether the worker was still running after the idle time, and ms from tabwire's start to connected."""
    _, ext, args = paired_setup(work, "idle")
    browser = Chromium(work / "idle-profile", work / "idle-chromium.log", ext, None)
    try:
        cdp = await browser.wait_ready()
        await anyio.sleep(IDLE_S)  # a benchmark may sleep; the tests never do
        alive = any(t.type == "service_worker" for t in await cdp.targets())
        log = work / "idle-tabwire.log"
        env = {"RUST_LOG": "info", "XDG_CONFIG_HOME": str(work / "idle-config")}
        t0 = time.perf_counter()
        async with open_tabwire_session(BINARY, args, env=env, cwd=REPO, stderr_path=log):
            await wait_for(
                lambda: "browser extension connected" in log.read_text(),
                timeout=30,
                interval=0.005,
                what="the extension to connect",
            )
            return alive, (time.perf_counter() - t0) * 1000
    finally:
        browser.stop()


def percentiles(samples: list[float]) -> str:
    """p50 / p90 / max of a few samples (ms)."""
    s = sorted(samples)
    return f"p50 {statistics.median(s):.0f} ms  p90 {s[min(len(s) - 1, int(len(s) * 0.9))]:.0f} ms  max {s[-1]:.0f} ms"


def log_times(log: Path, *parts: str) -> list[float]:
    """Epoch ms of each tabwire log line containing all `parts` (tracing prints UTC, microseconds)."""
    times = []
    for line in log.read_text().splitlines():
        if all(part in line for part in parts):
            stamp = line.split()[0].replace("Z", "+00:00")
            times.append(datetime.fromisoformat(stamp).timestamp() * 1000)
    return times


# Run in the page once its tools arrived: its clock (epoch ms) at DOMContentLoaded, and its skew.
PAGE_TIMES = """(() => {
  const nav = performance.getEntriesByType('navigation')[0];
  return {dcl: performance.timeOrigin + nav.domContentLoadedEventStart,
          skew: Date.now() - (performance.timeOrigin + performance.now())};
})()"""

# Run in the service worker: when its script started (timeOrigin, epoch ms), and its fetches on the
# same clock (the HEAD probe of tabwire's port; the extension's own files are not listed).
WORKER_TIMES = """(() => ({
  origin: performance.timeOrigin,
  fetches: performance.getEntriesByType('resource').map((e) => [e.name.split('/').pop() || e.name,
           performance.timeOrigin + e.startTime, performance.timeOrigin + e.responseEnd]),
  skew: Date.now() - (performance.timeOrigin + performance.now()),
}))()"""


async def tools_after_dcl(work: Path, page: str) -> list[dict]:
    """Per fresh tab (the first one cold): its DOMContentLoaded, the client's list_changed and browser_tabs.

    One TodoMVC tab at a time (the tool set only changes, and list_changed only fires, when the
    first tab of a site opens or the last closes). Times are wall-clock epoch ms on both sides.
    """
    _, ext, args = paired_setup(work, "dcl")
    # tungstenite's trace logs each frame tabwire receives: when the tab's tools_updated arrived.
    env = {"RUST_LOG": "info,tungstenite::protocol=trace", "XDG_CONFIG_HOME": str(work / "dcl-config")}
    samples = []
    async with chromium_root(work, "dcl", ext, None) as (cdp, root):
        async with open_tabwire_session(BINARY, args, env=env, cwd=REPO, stderr_path=work / "dcl-tabwire.log") as s:
            await wait_for(lambda: "extension said hello" in (work / "dcl-tabwire.log").read_text(), timeout=30,
                           what="the extension to connect")
            for n in range(DCL_PAGES + 1):
                seen = len(s.notifications)
                created = await cdp.send(root, "Target.createTarget", {"url": f"{page}?n={n}"})
                await wait_for(lambda: LIST_CHANGED in s.notifications[seen:], timeout=30, interval=0.002,
                               what="tools/list_changed for the new tab")
                notified = s.received_at[seen + s.notifications[seen:].index(LIST_CHANGED)] * 1000
                tabs = (await s.call_ok("browser_tabs")).structured["tabs"]
                listed = time.time() * 1000
                if not any(t["url"].endswith(f"?n={n}") and t.get("tools") for t in tabs):
                    raise AssertionError(f"browser_tabs does not list the new tab with tools: {tabs}")
                target = next(t for t in await cdp.targets() if t.id == created["targetId"])
                times = await cdp.evaluate(target, PAGE_TIMES)
                announced = log_times(work / "dcl-tabwire.log", "Received message", '"tools_updated"', f'?n={n}"')
                samples.append({**times, "notified": notified, "listed": listed,
                                "received": announced[0] if announced else float("nan")})
                seen = len(s.notifications)
                await cdp.send(root, "Target.closeTarget", {"targetId": created["targetId"]})
                await wait_for(lambda: LIST_CHANGED in s.notifications[seen:], timeout=30, interval=0.002,
                               what="tools/list_changed for the closed tab")

                async def gone() -> bool:
                    return "todomvc_list_todos" not in await s.tool_names()

                await wait_for(gone, timeout=10, what="the closed tab's tools to leave tools/list")
    return samples


async def worker_restarts(work: Path, page: str) -> list[dict]:
    """Per restart of the service worker (closed through CDP, woken by the open page's port): its
    script start, its fetches, and when tabwire logged the WebSocket connection and the hello (the
    first restart is the cold one)."""
    _, ext, args = paired_setup(work, "sw")
    log = work / "sw-tabwire.log"
    env = {"RUST_LOG": "info", "XDG_CONFIG_HOME": str(work / "sw-config")}
    samples = []
    async with chromium_root(work, "sw", ext, page) as (cdp, root):
        async with open_tabwire_session(BINARY, args, env=env, cwd=REPO, stderr_path=log) as s:
            await s.wait_for_tools("todomvc_list_todos", timeout=30)

            async def worker() -> Target | None:
                found = [t for t in await cdp.targets() if t.type == "service_worker" and t.ws_url
                         and t.url.startswith("chrome-extension://")]
                return found[0] if found else None

            for n in range(WORKER_RESTARTS + 1):
                # The page's runtime reconnects its port at once only if the port lived ≥ 1 s
                # (extension/content.js backs off otherwise); a benchmark may sleep.
                await anyio.sleep(1.5)
                old = await wait_for(worker, timeout=10, what="the extension's service worker target")
                hellos = len(log_times(log, "extension said hello"))
                closed = time.time() * 1000
                await cdp.send(root, "Target.closeTarget", {"targetId": old.id})
                await wait_for(lambda: len(log_times(log, "extension said hello")) > hellos, timeout=30,
                               interval=0.01, what="the restarted worker's hello")
                new = await wait_for(worker, timeout=10, what="the restarted service worker target")
                if new.id == old.id:
                    raise AssertionError("the service worker target did not change")
                times = await cdp.evaluate(new, WORKER_TIMES)
                connected = log_times(log, "browser extension connected")[-1]
                hello = log_times(log, "extension said hello")[-1]
                samples.append({**times, "closed": closed, "connected": connected, "hello": hello})
    return samples


async def start_latency(page: str) -> None:
    """Prints the two start-latency measurements (design.md targets: ≤ 150 ms and ≤ 100 ms)."""
    work = Path(tempfile.mkdtemp(prefix="tabwire-bench-latency-"))
    first, *pages = await tools_after_dcl(work, page)
    print(f"page tools:  the browser's first TodoMVC tab (cold): DOMContentLoaded → list_changed"
          f" {first['notified'] - first['dcl']:.0f} ms, → tabwire has tools_updated {first['received'] - first['dcl']:.0f} ms")
    notified = [p["notified"] - p["dcl"] for p in pages]
    listed = [p["listed"] - p["dcl"] for p in pages]
    print(f"page tools:  DOMContentLoaded → tools/list_changed at the client  {percentiles(notified)}  ({len(pages)} fresh tabs)")
    print(f"page tools:  DOMContentLoaded → browser_tabs lists the tab's tools {percentiles(listed)}")
    median = statistics.median
    print(f"  p50 hops:  DCL → tabwire receives tools_updated {median([p['received'] - p['dcl'] for p in pages]):.0f} ms"
          f" (injector load + announce + worker)  → list_changed at the client"
          f" {median([p['notified'] - p['received'] for p in pages]):.0f} ms (20 ms coalescing)"
          f"  → browser_tabs answered {median([p['listed'] - p['notified'] for p in pages]):.0f} ms"
          f"  (page clock skew ≤ {max(abs(p['skew']) for p in pages):.1f} ms)")
    first, *restarts = await worker_restarts(work, page)
    print(f"worker:      first restart (cold): script start → connected {first['connected'] - first['origin']:.0f} ms")
    connected = [r["connected"] - r["origin"] for r in restarts]
    hello = [r["hello"] - r["origin"] for r in restarts]
    print(f"worker:      script start → WebSocket connected (tabwire's log)  {percentiles(connected)}  ({len(restarts)} restarts)")
    print(f"worker:      script start → hello received (tabwire's log)       {percentiles(hello)}")
    probe = [min((start for _, start, _ in r["fetches"]), default=float("nan")) for r in restarts]
    print(f"  p50 hops:  page woke the closed worker {median([r['origin'] - r['closed'] for r in restarts]):.0f} ms"
          f"  | script start → probe of tabwire's port {median([p - r['origin'] for p, r in zip(probe, restarts)]):.0f} ms"
          f" (worker.js, wasm init)  → WebSocket connected {median([r['connected'] - p for p, r in zip(probe, restarts)]):.0f} ms"
          f"  → hello {median([r['hello'] - r['connected'] for r in restarts]):.0f} ms"
          f"  (worker clock skew ≤ {max(abs(r['skew']) for r in restarts):.1f} ms)")


async def client_process(args: list[str], env: dict, tabs: list[int], calls: int, in_flight: int) -> None:
    """One of the parallel client processes (`bench.py --client`): its own session; "ready", then "go" on stdin."""
    work = Path(tempfile.mkdtemp(prefix="tabwire-bench-client-"))
    async with open_tabwire_session(BINARY, args, env=env, cwd=REPO, stderr_path=work / "tabwire.log") as s:
        await s.wait_for_tools("todomvc_list_todos", timeout=30)
        for n in range(20):  # warm up
            await timed(s, "todomvc_list_todos", {"tab_id": tabs[n % len(tabs)]})
        print("ready", flush=True)
        await anyio.to_thread.run_sync(sys.stdin.readline)

        async def worker(n: int) -> None:
            for i in range(calls // in_flight):
                await timed(s, "todomvc_list_todos", {"tab_id": tabs[(n + i) % len(tabs)]})

        async with anyio.create_task_group() as tg:
            for n in range(in_flight):
                tg.start_soon(worker, n)
        print("done", flush=True)


async def parallel_clients(args: list[str], env: dict, tabs: list[int]) -> float:
    """Calls/s of CLIENTS client processes with IN_FLIGHT / CLIENTS calls in flight each, CONCURRENT in all."""
    per_client = CONCURRENT // CLIENTS
    command = [sys.executable, __file__, "--client", json.dumps([args, env, tabs, per_client, IN_FLIGHT // CLIENTS])]
    procs = [subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in range(CLIENTS)]
    try:
        for p in procs:
            line = await anyio.to_thread.run_sync(p.stdout.readline)
            if line.strip() != "ready":
                raise RuntimeError(f"a client process failed to start: {line!r}")
        t0 = time.perf_counter()
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        for p in procs:
            line = await anyio.to_thread.run_sync(p.stdout.readline)
            if line.strip() != "done":
                raise RuntimeError(f"a client process failed: {line!r}")
        return per_client * CLIENTS / (time.perf_counter() - t0)
    finally:
        for p in procs:
            p.stdin.close()
            p.wait(timeout=30)


async def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="tabwire-bench-"))
    secret = os.urandom(32).hex()
    (work / "secret").write_text(secret)
    (work / "secret").chmod(0o600)
    port = free_port()
    ext = paired_extension(work / "extension-root", port, secret)
    site = StaticServer(TODOMVC, work / "site.log")
    page = site.url("plain", "examples/vanillajs/index.html")
    args = ["mcp", "--port", str(port), "--secret-file", str(work / "secret"),
            "--adapter-match", "todomvc=http://127.0.0.1/*"]
    env = {"RUST_LOG": "warn", "XDG_CONFIG_HOME": str(work / "config")}
    browser = None
    try:
        async with open_tabwire_session(BINARY, args, env=env, cwd=REPO, stderr_path=work / "tabwire.log") as s:
            pid = tabwire_pid(port)
            idle = rss_kib(pid)
            t0 = time.perf_counter()
            browser = Chromium(work / "profile", work / "chromium.log", ext, page)
            await s.wait_for_tools("todomvc_list_todos", timeout=30)
            print(f"start:       tools visible {(time.perf_counter() - t0) * 1000:.0f} ms after Chromium was launched")
            tabs = [(await s.call_ok("browser_tabs")).structured["tabs"][0]["id"]]
            for _ in range(TABS - 1):
                opened = await s.call_ok("browser_open", {"url": page})
                tabs.append(opened.structured["tab_id"])
            for _ in range(100):  # warm up both sides
                await timed(s, "todomvc_list_todos", {})
            base = [await timed(s, "browser_tabs", {}) for _ in range(SEQUENTIAL)]
            print(f"baseline:    browser_tabs (client + server only)      {quantiles(base)}")
            seq = [await timed(s, "todomvc_list_todos", {"tab_id": tabs[0]}) for _ in range(SEQUENTIAL)]
            print(f"sequential:  todomvc_list_todos, whole path          {quantiles(seq)}")
            done = 0
            t0 = time.perf_counter()

            async def worker(n: int) -> None:
                nonlocal done
                for i in range(CONCURRENT // IN_FLIGHT):
                    await timed(s, "todomvc_list_todos", {"tab_id": tabs[(n + i) % TABS]})
                    done += 1

            async with anyio.create_task_group() as tg:
                for n in range(IN_FLIGHT):
                    tg.start_soon(worker, n)
            rate = done / (time.perf_counter() - t0)
            print(f"throughput:  {rate:.0f} calls/s with {IN_FLIGHT} in flight over {TABS} tabs ({done} calls)")
            rate = await parallel_clients(args, env, tabs)
            print(f"throughput:  {rate:.0f} calls/s from {CLIENTS} client processes, {IN_FLIGHT // CLIENTS} in flight each ({CONCURRENT} calls)")
            rust = await anyio.to_thread.run_sync(lambda: subprocess.run(
                ["cargo", "bench", "-q", "-p", "server", "--bench", "browser_client"],
                env={**os.environ, **env, "TABWIRE_BIN": str(BINARY), "TABWIRE_BENCH_ARGS": json.dumps(args),
                     "TABWIRE_BENCH_TABS": json.dumps(tabs)},
                cwd=REPO, capture_output=True, text=True, check=True))
            print(f"rmcp client: todomvc_list_todos through a peer     {rust.stdout.strip()}")
            print(f"server RSS:  idle {idle / 1024:.1f} MB, after the load {rss_kib(pid) / 1024:.1f} MB")
        browser.stop()
        browser = None
        ping = await bare_ping(work, page)
        print(f"bare ping:   server → worker → tab → worker → server  {quantiles(ping)}")
        overhead = statistics.median(seq) / statistics.median(ping) - 1
        print(f"overhead:    the tool call's p50 over the bare ping's: {overhead * 100:+.0f} %")
        alive, after_idle = await start_after_idle(work)
        state = "still running" if alive else "stopped"
        print(f"idle start:  connected {after_idle:.0f} ms after tabwire started ({IDLE_S} s idle, no page; worker {state})")
        await start_latency(page)
    finally:
        if browser is not None:
            browser.stop()
        site.stop()
    for name in ("worker/worker_bg.wasm", "injector/injector_bg.wasm", "injector/injector_wasm.js",
                 "injector-js/injector_bg.wasm.js"):
        path = EXTENSION_ROOT / "extension" / "dist" / name
        if path.exists():
            print(f"size:        {name} {path.stat().st_size / 1024:.0f} KB")


ACT_CALLS = 300
ACT_TODOS = int(os.environ.get("TABWIRE_BENCH_TODOS", "1"))


async def act_latency(extensions: list[Path]) -> None:
    """`bench.py --act DIR...`: round trips of `todomvc_toggle_todo` (a within, a read, a click, a wait for
    the re-render) and of `todomvc_list_todos` (reads only) against TodoMVC, for each extension copy in
    turn, twice over in alternation, so builds are compared side by side in one run."""
    site = StaticServer(TODOMVC, Path(tempfile.mkdtemp(prefix="tabwire-bench-site-")) / "site.log")
    page = site.url("plain", "examples/vanillajs/index.html")
    try:
        for root in extensions * 2:
            work = Path(tempfile.mkdtemp(prefix="tabwire-bench-act-"))
            _, ext, args = paired_setup(work, "act", root)
            browser = Chromium(work / "profile", work / "chromium.log", ext, page)
            env = {"RUST_LOG": "warn", "XDG_CONFIG_HOME": str(work / "config")}
            try:
                async with open_tabwire_session(BINARY, args, env=env, cwd=REPO, stderr_path=work / "tabwire.log") as s:
                    await s.wait_for_tools("todomvc_toggle_todo", timeout=30)
                    for n in range(1, ACT_TODOS):
                        await s.call_ok("todomvc_add_todo", {"title": f"Todo number {n} of the bench"})
                    await s.call_ok("todomvc_add_todo", {"title": "Bench"})
                    for _ in range(50):  # warm up
                        await timed(s, "todomvc_toggle_todo", {"title": "Bench"})
                    act = [await timed(s, "todomvc_toggle_todo", {"title": "Bench"}) for _ in range(ACT_CALLS)]
                    read = [await timed(s, "todomvc_list_todos", {}) for _ in range(ACT_CALLS)]
                print(f"act:         {root.name} ({ACT_TODOS} todos): toggle_todo {quantiles(act)}  | list_todos {quantiles(read)}")
            finally:
                browser.stop()
    finally:
        site.stop()


async def latency_only() -> None:
    site = StaticServer(TODOMVC, Path(tempfile.mkdtemp(prefix="tabwire-bench-site-")) / "site.log")
    try:
        await start_latency(site.url("plain", "examples/vanillajs/index.html"))
    finally:
        site.stop()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--client"]:
        anyio.run(client_process, *json.loads(sys.argv[2]))
    elif sys.argv[1:2] == ["--latency"]:
        anyio.run(latency_only)
    elif sys.argv[1:2] == ["--act"]:
        anyio.run(act_latency, [Path(d).resolve() for d in sys.argv[2:]] or [EXTENSION_ROOT])
    else:
        anyio.run(main)

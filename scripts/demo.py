"""Tabwire's demo: the product's main job, end to end, narrated.

Starts `tabwire mcp` the way Claude Desktop does (a child process speaking MCP over stdio, here driven
by the official Python MCP SDK client), TodoMVC on 127.0.0.1, and headless Chromium with the extension
loaded unpacked from this repository and paired by ./build.sh (extension/pairing.json). Then prints
the tools as they register and a few real calls with their results and round-trip times.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))

from harness.chromium import Chromium  # noqa: E402
from harness.mcp_client import LIST_CHANGED, open_tabwire_session  # noqa: E402
from harness.static_server import StaticServer  # noqa: E402
from harness.waiting import wait_for  # noqa: E402

CACHE = Path(os.environ.get("TABWIRE_CACHE") or Path.home() / ".cache" / "tabwire")
TODOMVC = CACHE / "apps" / "node_modules" / "todomvc"
BINARY = REPO / "target" / "release" / "tabwire"
START = time.perf_counter()


def say(text: str) -> None:
    print(f"[{time.perf_counter() - START:6.2f}s] {text}", flush=True)


def port_is_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


async def timed_call(session, name: str, args: dict) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = await session.call(name, args)
    ms = (time.perf_counter() - t0) * 1000
    shown = json.dumps(out.structured) if out.structured is not None else out.text
    mark = "ERROR " if out.is_error else ""
    print(f"    {name}({json.dumps(args)}) → {mark}{shown[:160]}   {ms:.1f} ms", flush=True)
    return ms, out


async def main() -> int:
    pairing = json.loads((REPO / "extension" / "pairing.json").read_text())
    port = pairing["port"]
    if not port_is_free(port):
        print(
            f"port {port} on 127.0.0.1 is taken (another tabwire?). Stop it, or choose another port with "
            f"`target/release/tabwire pair --port N --extension-config extension/pairing.json` and run again.",
            file=sys.stderr,
        )
        return 1
    work = Path(tempfile.mkdtemp(prefix="tabwire-demo-"))
    site = StaticServer(TODOMVC, work / "site.log")
    page = site.url("plain", "examples/vanillajs/index.html")
    print("Tabwire demo")
    print(f"  server   {BINARY.relative_to(REPO)} mcp  (WebSocket on 127.0.0.1:{port}; logs: {work}/tabwire.log)")
    print(f"  site     TodoMVC at {page}")
    print(f"  browser  headless Chromium with the extension loaded unpacked from {REPO}")
    args = ["mcp", "--adapter-match", "todomvc=http://127.0.0.1/*"]
    env = {"RUST_LOG": "info", "HOME": str(Path.home())}
    browser = None
    try:
        async with open_tabwire_session(BINARY, args, env=env, cwd=REPO, stderr_path=work / "tabwire.log") as s:
            info = s.init.server_info
            say(f"MCP session up: {info.name} {info.version}, protocol {s.init.protocol_version}")
            say(f"tools/list: {', '.join(sorted(await s.tool_names()))}")
            browser = Chromium(work / "profile", work / "chromium.log", REPO, None)
            t_browser = time.perf_counter()
            say("Chromium started; opening TodoMVC with browser_open (waits until the page's tools register)")
            await wait_for(
                lambda: _opened(s, page),
                timeout=30,
                what="browser_open to succeed (the extension connects to tabwire first)",
            )
            await s.wait_for_list_changed(0, timeout=5)
            tools = await s.tool_names()
            say(
                f"{s.list_changed_count()} × {LIST_CHANGED} received; site tools: "
                f"{', '.join(sorted(t for t in tools if t.startswith('todomvc_')))} "
                f"({(time.perf_counter() - t_browser) * 1000:.0f} ms after Chromium started)"
            )
            say("calling site tools:")
            await timed_call(s, "todomvc_add_todo", {"title": "Buy milk"})
            await timed_call(s, "todomvc_add_todo", {"title": "Walk the dog"})
            await timed_call(s, "todomvc_toggle_todo", {"title": "Buy milk"})
            await timed_call(s, "todomvc_list_todos", {})
            await timed_call(s, "todomvc_toggle_todo", {"title": "Feed the cat"})
            await timed_call(s, "browser_tabs", {})
            times = [(await timed_call_quiet(s)) for _ in range(200)]
            times.sort()
            say(
                f"200 × todomvc_list_todos round trips: p50 {statistics.median(times):.2f} ms, "
                f"p90 {times[179]:.2f} ms, p99 {times[197]:.2f} ms"
            )
    finally:
        if browser is not None:
            browser.stop()
        site.stop()
    say("done")
    return 0


async def _opened(session, page: str):
    out = await session.call("browser_open", {"url": page})
    if out.is_error:
        return None
    print(f"    browser_open → {json.dumps(out.structured)[:200]}", flush=True)
    return out


async def timed_call_quiet(session) -> float:
    t0 = time.perf_counter()
    out = await session.call("todomvc_list_todos", {})
    assert not out.is_error, out
    return (time.perf_counter() - t0) * 1000


if __name__ == "__main__":
    sys.exit(anyio.run(main))

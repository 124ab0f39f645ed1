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
import re
import statistics
import subprocess
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
    """Whether tabwire could listen on the port. SO_REUSEADDR, as tabwire's listener sets it: the
    TIME-WAIT leftovers of a run that just ended do not make a port taken; another listener does."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
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
    # The same app from a second server (another port), which no adapter matches: page tools' ground.
    # The demo's grant of page tools to it goes into a config folder of the demo's own, not yours.
    other_site = StaticServer(TODOMVC, work / "other-site.log")
    other = other_site.url("plain", "examples/vanillajs/index.html")
    config = work / "config"
    secret = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "tabwire" / "secret"
    env = {"RUST_LOG": "info", "HOME": str(Path.home()), "XDG_CONFIG_HOME": str(config)}
    allow = [str(BINARY), "allow", other_site.origin]
    subprocess.run(allow, env=env, check=True, capture_output=True)
    print(f"  grant    page tools allowed on {other_site.origin} (`tabwire allow`, in {config})")
    # The adapter serves the first server only: a pattern without a port would match every port.
    args = ["mcp", "--adapter-match", f"todomvc={site.origin}/*", "--secret-file", str(secret)]
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
            say("and one error on purpose: toggling a todo that is not in the list. The adapter's step finds")
            say("no such item, and the answer says so (the model reads it and can list the todos first):")
            await timed_call(s, "todomvc_toggle_todo", {"title": "Feed the cat"})
            await timed_call(s, "browser_tabs", {})
            times = [(await timed_call_quiet(s)) for _ in range(200)]
            times.sort()
            say(
                f"200 × todomvc_list_todos round trips: p50 {statistics.median(times):.2f} ms, "
                f"p90 {times[179]:.2f} ms, p99 {times[197]:.2f} ms"
            )
            await page_tools_demo(s, other)
    finally:
        if browser is not None:
            browser.stop()
        site.stop()
        other_site.stop()
    say("done")
    return 0


async def page_tools_demo(session, url: str) -> None:
    """Page tools on a page no adapter covers: what a person sees as a compact snapshot with refs,
    then acting by ref, each answer saying what changed."""
    say(f"page tools on {url} (no adapter matches this server):")
    opened = await session.browser_open(url)
    tab = opened.structured["tab_id"]

    async def snapshot_with_field():
        out = await session.call("page_snapshot", {"tab_id": tab})
        found = re.search(r'^\s*textbox (e\d+) "What needs to be done\?"', out.text, re.M)
        return (out, found[1]) if found else None

    snapshot, field = await wait_for(snapshot_with_field, timeout=15, what="the app's input in a snapshot")
    lines = snapshot.text.splitlines()
    print("    page_snapshot →", *(f"      {line}" for line in lines[:8]), sep="\n", flush=True)
    await timed_call(session, "page_act", {"tab_id": tab, "ref": field, "action": "fill", "value": "Read the page tools doc"})
    await timed_call(session, "page_act", {"tab_id": tab, "ref": field, "action": "press", "key": "Enter"})
    say("and one error on purpose: acting on a ref the page never had. The answer says the ref is")
    say("unknown and to take a new snapshot, so the model recovers by itself:")
    await timed_call(session, "page_act", {"tab_id": tab, "ref": "e9999", "action": "click"})


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

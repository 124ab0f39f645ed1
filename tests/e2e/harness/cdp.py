"""A minimal Chrome DevTools Protocol client: list targets, evaluate JS in a page, reload it.

Used as the tests' independent oracle (TodoMVC's own `localStorage`, the page's DOM and CSP), never
through tabwire. Every call opens its own short WebSocket to the target, so nothing is shared between tests.
"""

from __future__ import annotations

import itertools
import json
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from websockets.asyncio.client import connect

from .waiting import wait_for

# Only 127.0.0.1 traffic: never let an environment proxy setting reroute DevTools requests.
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
_ids = itertools.count(1)


class CdpError(AssertionError):
    """DevTools answered with an error, or the evaluated JS threw."""


@dataclass(frozen=True)
class Target:
    id: str
    type: str
    url: str
    title: str
    ws_url: str


@dataclass
class EventLog:
    """DevTools events seen in one session, in order; `command` sends one in that session (whose
    domain may be needed: a dialog is answered in the session that saw it open)."""

    events: list[dict[str, Any]] = field(default_factory=list)
    replies: dict[int, dict[str, Any]] = field(default_factory=dict)
    ws: Any = None

    def add(self, frame: dict[str, Any]) -> None:
        if "method" in frame:
            self.events.append(frame)
        elif "id" in frame:
            self.replies[frame["id"]] = frame

    async def command(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        msg_id = next(_ids)
        await self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params or {}}))
        reply = await wait_for(lambda: self.replies.get(msg_id), timeout=30, what=f"the answer to CDP {method}")
        if "error" in reply:
            raise CdpError(f"CDP {method} failed: {reply['error']}")
        return reply["result"]

    def of(self, method: str) -> list[dict[str, Any]]:
        return [e["params"] for e in self.events if e["method"] == method]


class Cdp:
    """DevTools endpoint of one Chromium (`http://127.0.0.1:<port>`)."""

    def __init__(self, port: int) -> None:
        self.port = port

    def _targets_sync(self) -> list[Target]:
        with _NO_PROXY.open(f"http://127.0.0.1:{self.port}/json/list", timeout=10) as r:
            raw = json.load(r)
        return [
            Target(t["id"], t["type"], t.get("url", ""), t.get("title", ""), t.get("webSocketDebuggerUrl", ""))
            for t in raw
        ]

    async def targets(self) -> list[Target]:
        return await anyio.to_thread.run_sync(self._targets_sync)

    async def browser_target(self) -> Target:
        """The browser-wide target (for `Target.*` commands, e.g. opening a tab as a person does)."""

        def version() -> dict[str, Any]:
            with _NO_PROXY.open(f"http://127.0.0.1:{self.port}/json/version", timeout=10) as r:
                return json.load(r)

        url = (await anyio.to_thread.run_sync(version))["webSocketDebuggerUrl"]
        return Target("browser", "browser", "", "", url)

    async def wait_for_page(self, url_prefix: str, *, timeout: float = 20) -> Target:
        """The page target whose URL starts with `url_prefix` (waits until it exists)."""

        async def find() -> Target | None:
            for t in await self.targets():
                if t.type == "page" and t.url.startswith(url_prefix) and t.ws_url:
                    # The target's URL is the pending navigation's; wait until the document is really there.
                    href = await self.evaluate(t, "location.href")
                    if isinstance(href, str) and href.startswith(url_prefix):
                        return t
            return None

        return await wait_for(
            find, timeout=timeout, what=f"a Chromium page showing {url_prefix}", ignore=(CdpError, OSError)
        )

    async def send(self, target: Target, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one CDP command to `target` and return its result."""
        msg_id = next(_ids)
        async with connect(target.ws_url, max_size=None, proxy=None, open_timeout=10) as ws:
            await ws.send(json.dumps({"id": msg_id, "method": method, "params": params or {}}))
            reply = None
            with anyio.move_on_after(30):
                while True:
                    frame = json.loads(await ws.recv())
                    if frame.get("id") == msg_id:
                        reply = frame
                        break
            if reply is None:
                raise CdpError(f"no answer to CDP {method} from {target.url} within 30s")
        if "error" in reply:
            raise CdpError(f"CDP {method} failed: {reply['error']}")
        return reply["result"]

    async def evaluate(self, target: Target, expression: str, *, await_promise: bool = False) -> Any:
        """Evaluate `expression` in the page's main world and return its JSON value."""
        result = await self.send(
            target,
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": await_promise},
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise CdpError(f"JS threw while evaluating {expression[:200]!r}: {text}")
        return result["result"].get("value")

    async def evaluate_in_frame(self, target: Target, url_prefix: str, expression: str) -> Any:
        """Evaluate `expression` in the (cross-origin) frame of `target` whose URL starts with
        `url_prefix`, in an isolated world of that frame (its DOM, not the page's globals); `None`
        while no such frame exists."""
        async with connect(target.ws_url, max_size=None, proxy=None, open_timeout=10) as ws:

            async def call(method: str, params: dict[str, Any]) -> dict[str, Any]:
                msg_id = next(_ids)
                await ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
                with anyio.fail_after(30):
                    while True:
                        frame = json.loads(await ws.recv())
                        if frame.get("id") == msg_id:
                            break
                if "error" in frame:
                    raise CdpError(f"CDP {method} failed: {frame['error']}")
                return frame["result"]

            def frames(tree: dict[str, Any]) -> Iterator[dict[str, Any]]:
                yield tree["frame"]
                for child in tree.get("childFrames", []):
                    yield from frames(child)

            tree = (await call("Page.getFrameTree", {}))["frameTree"]
            found = next((f for f in frames(tree) if f.get("url", "").startswith(url_prefix)), None)
            if found is None:
                return None
            world = await call("Page.createIsolatedWorld", {"frameId": found["id"], "worldName": "tabwire-test"})
            result = await call(
                "Runtime.evaluate",
                {"expression": expression, "contextId": world["executionContextId"], "returnByValue": True},
            )
            if "exceptionDetails" in result:
                raise CdpError(f"JS threw in the frame while evaluating {expression[:200]!r}")
            return result["result"].get("value")

    @asynccontextmanager
    async def recording(self, target: Target, enable: str) -> AsyncIterator[EventLog]:
        """Record the events of `target` while inside: one DevTools session held open, domain
        `enable` (e.g. "Network") enabled on it first."""
        log = EventLog()
        async with connect(target.ws_url, max_size=None, proxy=None, open_timeout=10) as ws:
            log.ws = ws
            msg_id = next(_ids)
            await ws.send(json.dumps({"id": msg_id, "method": f"{enable}.enable", "params": {}}))

            async def enabled() -> bool:
                while True:
                    frame = json.loads(await ws.recv())
                    if frame.get("id") == msg_id:
                        if "error" in frame:
                            raise CdpError(f"CDP {enable}.enable failed: {frame['error']}")
                        return True
                    log.add(frame)

            with anyio.fail_after(30):
                await enabled()
            async with anyio.create_task_group() as tasks:

                async def read() -> None:
                    async for raw in ws:
                        log.add(json.loads(raw))

                tasks.start_soon(read)
                try:
                    yield log
                finally:
                    tasks.cancel_scope.cancel()

    async def reload(self, target: Target, *, timeout: float = 20) -> None:
        """Reload the page and wait until the new document has finished loading."""
        await self.evaluate(target, "window.__tabwireTestBeforeReload = true")
        await self.send(target, "Page.reload", {"ignoreCache": True})

        async def reloaded() -> bool:
            return bool(
                await self.evaluate(
                    target,
                    "window.__tabwireTestBeforeReload === undefined && document.readyState === 'complete'",
                )
            )

        await wait_for(reloaded, timeout=timeout, what="the reloaded page to finish loading", ignore=(Exception,))


# What the extension's content runtime holds in the page's isolated world, found with
# `Runtime.queryObjects` as DevTools' memory panel finds it: the length of every WebAssembly.Table
# (wasm-bindgen's externref table, which grows only when every slot it has is taken) and the size of
# every WebAssembly.Memory, after a forced garbage collection.
_SIZES_OF = "function () { return this.map((o) => o instanceof WebAssembly.Table ? o.length : o.buffer.byteLength); }"


@asynccontextmanager
async def _in_world(target: Target, world_name: str | None) -> AsyncIterator[tuple[Any, dict]]:
    """A DevTools session on `target` and the execution context named `world_name` (an extension's
    isolated world in a page; `None`: the target's own context, e.g. a service worker's): yields the
    session's `call(method, params)` and the context."""
    async with connect(target.ws_url, max_size=None, proxy=None, open_timeout=10) as ws:
        answers: dict[int, Any] = {}
        contexts: list[dict] = []

        async def call(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
            msg_id = next(_ids)
            await ws.send(json.dumps({"id": msg_id, "method": method, "params": params or {}}))
            with anyio.fail_after(30):
                while msg_id not in answers:
                    frame = json.loads(await ws.recv())
                    if frame.get("method") == "Runtime.executionContextCreated":
                        contexts.append(frame["params"]["context"])
                    elif "id" in frame:
                        answers[frame["id"]] = frame
            reply = answers.pop(msg_id)
            if "error" in reply:
                raise CdpError(f"CDP {method} failed: {reply['error']}")
            return reply["result"]

        await call("Runtime.enable")  # reports every existing context with executionContextCreated
        world = next((c for c in contexts if world_name is None or c.get("name") == world_name), None)
        if world is None:
            raise CdpError(f"no execution context named {world_name!r} in {target.url}: {contexts}")
        yield call, world


async def evaluate_in_world(target: Target, world_name: str, expression: str) -> Any:
    """The value of `expression` in the isolated world named `world_name` of the page `target`."""
    async with _in_world(target, world_name) as (call, world):
        out = await call("Runtime.evaluate", {"expression": expression, "contextId": world["id"], "returnByValue": True})
        return out["result"].get("value")


async def wasm_sizes(cdp: Cdp, target: Target, world_name: str | None) -> dict[str, list[int]]:
    """{"tables": [length...], "memories": [bytes...]} in the isolated world named `world_name` (an
    extension's name) of the page `target`, or with `None` in the target's own context (e.g. a
    service worker's)."""
    async with _in_world(target, world_name) as (call, world):
        await call("HeapProfiler.collectGarbage")
        sizes: dict[str, list[int]] = {}
        for kind, prototype in (("tables", "WebAssembly.Table.prototype"), ("memories", "WebAssembly.Memory.prototype")):
            proto = await call("Runtime.evaluate", {"expression": prototype, "contextId": world["id"]})
            found = await call("Runtime.queryObjects", {"prototypeObjectId": proto["result"]["objectId"]})
            lengths = await call(
                "Runtime.callFunctionOn",
                {"functionDeclaration": _SIZES_OF, "objectId": found["objects"]["objectId"], "returnByValue": True},
            )
            sizes[kind] = lengths["result"]["value"]
        return sizes

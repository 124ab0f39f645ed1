"""What compiling the content runtime's wasm costs in a page, against the module's size and how it is
compiled (issue 32; numbers only, never pass/fail: run scripts/bench.sh --wasm-compile).

Headless Chromium with the real extension; every sample runs in a page of a site of its own
(`s<N>.test`, mapped to 127.0.0.1 by `--host-resolver-rules`), so site isolation gives it a fresh
renderer process, where nothing was compiled before. In each page it times, in the extension's
isolated world (where content.js runs):
- `WebAssembly.compileStreaming(fetch(chrome.runtime.getURL(...)))` of the shipped runtime: the
  first compile in the process ("cold"), then a second compile of the same bytes in that process
  ("same process again": V8 shares a compiled module across a process by its bytes), and
  `instantiate` of the compiled module with stub imports;
- the samples in order: if V8 cached compiled code for the extension's resource across processes
  (its wasm code cache), the later cold compiles would drop;
then, in the page's own world, each module variant fetched from 127.0.0.1, cold in its own process:
`compileStreaming` and `compile(bytes)` (after the bytes arrived): the shipped injector (`-Oz`), the
same through `wasm-opt -O2`, and the service worker's module.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import anyio

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))

from harness import chromium as chromium_harness  # noqa: E402
from harness.cdp import Cdp, CdpError, _in_world  # noqa: E402
from harness.static_server import StaticServer  # noqa: E402
from harness.waiting import wait_for  # noqa: E402

ROUNDS = int(os.environ.get("TABWIRE_BENCH_ROUNDS", "12"))
CACHE = Path(os.environ.get("TABWIRE_CACHE", Path.home() / ".cache" / "tabwire"))
WASM_OPT = CACHE / "npm" / "node_modules" / ".bin" / "wasm-opt"
# Another checkout's built extension (TABWIRE_BENCH_EXTENSION=ROOT), e.g. while this one builds.
EXTENSION = Path(os.environ.get("TABWIRE_BENCH_EXTENSION", REPO))
INJECTOR = EXTENSION / "extension" / "dist" / "injector" / "injector_bg.wasm"
WORKER = EXTENSION / "extension" / "dist" / "worker" / "worker_bg.wasm"

# Times a compile (streaming from `url`, or from the bytes once they arrived) and an instantiation
# with stub imports (each import a function that throws: nothing runs, only the linking is timed).
TIMED_COMPILE = """
(async () => {
  const url = %s, streaming = %s;
  const stubs = (module) => {
    const imports = {};
    for (const i of WebAssembly.Module.imports(module)) {
      imports[i.module] ??= {};
      imports[i.module][i.name] = i.kind === "function" ? () => { throw new Error("stub"); }
        : i.kind === "memory" ? new WebAssembly.Memory({ initial: 17 })
        : i.kind === "table" ? new WebAssembly.Table({ initial: 1024, element: "anyfunc" })
        : new WebAssembly.Global({ value: "i32", mutable: true }, 0);
    }
    return imports;
  };
  const compile = async () => {
    if (streaming) return WebAssembly.compileStreaming(fetch(url));
    const bytes = await (await fetch(url)).arrayBuffer();
    const t = performance.now();
    const module = await WebAssembly.compile(bytes);
    return [module, performance.now() - t];
  };
  let t0 = performance.now();
  let module = await compile();
  let cold = performance.now() - t0;
  if (!streaming) [module, cold] = module;
  t0 = performance.now();
  let again = await compile();
  let warm = performance.now() - t0;
  if (!streaming) [again, warm] = again;
  t0 = performance.now();
  let instantiate = null;
  try { await WebAssembly.instantiate(module, stubs(module)); instantiate = performance.now() - t0; } catch (e) {}
  return { cold, warm, instantiate };
})()
"""


async def evaluate_awaited(target, world_name: str, expression: str):
    """`expression`'s awaited JSON value in the isolated world named `world_name` of the page `target`."""
    async with _in_world(target, world_name) as (call, world):
        out = await call(
            "Runtime.evaluate",
            {"expression": expression, "contextId": world["id"], "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in out:
            raise CdpError(f"JS threw: {out['exceptionDetails']}")
        return out["result"].get("value")


def variants(work: Path) -> dict[str, Path]:
    """The module files to compile, copied into `work` (served from 127.0.0.1)."""
    out = {"injector -Oz (shipped)": INJECTOR, "service worker -Oz (shipped)": WORKER}
    if WASM_OPT.exists():
        o2 = work / "injector-O2.wasm"
        subprocess.run([str(WASM_OPT), "-O2", str(INJECTOR), "-o", str(o2)], check=True)
        out["injector -O2"] = o2
    served = {}
    for i, (name, path) in enumerate(out.items()):
        copy = work / "site" / f"m{i}.wasm"
        copy.parent.mkdir(exist_ok=True)
        shutil.copyfile(path, copy)
        served[name] = copy
    return served


async def new_page(cdp: Cdp, url: str):
    """A new tab showing `url` (DevTools' `/json/new`)."""

    def open_tab() -> None:
        request = urllib.request.Request(f"http://127.0.0.1:{cdp.port}/json/new?{url}", method="PUT")
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=10) as reply:
            reply.read()

    await anyio.to_thread.run_sync(open_tab)
    return await cdp.wait_for_page(url)


async def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="tabwire-bench-wasm-"))
    modules = variants(work)
    (work / "site" / "index.html").write_text("<!doctype html><title>wasm</title><p>compile bench</p>")
    server = StaticServer(work / "site", work / "site.log")
    port = int(server.url("plain", "index.html").split(":")[2].split("/")[0])
    chromium_harness.BASE_FLAGS = [*chromium_harness.BASE_FLAGS, "--host-resolver-rules=MAP *.test 127.0.0.1"]
    browser = chromium_harness.Chromium(work / "profile", work / "chromium.log", EXTENSION, None)
    site = 0

    def page_url() -> str:
        nonlocal site
        site += 1
        return f"http://s{site}.test:{port}/plain/index.html"

    ext_rows: list[dict] = []
    page_rows: dict[str, dict[str, list]] = {name: {"streaming": [], "bytes": []} for name in modules}
    try:
        cdp = await browser.wait_ready()
        injector_url = "chrome.runtime.getURL('extension/dist/injector/injector_bg.wasm')"

        async def extension_world_ready() -> bool:
            # The worker registers its document_start scripts (which make the world) as it starts.
            page = await new_page(cdp, page_url())
            try:
                return await evaluate_awaited(page, "Tabwire", "true")
            except CdpError:
                return False
            finally:
                await cdp.send(page, "Page.close")

        await wait_for(extension_world_ready, timeout=30, what="the extension's content scripts in a page")
        for _ in range(ROUNDS):
            page = await new_page(cdp, page_url())
            ext_rows.append(await evaluate_awaited(page, "Tabwire", TIMED_COMPILE % (injector_url, "true")))
            await cdp.send(page, "Page.close")
            for name, path in modules.items():
                for mode in ("streaming", "bytes"):
                    page = await new_page(cdp, page_url())
                    url = json.dumps(f"/plain/{path.name}")
                    row = await cdp.evaluate(page, TIMED_COMPILE % (url, "true" if mode == "streaming" else "false"),
                                             await_promise=True)
                    page_rows[name][mode].append(row)
                    await cdp.send(page, "Page.close")
    finally:
        browser.stop()
        server.stop()

    def p50(rows: list[dict], key: str) -> str:
        values = [r[key] for r in rows if r.get(key) is not None]
        return f"{statistics.median(values):7.1f}" if values else "    n/a"

    load = os.getloadavg()
    print(f"wasm compile in a fresh renderer process ({time.strftime('%Y-%m-%d %H:%M')}, load {load[0]:.2f}, "
          f"{ROUNDS} samples each, ms p50)")
    print("the runtime from its extension URL, content-script world (compileStreaming):")
    print(f"  cold {p50(ext_rows, 'cold')}   same process again {p50(ext_rows, 'warm')}   "
          f"instantiate {p50(ext_rows, 'instantiate')}")
    print("  cold compiles in order (a wasm code cache would make the later ones drop): "
          + " ".join(f"{r['cold']:.0f}" for r in ext_rows))
    print("module variants from 127.0.0.1, the page's world:")
    print(f"  {'module':50} {'bytes':>9} {'stream cold':>12} {'bytes cold':>11} {'again':>8} {'instantiate':>12}")
    for name, path in modules.items():
        rows = page_rows[name]
        print(f"  {name:50} {path.stat().st_size:9,} {p50(rows['streaming'], 'cold'):>12} "
              f"{p50(rows['bytes'], 'cold'):>11} {p50(rows['bytes'], 'warm'):>8} "
              f"{p50(rows['bytes'], 'instantiate'):>12}")


if __name__ == "__main__":
    anyio.run(main)

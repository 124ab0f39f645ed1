// extension/content.js — the content-script loader (classic script, registered dynamically by
// the worker at document_start for the adapters' match patterns and the origins where page tools
// are allowed, or injected on demand). Loads the Rust runtime (crate `injector`): the wasm build,
// or its wasm2js build when the page's CSP forbids compiling wasm; then starts it with the name of
// the build that runs ("wasm" or "js", reported to the worker in page_ready).
(() => {
  if (globalThis.__tabwireRuntime) return; // injected twice (registered script + executeScript)
  globalThis.__tabwireRuntime = "loading";
  // The runtime once it has started: worker.js's __tabwireWarmProbe waits on it, so that
  // browser_open answers once the runtime's call path is warm (issue 32, page/warm.rs).
  let started;
  globalThis.__tabwireStarted = new Promise((resolve) => (started = resolve));
  const url = (path) => chrome.runtime.getURL("extension/dist/" + path);
  // When the runtime is compiled (issue 32, BENCHMARKS.md). Compiling it while the page parses
  // slowed a person's load measurably (TodoMVC's DOMContentLoaded +22 %), so on a load that no call
  // waits for it begins once the page has loaded. A load Tabwire set off (a call's navigation,
  // `browser_open`) is hurried: the worker runs worker.js's __tabwireHurryRuntime here as the load
  // commits, and V8 compiles the module off the main thread while the page parses. Injected into a
  // page already parsed, it begins at once.
  let begin;
  const begun = new Promise((resolve) => (begin = resolve));
  // How far the page had come when the runtime began (test_preload.py reads it).
  begun.then(() => (globalThis.__tabwireBegan = document.readyState));
  globalThis.__tabwireHurry = begin;
  if (globalThis.__tabwireHurried || document.readyState !== "loading") begin();
  // A task of its own, after the load event: starting the compile is work on the main thread,
  // which would otherwise count in the page's load event.
  else window.addEventListener("load", () => setTimeout(begin, 0), { once: true });
  // The runtime's companions (its glue, its wasm's bytes, the code adapters' handlers) are there
  // when the worker injected them with this script (its CONTENT_SCRIPTS): no fetch. Registered
  // (the worker's LOADER) or imported by the WebMCP loader, this script fetches them once begun:
  // the glue and the handlers as modules (they set the same globals), the wasm streamed.
  const companions = begun.then(() =>
    globalThis.__tabwireInjector
      ? undefined
      : Promise.all([import(url("injector/injector.js")), import(url("code-adapters.js"))]),
  );
  companions.catch(() => {});
  // A refusal (the page's CSP lacks 'wasm-unsafe-eval') is handled where the module is awaited.
  const compiled = begun.then(() => {
    const base64 = globalThis.__tabwireInjectorWasm;
    if (!base64) {
      return fetch(url("injector/injector_bg.wasm")).then((wasm) =>
        // Streaming needs the wasm MIME type, which not every browser gives an extension's file.
        wasm.headers.get("Content-Type") === "application/wasm"
          ? WebAssembly.compileStreaming(wasm)
          : wasm.arrayBuffer().then((bytes) => WebAssembly.compile(bytes)),
      );
    }
    // Not kept by this world once decoded (the script's literal is Chrome's to keep or drop).
    globalThis.__tabwireInjectorWasm = undefined;
    const bytes = Uint8Array.fromBase64
      ? Uint8Array.fromBase64(base64)
      : Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    return WebAssembly.compile(bytes);
  });
  compiled.catch(() => {});
  (async () => {
    await begun;
    // Not running before the document is parsed: instantiating and starting the runtime while the
    // page loads delayed its DOMContentLoaded about twofold on a loaded 2-core machine
    // (BENCHMARKS.md, issue 32); only the compile above overlaps the parse.
    if (document.readyState === "loading") {
      await new Promise((parsed) => document.addEventListener("DOMContentLoaded", parsed, { once: true }));
    }
    // The code adapters' handlers (adapters/code, bundled at build time) are there before the
    // runtime starts.
    await companions;
    let runtime = "wasm";
    let module;
    try {
      module = globalThis.__tabwireInjector;
      await module({ module_or_path: compiled });
    } catch (e) {
      runtime = "js"; // e.g. CompileError: the page's CSP lacks 'wasm-unsafe-eval'
      module = await import(url("injector-js/injector.js"));
    }
    globalThis.__tabwireRuntime = runtime;
    // For screenshots of a snapshot's element (worker.js's elementBox, run in this world).
    globalThis.__tabwireRefElement = module.ref_element;
    // The page's channel to the worker, which sends its calls over it. A stopped service worker
    // (crash, update, idle) disconnects it; reconnecting starts the worker again at once, so it
    // reconnects to tabwire instead of waiting for its alarm. A port refused at once (no worker
    // to start) is retried with a capped backoff, never in a loop. Opened before `start`
    // announces the page, so the worker usually has the port before the page's first call.
    let retryMs = 0;
    const holdWorker = () => {
      const since = Date.now();
      try {
        const port = chrome.runtime.connect({ name: "tabwire-wake" });
        module.use_port(port);
        port.onDisconnect.addListener(() => {
          retryMs = Date.now() - since < 1000 ? Math.min(Math.max(retryMs * 2, 100), 30000) : 0;
          setTimeout(holdWorker, retryMs);
        });
      } catch (e) {} // the extension was reloaded or removed: this page's runtime is done
    };
    holdWorker();
    module.start(runtime);
    started(module);
  })().catch((e) => console.error("tabwire: the runtime failed to start", e));
})();

// extension/webmcp-loader.js — isolated-world companion of webmcp.js (document_start, every
// http(s) page): loads Tabwire's runtime only once the page registers a WebMCP tool, so pages
// that have none (and that no adapter matches) never pay for it.
document.addEventListener(
  "tabwire:webmcp-tools",
  () => {
    globalThis.__tabwireWebmcp = true; // for the worker's probe while the runtime loads
    if (!globalThis.__tabwireRuntime) {
      import(chrome.runtime.getURL("extension/content.js")).catch((e) =>
        console.error("tabwire: loading the runtime for WebMCP tools failed", e));
    }
  },
  { once: true },
);

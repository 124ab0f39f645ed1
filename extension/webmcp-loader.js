// extension/webmcp-loader.js — isolated-world companion of webmcp.js (document_start, every
// http(s) page): loads Tabwire's runtime only once the page registers a WebMCP tool, so pages
// that have none (and that no adapter matches) never pay for it.
// The page's tools come as a JSON list; an empty one (the answer to a preloaded runtime's hello
// on a page with none) asks for nothing, and the worker's probe must not wait for tools then.
(() => {
  const onTools = (event) => {
    if (typeof event.detail !== "string" || event.detail === "[]") return;
    document.removeEventListener("tabwire:webmcp-tools", onTools);
    globalThis.__tabwireWebmcp = true; // for the worker's probe while the runtime loads
    if (!globalThis.__tabwireRuntime) {
      import(chrome.runtime.getURL("extension/content.js")).catch((e) =>
        console.error("tabwire: loading the runtime for WebMCP tools failed", e));
    }
  };
  document.addEventListener("tabwire:webmcp-tools", onTools);
})();

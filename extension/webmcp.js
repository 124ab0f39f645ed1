// extension/webmcp.js — the W3C WebMCP API for pages whose browser lacks it. Runs in the page's
// own (MAIN) world at document_start (registered by worker.js), so it exists before page scripts.
// Holds the page's tools and relays, as CustomEvents with JSON string details, their declarations
// to Tabwire's isolated-world runtime and its calls back; everything it relays is untrusted there.
(() => {
  if (document.modelContext && navigator.modelContext) return; // the browser has its own
  const tools = new Map();
  const emit = (type, detail) =>
    document.dispatchEvent(new CustomEvent(type, { detail: JSON.stringify(detail) }));
  const announce = () => {
    const declared = [];
    for (const { name, description, inputSchema, annotations } of tools.values()) {
      try {
        declared.push(JSON.parse(JSON.stringify({ name, description, inputSchema, annotations })));
      } catch (e) { /* a schema that is not JSON: leave the tool out */ }
    }
    emit("tabwire:webmcp-tools", declared);
  };
  const api = {
    registerTool(tool) {
      if (!tool || typeof tool.name !== "string" || typeof tool.execute !== "function") {
        throw new TypeError("registerTool needs {name, description, inputSchema, execute}");
      }
      tools.set(tool.name, tool);
      announce();
    },
    unregisterTool(name) { if (tools.delete(name)) announce(); },
    provideContext({ tools: list = [] } = {}) {
      tools.clear();
      for (const tool of list) api.registerTool(tool);
      announce();
    },
    clearContext() { tools.clear(); announce(); },
  };
  for (const target of [document, navigator]) {
    if (!target.modelContext) Object.defineProperty(target, "modelContext", { value: api, configurable: true });
  }
  document.addEventListener("tabwire:webmcp-hello", announce);
  document.addEventListener("tabwire:webmcp-call", async (event) => {
    let id = null;
    try {
      const call = JSON.parse(event.detail);
      id = call.id;
      const tool = tools.get(call.name);
      if (!tool) throw new Error(`the page has no tool ${JSON.stringify(call.name)} any more`);
      emit("tabwire:webmcp-result", { id, ok: true, value: (await tool.execute(call.args ?? {}, {})) ?? null });
    } catch (e) {
      emit("tabwire:webmcp-result", { id, ok: false, error: String((e && e.message) || e) });
    }
  });
})();

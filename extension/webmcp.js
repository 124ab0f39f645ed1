// extension/webmcp.js — the W3C WebMCP API (document.modelContext, as the draft defines it now) for pages
// whose browser lacks it, and the relay of a page's tools to Tabwire's isolated-world runtime. Runs in the
// page's own (MAIN) world at document_start (registered by worker.js), so it exists before page scripts.
// Where the browser has its own modelContext (with getTools / executeTool), the relay reads and calls the
// tools through it instead of shadowing it. Declarations and calls travel as CustomEvents with JSON string
// details; everything relayed is untrusted on the other side.
(() => {
  if (window.__tabwireWebmcpRelay) return; // injected twice (registered script + executeScript)
  Object.defineProperty(window, "__tabwireWebmcpRelay", { value: true });
  const emit = (type, detail) =>
    document.dispatchEvent(new CustomEvent(type, { detail: JSON.stringify(detail) }));
  const NAME = /^[A-Za-z0-9_.-]{1,128}$/;
  // The browser's own query, taken before page scripts run: a Shadow DOM polyfill (Polymer's
  // platform.js) replaces `document.querySelectorAll` with one whose list is not iterable.
  const page = document;
  const queryAll = Document.prototype.querySelectorAll;
  const tools = new Map();
  const events = new EventTarget();

  // The draft's API: registerTool returns a promise, refuses bad or duplicate tools, and a tool
  // leaves when the AbortSignal it was registered with aborts.
  const api = {
    registerTool(tool, { signal } = {}) {
      if (!tool || typeof tool.name !== "string" || !NAME.test(tool.name)) {
        return Promise.reject(new TypeError("a tool's name must be 1-128 characters of A-Z a-z 0-9 _ . -"));
      }
      if (typeof tool.description !== "string" || tool.description.trim() === "") {
        return Promise.reject(new TypeError(`tool ${tool.name}: a description is required`));
      }
      if (typeof tool.execute !== "function") {
        return Promise.reject(new TypeError(`tool ${tool.name}: execute must be a function`));
      }
      if (tools.has(tool.name)) {
        return Promise.reject(new DOMException(`a tool named ${tool.name} is already registered`, "InvalidStateError"));
      }
      if (signal && signal.aborted) return Promise.resolve();
      tools.set(tool.name, tool);
      signal?.addEventListener("abort", () => {
        if (tools.get(tool.name) === tool) {
          tools.delete(tool.name);
          changed();
        }
      }, { once: true });
      changed();
      return Promise.resolve();
    },
    getTools() {
      return [...tools.values(), ...formTools()].map(({ name, title, description, inputSchema, annotations }) =>
        ({ name, title, description, inputSchema, annotations }));
    },
    async executeTool(name, args) {
      const tool = tools.get(name) ?? formTools().find((t) => t.name === name);
      if (!tool) throw new Error(`the page has no tool ${JSON.stringify(name)} any more`);
      return tool.execute(args ?? {}, { agentInvoked: true });
    },
    addEventListener: events.addEventListener.bind(events),
    removeEventListener: events.removeEventListener.bind(events),
  };
  // Declarative tools: each <form toolname tooldescription> is a tool whose arguments are its named
  // controls (toolparamdescription describes one); a call fills them and submits the form with an
  // agent-invoked submit event, whose respondWith(promise) gives the result.
  const SKIPPED = ["submit", "button", "reset", "image", "hidden", "file"];
  const formTools = () => Array.from(queryAll.call(page, "form[toolname]")).map(formTool).filter(Boolean);
  const formTool = (form) => {
    const name = form.getAttribute("toolname");
    const description = form.getAttribute("tooldescription") ?? "";
    if (!NAME.test(name ?? "") || !description.trim()) return null;
    const properties = {};
    const required = [];
    for (const control of form.elements) {
      if (!control.name || control.disabled || SKIPPED.includes(control.type)) continue;
      const schema = properties[control.name] ??
        (control.type === "checkbox" ? { type: "boolean" }
          : control.type === "number" || control.type === "range" ? { type: "number" }
          : control.tagName === "SELECT" ? { type: "string", enum: [...control.options].map((o) => o.value) }
          : control.type === "radio" ? { type: "string", enum: [] }
          : { type: "string" });
      if (control.type === "radio") schema.enum.push(control.value);
      const about = control.getAttribute("toolparamdescription");
      if (about) schema.description = about;
      properties[control.name] = schema;
      if (control.required && !required.includes(control.name)) required.push(control.name);
    }
    return {
      name, description, inputSchema: { type: "object", properties, required },
      execute: (args) => submitForm(form, args),
    };
  };
  const setControl = (control, value) => {
    if (control.type === "checkbox") control.checked = Boolean(value);
    else if (control.type === "radio") control.checked = control.value === String(value);
    else Object.getOwnPropertyDescriptor(Object.getPrototypeOf(control), "value").set.call(control, String(value));
    control.dispatchEvent(new Event("input", { bubbles: true }));
    control.dispatchEvent(new Event("change", { bubbles: true }));
  };
  const submitForm = async (form, args) => {
    for (const control of form.elements) {
      if (control.name && Object.hasOwn(args, control.name) && !SKIPPED.includes(control.type)) {
        setControl(control, args[control.name]);
      }
    }
    let submitted = null;
    let response = null;
    // On the window in the capture phase: before any of the page's own submit listeners.
    const mark = (event) => {
      if (event.target !== form) return;
      submitted = event;
      event.agentInvoked = true;
      event.respondWith = (promise) => { response = Promise.resolve(promise); };
    };
    window.addEventListener("submit", mark, { capture: true });
    try {
      form.requestSubmit();
    } finally {
      window.removeEventListener("submit", mark, { capture: true });
    }
    if (!submitted) {
      const invalid = [...form.elements].find((c) => c.willValidate && !c.checkValidity());
      throw new Error(`the form was not submitted: ${invalid ? `${invalid.name}: ${invalid.validationMessage}` : "the page refused it"}`);
    }
    if (response) return await response;
    if (submitted.defaultPrevented) return { submitted: true };
    return { submitted: true, navigating_to: form.action };
  };
  document.addEventListener("DOMContentLoaded", () => {
    if (source() === api && formTools().length > 0) announce();
  }, { once: true });

  const changed = () => {
    events.dispatchEvent(new Event("toolchange"));
    announce();
  };

  if (!document.modelContext) {
    Object.defineProperty(document, "modelContext", { value: api, configurable: true, writable: true });
  }
  // The older entry point, for pages written against it: the same object.
  if (!("modelContext" in navigator)) {
    Object.defineProperty(navigator, "modelContext", { get: () => document.modelContext, configurable: true });
  }

  // Whose tools the relay reads: the browser's (or a page's own) modelContext when it is not ours.
  const source = () => {
    const context = document.modelContext;
    return context && context !== api && typeof context.getTools === "function" ? context : api;
  };
  let listening = null;
  const announce = async () => {
    const context = source();
    if (context !== api && listening !== context) {
      listening = context;
      context.addEventListener?.("toolchange", announce);
    }
    const declared = [];
    for (const { name, title, description, inputSchema, annotations } of (await context.getTools()) ?? []) {
      try {
        declared.push(JSON.parse(JSON.stringify({ name, title, description, inputSchema, annotations })));
      } catch (e) { /* a schema that is not JSON: leave the tool out */ }
    }
    emit("tabwire:webmcp-tools", declared);
  };
  document.addEventListener("tabwire:webmcp-hello", announce);
  // A browser's own modelContext (or a page's) says nothing to us by itself: look once the page is
  // parsed, and from then on follow its toolchange events.
  document.addEventListener("DOMContentLoaded", () => {
    if (source() !== api) announce();
  }, { once: true });
  document.addEventListener("tabwire:webmcp-call", async (event) => {
    let id = null;
    try {
      const call = JSON.parse(event.detail);
      id = call.id;
      emit("tabwire:webmcp-result", { id, ok: true, value: (await source().executeTool(call.name, call.args ?? {})) ?? null });
    } catch (e) {
      emit("tabwire:webmcp-result", { id, ok: false, error: String((e && e.message) || e) });
    }
  });
})();

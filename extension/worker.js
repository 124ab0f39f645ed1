// extension/worker.js — the MV3 service worker entry (ES module). Owns only the glue: every
// Chrome listener is registered synchronously here (listeners added later are missed after a
// wake-up), events are buffered until the Rust module (crate `worker`) is ready, then forwarded.
import init, { start, on_event } from "./dist/worker/worker.js";
import "./dist/code-adapters.js"; // the code adapters' declarations (globalThis.__tabwireCodeAdapters)

let ready = false;
const early = []; // [name, args, resolve] of events that arrived before Rust was ready

function deliver(name, args) {
  if (ready) return Promise.resolve(on_event(name, args));
  return new Promise((resolve) => early.push([name, args, resolve]));
}

chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  // Rust answers the popup's requests itself once tabwire has (it returns `true` and keeps
  // sendResponse); a page's message is answered with what Rust returns.
  deliver("message", [message, sender, sendResponse]).then((reply) => {
    if (reply !== true) sendResponse(reply);
  }, (e) => {
    console.error("tabwire:", e);
    sendResponse(undefined);
  });
  return true; // answered asynchronously
});
// Each page's runtime holds a port to the worker: calls go to the page over it, and when Chrome
// stops the worker the page reconnects, which starts it again. Rust checks the port's sender.
chrome.runtime.onConnect.addListener((port) => {
  if (port.name === "tabwire-wake") deliver("port", [port]);
});
chrome.runtime.onStartup.addListener(() => deliver("wake", []));
chrome.runtime.onInstalled.addListener(() => deliver("wake", []));
chrome.alarms.onAlarm.addListener((alarm) => deliver("alarm", [alarm.name]));
chrome.tabs.onRemoved.addListener((tabId) => deliver("tab_removed", [tabId]));
chrome.tabs.onActivated.addListener((info) => deliver("tab_activated", [info.tabId]));
// Trusted input: Chrome detached its debugger from a tab (closed, or the user cancelled the bar).
chrome.debugger?.onDetach.addListener((source, reason) => deliver("debugger_detached", [source.tabId ?? null, reason]));
// Downloads: each new one is given to a tab (downloads.rs); `?.`: an extension updated to ask for
// the permission runs without it until the user accepts.
chrome.downloads?.onCreated.addListener((item) => deliver("download_created", [item.id, item.referrer ?? ""]));
// Page life: each tab's loads, forwarded as they come (Rust keeps the top frame's).
for (const [kind, event] of [
  ["before", chrome.webNavigation.onBeforeNavigate],
  ["committed", chrome.webNavigation.onCommitted],
  ["completed", chrome.webNavigation.onCompleted],
  ["failed", chrome.webNavigation.onErrorOccurred],
]) {
  event.addListener((d) =>
    deliver("navigation", [kind, d.tabId, d.frameId, d.url, d.error ?? null, d.frameType ?? null, d.documentLifecycle ?? null, d.timeStamp, d.documentId ?? null]),
  );
}
// Asked by the worker's core (Action::LookAtLoad) when requests have waited a while for a tab's
// load: whether Chrome says the tab has loaded, told back as the `load_looked` event. A tab gone is
// left to tabs.onRemoved.
globalThis.__tabwireLookAtLoad = (tabId, load) =>
  chrome.tabs.get(tabId).then((tab) => deliver("load_looked", [tabId, load, tab.status === "complete"]), () => {});
// Asked by the worker's core (Action::HurryRuntime) as a load Tabwire set off commits: the
// runtime there begins its fetch and compile at once instead of after the page's load event
// (content.js). Run as early as Chrome can, in the content scripts' world; before content.js
// runs, the mark tells it. A page Chrome does not let us script is left alone.
globalThis.__tabwireHurryRuntime = (tabId, documentId) =>
  chrome.scripting
    .executeScript({
      target: documentId ? { tabId, documentIds: [documentId] } : { tabId, frameIds: [0] },
      injectImmediately: true,
      func: () => {
        globalThis.__tabwireHurried = true;
        globalThis.__tabwireHurry?.();
      },
    })
    .catch(() => {});
chrome.tabs.onUpdated.addListener((tabId, change) => {
  if (change.url !== undefined || change.title !== undefined) {
    deliver("tab_updated", [tabId, change.url ?? null, change.title ?? null]);
  }
});

// WebMCP capture (see webmcp.js): the API in the page's world before its scripts run, and a
// loader that brings in the runtime when a page registers a tool. Registered once, persistently.
const WEBMCP_SCRIPTS = [
  { id: "tabwire-webmcp-api", js: ["extension/webmcp.js"], world: "MAIN" },
  { id: "tabwire-webmcp-loader", js: ["extension/webmcp-loader.js"], world: "ISOLATED" },
  // Not WebMCP's, but the same kind: the page's dialogs answered while Tabwire drives it (dialogs.js).
  { id: "tabwire-dialogs", js: ["extension/dialogs.js"], world: "MAIN", allFrames: true },
  { id: "tabwire-dialogs-relay", js: ["extension/dialogs-relay.js"], world: "ISOLATED", allFrames: true },
].map((s) => ({ allFrames: false, ...s, matches: ["http://*/*", "https://*/*"], runAt: "document_start" }));
const webmcpRegistered = chrome.scripting
  .getRegisteredContentScripts({ ids: WEBMCP_SCRIPTS.map((s) => s.id) })
  .then((have) => {
    const missing = WEBMCP_SCRIPTS.filter((s) => !have.some((h) => h.id === s.id));
    // Registrations persist across updates: one an older version made differently is made anew.
    const changed = WEBMCP_SCRIPTS.filter((s) => have.some((h) => h.id === s.id && h.allFrames !== s.allFrames));
    return Promise.all([
      missing.length ? chrome.scripting.registerContentScripts(missing) : undefined,
      changed.length ? chrome.scripting.updateContentScripts(changed) : undefined,
    ]);
  })
  .catch((e) => console.error("tabwire: registering the WebMCP scripts failed", e));

// Run in a page by open_tab once it has loaded (chrome.scripting, the content scripts' world):
// whether Tabwire's runtime runs there, and whether a WebMCP registration asked for it.
globalThis.__tabwireRuntimeProbe = () => ({
  runtime: Boolean(globalThis.__tabwireRuntime),
  webmcp: Boolean(globalThis.__tabwireWebmcp),
});

// Run by chrome.scripting in a page's content scripts' world once it has loaded, for open_tab:
// true once the runtime there has warmed its call path up (content.js's __tabwireStarted, the
// runtime's warm_up: page/warm.rs) and told the worker its tools (so the server knows the page
// before the model's first call), false after `waitMs` (no runtime started by then): either way
// browser_open then answers, never failing because of it.
globalThis.__tabwireWarmProbe = (waitMs) =>
  new Promise((done) => {
    setTimeout(() => done(false), waitMs);
    const started = globalThis.__tabwireStarted;
    if (!started) return done(false);
    started
      .then((runtime) => Promise.all([runtime.warm_up(), runtime.announced()]))
      .then(() => done(true), () => done(false));
  });

// browser.rs's helpers (it decides; these only do): for screenshots, decode a captureVisibleTab
// data URL, draw a region of it at a size and encode it as base64; run in a frame by
// chrome.scripting (the content scripts' world, where content.js put the runtime's ref lookup),
// an element's box in viewport pixels after scrolling it into view, where a child frame's
// content sits, and a step through the page's own history.
globalThis.__tabwireBrowser = {
  decode: async (dataUrl) => createImageBitmap(await (await fetch(dataUrl)).blob()),
  encode: async (bitmap, sx, sy, sw, sh, width, height, type) => {
    const canvas = new OffscreenCanvas(width, height);
    const context = canvas.getContext("2d");
    context.imageSmoothingQuality = "high";
    context.drawImage(bitmap, sx, sy, sw, sh, 0, 0, width, height);
    bitmap.close();
    const bytes = new Uint8Array(await (await canvas.convertToBlob({ type, quality: 0.85 })).arrayBuffer());
    let binary = "";
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return btoa(binary);
  },
  elementBox: (selector, ref, doc) => {
    let element;
    if (ref !== null) {
      element = globalThis.__tabwireRefElement?.(ref, doc) ??
        `${ref} is no longer in the page (its runtime is gone): take a new snapshot (page_snapshot) and use its refs`;
      if (typeof element === "string") return { stale: element };
    } else {
      try {
        element = document.querySelector(selector);
      } catch (e) {
        return `${JSON.stringify(selector)} is not a valid CSS selector`;
      }
    }
    if (!element) return null;
    element.scrollIntoView({ block: "nearest", inline: "nearest" });
    // Where a frame element's content starts in its document's viewport, and that viewport's size
    // (each helper is run on its own, so it carries what it needs).
    const content = (frame) => {
      const view = frame.ownerDocument.defaultView;
      const r = frame.getBoundingClientRect();
      const style = view.getComputedStyle(frame);
      return { x: r.x + frame.clientLeft + parseFloat(style.paddingLeft),
               y: r.y + frame.clientTop + parseFloat(style.paddingTop),
               viewport_width: view.innerWidth, viewport_height: view.innerHeight };
    };
    const r = element.getBoundingClientRect();
    let view = element.ownerDocument.defaultView;
    const box = { x: r.x, y: r.y, width: r.width, height: r.height,
                  viewport_width: view.innerWidth, viewport_height: view.innerHeight, within: [] };
    // A ref of a same-origin frame's element: the frames it is in, innermost first.
    for (; view !== window && view.frameElement; view = view.parent) box.within.push(content(view.frameElement));
    return box;
  },
  // The content box of the child frame at `index` of window.frames (the order Chrome lists a
  // frame's children in), as elementBox gives a frame's.
  frameBox: (index) => {
    const frames = (root) => [
      ...root.querySelectorAll("iframe, frame"),
      ...[...root.querySelectorAll("*")].filter((e) => e.shadowRoot).flatMap((e) => frames(e.shadowRoot)),
    ];
    const child = window.frames[index];
    const frame = child && frames(document).find((f) => f.contentWindow === child);
    if (!frame) return null;
    const r = frame.getBoundingClientRect();
    const style = getComputedStyle(frame);
    return { x: r.x + frame.clientLeft + parseFloat(style.paddingLeft),
             y: r.y + frame.clientTop + parseFloat(style.paddingTop),
             viewport_width: innerWidth, viewport_height: innerHeight };
  },
  historyGo: (step) => history.go(step),
};

init({ module_or_path: new URL("./dist/worker/worker_bg.wasm", import.meta.url) })
  .then(() => webmcpRegistered) // so that once connected, newly loaded pages get the WebMCP API
  .then(start)
  .then(() => {
    ready = true;
    // One event that fails must not lose the ones queued behind it (a page's load events).
    for (const [name, args, resolve] of early.splice(0)) {
      try {
        resolve(on_event(name, args));
      } catch (e) {
        console.error(`tabwire: the ${name} event failed`, e);
        resolve(undefined);
      }
    }
  })
  .catch((e) => console.error("tabwire: the worker failed to start", e));

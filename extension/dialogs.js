// extension/dialogs.js — answers the page's own dialogs (alert, confirm, prompt, the leave-page
// prompt of beforeunload) so they never freeze a page Tabwire works in. Runs in the page's (MAIN)
// world at document_start in every http(s) frame (registered by worker.js), before page scripts.
//
// While Tabwire drives the page it answers them itself: as the running call said (a plan the
// runtime sends before acting, for one dialog), else an alert is closed and a confirm or prompt
// dismissed. Each dialog is reported to the isolated-world runtime ("tabwire:dialog", a JSON string
// detail), which tells the call. A page starts driven (pages Tabwire opens often ask at load);
// the first real input of a person outside a call hands it back to them: from then on the
// browser's own dialogs show, until the next call. The runtime's events are "tabwire:dialog-call".
//
// A same-origin frame's dialogs are answered by its top frame's handler (the running call's plan,
// reported to the top document, where the runtime listens), with the frame's origin; a
// cross-origin frame answers its own by default, reported to its own document, from where
// dialogs-relay.js has the worker give the report to the calls running in the tab.
(() => {
  if (window.__tabwireDialogs) return; // injected twice
  const native = { alert: window.alert, confirm: window.confirm, prompt: window.prompt };
  let driven = true; // until a person's input outside a call
  let inCall = false;
  let plan = null; // {answer: "accept"|"dismiss", text?} for the next confirm/prompt/beforeunload

  const report = (kind, message, answered, origin = location.origin) =>
    document.dispatchEvent(new CustomEvent("tabwire:dialog", {
      detail: JSON.stringify({ kind, message: String(message ?? ""), origin, answered }),
    }));

  document.addEventListener("tabwire:dialog-call", (event) => {
    let msg;
    try {
      msg = JSON.parse(event.detail);
    } catch (e) {
      return;
    }
    if (msg.op === "begin") {
      inCall = true;
      driven = true;
      plan = null;
    } else if (msg.op === "end") {
      inCall = false;
      plan = null;
    } else if (msg.op === "plan" && (msg.answer === "accept" || msg.answer === "dismiss")) {
      plan = { answer: msg.answer, text: typeof msg.text === "string" ? msg.text : null };
    } // "warm" (the runtime's warm-up, before any call) changes nothing: it only runs this path
  });
  for (const type of ["pointerdown", "keydown"]) {
    window.addEventListener(type, (event) => {
      if (event.isTrusted && !inCall) {
        driven = false;
        viaTop()?.release(); // a person's input in a same-origin frame hands the whole page back
      }
    }, { capture: true });
  }

  // The plan for this dialog (consumed), or null: dismissed by default.
  const take = () => {
    const p = plan;
    plan = null;
    return p;
  };
  // A dialog left to the browser freezes the page until a person answers it: the worker hears
  // of it first (through dialogs-relay.js), so calls to this tab fail at once meanwhile.
  const handedOver = (open) => document.dispatchEvent(new CustomEvent("tabwire:dialog-native", { detail: open ? "open" : "closed" }));
  // The top frame's handler, for a same-origin frame (null in the top frame, or across origins).
  const viaTop = () => {
    try {
      return window.top !== window && window.top.__tabwireDialogs?.answer ? window.top.__tabwireDialogs : null;
    } catch (e) {
      return null;
    }
  };
  const answers = {};
  const wrap = (name, answer) => {
    answers[name] = answer;
    const replacement = {
      [name](...args) {
        const top = viaTop();
        if (top ? top.driven() : driven) {
          return top ? top.answer(name, location.origin, args) : answer(location.origin, ...args);
        }
        handedOver(true);
        try {
          return native[name].apply(window, args);
        } finally {
          handedOver(false);
        }
      },
    }[name];
    Object.defineProperty(window, name, { value: replacement, writable: true, configurable: true });
  };
  wrap("alert", (origin, message) => report("alert", message, "accepted", origin));
  wrap("confirm", (origin, message) => {
    const p = take();
    if (!p) return report("confirm", message, "dismissed_by_default", origin), false;
    report("confirm", message, p.answer === "accept" ? "accepted" : "dismissed", origin);
    return p.answer === "accept";
  });
  wrap("prompt", (origin, message, value) => {
    const p = take();
    if (!p) return report("prompt", message, "dismissed_by_default", origin), null;
    report("prompt", message, p.answer === "accept" ? "accepted" : "dismissed", origin);
    if (p.answer !== "accept") return null;
    return p.text ?? (value === undefined ? "" : String(value));
  });

  // beforeunload: a guard asks with preventDefault() or a returnValue (an `onbeforeunload`
  // handler, by returning a string). This listener runs first (added before any page script):
  // while driven, it catches the event's guard methods, so the first ask takes the plan; with
  // "accept" the ask is dropped and the page leaves; otherwise it goes through: the guard stands
  // (the browser then asks a person only on a page a person used), reported as dismissed.
  window.addEventListener("beforeunload", (event) => {
    if (!driven) return;
    let decided = null;
    const ask = () => {
      if (decided === null) {
        const p = take();
        decided = p?.answer === "accept";
        report("beforeunload", "", decided ? "accepted" : p ? "dismissed" : "dismissed_by_default");
        // The browser asks a person only on a page a person used; the page runs again once answered.
        if (!decided && navigator.userActivation?.hasBeenActive) {
          handedOver(true);
          setTimeout(() => handedOver(false), 0);
        }
      }
      return !decided;
    };
    const realPrevent = event.preventDefault.bind(event);
    const returnValue = Object.getOwnPropertyDescriptor(BeforeUnloadEvent.prototype, "returnValue");
    Object.defineProperty(event, "preventDefault", { value: () => ask() && realPrevent(), configurable: true });
    Object.defineProperty(event, "returnValue", {
      get: () => returnValue.get.call(event),
      set: (v) => (v === "" || v == null || ask()) && returnValue.set.call(event, v),
      configurable: true,
    });
  });
  let onBeforeUnload = null;
  const attributeHandler = function (event) {
    if (typeof onBeforeUnload !== "function") return;
    const answer = onBeforeUnload.call(this, event);
    if (answer !== undefined && answer !== null) event.returnValue = String(answer);
  };
  window.addEventListener("beforeunload", attributeHandler);
  Object.defineProperty(window, "__tabwireDialogs", {
    value: Object.freeze({
      driven: () => driven,
      answer: (name, origin, args) => answers[name](origin, ...args),
      release: () => { if (!inCall) driven = false; },
    }),
  });
  Object.defineProperty(window, "onbeforeunload", {
    get: () => onBeforeUnload,
    set: (handler) => { onBeforeUnload = typeof handler === "function" ? handler : null; },
    configurable: true,
  });
})();

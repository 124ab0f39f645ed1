// extension/dialogs-relay.js — isolated-world companion of dialogs.js (document_start, every http(s)
// frame). In a top frame: tells the worker when the page hands a dialog to the browser and when it
// was answered, so that calls to the frozen tab fail at once with DIALOG_OPEN (sent before the dialog
// opens: the message leaves while the page waits for the person). In a child frame: passes on what
// the shim reports of the dialogs it answered there — a cross-origin frame's, which no call in the
// top frame hears otherwise (a same-origin frame's are reported to the top document directly) — and
// the worker gives them to the calls running in the tab, naming the frame's origin itself.
if (window.top === window) {
  document.addEventListener("tabwire:dialog-native", (event) => {
    try {
      chrome.runtime.sendMessage(JSON.stringify({ type: "dialog_shown", open: event.detail === "open" }));
    } catch (e) {} // the extension was reloaded: nothing to tell
  });
} else {
  document.addEventListener("tabwire:dialog", (event) => {
    try {
      chrome.runtime.sendMessage(JSON.stringify({ type: "frame_dialog", report: String(event.detail) }));
    } catch (e) {} // the extension was reloaded: nothing to tell
  });
}

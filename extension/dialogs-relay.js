// extension/dialogs-relay.js — isolated-world companion of dialogs.js (document_start, every http(s)
// top frame): tells the worker when the page hands a dialog to the browser and when it was answered,
// so that calls to the frozen tab fail at once with DIALOG_OPEN. Sent before the dialog opens: the
// message leaves while the page waits for the person.
document.addEventListener("tabwire:dialog-native", (event) => {
  try {
    chrome.runtime.sendMessage(JSON.stringify({ type: "dialog_shown", open: event.detail === "open" }));
  } catch (e) {} // the extension was reloaded: nothing to tell
});

// extension/handoff.js — shows the hand-off this window was opened for (`?h=ID`): its message and
// tab, which the worker keeps in chrome.storage.session (worker/src/web/handoff.rs), and sends the
// person's Done or Cancel to the worker (`handoff_answer`, worker/src/popup.rs), then closes.
const id = new URLSearchParams(location.search).get("h") || "";

async function show() {
  const key = `handoff:${id}`;
  const stored = (await chrome.storage.session.get(key))[key];
  document.getElementById("message").textContent = stored ? stored.message : "This hand-off is over.";
  if (stored && stored.url) document.getElementById("site").textContent = stored.url;
  for (const b of document.querySelectorAll("button")) b.disabled = !stored;
}

async function answer(done) {
  for (const b of document.querySelectorAll("button")) b.disabled = true;
  await chrome.runtime.sendMessage(JSON.stringify({ type: "handoff_answer", handoff: id, done }));
  window.close();
}

document.getElementById("done").addEventListener("click", () => answer(true));
document.getElementById("cancel").addEventListener("click", () => answer(false));
show();

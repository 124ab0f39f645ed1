// extension/popup.js — renders what the worker keeps in chrome.storage.session (`status`,
// `tabs`); it talks to nobody else.
function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (cls) node.className = cls;
  return node;
}

function render({ status = {}, tabs = [] }) {
  const state = status.state || "disconnected";
  const statusNode = document.getElementById("status");
  statusNode.replaceChildren(el("span", state, state), el("span", status.port ? ` — 127.0.0.1:${status.port}` : ""));
  if (status.server_version) statusNode.append(el("span", ` (tabwire ${status.server_version})`, "muted"));
  document.getElementById("error").textContent = state === "connected" ? "" : status.last_error || "";
  const list = el("ul");
  for (const tab of tabs) {
    const item = el("li", `${tab.title || tab.url} `);
    item.append(el("span", `[tab ${tab.tab}, ${tab.runtime || "?"} runtime]`, "muted"));
    const tools = el("ul");
    for (const tool of tab.tools || []) tools.append(el("li")).append(el("code", tool.name));
    item.append(tools);
    list.append(item);
  }
  document.getElementById("tabs").replaceChildren(tabs.length ? list : el("span", "No tab offers tools.", "muted"));
}

chrome.storage.session.get(["status", "tabs"]).then(render);
chrome.storage.session.onChanged.addListener(() => chrome.storage.session.get(["status", "tabs"]).then(render));

// extension/popup.js — renders what the worker keeps in chrome.storage.session (`status`, see
// worker/src/core.rs `Status` and link_problem.rs `Problem`; `tabs`, the tab registry): the
// connection, and when it is down the reason with the exact command that fixes it; the tabs that
// offer tools, with their tools. It talks to nobody else.
function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (cls) node.className = cls;
  return node;
}

const RELOAD = "Then reload Tabwire: chrome://extensions → Tabwire → the ⟳ icon.";

// What to tell the user for each `problem.kind`: [what to do, command, what after].
function advice(problem, status) {
  const port = status.port || 17373;
  switch (problem && problem.kind) {
    case "not_paired":
      return ["This extension is not paired with tabwire. In a terminal, run:", "tabwire setup", RELOAD];
    case "not_running":
      return [`Nothing answers on 127.0.0.1:${port}: tabwire is not running. Your MCP client (Claude Desktop, Claude Code, Cursor, VS Code) starts it: open it. Not set up yet? In a terminal, run:`,
        "tabwire setup", "`tabwire doctor` says what else may be wrong."];
    case "unproven": // something on the port could not prove it knows this extension's secret
      return [`Something else is listening on 127.0.0.1:${port}: it could not prove it knows this extension's pairing secret, so Tabwire told it nothing. If it is a tabwire paired with another secret, pair this extension again:`,
        status.pairing_file ? `tabwire pair --port ${port} --extension-config "${status.pairing_file}"` : "tabwire setup", RELOAD];
    case "refused":
      return [`tabwire on 127.0.0.1:${port} refused this extension's handshake: update tabwire, or set this extension up again:`,
        "tabwire setup", RELOAD];
    case "other_program":
      return [`Another program holds 127.0.0.1:${port}. Stop it, or move Tabwire to a free port (this updates your MCP clients and this extension's pairing):`,
        "tabwire setup --port 17374", RELOAD];
    default:
      return null;
  }
}

function renderConnection(status) {
  const state = status.state || "disconnected";
  document.getElementById("connection").dataset.state = state;
  document.getElementById("connection").dataset.problem = (status.problem && status.problem.kind) || "";
  const at = status.port ? ` on 127.0.0.1:${status.port}` : "";
  const text = {
    connected: `Connected to tabwire${status.server_version ? " " + status.server_version : ""}${at}`,
    handshaking: `Connecting to tabwire${at}…`,
    disconnected: `Not connected${at}`,
  }[state] || state;
  document.getElementById("state").textContent = text;
  document.getElementById("reason").textContent = state === "connected" ? "" : status.last_error || "";
  const tip = state === "connected" ? null : advice(status.problem, status);
  document.getElementById("fix").hidden = !tip;
  if (tip) {
    const [what, command, after] = tip;
    document.getElementById("fix-text").textContent = what;
    document.getElementById("fix-command").textContent = command;
    document.getElementById("fix-after").textContent = after;
  }
}

function renderTabs(tabs, connected) {
  const withTools = tabs.filter((tab) => (tab.tools || []).length > 0);
  const box = document.getElementById("tabs");
  if (!withTools.length) {
    box.replaceChildren(el("span", connected
      ? "No open tab offers tools. Open a page an adapter matches (TodoMVC, TiddlyWiki, MailDev, or your own), or a page with WebMCP tools."
      : "No open tab offers tools.", "muted"));
    return;
  }
  const list = el("ul");
  for (const tab of withTools) {
    const item = el("li", `${tab.title || tab.url} `);
    item.dataset.tab = tab.tab;
    item.append(el("span", `[tab ${tab.tab}, ${tab.runtime || "?"} runtime]`, "muted"));
    const tools = el("ul");
    for (const tool of tab.tools) {
      const entry = el("li");
      // An adapter's tool by name, a page's own described in full.
      entry.append(el("code", typeof tool === "string" ? tool : tool.name));
      tools.append(entry);
    }
    item.append(tools);
    list.append(item);
  }
  box.replaceChildren(list);
}

function render({ status = {}, tabs = [] }) {
  renderConnection(status);
  renderTabs(tabs, status.state === "connected");
}

document.getElementById("version").textContent = chrome.runtime.getManifest().version;
document.getElementById("copy").addEventListener("click", () =>
  navigator.clipboard.writeText(document.getElementById("fix-command").textContent));
const refresh = () => chrome.storage.session.get(["status", "tabs"]).then(render);
refresh();
chrome.storage.session.onChanged.addListener(refresh);

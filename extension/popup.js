// extension/popup.js — renders what the worker keeps in chrome.storage.session (`status`, see
// worker/src/core.rs `Status` and link_problem.rs `Problem`; `grants`, the list tabwire pushes;
// `tabs`, the tab registry; `recordings`, worker/src/core/recording.rs; `agents`, the agents
// tabwire pushes, bridge/src/agents.rs): the connection, and
// when it is down the reason with the exact command that fixes it; the current tab's site with
// its permission and the buttons that change it; the recorder of that tab (Record, Stop, the
// steps, the tool to save them as); every site allowed; the tabs that offer tools. A change goes
// to the worker (`runtime.sendMessage`, worker/src/popup.rs), which checks it and has tabwire
// make it; the popup shows the refusal when there is one, and the new state once stored.
function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (cls) node.className = cls;
  return node;
}

// When a list has nothing to show (the worker is not connected, or `count` is 0), says why in
// `box` and returns true.
function saidWhyEmpty(box, connected, count, notConnected, none) {
  const why = !connected ? notConnected : count ? null : none;
  if (why) box.replaceChildren(el("span", why, "muted"));
  return Boolean(why);
}

/** Whether this browser can give trusted input (Chrome's `debugger` API; Firefox has none). */
const TRUSTED_INPUT = Boolean(globalThis.chrome && chrome.debugger);

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

// The tab the popup is about: the active tab of its window (the page the user opened it on).
async function currentTab() {
  const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
  return tab;
}

function originOf(url) {
  try {
    const u = new URL(url);
    return u.protocol === "http:" || u.protocol === "https:" ? u.origin : null;
  } catch {
    return null;
  }
}

// Sends `request` to the worker; its answer ({ok, …} or {error}).
async function ask(request) {
  try {
    return JSON.parse(await chrome.runtime.sendMessage(JSON.stringify(request)));
  } catch (e) {
    return { error: `the extension's worker did not answer (${e.message || e})` };
  }
}

// Asks the worker to make `change` ({origin, action, need}) for `tab`; shows why not, if not.
async function changeGrant(change, tab) {
  const problem = document.getElementById("grant-problem");
  problem.hidden = true;
  for (const b of document.querySelectorAll("#site button, #site input, #grants button")) b.disabled = true;
  const answer = await ask({ type: "change_grant", tab, change });
  if (answer && answer.error) {
    problem.textContent = `Not changed: ${answer.error}`;
    problem.hidden = false;
  }
  refresh();
}

const show = (id, on) => { document.getElementById(id).hidden = !on; };

function renderSite(tab, grants, connected) {
  const site = document.getElementById("site");
  const origin = tab ? originOf(tab.url || tab.pendingUrl || "") : null;
  const grant = origin && grants.grants ? grants.grants[origin] : undefined;
  let state;
  let text;
  if (!origin) {
    const scheme = tab && (tab.url || tab.pendingUrl) ? new URL(tab.url || tab.pendingUrl).protocol : "";
    state = "not_web";
    text = `Page tools do not work on this page${scheme ? ` (${scheme} pages)` : ""}: they work on websites (http and https) only. Open a website to allow Tabwire there.`;
  } else if (!connected) {
    state = "disconnected";
    text = "Tabwire is not connected (see above), so this site's permission cannot be shown or changed.";
  } else if (grant && grant.page_tools) {
    state = "allowed";
    const since = grant.since ? ` since ${new Date(grant.since * 1000).toLocaleDateString()}` : "";
    text = `Page tools are allowed here${since}: your assistant can read and act on this site, with your logins.`;
  } else if (grants.all_origins) {
    state = "all_origins";
    text = "tabwire runs with --allow-all-origins: page tools work on every site, this one too.";
  } else {
    state = "not_allowed";
    text = "Page tools are not allowed here. Your assistant can read and act on this site, with your logins, only once you allow it.";
  }
  site.dataset.site = state;
  site.dataset.origin = origin || "";
  site.dataset.tab = tab ? String(tab.id) : "";
  document.getElementById("site-origin").textContent = origin || (tab && (tab.url || tab.pendingUrl)) || "No tab";
  document.getElementById("site-state").textContent = text;
  const changeable = connected && origin;
  show("allow", changeable && state !== "allowed");
  show("revoke", changeable && state === "allowed");
  // Trusted input needs the browser's debugger API, which only Chrome gives (not Firefox).
  show("trusted-box", changeable && TRUSTED_INPUT);
  show("trusted-note", changeable && TRUSTED_INPUT);
  const trusted = document.getElementById("trusted");
  trusted.checked = Boolean(grant && grant.trusted_input);
  for (const b of document.querySelectorAll("#site button, #site input")) b.disabled = false;
}

function renderGrants(grants, connected) {
  const box = document.getElementById("grants");
  const origins = Object.keys(grants.grants || {}).sort();
  if (saidWhyEmpty(box, connected, origins.length, "Connect Tabwire to see the sites allowed.",
    "No site yet. Allow one above, with `tabwire allow ORIGIN`, or by answering yes when your assistant asks.")) return;
  const list = el("ul");
  for (const origin of origins) {
    const item = el("li");
    item.dataset.origin = origin;
    const name = el("span", origin, "origin");
    if (grants.grants[origin].trusted_input) name.append(el("span", " · trusted input", "muted"));
    const revoke = el("button", "Revoke");
    revoke.type = "button";
    revoke.addEventListener("click", () => changeGrant({ origin, action: "revoke", need: "page_tools" }));
    item.append(name, revoke);
    list.append(item);
  }
  box.replaceChildren(list);
}

// The change a button of the site section asks for, for the site and tab it shows.
function siteChange(action, need) {
  const site = document.getElementById("site").dataset;
  changeGrant({ origin: site.origin, action, need }, Number(site.tab));
}

// ---- the agents (issue 28) -----------------------------------------------------------------

// Sends an agent request (stop or allow an agent, share a tab); the new list shows the outcome.
async function agentRequest(request) {
  for (const b of document.querySelectorAll("#agents button")) b.disabled = true;
  const answer = await ask(request);
  const problem = document.getElementById("agents-problem");
  if (problem) {
    problem.hidden = !answer.error;
    problem.textContent = answer.error ? `Not changed: ${answer.error}` : "";
  }
  refresh();
}

// Every agent (an assistant's session) with the tabs it holds: Stop ends its running calls and
// refuses later ones until Allow; Share lets every agent use a tab again.
function renderAgents(agents, titles, connected) {
  const box = document.getElementById("agents");
  if (saidWhyEmpty(box, connected, agents.length, "Connect Tabwire to see the agents.",
    "No assistant is connected to Tabwire.")) return;
  const list = el("ul");
  for (const agent of agents) {
    const item = el("li");
    item.dataset.agent = agent.name;
    item.dataset.stopped = String(Boolean(agent.stopped));
    const head = el("div", undefined, "agent-head");
    const name = el("span", agent.name, "agent-name");
    if (agent.client && agent.client !== agent.name) name.append(el("span", ` · ${agent.client}`, "muted"));
    if (agent.stopped) name.append(el("span", " · stopped", "muted"));
    const toggle = el("button", agent.stopped ? "Allow" : "Stop");
    toggle.type = "button";
    toggle.className = agent.stopped ? "allow-agent" : "stop-agent";
    toggle.addEventListener("click", () => agentRequest({ type: "agent_control", agent: agent.name, stop: !agent.stopped }));
    head.append(name, toggle);
    const tabs = el("ul", undefined, "agent-tabs");
    for (const tab of agent.tabs || []) {
      const entry = el("li");
      entry.dataset.tab = String(tab);
      entry.append(el("span", titles.get(tab) || `tab ${tab}`));
      const share = el("button", "Share");
      share.type = "button";
      share.addEventListener("click", () => agentRequest({ type: "share_tab", tab }));
      entry.append(share);
      tabs.append(entry);
    }
    if (!(agent.tabs || []).length) tabs.append(el("li", "No tab held.", "muted"));
    item.append(head, tabs);
    list.append(item);
  }
  const problem = el("div", "", "muted");
  problem.id = "agents-problem";
  problem.hidden = true;
  box.replaceChildren(list, problem);
}

// ---- the recorder -------------------------------------------------------------------------

// What the popup itself remembers between renders: the last save (the worker forgets a saved
// recording) and the last refusal, for the tab they are about.
const recorder = { saved: null, problem: null, tab: null };

function renderRecorder(tab, recordings, site, connected) {
  const box = document.getElementById("record");
  const tabId = tab ? tab.id : null;
  if (recorder.tab !== tabId) Object.assign(recorder, { saved: null, problem: null, tab: tabId });
  const recording = tabId !== null ? recordings[String(tabId)] : undefined;
  let state;
  let text;
  if (recording && recording.live) {
    state = "live";
    text = `Recording on ${recording.origin}: do the task in the page (this popup may close; open it again to stop). Passwords are never recorded.`;
  } else if (recording) {
    state = "stopped";
    text = recording.steps.length
      ? "Name the tool these steps become. What you typed becomes its parameters."
      : "Nothing was recorded. Discard, then Record again.";
  } else if (!connected || !["allowed", "all_origins"].includes(site)) {
    state = "unavailable";
    text = site === "not_web" ? "Recording works on websites only."
      : !connected ? "Connect Tabwire to record." : "Allow page tools here (above) to record a tool on this site.";
  } else {
    state = "idle";
    text = "Record does a task once in this page and saves it as a tool your assistant can call.";
  }
  box.dataset.record = state;
  document.getElementById("record-state").textContent = text;
  show("record-start", state === "idle");
  show("record-stop", state === "live");
  show("record-discard", state === "stopped");
  show("record-save", state === "stopped" && recording.steps.length > 0);
  const steps = document.getElementById("record-steps");
  steps.replaceChildren(...(recording ? recording.lines : []).map((line) => el("li", line)));
  steps.hidden = !recording;
  document.getElementById("record-problem").hidden = !recorder.problem;
  document.getElementById("record-problem").textContent = recorder.problem || "";
  const saved = document.getElementById("record-saved");
  saved.hidden = !recorder.saved;
  if (recorder.saved) {
    const { tool, file, parameters } = recorder.saved;
    saved.textContent = `Saved: your assistant can call ${tool}` +
      (parameters.length ? ` (${parameters.join(", ")})` : "") + `. File: ${file}`;
  }
  for (const b of document.querySelectorAll("#record button")) b.disabled = false;
}

// Sends a recorder request for the tab the popup shows; keeps the refusal or the save to show.
async function recordRequest(request) {
  const tab = Number(document.getElementById("site").dataset.tab);
  for (const b of document.querySelectorAll("#record button")) b.disabled = true;
  recorder.problem = null;
  const answer = await ask({ ...request, tab });
  if (answer.error) recorder.problem = request.type === "save_recording" ? `Not saved: ${answer.error}` : answer.error;
  else recorder.saved = answer.tool ? answer : null;
  refresh();
}

document.getElementById("record-start").addEventListener("click", () => recordRequest({ type: "record", action: "start" }));
document.getElementById("record-stop").addEventListener("click", () => recordRequest({ type: "record", action: "stop" }));
document.getElementById("record-discard").addEventListener("click", () => recordRequest({ type: "record", action: "discard" }));
document.getElementById("record-save").addEventListener("submit", (event) => {
  event.preventDefault();
  recordRequest({
    type: "save_recording",
    tool: {
      name: document.getElementById("record-name").value.trim(),
      description: document.getElementById("record-description").value.trim(),
    },
  });
});

function render({ status = {}, tabs = [], grants = {}, recordings = {}, agents = {} }, tab, titles) {
  const connected = status.state === "connected";
  renderAgents(agents.agents || [], titles, connected);
  renderConnection(status);
  renderSite(tab, grants, connected);
  renderRecorder(tab, recordings, document.getElementById("site").dataset.site, connected);
  renderGrants(grants, connected);
  renderTabs(tabs, connected);
}

document.getElementById("version").textContent = chrome.runtime.getManifest().version;
document.getElementById("copy").addEventListener("click", () =>
  navigator.clipboard.writeText(document.getElementById("fix-command").textContent));
document.getElementById("allow").addEventListener("click", () => siteChange("allow", "page_tools"));
document.getElementById("revoke").addEventListener("click", () => siteChange("revoke", "page_tools"));
document.getElementById("trusted").addEventListener("change", (e) =>
  siteChange(e.target.checked ? "allow" : "revoke", "trusted_input"));
async function refresh() {
  const [stored, tab, open] = await Promise.all([
    chrome.storage.session.get(["status", "tabs", "grants", "recordings", "agents"]), currentTab(), chrome.tabs.query({})]);
  render(stored, tab, new Map(open.map((t) => [t.id, t.title || t.url])));
}
refresh();
chrome.storage.session.onChanged.addListener(refresh);
chrome.tabs.onActivated.addListener(refresh);
chrome.tabs.onUpdated.addListener((_, change) => { if (change.url !== undefined) refresh(); });

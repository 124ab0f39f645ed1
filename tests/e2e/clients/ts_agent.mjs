// An agent written against the official TypeScript MCP SDK, run by test_agents.py (issue 28). It joins
// tabwire over stdio, opens its own tab, then reads its tab and the person's shared tab many times with
// several calls in flight, checking that every answer is its own (each page says whose it is), and that a
// tab another agent holds is refused with TAB_HELD. Prints one JSON line with what it saw.
// Usage: node ts_agent.mjs CONFIG_JSON  ({stdio, own_url, shared_tab, held_tab, holder, calls, in_flight})
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const config = JSON.parse(process.argv[2]);
const client = new Client({ name: "ts-agent", version: "0" });
await client.connect(new StdioClientTransport({ ...config.stdio, stderr: "inherit" }));

const text = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
const call = async (name, args) => {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 30000 });
  return { error: Boolean(result.isError), text: text(result), structured: result.structuredContent };
};

const opened = await call("browser_open", { url: config.own_url });
if (opened.error) throw new Error(`browser_open failed: ${opened.text}`);
const ownTab = opened.structured.tab_id;
const tabs = await call("browser_tabs", {});
console.log(JSON.stringify({ opened: ownTab, you: tabs.structured.you })); // tells the test it is ready

const seen = { own: 0, shared: 0, held_refused: 0, crossed: [] };
const jobs = [];
for (let i = 0; i < config.calls; i++) {
  const kind = ["own", "shared", "held"][i % 3];
  const tab = { own: ownTab, shared: config.shared_tab, held: config.held_tab }[kind];
  jobs.push(async () => {
    const out = await call("page_read", { tab_id: tab });
    if (kind === "held") {
      if (out.error && out.text.startsWith("TAB_HELD") && out.text.includes(`held by agent ${config.holder}:`)) seen.held_refused++;
      else seen.crossed.push({ kind, text: out.text.slice(0, 200) });
    } else if (!out.error && out.text.includes(kind === "own" ? "page of ts" : "page of the person")) {
      seen[kind]++;
    } else {
      seen.crossed.push({ kind, text: out.text.slice(0, 200) });
    }
  });
}
let next = 0;
await Promise.all(Array.from({ length: config.in_flight }, async () => {
  while (next < jobs.length) await jobs[next++]();
}));
console.log(JSON.stringify({ own_tab: ownTab, ...seen }));
await client.close();

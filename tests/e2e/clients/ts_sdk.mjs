// A client written against the official TypeScript MCP SDK, run by test_clients_typescript.py. It connects
// to tabwire (stdio or Streamable HTTP), relies on the SDK's automatic tools/list refresh on
// notifications/tools/list_changed to learn the todomvc tools of a page opened in the browser, calls
// todomvc_add_todo, and prints one JSON line with what it saw. Usage: node ts_sdk.mjs CONFIG_JSON
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const config = JSON.parse(process.argv[2]);
let refreshed = [];
let wake = () => {};
const client = new Client({ name: "tabwire-ts-test", version: "0" }, {
  listChanged: { tools: { onChanged: (error, tools) => {
    if (!error && tools) { refreshed.push(tools.map((t) => t.name)); wake(); }
  } } },
});
const transport = config.http
  ? new StreamableHTTPClientTransport(new URL(config.http), { requestInit: { headers: config.headers ?? {} } })
  : new StdioClientTransport({ ...config.stdio, stderr: "inherit" });
await client.connect(transport);
const first = (await client.listTools()).tools.map((t) => t.name);
console.log(JSON.stringify({ listed: first })); // tells the test to start the browser now

const deadline = Date.now() + 20000;
while (!refreshed.some((names) => names.includes("todomvc_add_todo"))) {
  const left = deadline - Date.now();
  if (left <= 0) throw new Error(`no automatic refresh listed todomvc_add_todo; refreshes: ${JSON.stringify(refreshed)}`);
  let timer;
  await new Promise((resolve) => { wake = resolve; timer = setTimeout(resolve, left); });
  clearTimeout(timer); // a pending timer would keep Node running after the client closes
}
const added = await client.callTool({ name: "todomvc_add_todo", arguments: { title: config.title } });
if (added.isError) throw new Error(`todomvc_add_todo failed: ${JSON.stringify(added.content)}`);
console.log(JSON.stringify({ server: client.getServerVersion().name, first, refreshed, added: added.structuredContent }));
await client.close();

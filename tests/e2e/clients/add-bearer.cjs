// tests/e2e/clients/add-bearer.cjs — preloaded (NODE_OPTIONS=--require) into a Node tool that has no option
// to send headers (the MCP conformance suite's server mode): every HTTP request it makes to
// 127.0.0.1:<TABWIRE_HTTP_PORT> gets `Authorization: <TABWIRE_AUTHORIZATION>`. It installs undici's global
// dispatcher with an interceptor, which both the tool's own undici (from TABWIRE_NODE_MODULES) and Node's
// fetch use.
const undici = require(require.resolve("undici", { paths: [process.env.TABWIRE_NODE_MODULES] }));
const authorization = process.env.TABWIRE_AUTHORIZATION;
const port = String(process.env.TABWIRE_HTTP_PORT);

const ours = (origin) => {
  try {
    const u = new URL(String(origin));
    return u.port === port && ["127.0.0.1", "localhost", "[::1]"].includes(u.hostname);
  } catch {
    return false;
  }
};

const withBearer = (headers) => {
  if (Array.isArray(headers)) return [...headers, "authorization", authorization];
  if (headers && typeof headers[Symbol.iterator] === "function") {
    return [...Array.from(headers).flat(), "authorization", authorization];
  }
  return { ...(headers ?? {}), authorization };
};

undici.setGlobalDispatcher(
  new undici.Agent().compose((dispatch) => (options, handler) =>
    dispatch(ours(options.origin) ? { ...options, headers: withBearer(options.headers) } : options, handler),
  ),
);

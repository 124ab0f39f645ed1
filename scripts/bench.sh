#!/usr/bin/env bash
# Benchmarks (numbers, not pass/fail): the server-only round trip (cargo bench) and the full path
# through headless Chromium (scripts/bench.py); with --page-tools, the page tools side by side with
# Playwright MCP (scripts/bench_page_tools.py), then multi-step tasks on the apps of sites.md, Trac and
# MoinMoin through the three servers (scripts/bench_tasks.py); with --trusted, trusted input against synthetic
# input (scripts/bench_trusted.py); with --first-call, the first page-tool call on a fresh page and page
# load with and without the runtime, beside Playwright MCP and chrome-devtools-mcp
# (scripts/bench_first_call.py); with --wasm-compile, the runtime's compile time against module size and
# how it is compiled (scripts/bench_wasm_compile.py); with --repetition, what Tabwire's snapshots of
# consecutive pages of Trac and MoinMoin share (scripts/bench_repetition.py); with --get-frame, the
# worker's browser round trips (webNavigation.getFrame per checked answer) beside whole calls
# (scripts/bench_get_frame.py); with --trace, a Chrome trace of a new tab's first calls, or with
# --trace --act of page_act, cut into legs per thread (scripts/trace_first_call.py). Results go in
# BENCHMARKS.md by hand, with the date.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE="${TABWIRE_CACHE:-$HOME/.cache/tabwire}"
./build.sh
. scripts/test-env.sh
# The peers (run by Node 22 from test-env.sh, offline once installed) and the offline cl100k counter.
install_peers() {
  PLAYWRIGHT_MCP="$CACHE/playwright-mcp"
  if [ ! -f "$PLAYWRIGHT_MCP/node_modules/@playwright/mcp/cli.js" ]; then
    npm install --prefix "$PLAYWRIGHT_MCP" --no-audit --no-fund --loglevel=error @playwright/mcp@0.0.83
  fi
  CHROME_DEVTOOLS_MCP="$CACHE/chrome-devtools-mcp"
  if [ ! -f "$CHROME_DEVTOOLS_MCP/node_modules/chrome-devtools-mcp/package.json" ]; then
    PUPPETEER_SKIP_DOWNLOAD=1 npm install --prefix "$CHROME_DEVTOOLS_MCP" --no-audit --no-fund --loglevel=error \
      chrome-devtools-mcp@1.11.0
  fi
  "$VENV/bin/python" -c "import bpe_openai" 2>/dev/null ||
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check bpe-openai
}
# One measure: its heading, then its script with the arguments that follow.
measure() {
  echo "== $1"
  "$VENV/bin/python" "${@:2}"
}
case "${1:-}" in
  --page-tools)
    install_peers
    measure "page tools: Tabwire and Playwright MCP on TodoMVC, side by side" scripts/bench_page_tools.py
    measure "per-task tokens: create, edit, find, read back on TiddlyWiki, MailDev, Trac and MoinMoin" \
      scripts/bench_tasks.py ;;
  --first-call)
    # The first page-tool call on a fresh page against the next, beside the peers, and page load
    # with and without the runtime loaded as the page loads (issue 32).
    install_peers
    measure "first page-tool call on a fresh page, and page load with and without the runtime" \
      scripts/bench_first_call.py "${@:2}" ;;
  --wasm-compile)
    measure "the runtime's wasm: compile and instantiate in a fresh renderer process, against size" \
      scripts/bench_wasm_compile.py ;;
  --repetition)
    install_peers # for the cl100k counter
    measure "what snapshots of consecutive pages of one site share (Trac, MoinMoin)" scripts/bench_repetition.py ;;
  --get-frame)
    measure "the worker's getFrame per checked answer, tabs.get, and whole calls, in alternating rounds" \
      scripts/bench_get_frame.py ;;
  --trace)
    measure "a Chrome trace of page tool calls, each call's window read per thread" \
      scripts/trace_first_call.py "${@:2}" ;;
  --trusted)
    measure "trusted input (chrome.debugger) vs synthetic input, page_act on the trusted-input fixture" \
      scripts/bench_trusted.py ;;
  "")
    echo "== server only: rmcp client ⇄ tabwire ⇄ instant fake extension (cargo bench)"
    TABWIRE_BIN="$PWD/target/release/tabwire" cargo bench -q -p server --bench round_trip 2>&1 | tail -1
    measure "full path: Python MCP SDK client ⇄ tabwire ⇄ Chromium worker ⇄ TodoMVC tab" scripts/bench.py ;;
  *)
    echo "bench.sh: unknown option $1 (see the comment at the top of scripts/bench.sh)" >&2
    exit 2 ;;
esac

#!/usr/bin/env bash
# Benchmarks (numbers, not pass/fail): the server-only round trip (cargo bench) and the full path
# through headless Chromium (scripts/bench.py). Results go in BENCHMARKS.md by hand, with the date.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE="${TABWIRE_CACHE:-$HOME/.cache/tabwire}"
./build.sh
. scripts/test-env.sh
echo "== server only: rmcp client ⇄ tabwire ⇄ instant fake extension (cargo bench)"
TABWIRE_BIN="$PWD/target/release/tabwire" cargo bench -q -p server --bench round_trip 2>&1 | tail -1
echo "== full path: Python MCP SDK client ⇄ tabwire ⇄ Chromium worker ⇄ TodoMVC tab"
"$VENV/bin/python" scripts/bench.py

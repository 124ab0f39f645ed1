#!/usr/bin/env bash
# Tabwire's demo (the README's first command): build, then start tabwire as an MCP client would,
# TodoMVC on 127.0.0.1, and headless Chromium with the extension loaded from this repository;
# print the tools as they register and a few real calls with their results and timings: an adapter's
# tools on TodoMVC, then page tools on a page no adapter covers.
set -euo pipefail
cd "$(dirname "$0")"
CACHE="${TABWIRE_CACHE:-$HOME/.cache/tabwire}"
mkdir -p "$CACHE"
./build.sh
. scripts/demo-env.sh  # only what the demo needs (test.sh installs the rest)
exec "$VENV/bin/python" scripts/demo.py "$@"

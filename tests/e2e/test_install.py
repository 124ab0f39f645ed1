"""The install path as a newcomer takes it, on this machine, with a clean HOME.

The user has only the `tabwire` binary (copied out of the build, as a download would be) and the MCP
clients they already use, each with its config in its real place and format: Claude Desktop
(`~/.config/Claude/claude_desktop_config.json`, already holding other servers and settings), Claude
Code (`~/.claude.json`, with its own keys), Cursor (`~/.cursor/mcp.json`) and VS Code
(`~/.config/Code/User/mcp.json`, JSONC with comments). Then:
1. `tabwire setup --dry-run` prints a diff for each and changes nothing at all;
2. `tabwire setup` copies itself to a stable place (~/.local/share/tabwire/bin: the download may go),
   creates the secret, writes the extension (paired) and adds Tabwire to each config,
   each changed file backed up first, every other server and setting untouched;
3. a second `tabwire setup` changes nothing;
4. a real MCP client (the official Python SDK) started exactly as the written Claude Desktop config
   says drives TodoMVC in Chromium, with the extension loaded from the folder setup printed.
"""

from __future__ import annotations

import json
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import extension_id_from_manifest
from harness.mcp_client import open_tabwire_session
from harness.todomvc import stored_todos, wait_until_app_ready

pytestmark = pytest.mark.anyio

CLAUDE_DESKTOP = {
    "mcpServers": {
        "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/ann/notes"]},
        "weather": {"command": "uvx", "args": ["weather-mcp"], "env": {"UNITS": "metric"}},
    },
    "globalShortcut": "Ctrl+Space",
}
CLAUDE_CODE = {
    "numStartups": 12,
    "installMethod": "npm-global",
    "autoUpdates": True,
    "projects": {"/home/ann/src/app": {"allowedTools": [], "mcpServers": {}, "hasTrustDialogAccepted": True}},
    "mcpServers": {"github": {"type": "stdio", "command": "docker", "args": ["run", "-i", "ghcr.io/github/github-mcp-server"], "env": {}}},
}
CURSOR = {"mcpServers": {}}
VSCODE = """// VS Code user MCP servers
{
\t"servers": {
\t\t// company wiki
\t\t"wiki": {
\t\t\t"type": "http",
\t\t\t"url": "http://127.0.0.1:9/mcp"
\t\t}
\t},
\t"inputs": []
}
"""


def write_client_configs(home: Path) -> dict[str, Path]:
    files = {
        "Claude Desktop": home / ".config" / "Claude" / "claude_desktop_config.json",
        "Claude Code": home / ".claude.json",
        "Cursor": home / ".cursor" / "mcp.json",
        "VS Code": home / ".config" / "Code" / "User" / "mcp.json",
    }
    for path in files.values():
        path.parent.mkdir(parents=True, exist_ok=True)
    files["Claude Desktop"].write_text(json.dumps(CLAUDE_DESKTOP, indent=2) + "\n")
    files["Claude Code"].write_text(json.dumps(CLAUDE_CODE, indent=2))
    files["Claude Code"].chmod(0o600)
    files["Cursor"].write_text(json.dumps(CURSOR))
    files["VS Code"].write_text(VSCODE)
    return files


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def strip_jsonc(text: str) -> dict:
    return json.loads(re.sub(r"^\s*//.*$", "", text, flags=re.M))


async def test_a_newcomer_sets_up_every_client_and_a_client_started_from_its_config_drives_todomvc(
    tmp_path, tabwire_binary, pairing, launch_chromium, todomvc_url
):
    home = tmp_path / "home"
    home.mkdir()
    download = tmp_path / "Downloads" / "tabwire"
    download.parent.mkdir()
    shutil.copy2(tabwire_binary, download)
    files = write_client_configs(home)
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "RUST_LOG": "warn"}

    def setup(*extra: str) -> subprocess.CompletedProcess:
        done = subprocess.run([str(download), "setup", "--port", str(pairing.port), *extra],
                              env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"setup {extra} failed:\n{done.stdout}\n{done.stderr}"
        return done

    # 1. A dry run shows the diffs and writes nothing.
    before = snapshot(home)
    dry = setup("--dry-run").stdout
    assert snapshot(home) == before, "setup --dry-run changed files"
    for name, path in files.items():
        assert f"{name:<15} would add Tabwire to {path}:" in dry, dry
        assert f"--- {path}" in dry
    installed = home / ".local" / "share" / "tabwire" / "bin" / "tabwire"
    assert f"Binary: {download} would be copied to {installed}" in dry, dry
    assert dry.count(f'+      "command": "{installed}",') == 3, dry  # all but VS Code's, which is tab-indented

    # 2. The real run.
    report = setup().stdout
    extension_dir = home / ".local" / "share" / "tabwire" / "extension"
    assert "Load unpacked" in report and str(extension_dir) in report, report
    assert "chrome://extensions" in report, report
    assert f"Binary: {installed} (copied)" in report, report
    assert installed.read_bytes() == download.read_bytes() and installed.stat().st_mode & 0o111
    secret = home / ".config" / "tabwire" / "secret"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    launch_args = ["mcp", "--port", str(pairing.port)]
    for name, path in files.items():
        assert f"added Tabwire to {path} (backup: {path}.tabwire.bak)" in report, report
        assert Path(f"{path}.tabwire.bak").read_bytes() == before[str(path.relative_to(home))]
    desktop = json.loads(files["Claude Desktop"].read_text())
    assert desktop["mcpServers"]["tabwire"] == {"command": str(installed), "args": launch_args}
    assert {k: v for k, v in desktop["mcpServers"].items() if k != "tabwire"} == CLAUDE_DESKTOP["mcpServers"]
    assert desktop["globalShortcut"] == "Ctrl+Space"
    code = json.loads(files["Claude Code"].read_text())
    assert code["mcpServers"]["tabwire"] == {"type": "stdio", "command": str(installed), "args": launch_args}
    assert code["mcpServers"]["github"] == CLAUDE_CODE["mcpServers"]["github"]
    assert {k: v for k, v in code.items() if k != "mcpServers"} == {k: v for k, v in CLAUDE_CODE.items() if k != "mcpServers"}
    assert stat.S_IMODE(files["Claude Code"].stat().st_mode) == 0o600, "Claude Code's config stays private"
    assert json.loads(files["Cursor"].read_text())["mcpServers"]["tabwire"]["command"] == str(installed)
    vscode_text = files["VS Code"].read_text()
    assert "// VS Code user MCP servers" in vscode_text and "// company wiki" in vscode_text
    vscode = strip_jsonc(vscode_text)
    assert vscode["servers"]["wiki"] == {"type": "http", "url": "http://127.0.0.1:9/mcp"}
    assert vscode["servers"]["tabwire"] == {"type": "stdio", "command": str(installed), "args": launch_args}

    # 3. Again: nothing to do, nothing written.
    after = snapshot(home)
    again = setup().stdout
    assert again.count("already set up") == 4, again
    assert f"Binary: {installed} (up to date)" in again, again
    download.unlink()  # the download is gone; the clients start the copy
    configs = {str(p.relative_to(home)) for p in files.values()}
    assert {k: v for k, v in snapshot(home).items() if k in configs} == {k: v for k, v in after.items() if k in configs}

    # 4. A real MCP client, started as Claude Desktop's config says, drives TodoMVC through the
    # extension setup wrote. TodoMVC is served on 127.0.0.1 here, so the todomvc adapter is told
    # to match it too (on todomvc.com it matches by itself).
    entry = desktop["mcpServers"]["tabwire"]
    args = entry["args"] + ["--adapter-match", "todomvc=http://127.0.0.1/*"]
    stderr_path = tmp_path / "tabwire.stderr.log"
    browser = await launch_chromium(extension_dir=extension_dir)
    async with open_tabwire_session(Path(entry["command"]), args, env=env, cwd=tmp_path, stderr_path=stderr_path) as client:
        opened = await client.browser_open(todomvc_url("plain"))
        assert "todomvc_add_todo" in opened.structured["tools"], opened
        await client.call_ok("todomvc_add_todo", {"title": "installed in two minutes"})
        page = await browser.cdp.wait_for_page(todomvc_url("plain"))
        await wait_until_app_ready(browser.cdp, page)
        assert await stored_todos(browser.cdp, page) == [{"title": "installed in two minutes", "completed": False}]
    assert extension_id_from_manifest(extension_dir / "manifest.json") == "nfoddanklbblmbkneanahdhgiikgphao"


def test_a_config_with_a_byte_order_mark_or_comments_is_kept_valid_or_refused_naming_the_line(tmp_path, tabwire_binary):
    """As found by a newcomer: Claude Desktop's config saved by Notepad starts with a UTF-8 BOM, and a
    hand-edited ~/.claude.json has a comment and a trailing comma. Setup keeps the first valid (BOM
    and other servers kept) and refuses the second, naming its line, leaving it byte for byte."""
    home = tmp_path / "home"
    desktop = home / ".config" / "Claude" / "claude_desktop_config.json"
    desktop.parent.mkdir(parents=True)
    desktop.write_bytes(b"\xef\xbb\xbf" + json.dumps(CLAUDE_DESKTOP, indent=2).encode())
    code = home / ".claude.json"
    code_text = '{\n  "numStartups": 3,\n  // my servers\n  "mcpServers": {\n    "github": {"command": "docker"},\n  }\n}\n'
    code.write_text(code_text)
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([str(tabwire_binary), "setup"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stdout
    out = done.stdout
    assert f"Claude Desktop  added Tabwire to {desktop}" in out, out
    written = desktop.read_bytes()
    assert written.startswith(b"\xef\xbb\xbf"), "the byte-order mark is kept"
    config = json.loads(written[3:])
    assert config["mcpServers"]["weather"] == CLAUDE_DESKTOP["mcpServers"]["weather"]
    assert config["mcpServers"]["tabwire"]["args"] == ["mcp"]
    assert f"Claude Code     NOT UPDATED: {code} was left as it is: it is not strict JSON" in out, out
    assert "(line 3: `// my servers`)" in out, out
    assert code.read_text() == code_text, "a refused file is left untouched"
    assert "added Tabwire to " + str(code) not in out
    assert "INFO" not in out + done.stderr, done.stderr

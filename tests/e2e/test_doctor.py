"""`tabwire doctor` in each failure state, as a user runs it: its printed findings (each with its
fix) and its exit status. Every test starts from a clean HOME set up by the real `tabwire setup`;
the browser is headless Chromium with the extension setup wrote, the hub the real `tabwire mcp`
started from the written client config.
"""

from __future__ import annotations

import json
import secrets
import socket
import subprocess
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from harness.mcp_client import open_tabwire_session
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

WAIT_MS = "1500"  # how long doctor listens itself when no tabwire runs


class Home:
    """A clean HOME where `tabwire setup` ran (Claude Desktop installed), and ways to run tabwire in it."""

    def __init__(self, tmp_path: Path, binary: Path, port: int) -> None:
        self.root = tmp_path / "home"
        self.binary = binary
        self.port = port
        self.tmp = tmp_path
        self.env = {"HOME": str(self.root), "PATH": "/usr/bin:/bin", "RUST_LOG": "warn"}
        self.desktop = self.root / ".config" / "Claude" / "claude_desktop_config.json"
        self.desktop.parent.mkdir(parents=True)
        self.extension = self.root / ".local" / "share" / "tabwire" / "extension"
        self.installed = self.root / ".local" / "share" / "tabwire" / "bin" / "tabwire"  # where setup copies tabwire
        self.secret = self.root / ".config" / "tabwire" / "secret"

    def run(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.binary), *args], env=self.env, capture_output=True, text=True, timeout=60)

    def setup(self) -> None:
        done = self.run("setup", "--port", str(self.port))
        assert done.returncode == 0, done.stdout + done.stderr

    def doctor(self, *extra: str) -> tuple[int, str]:
        done = self.run("doctor", "--port", str(self.port), "--wait-ms", WAIT_MS, *extra)
        print(done.stdout)
        return done.returncode, done.stdout

    @asynccontextmanager
    async def hub(self):
        """`tabwire mcp` as Claude Desktop's config says, serving TodoMVC on 127.0.0.1 too."""
        entry = json.loads(self.desktop.read_text())["mcpServers"]["tabwire"]
        args = entry["args"] + ["--adapter-match", "todomvc=http://127.0.0.1/*"]
        async with open_tabwire_session(Path(entry["command"]), args, env=self.env, cwd=self.tmp,
                                        stderr_path=self.tmp / "tabwire.stderr.log") as client:
            yield client


@pytest.fixture
def home(tmp_path, tabwire_binary, pairing) -> Home:
    return Home(tmp_path, tabwire_binary, pairing.port)


def fail_line(out: str, text: str) -> str:
    """The FAIL finding containing `text` (its lines up to and with its fix)."""
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("FAIL ") and text in line:
            rest = lines[i + 1 :]
            end = next((j for j, l in enumerate(rest) if not l.startswith(" ")), len(rest))
            finding = [line, *rest[:end]]
            assert finding[-1].startswith("     fix: "), f"the finding {line!r} has no fix line:\n{out}"
            return "\n".join(finding)
    raise AssertionError(f"no FAIL line with {text!r} in:\n{out}")


def test_on_a_fresh_home_doctor_says_to_run_setup(home):
    status, out = home.doctor()
    assert status == 1
    assert "run `tabwire setup`" in fail_line(out, f"no pairing secret at {home.secret}")
    assert "run `tabwire setup`" in fail_line(out, "no MCP client (Claude Desktop, Claude Code, Cursor, VS Code) is set up")
    assert "tabwire setup" in fail_line(out, "no extension folder was written or paired")
    assert out.rstrip().endswith("3 problems found.")
    # Where files are uploaded from and downloads saved to, by default and when moved.
    config = home.root / ".config" / "tabwire"
    assert f"files are uploaded only from {config / 'uploads'}" in out, out
    assert f"browser_downloads saves into {config / 'downloads'}" in out, out
    home.env["TABWIRE_DOWNLOADS_DIR"] = str(home.tmp / "elsewhere")
    assert f"browser_downloads saves into {home.tmp / 'elsewhere'}" in home.doctor()[1]


async def test_all_well_then_no_tab_then_no_browser(home, launch_chromium, todomvc_url):
    home.setup()
    async with home.hub() as client:
        browser = await launch_chromium(extension_dir=home.extension)
        await client.browser_open(todomvc_url("plain"))
        status, out = home.doctor()
        assert status == 0, out
        assert f"ok   Claude Desktop starts {home.installed} mcp --port {home.port}" in out
        assert f"ok   extension 0.1.0 in {home.extension}, paired for port {home.port}" in out
        assert f"is running on 127.0.0.1:{home.port}" in out
        assert "ok   1 browser(s) connected" in out
        assert "ok   1 tab(s) offer" in out
        assert out.rstrip().endswith("All is well.")

        # A site allowed for page tools, and no adapter tab open: the main use, and fine.
        allowed = home.run("allow", todomvc_url("plain").split("/examples")[0])
        assert allowed.returncode == 0, allowed.stderr
        page = await browser.cdp.wait_for_page(todomvc_url("plain"))
        await browser.cdp.send(page, "Page.close")
        await wait_for(lambda: _no_tabs(client), timeout=20, what="the closed tab to leave browser_tabs")
        status, out = home.doctor()
        assert status == 0, out
        assert "ok   no open tab offers adapter tools right now; page tools work on any site you allow" in out, out
        assert "page tools allowed on 1 site(s)" in out, out
        assert out.rstrip().endswith("All is well.")

        browser.stop()
        status, out = home.doctor()
        assert status == 1
        assert "toolbar popup says why" in fail_line(out, "no browser is connected")
    # No tabwire at all now: doctor listens itself, and still no browser comes.
    status, out = home.doctor()
    assert f"no tabwire is running (your MCP client starts it); doctor listened on 127.0.0.1:{home.port}" in out
    assert "FAIL no browser is connected" in out and status == 1


async def _no_tabs(client) -> bool:
    listed = (await client.call_ok("browser_tabs")).structured
    return listed["connected"] and not listed["tabs"]


async def test_a_pairing_mismatch_is_named_with_its_fix(home, launch_chromium):
    home.setup()
    # The extension is paired with a secret this tabwire does not have.
    other = home.tmp / "other-secret"
    other.write_text(secrets.token_hex(32) + "\n")
    done = home.run("pair", "--port", str(home.port), "--secret-file", str(other),
                    "--extension-config", str(home.extension / "extension" / "pairing.json"))
    assert done.returncode == 0, done.stderr
    async with home.hub():
        await launch_chromium(extension_dir=home.extension)

        async def refused() -> str | None:
            status, out = home.doctor()
            return out if status == 1 and "tried to connect with the wrong pairing secret" in out else None

        out = await wait_for(refused, timeout=30, what="doctor to report the refused extension")
    found = fail_line(out, "pairing mismatch: chrome-extension://nfoddanklbblmbkneanahdhgiikgphao tried to connect")
    assert "tabwire pair --port" in found and "reload Tabwire" in found
    on_disk = fail_line(out, f"pairing mismatch: the extension in {home.extension} holds another pairing secret")
    assert f'tabwire pair --port {home.port} --extension-config "{home.extension}/extension/pairing.json"' in on_disk


async def test_an_extension_of_another_version_is_named(home, launch_chromium):
    home.setup()
    manifest = home.extension / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"version": "0.1.0"', '"version": "0.0.9"'))
    async with home.hub() as client:
        await launch_chromium(extension_dir=home.extension)
        await wait_for(lambda: _connected(client), timeout=20, what="the extension to connect")
        status, out = home.doctor()
    assert status == 1
    assert f'tabwire extension install "{home.extension}"' in fail_line(
        out, f"the extension in {home.extension} is version 0.0.9, this tabwire is 0.1.0")
    assert "tabwire setup" in fail_line(out, "the connected extension is version 0.0.9, this tabwire is 0.1.0")


async def _connected(client) -> bool:
    return (await client.call_ok("browser_tabs")).structured["connected"]


def test_a_held_port_a_missing_binary_and_broken_adapters(home):
    home.setup()
    # Cursor points at a tabwire that was deleted; Claude Desktop loads an adapter folder with a broken file.
    cursor = home.root / ".cursor" / "mcp.json"
    cursor.parent.mkdir()
    cursor.write_text(json.dumps({"mcpServers": {"tabwire": {"command": "/opt/gone/tabwire", "args": ["mcp"]}}}))
    adapters = home.tmp / "my-adapters"
    adapters.mkdir()
    (adapters / "shop.json").write_text('{"name": "shop", "match": ["https://shop.example/*"], "tools": [\n  {"name": 3}\n]}\n')
    desktop = json.loads(home.desktop.read_text())
    desktop["mcpServers"]["tabwire"]["args"] += ["--adapters", str(adapters)]
    home.desktop.write_text(json.dumps(desktop))
    # Another program holds the port: it accepts and answers like a web server that is not tabwire.
    with socket.create_server(("127.0.0.1", home.port)) as holder:
        holder.settimeout(10)
        import threading

        def answer() -> None:
            for _ in range(3):
                try:
                    conn, _ = holder.accept()
                except OSError:
                    return
                with conn:
                    conn.recv(4096)
                    conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

        thread = threading.Thread(target=answer, daemon=True)
        thread.start()
        status, out = home.doctor()
    assert status == 1
    held = fail_line(out, f"another program (not tabwire) holds 127.0.0.1:{home.port}")
    assert f"lsof -i :{home.port}" in held and "tabwire setup --port 17373" in held
    assert "run `tabwire setup`" in fail_line(out, "Cursor starts /opt/gone/tabwire, which does not exist")
    broken = fail_line(out, "adapter files with errors (")
    assert f"tabwire adapters check {adapters}" in broken
    assert f"{adapters / 'shop.json'}:" in out, out


def test_the_user_adapter_folder_is_checked_and_each_broken_file_named_with_its_first_error(home):
    home.setup()
    config = home.root / ".config" / "tabwire"
    folder = config / "adapters"
    # Not there yet: tabwire makes it when it starts.
    status, out = home.doctor()
    assert f"ok   your adapter folder {folder} does not exist yet; tabwire creates it when it starts" in out, out
    folder.mkdir()
    (folder / "notes.json").write_text(json.dumps(
        {"name": "notes", "match": ["https://notes.example/*"],
         "tools": [{"name": "list", "description": "List the notes.", "steps": [{"step": "click", "selector": "#x"}]}]}))
    # Two errors in one file: the first is named, `adapters check` lists both.
    (folder / "shop.json").write_text(
        '{"name": "shop", "match": ["https://shop.example/*"], "tools": [\n'
        '  {"name": "Bad Name", "description": "x", "steps": [{"step": "click", "selector": "#a"}]},\n'
        '  {"name": "Worse Name", "description": "y", "steps": [{"step": "click", "selector": "#b"}]}\n]}\n'
    )
    status, out = home.doctor()
    assert status == 1
    broken = fail_line(out, f"1 file(s) in your adapter folder {folder} fail to load (their tools are missing):")
    assert f'`tabwire adapters check "{folder}"` lists every error' in broken
    named = [line.strip() for line in broken.splitlines() if line.strip().startswith(str(folder))]
    assert named == [f'{folder / "shop.json"}:2:12: tools[0].name: tool name "Bad Name" is not valid: '
                     "expected [a-z][a-z0-9_]*"], broken
    checked = home.run("adapters", "check", str(folder))
    assert checked.returncode != 0 and f'{folder / "shop.json"}:3:12: tools[1].name' in checked.stdout, checked
    (folder / "shop.json").unlink()
    assert f"ok   your adapter folder {folder} is writable; its 1 file(s) load" in home.doctor()[1]

    # A client that moves the folder where it cannot be made, then onto a file.
    blocker = home.tmp / "a-file"
    blocker.write_text("not a folder")
    desktop = json.loads(home.desktop.read_text())
    args = desktop["mcpServers"]["tabwire"]["args"]
    args += ["--user-adapters", str(blocker / "adapters")]
    home.desktop.write_text(json.dumps(desktop))
    status, out = home.doctor()
    assert status == 1
    blocked = fail_line(out, f"your adapter folder {blocker / 'adapters'} cannot be created: {blocker} is a file, not a folder")
    assert "--user-adapters DIR" in blocked, blocked
    args[-1] = str(blocker)
    home.desktop.write_text(json.dumps(desktop))
    status, out = home.doctor()
    assert "move that file away" in fail_line(out, f"your adapter folder {blocker} is a file, not a folder")
    assert str(folder) not in out, "the folder the client moved away from is not the one checked"


def test_after_setup_on_another_port_plain_doctor_checks_that_port_and_never_advises_the_default(home):
    """`tabwire setup --port N`, then `tabwire doctor` as a person types it (no --port, no RUST_LOG):
    it checks port N, finds the extension paired for N, and no fix it prints names the default port
    (re-pairing for 17373 would break the working setup). No log lines in its output."""
    home.setup()
    env = {k: v for k, v in home.env.items() if k != "RUST_LOG"}
    done = subprocess.run([str(home.binary), "doctor", "--wait-ms", WAIT_MS], env=env, capture_output=True,
                          text=True, timeout=60)
    out = done.stdout
    print(out)
    assert f"ok   extension 0.1.0 in {home.extension}, paired for port {home.port}" in out, out
    assert f"doctor listened on 127.0.0.1:{home.port}" in out, out
    assert "17373" not in out, out
    assert "INFO" not in out + done.stderr and "tabwire::" not in done.stderr, done.stderr
    # Asked about another port than the clients use, it says so instead of advising a re-pair.
    done = subprocess.run([str(home.binary), "doctor", "--port", "17373", "--wait-ms", WAIT_MS], env=env,
                          capture_output=True, text=True, timeout=60)
    assert f"you asked about port 17373, but your MCP clients start tabwire on port {home.port}" in done.stdout, done.stdout
    assert "tabwire pair --port 17373" not in done.stdout, done.stdout


def test_setup_prints_no_log_lines(tmp_path, tabwire_binary):
    env = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([str(tabwire_binary), "setup"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Pairing secret:" in done.stdout
    assert done.stderr == "", done.stderr

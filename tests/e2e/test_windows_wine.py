"""The Windows binary, run for real under Wine (Debian's wine64) in a Wine prefix of the test's own:
`tabwire.exe --version`, `setup` and `doctor` in its temporary Windows profile (configs written to
`%APPDATA%`, or to the Microsoft Store Claude's package folder when that is installed, with plain
`C:\\...` paths, never `\\\\?\\`), and a stdio MCP session from the official Python client (initialize,
tools/list, a `browser_tabs` call that says no browser is connected), and the owner-only ACLs of the
secret and Tabwire's folder, read back by `doctor` through `GetNamedSecurityInfoW` (under Wine, as the
Unix mode Wine made of them).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import PureWindowsPath

import pytest

from conftest import free_port
from harness import wine
from harness.mcp_client import open_tabwire_session

pytestmark = pytest.mark.anyio

STORE_PACKAGE = "Claude_pzs8sxrjxfjjc"


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    binary = wine.windows_binary()
    made = wine.WinePrefix(tmp_path_factory.mktemp("wine") / "prefix")
    made.exe = binary
    yield made
    wine.stop(made)


def test_version_runs(prefix):
    done = prefix.run(prefix.exe, "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith("tabwire 0."), done.stdout


def test_setup_and_doctor_in_a_windows_profile(prefix):
    profile = prefix.profile
    roaming = profile / "AppData" / "Roaming"
    prefix.unix(roaming / "Claude").mkdir(parents=True, exist_ok=True)
    port = free_port()
    setup = prefix.run(prefix.exe, "setup", "--port", str(port))
    assert setup.returncode == 0, setup.stdout + setup.stderr
    out = setup.stdout
    installed = roaming / "tabwire" / "bin" / "tabwire.exe"
    assert f"Binary: {installed} (copied)" in out, out
    assert "\\\\?\\" not in out, out
    assert "chrome://extensions" in out and "Load unpacked" in out
    assert "paste the path into the address bar" in out
    assert "INFO" not in out + setup.stderr
    config_file = prefix.unix(roaming / "Claude" / "claude_desktop_config.json")
    config = json.loads(config_file.read_text())
    assert config["mcpServers"]["tabwire"] == {"command": str(installed), "args": ["mcp", "--port", str(port)]}
    assert prefix.unix(installed).read_bytes() == prefix.exe.read_bytes()
    secret = prefix.unix(roaming / "tabwire" / "secret")
    assert len(secret.read_text().strip()) == 64
    extension = PureWindowsPath(next(l for l in out.splitlines() if "written to" in l).split("written to ")[1].split(" and paired")[0])
    assert str(extension).startswith(str(roaming)), extension
    assert json.loads(prefix.unix(extension / "extension" / "pairing.json").read_text())["port"] == port

    again = prefix.run(prefix.exe, "setup", "--port", str(port))
    assert again.returncode == 0 and "already set up" in again.stdout and "(up to date)" in again.stdout, again.stdout

    # doctor, started as the client starts it (the installed copy), with no --port: it checks the
    # port setup wrote, and says what is missing — the browser — without `\\?\` anywhere.
    doctor = prefix.run(prefix.unix(installed), "doctor", "--wait-ms", "500")
    report = doctor.stdout
    assert doctor.returncode == 1, report
    assert f"tabwire 0.1.0 at {installed}" in report, report
    assert f"ok   pairing secret: {roaming / 'tabwire' / 'secret'}" in report, report
    assert f"ok   Claude Desktop starts {installed} mcp --port {port}" in report, report
    assert f"paired for port {port}" in report and "17373" not in report, report
    assert "FAIL no browser is connected" in report, report
    assert "\\\\?\\" not in report and "INFO" not in report + doctor.stderr, report


def test_setup_finds_the_microsoft_store_claude(prefix):
    local = prefix.profile / "AppData" / "Local" / "Packages" / STORE_PACKAGE
    prefix.unix(local).mkdir(parents=True, exist_ok=True)
    done = prefix.run(prefix.exe, "setup")
    assert done.returncode == 0, done.stdout + done.stderr
    store_config = local / "LocalCache" / "Roaming" / "Claude" / "claude_desktop_config.json"
    assert f"Claude Desktop  added Tabwire to {store_config}" in done.stdout or \
        f"Claude Desktop  created {store_config}" in done.stdout, done.stdout
    entry = json.loads(prefix.unix(store_config).read_text())["mcpServers"]["tabwire"]
    assert entry["command"] == str(prefix.profile / "AppData" / "Roaming" / "tabwire" / "bin" / "tabwire.exe")


async def test_a_stdio_mcp_session_with_the_python_client(prefix, tmp_path):
    port = free_port()
    async with open_tabwire_session(wine.WINE, [str(prefix.exe), "mcp", "--port", str(port)], env=prefix.env,
                                    cwd=tmp_path, stderr_path=tmp_path / "tabwire.stderr.log") as client:
        assert client.init.server_info.name == "tabwire", client.init.server_info
        names = await client.tool_names()
        assert {"browser_tabs", "browser_open"} <= names, names
        tabs = await client.call("browser_tabs")
        said = json.dumps(tabs.structured) if tabs.structured is not None else tabs.text
        assert ("NOT_CONNECTED" in said) or (tabs.structured or {}).get("connected") is False, said


def test_the_secret_and_tabwires_folder_are_owner_only(prefix):
    """`setup` gives the secret and the folders it makes an ACL granting the current user alone, and
    `doctor` reads it back (`GetNamedSecurityInfoW`). Wine keeps no descriptor of its own for a file: it
    turns the ACL set into the Unix mode (no access for others) and reads a DACL back from that mode
    (SYSTEM and the user), so this checks the effect Wine shows, not the protection flag, which only
    Windows keeps (the descriptor itself is checked by the owner-only crate's units). A file given
    its old mode back (readable by everyone, as Wine shows any file Tabwire did not restrict) is
    reported with who can read it and the fix."""
    port = free_port()
    setup = prefix.run(prefix.exe, "setup", "--port", str(port))
    assert setup.returncode == 0, setup.stdout + setup.stderr
    folder = prefix.profile / "AppData" / "Roaming" / "tabwire"
    secret = folder / "secret"
    pairing = next(l for l in setup.stdout.splitlines() if "written to" in l).split("written to ")[1].split(" and paired")[0]
    pairing_file = PureWindowsPath(pairing) / "extension" / "pairing.json"
    for path in (secret, folder, pairing_file):
        assert os.stat(prefix.unix(path)).st_mode & 0o007 == 0, f"{path} is open to others"

    report = prefix.run(prefix.exe, "doctor", "--wait-ms", "200").stdout
    user_sid = r"S-1-5-21-[\d-]+"
    for path in (secret, folder):
        line = re.search(rf"ok   owner-only access: {re.escape(str(path))} \((D:[^\n]*)\)\n", report)
        assert line, report
        assert re.search(rf"\(A;[A-Z]*;FA;;;{user_sid}\)", line[1]) and ";WD)" not in line[1], line[1]

    os.chmod(prefix.unix(secret), 0o755)
    report = prefix.run(prefix.exe, "doctor", "--wait-ms", "200").stdout
    assert f"FAIL {secret} is readable by others (WD): its access list is D:" in report, report
    assert f'fix: icacls "{secret}" /inheritance:r /grant:r "%USERNAME%:F"' in report, report
    # pairing.json is tightened again on every write.
    os.chmod(prefix.unix(pairing_file), 0o755)
    assert prefix.run(prefix.exe, "setup", "--port", str(port)).returncode == 0
    assert os.stat(prefix.unix(pairing_file)).st_mode & 0o007 == 0

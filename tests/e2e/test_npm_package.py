"""The npm package as a user gets it, offline: `cargo xtask packages` packs the `tabwire` launcher and this
platform's `@tabwire/linux-x64` (the release binary), `npm install` puts both tarballs into an empty
folder with no registry reachable (the registry is a closed port on 127.0.0.1, so any fetch fails), then
`npx tabwire --version` and `npx tabwire setup` run in a temporary HOME. Setup copies the binary out of
node_modules to a stable per-user place, and the MCP client config points there: deleting the npm folder
(as `npx`'s cache is, some day) leaves a working install.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from conftest import REPO, free_port

CLOSED_REGISTRY = f"http://127.0.0.1:{free_port()}/"


def npm_env(tmp_path: Path, home: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "PATH": os.environ["PATH"],
        "npm_config_registry": CLOSED_REGISTRY,
        "npm_config_cache": str(tmp_path / "npm-cache"),
        "npm_config_audit": "false",
        "npm_config_fund": "false",
        "npm_config_update_notifier": "false",
        "npm_config_fetch_retries": "0",
    }


@pytest.fixture(scope="module")
def tarballs() -> dict[str, Path]:
    done = subprocess.run(["cargo", "xtask", "packages"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    out = REPO / "target" / "dist" / "npm"
    found = {}
    for tgz in out.glob("*.tgz"):
        with tarfile.open(tgz) as tar:
            manifest = json.load(tar.extractfile("package/package.json"))
        found[manifest["name"]] = tgz
    assert {"tabwire", "@tabwire/linux-x64"} <= found.keys(), found
    return found


def manifest_of(tgz: Path) -> dict:
    with tarfile.open(tgz) as tar:
        return json.load(tar.extractfile("package/package.json"))


def test_the_packages_follow_the_optional_dependency_pattern_with_no_install_script(tarballs):
    launcher = manifest_of(tarballs["tabwire"])
    assert launcher["bin"] == {"tabwire": "bin/tabwire.js"}
    assert set(launcher["optionalDependencies"]) == {
        "@tabwire/linux-x64", "@tabwire/linux-arm64", "@tabwire/darwin-x64", "@tabwire/darwin-arm64", "@tabwire/win32-x64",
    }
    assert set(launcher["optionalDependencies"].values()) == {launcher["version"]}
    for name, tgz in tarballs.items():
        manifest = manifest_of(tgz)
        assert "scripts" not in manifest, f"{name} runs a script at install: {manifest['scripts']}"
        if name != "tabwire":
            os_name, cpu = name.removeprefix("@tabwire/").split("-")
            assert (manifest["os"], manifest["cpu"]) == ([os_name], [cpu]), manifest
    with tarfile.open(tarballs["@tabwire/linux-x64"]) as tar:
        binary = tar.getmember("package/bin/tabwire")
        assert binary.mode & 0o111, "the binary is packed executable"
        assert tar.extractfile(binary).read(4) == b"\x7fELF"


def test_npm_install_offline_then_npx_tabwire_setup_in_a_temporary_home(tmp_path, tarballs):
    project = tmp_path / "project"
    project.mkdir()
    (project / "package.json").write_text(json.dumps({"name": "try-tabwire", "private": True}))
    home = tmp_path / "home"
    (home / ".config" / "Claude").mkdir(parents=True)  # Claude Desktop is installed
    env = npm_env(tmp_path, home)

    installed = subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", str(tarballs["tabwire"]), str(tarballs["@tabwire/linux-x64"])],
        cwd=project, env=env, capture_output=True, text=True, timeout=300,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert (project / "node_modules" / "@tabwire" / "linux-x64" / "bin" / "tabwire").is_file()
    for other in ["darwin-arm64", "darwin-x64", "win32-x64", "linux-arm64"]:
        assert not (project / "node_modules" / "@tabwire" / other).exists(), f"{other} was installed here"

    version = subprocess.run(["npx", "--no-install", "tabwire", "--version"], cwd=project, env=env,
                             capture_output=True, text=True, timeout=60)
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"tabwire {manifest_of(tarballs['tabwire'])['version']}"

    port = free_port()
    setup = subprocess.run(["npx", "--no-install", "tabwire", "setup", "--port", str(port)], cwd=project, env=env,
                           capture_output=True, text=True, timeout=120)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    stable = home / ".local" / "share" / "tabwire" / "bin" / "tabwire"
    extension = home / ".local" / "share" / "tabwire" / "extension"
    assert f"Binary: {stable} (copied)" in setup.stdout, setup.stdout
    assert "chrome://extensions" in setup.stdout and "Load unpacked" in setup.stdout
    assert str(extension) in setup.stdout
    assert "INFO" not in setup.stdout + setup.stderr, setup.stderr
    config = json.loads((home / ".config" / "Claude" / "claude_desktop_config.json").read_text())
    assert config["mcpServers"]["tabwire"] == {"command": str(stable), "args": ["mcp", "--port", str(port)]}
    assert stable.read_bytes() == (project / "node_modules" / "@tabwire" / "linux-x64" / "bin" / "tabwire").read_bytes()

    # Idempotent: a second run copies nothing and changes no config.
    again = subprocess.run(["npx", "--no-install", "tabwire", "setup", "--port", str(port)], cwd=project, env=env,
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"Binary: {stable} (up to date)" in again.stdout and "already set up" in again.stdout, again.stdout

    # The npm folder goes away; what the client starts stays.
    shutil.rmtree(project)
    alone = subprocess.run([str(stable), "--version"], env=env, capture_output=True, text=True, timeout=30)
    assert alone.returncode == 0 and alone.stdout.startswith("tabwire "), alone.stderr


def test_the_launcher_says_what_is_missing_when_the_platform_package_was_omitted(tmp_path, tarballs):
    project = tmp_path / "project"
    project.mkdir()
    (project / "package.json").write_text(json.dumps({"name": "try-tabwire", "private": True}))
    env = npm_env(tmp_path, tmp_path / "home")
    installed = subprocess.run(["npm", "install", "--omit=optional", str(tarballs["tabwire"])], cwd=project, env=env,
                               capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    ran = subprocess.run(["npx", "--no-install", "tabwire", "--version"], cwd=project, env=env,
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 1
    assert "the package @tabwire/linux-x64" in ran.stderr and "--omit=optional" in ran.stderr, ran.stderr

"""Each release binary's format is right for its platform, read from its headers, not its name: ELF's
machine (x86-64, AArch64), Mach-O's CPU type (x86_64, arm64; arm64 carrying the code signature macOS
requires), PE's machine (AMD64) and console subsystem (stdio is the MCP channel). Checks the binaries
`cargo xtask dist` put in target/dist/: test.sh builds win32-x64 on every run; the whole set is built by
the documented `cargo xtask dist`, after which `TABWIRE_DIST_ALL=1` makes this test require all five.
"""

from __future__ import annotations

import json
import os
import struct
import zipfile
from pathlib import Path

import pytest

from conftest import REPO

DIST = REPO / "target" / "dist"
ELF_MACHINES = {"x64": 62, "arm64": 183}
MACHO_CPUS = {"x64": 0x01000007, "arm64": 0x0100000C}
LC_CODE_SIGNATURE = 0x1D
PLATFORMS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64"]
REQUIRED = PLATFORMS if os.environ.get("TABWIRE_DIST_ALL") == "1" else ["win32-x64"]


def elf_machine(data: bytes) -> int:
    assert data[:4] == b"\x7fELF", "not ELF"
    assert data[4] == 2 and data[5] == 1, "not 64-bit little-endian ELF"
    return struct.unpack_from("<H", data, 18)[0]


LC_BUILD_VERSION = 0x32
MACOS_MIN = (11, 0)  # xtask/src/dist.rs MACOS_MIN


def macho(data: bytes) -> tuple[int, set[int]]:
    """The CPU type and the load commands of a thin 64-bit Mach-O executable; checks that the oldest
    macOS it runs on (LC_BUILD_VERSION's minos) is no newer than MACOS_MIN."""
    magic, cputype, _sub, filetype, ncmds, _size = struct.unpack_from("<IiiIII", data, 0)
    assert magic == 0xFEEDFACF, f"not a 64-bit Mach-O ({magic:#x})"
    assert filetype == 2, "not an executable (MH_EXECUTE)"
    commands, at = set(), 32
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", data, at)
        commands.add(cmd)
        if cmd == LC_BUILD_VERSION:
            minos = struct.unpack_from("<I", data, at + 12)[0]
            assert (minos >> 16, (minos >> 8) & 0xFF) <= MACOS_MIN, f"needs macOS {minos >> 16}.{(minos >> 8) & 0xFF}"
        at += size
    assert LC_BUILD_VERSION in commands, "no LC_BUILD_VERSION"
    return cputype & 0xFFFFFFFF, commands


def pe(data: bytes) -> tuple[int, int]:
    """PE machine and subsystem."""
    assert data[:2] == b"MZ", "no DOS header"
    at = struct.unpack_from("<I", data, 0x3C)[0]
    assert data[at : at + 4] == b"PE\0\0", "no PE signature"
    machine = struct.unpack_from("<H", data, at + 4)[0]
    optional = at + 24
    assert struct.unpack_from("<H", data, optional)[0] == 0x20B, "not PE32+"
    return machine, struct.unpack_from("<H", data, optional + 68)[0]


def check(platform: str, data: bytes) -> None:
    os_name, cpu = platform.split("-")
    if os_name == "linux":
        assert elf_machine(data) == ELF_MACHINES[cpu], platform
    elif os_name == "darwin":
        cputype, commands = macho(data)
        assert cputype == MACHO_CPUS[cpu], f"{platform}: cputype {cputype:#x}"
        if cpu == "arm64":
            assert LC_CODE_SIGNATURE in commands, "arm64 macOS runs only signed code (an ad-hoc signature)"
    else:
        machine, subsystem = pe(data)
        assert machine == 0x8664, f"{platform}: machine {machine:#x}"
        assert subsystem == 3, f"{platform}: subsystem {subsystem} is not the console"


def test_the_host_release_binary_is_elf_x86_64():
    check("linux-x64", (REPO / "target" / "release" / "tabwire").read_bytes())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_each_built_binary_has_its_platforms_format(platform):
    exe = DIST / platform / ("tabwire.exe" if platform.startswith("win32") else "tabwire")
    if not exe.is_file():
        assert platform not in REQUIRED, f"{exe} is missing: run `cargo xtask dist {platform}`"
        return
    check(platform, exe.read_bytes())


def test_the_release_bundle_points_each_os_at_a_binary_of_its_format():
    bundles = sorted(DIST.glob("tabwire-*.mcpb"))
    bundle = next((b for b in bundles if b.name.count("-") == 1), None)
    if bundle is None:
        assert REQUIRED != PLATFORMS, "cargo xtask dist makes target/dist/tabwire-<version>.mcpb"
        return
    with zipfile.ZipFile(bundle) as z:
        manifest = json.loads(z.read("manifest.json"))
        config = manifest["server"]["mcp_config"]
        commands = {"linux": config["command"], **{os_: o["command"] for os_, o in config["platform_overrides"].items()}}
        assert set(commands) == set(manifest["compatibility"]["platforms"]), manifest
        assert manifest["icon"] == "icon.png" and z.read("icon.png")[:8] == b"\x89PNG\r\n\x1a\n"
        for os_name, command in commands.items():
            data = z.read(command.removeprefix("${__dirname}/"))
            if os_name == "darwin":
                magic, count = struct.unpack_from(">II", data, 0)
                assert magic == 0xCAFEBABE, "macOS gets one universal binary"
                for i in range(count):
                    cputype, _sub, offset, size, _align = struct.unpack_from(">iiIII", data, 8 + 20 * i)
                    cpu = {v: k for k, v in MACHO_CPUS.items()}[cputype & 0xFFFFFFFF]
                    check(f"darwin-{cpu}", data[offset : offset + size])
            else:
                check({"linux": "linux-x64", "win32": "win32-x64"}[os_name], data)

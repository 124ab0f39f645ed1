"""A Wine prefix of a test's own for running the Windows `tabwire.exe` (built by `cargo xtask dist
win32-x64`): a copy of a template made once with `wineboot` (which takes most of a minute) and kept in
the cache under the Wine version and the stand-in DLL's sources, with the stand-in bcryptprimitives.dll
(tests/e2e/wine/) built by MinGW-w64 into its system32, and its Windows paths
(`C:\\users\\<user>\\AppData\\Roaming`) mapped to the Linux folders under it."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path, PureWindowsPath

import pytest

from conftest import CACHE, REPO

WINE = Path("/usr/lib/wine/wine64")
WINDOWS_BINARY = REPO / "target" / "dist" / "win32-x64" / "tabwire.exe"
SOURCES = REPO / "tests" / "e2e" / "wine"


def _env(root: Path) -> dict[str, str]:
    return {
        "WINEPREFIX": str(root),
        "WINEDEBUG": "-all",
        # No Mono or Gecko install prompts; the stand-in DLL, not a builtin (Wine has none).
        "WINEDLLOVERRIDES": "mscoree,mshtml=;bcryptprimitives=n",
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/root"),
    }


def _template() -> Path:
    """The cached prefix every test's prefix is copied from, made when missing. Two test workers may
    make it at once: each makes its own and the first to rename it into place wins."""
    version = subprocess.run([str(WINE), "--version"], capture_output=True, text=True, timeout=60).stdout
    key = hashlib.sha256(version.encode())
    for source in sorted(p for p in SOURCES.iterdir() if p.is_file()):
        key.update(source.name.encode() + source.read_bytes())
    template = CACHE / "wine" / key.hexdigest()[:16]
    if template.is_dir():
        return template
    template.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=template.parent, prefix="making-"))
    root = work / "prefix"
    env = _env(root)
    done = subprocess.run([str(WINE), "wineboot", "-i"], env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    dll = root / "drive_c" / "windows" / "system32" / "bcryptprimitives.dll"
    built = subprocess.run(
        ["x86_64-w64-mingw32-gcc", "-O2", "-shared", "-o", str(dll),
         str(SOURCES / "bcryptprimitives.c"), str(SOURCES / "bcryptprimitives.def"), "-ladvapi32"],
        capture_output=True, text=True, timeout=120,
    )
    assert built.returncode == 0, built.stderr
    # wineboot leaves a wineserver writing the registry files: wait for it to end before copying.
    subprocess.run(["/usr/lib/wine/wineserver", "-w"], env=env, capture_output=True, timeout=120)
    try:
        root.rename(template)
    except OSError:
        assert template.is_dir(), f"could not put the Wine template in place at {template}"
    shutil.rmtree(work, ignore_errors=True)
    return template


class WinePrefix:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.env = _env(root)
        shutil.copytree(_template(), root, symlinks=True)
        users = root / "drive_c" / "users"
        self.user = next(p.name for p in users.iterdir() if p.name != "Public")

    @property
    def profile(self) -> PureWindowsPath:
        return PureWindowsPath(f"C:\\users\\{self.user}")

    def unix(self, path: PureWindowsPath | str) -> Path:
        """The Linux file behind a `C:\\...` path of this prefix."""
        win = PureWindowsPath(path)
        assert win.drive.upper() == "C:", win
        return self.root.joinpath("drive_c", *win.parts[1:])

    def command(self, exe: Path, *args: str) -> list[str]:
        return [str(WINE), str(exe), *args]

    def run(self, exe: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(self.command(exe, *args), env=self.env, capture_output=True, text=True, timeout=timeout)


def windows_binary() -> Path:
    if not WINDOWS_BINARY.is_file():
        pytest.fail(f"{WINDOWS_BINARY} is missing: run `cargo xtask dist win32-x64` (test.sh does)", pytrace=False)
    return WINDOWS_BINARY


def stop(prefix: WinePrefix) -> None:
    """Ends this prefix's wineserver (and with it any Windows process left in it)."""
    subprocess.run(["/usr/lib/wine/wineserver", "-k"], env=prefix.env, capture_output=True, timeout=60)

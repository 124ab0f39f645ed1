"""Launching headless Chromium (optionally with the unpacked Tabwire extension) and stopping it for sure.

Chromium runs in its own process group so that stopping it also stops its renderers, zygote and
crashpad children. Its stdout+stderr go to a log file (page and extension console lines included).
The DevTools port is chosen by Chromium (`--remote-debugging-port=0`) and read from DevToolsActivePort.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from .cdp import Cdp
from .waiting import wait_for

CHROMIUM = Path(os.environ.get("TABWIRE_CHROMIUM", "/usr/lib/chromium/chromium"))

BASE_FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--enable-logging=stderr",
    "--v=0",
    "--remote-debugging-port=0",
    "--remote-debugging-address=127.0.0.1",
    # Only 127.0.0.1 is reachable: fail every other host name fast instead of trying the network;
    # `*.localhost` names are 127.0.0.1 too (look-alike origins on one server, test_origins.py).
    "--host-resolver-rules=MAP *.localhost 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]


class Chromium:
    """One headless Chromium with a fresh profile."""

    def __init__(self, profile_dir: Path, log_path: Path, extension_dir: Path | None, url: str | None) -> None:
        if not CHROMIUM.is_file() or not os.access(CHROMIUM, os.X_OK):
            raise AssertionError(
                f"Chromium not found at {CHROMIUM}: install it (apt-get install -y chromium) or set TABWIRE_CHROMIUM"
            )
        self.profile_dir = profile_dir
        self.log_path = log_path
        self.downloads_dir = profile_dir / "Downloads"
        profile_dir.mkdir(parents=True, exist_ok=True)
        # Downloads land in the profile, not in the home of whoever runs the tests.
        preferences = profile_dir / "Default" / "Preferences"
        if not preferences.exists():
            preferences.parent.mkdir(parents=True, exist_ok=True)
            preferences.write_text(json.dumps({"download": {
                "default_directory": str(self.downloads_dir), "prompt_for_download": False,
            }}))
        args = [str(CHROMIUM), *BASE_FLAGS, f"--user-data-dir={profile_dir}"]
        if extension_dir is not None:
            args += [f"--load-extension={extension_dir}", f"--disable-extensions-except={extension_dir}"]
        else:
            args += ["--disable-extensions"]
        args.append(url or "about:blank")
        self._log = open(log_path, "ab")
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.cdp: Cdp | None = None

    async def wait_ready(self, timeout: float = 30) -> Cdp:
        """Wait until DevTools is listening; return a CDP client for it."""
        port_file = self.profile_dir / "DevToolsActivePort"

        def port() -> int | None:
            if self.proc.poll() is not None:
                raise AssertionError(f"Chromium exited with code {self.proc.returncode} before DevTools was up")
            try:
                first = port_file.read_text().splitlines()[0].strip()
                return int(first) if first else None
            except (FileNotFoundError, IndexError, ValueError):
                return None

        p = await wait_for(port, timeout=timeout, what=f"Chromium to write {port_file}")
        self.cdp = Cdp(p)
        await wait_for(self.cdp.targets, timeout=timeout, what="Chromium's DevTools HTTP endpoint", ignore=(OSError,))
        return self.cdp

    def stop(self) -> None:
        """Stop Chromium and every process in its group (SIGTERM, then SIGKILL)."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        try:  # children may outlive the browser process: the group id is still ours
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if self.proc.poll() is None:
            self.proc.wait(timeout=10)
        self._log.close()

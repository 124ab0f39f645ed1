"""The build does not undo itself: every `cargo xtask build` writes the extension's pairing file
(extension/pairing.json), and the server's build script used to watch all of `extension/`, so the next
build compiled the server again for nothing. Here the pairing file is written again by the real
`tabwire pair` (as the build does) and cargo, asked to build the server, finds nothing to do.
"""

from __future__ import annotations

import json
import subprocess

from conftest import REPO


def cargo_build_server() -> str:
    done = subprocess.run(["cargo", "build", "--release", "-p", "server", "-v"], cwd=REPO, capture_output=True,
                          text=True, timeout=1800)
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_writing_the_pairing_file_does_not_rebuild_the_server(tabwire_binary):
    cargo_build_server()  # whatever else changed since the last build is built now
    config = REPO / "extension" / "pairing.json"
    port = json.loads(config.read_text())["port"]
    paired = subprocess.run([str(tabwire_binary), "pair", "--port", str(port), "--extension-config", str(config)],
                            capture_output=True, text=True, timeout=60)
    assert paired.returncode == 0, paired.stderr
    log = cargo_build_server()
    assert "Fresh server" in log, log
    assert "Compiling server" not in log, log

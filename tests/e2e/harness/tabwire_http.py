"""`tabwire mcp --http 127.0.0.1:PORT` as a process for the tests that speak MCP over Streamable HTTP, and the
bearer token every HTTP client must send (the pairing secret, read from the file the command uses)."""

from __future__ import annotations

import socket
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from .waiting import wait_for_sync


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bearer(command: Any) -> dict[str, str]:
    """The `Authorization` header an HTTP client of this tabwire sends: the pairing secret as a bearer."""
    secret = Path(command.args[command.args.index("--secret-file") + 1]).read_text().strip()
    return {"Authorization": f"Bearer {secret}"}


@contextmanager
def tabwire_http(command: Any, *, with_process: bool = False) -> Iterator[Any]:
    """Start `tabwire mcp --http 127.0.0.1:PORT` and yield PORT (or `(PORT, process)`) once it accepts
    connections; stop it after (SIGTERM: a graceful shutdown, which must end the process)."""
    port = _free_port()
    with open(command.stderr_path, "a", encoding="utf-8") as errlog:
        process = subprocess.Popen(
            [str(command.binary), *command.args, "--http", f"127.0.0.1:{port}"],
            env=command.env,
            cwd=command.cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errlog,
        )
    try:

        def accepting() -> bool:
            assert process.poll() is None, f"tabwire exited with {process.returncode}"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return True
            except OSError:
                return False

        wait_for_sync(accepting, timeout=10, what=f"tabwire to listen for HTTP on port {port}")
        yield (port, process) if with_process else port
    finally:
        process.terminate()
        process.wait(timeout=10)


@contextmanager
def client_config(command: Any, transport: str) -> Iterator[dict[str, Any]]:
    """How an MCP client in another process reaches tabwire: `{"stdio": <the command to start>}`, or over
    "http" `{"http": <the URL of a tabwire mcp --http started for the block>, "headers": <the bearer>}`."""
    if transport == "http":
        with tabwire_http(command) as port:
            yield {"http": f"http://127.0.0.1:{port}/mcp", "headers": bearer(command)}
    else:
        yield {"stdio": {"command": str(command.binary), "args": command.args, "env": command.env, "cwd": str(command.cwd)}}

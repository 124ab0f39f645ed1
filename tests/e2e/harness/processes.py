"""Finding and measuring the `tabwire` process a stdio MCP client started: by the port it listens on."""

from __future__ import annotations

import os
from pathlib import Path


def _listening_inodes(port: int) -> set[str]:
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except FileNotFoundError:
            continue
        for line in lines:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                inodes.add(inode)
    return inodes


def pid_listening_on(port: int) -> int | None:
    """The pid of the process holding a listening socket on `port`, if it is ours to see."""
    wanted = {f"socket:[{i}]" for i in _listening_inodes(port)}
    if not wanted:
        return None
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            for fd in os.scandir(f"/proc/{entry.name}/fd"):
                if os.readlink(fd.path) in wanted:
                    return int(entry.name)
        except (FileNotFoundError, PermissionError, ProcessLookupError):
            continue
    return None


def rss_kib(pid: int) -> int:
    """The process's resident set size (VmRSS), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"/proc/{pid}/status has no VmRSS line")

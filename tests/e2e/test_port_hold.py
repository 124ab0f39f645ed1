"""End to end: when the hub exits and a peer takes over, another user's program cannot take the port in the
gap. A hub and a peer of this user run on one port; a program of another user (`nobody`) tries to bind the
port as fast as it can, with SO_REUSEADDR and SO_REUSEPORT, while the hub is killed; it never binds it, the
peer becomes the hub, and a client that proves the secret is served through it. (Linux: tabwire's peers
co-bind the port with SO_REUSEPORT, which the kernel grants only to the same user.)
"""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from harness.fake_extension import fake_extension, wait_listening
from harness.processes import pid_listening_on
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

# Binds 127.0.0.1:PORT again and again for SECONDS, as another user; prints how often it got the port.
ROGUE = r"""
import socket, sys, time
port, seconds = int(sys.argv[1]), float(sys.argv[2])
tries = won = 0
print("started", flush=True)
end = time.monotonic() + seconds
while time.monotonic() < end:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    tries += 1
    try:
        s.bind(("127.0.0.1", port))
        s.listen()
        won += 1
        time.sleep(0.2)
    except OSError:
        pass
    s.close()
print(f"won {won} of {tries}", flush=True)
"""

NOBODY = 65534


async def test_another_user_cannot_take_the_port_when_the_hub_hands_over(tabwire_command, pairing, extension_id):
    assert os.geteuid() == 0, "the attacker runs as another user: this test switches to `nobody`, which needs root"
    c = tabwire_command
    hub_log = open(c.stderr_path, "a", encoding="utf-8")  # noqa: SIM115 - closed below
    hub = subprocess.Popen([str(c.binary), *c.args], env=c.env, cwd=c.cwd, stdin=subprocess.PIPE,
                           stdout=subprocess.DEVNULL, stderr=hub_log)
    try:
        await wait_listening(pairing.port)
        assert pid_listening_on(pairing.port) == hub.pid
        async with c.session() as peer:
            await wait_for(lambda: "joined it as a peer" in c.stderr_path.read_text(), timeout=15,
                           what="the second tabwire to join as a peer")
            rogue = subprocess.Popen(["/usr/bin/python3", "-c", ROGUE, str(pairing.port), "6"], user=NOBODY,
                                     stdout=subprocess.PIPE, text=True, cwd="/")
            assert rogue.stdout.readline().strip() == "started"
            hub.send_signal(signal.SIGKILL)
            hub.wait(timeout=10)
            new_hub = await wait_for(lambda: (p := pid_listening_on(pairing.port)) not in (None, hub.pid) and p,
                                     timeout=15, what="the peer to take the port over")
            out, _ = rogue.communicate(timeout=30)
            print(f"another user's program while the hub handed over: {out.strip()}")
            assert out.startswith("won 0 of"), out
            assert new_hub != rogue.pid
            # The new hub serves: a client proving the secret gets in, and the MCP client sees its tool.
            async with fake_extension(pairing.port, extension_id, pairing.secret) as ext:
                await ext.offer(1, ["todomvc_list_todos"])
                await peer.wait_for_tools("todomvc_list_todos")
    finally:
        if hub.poll() is None:
            hub.kill()
        hub_log.close()

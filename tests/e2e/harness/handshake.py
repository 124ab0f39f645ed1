"""Both sides of tabwire's handshake in Python (bridge/src/handshake.rs is the reference): the client
offers its role and a fresh nonce as subprotocols; the server answers with its role, then proves first
with `server_proof`; the client checks it and proves back with `client_proof`. The secret never travels.
The fake extension plays the client, the fake tabwire and the rogue listener the server."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets

BROWSER = "tabwire.v3"
PEER = "tabwire.peer.v3"
STATUS = "tabwire.status.v3"
NONCE_PREFIX = "tabwire.nonce."
CLOSE_UNPROVEN = 4001
CLOSE_BAD_PROOF = 4003
PROTOCOL_VERSION = 5  # bridge::PROTOCOL_VERSION


def fresh_nonce() -> str:
    return secrets.token_hex(32)


def offer(role: str, nonce: str) -> list[str]:
    """The subprotocols a client offers."""
    return [role, NONCE_PREFIX + nonce]


def proof(secret: str, side: str, role: str, port: int, client_nonce: str, server_nonce: str) -> str:
    """HMAC-SHA256(secret, label 0 role 0 port 0 client-nonce 0 server-nonce), hex."""
    label = {"server": "tabwire server proof", "client": "tabwire client proof"}[side]
    message = "\0".join([label, role, str(port), client_nonce, server_nonce]).encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def server_proof_frame(secret: str, role: str, port: int, client_nonce: str, server_nonce: str) -> str:
    return json.dumps(
        {
            "type": "server_proof",
            "protocol": PROTOCOL_VERSION,
            "nonce": server_nonce,
            "proof": proof(secret, "server", role, port, client_nonce, server_nonce),
        }
    )


async def prove_as_client(ws, secret: str, role: str, port: int, client_nonce: str) -> None:
    """The client's side on an open socket: check the server's proof, then send ours."""
    first = json.loads(await ws.recv())
    assert first.get("type") == "server_proof", f"the server's first frame is not its proof: {first}"
    server_nonce = first["nonce"]
    expected = proof(secret, "server", role, port, client_nonce, server_nonce)
    assert hmac.compare_digest(first["proof"], expected), "the server's proof does not check"
    answer = proof(secret, "client", role, port, client_nonce, server_nonce)
    await ws.send(json.dumps({"type": "client_proof", "proof": answer}))


def client_nonce_of(subprotocols: list[str]) -> str | None:
    return next((p[len(NONCE_PREFIX) :] for p in subprotocols if p.startswith(NONCE_PREFIX)), None)


async def prove_as_server(ws, secret: str, port: int) -> None:
    """The server's side on a `websockets` server connection of the extension: prove first, then check the
    extension's proof."""
    offered = [p.strip() for p in ws.request.headers.get("Sec-WebSocket-Protocol", "").split(",")]
    client_nonce = client_nonce_of(offered)
    server_nonce = fresh_nonce()
    await ws.send(server_proof_frame(secret, BROWSER, port, client_nonce, server_nonce))
    answer = json.loads(await ws.recv())
    expected = proof(secret, "client", BROWSER, port, client_nonce, server_nonce)
    assert answer == {"type": "client_proof", "proof": expected}, f"the extension's proof: {answer}"

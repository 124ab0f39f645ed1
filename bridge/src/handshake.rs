//! The mutual proof of the pairing secret that opens every socket to tabwire, shared by the
//! server (which proves first), the extension's service worker, and another `tabwire` joining as
//! a peer or asking for its status. The secret itself never crosses the socket.
//!
//! Any local program can listen on tabwire's port while tabwire is not running, so a client must
//! learn that the listener knows the secret before it sends or obeys anything; and the listener
//! must learn the same of the client. The exchange:
//!
//! 1. The client opens the WebSocket offering two subprotocols: its role
//!    (`tabwire.v3`, `tabwire.peer.v3` or `tabwire.status.v3`) and `tabwire.nonce.<N_c>`, a fresh
//!    32-byte nonce in hex. (The browser's WebSocket API can set no other header.)
//! 2. The server answers with the role's subprotocol, then sends its first frame:
//!    `{"type":"server_proof","protocol":3,"nonce":"<N_s>","proof":"<P_s>"}` with its own
//!    fresh nonce `N_s`.
//! 3. The client checks `P_s` (constant time). If it is wrong, the client closes with
//!    [`CLOSE_UNPROVEN`] and sends nothing else: the listener is "something else". Otherwise it
//!    sends `{"type":"client_proof","proof":"<P_c>"}`, and then its first protocol frame.
//! 4. The server checks `P_c` (constant time) before it reads anything else; a wrong proof closes
//!    the socket with [`CLOSE_BAD_PROOF`].
//!
//! `P = HMAC-SHA256(secret, label ‖ 0 ‖ role ‖ 0 ‖ port ‖ 0 ‖ N_c ‖ 0 ‖ N_s)`, hex, where the
//! label is `tabwire server proof` or `tabwire client proof` (so neither proof can be reflected
//! as the other), the role is its subprotocol, and the port is the loopback port the client
//! dialled and the server listens on. Both nonces are fresh per connection, so a proof is worth
//! nothing on another connection, another port, or for another role: a listener that relays a
//! client to a real tabwire elsewhere gets proofs that do not check.

#[cfg(feature = "mac")]
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};
#[cfg(feature = "mac")]
use sha2::Sha256;

use crate::PROTOCOL_VERSION;

/// How many random bytes each side's nonce has.
pub const NONCE_BYTES: usize = 32;

/// The subprotocol that carries the client's nonce, followed by its hex.
pub const NONCE_PREFIX: &str = "tabwire.nonce.";

/// The close code of a client whose listener did not prove it knows the secret.
pub const CLOSE_UNPROVEN: u16 = 4001;
/// The close code of a server whose client did not prove it knows the secret.
pub const CLOSE_BAD_PROOF: u16 = 4003;

/// Who opens the socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// The extension's service worker.
    Browser,
    /// Another `tabwire` relaying its MCP client's calls to the hub.
    Peer,
    /// `tabwire status`: one status frame, then close.
    Status,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::Browser, Role::Peer, Role::Status];

    /// The subprotocol the client offers and the server answers with.
    pub fn subprotocol(self) -> &'static str {
        match self {
            Role::Browser => "tabwire.v3",
            Role::Peer => "tabwire.peer.v3",
            Role::Status => "tabwire.status.v3",
        }
    }

    /// The role of a subprotocol this version speaks.
    pub fn from_subprotocol(offered: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.subprotocol() == offered)
    }

    /// The subprotocol older versions (protocols 1 and 2) offered for this role, which holds its
    /// secret in the clear (`tabwire.secret.<secret>`) and gets a clear refusal.
    pub fn legacy_subprotocol(self) -> &'static str {
        match self {
            Role::Browser => "tabwire.v1",
            Role::Peer => "tabwire.peer.v1",
            Role::Status => "tabwire.status.v1",
        }
    }
}

/// Which side a proof comes from (its label, so neither can be reflected as the other).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Server,
    Client,
}

impl Side {
    fn label(self) -> &'static str {
        match self {
            Side::Server => "tabwire server proof",
            Side::Client => "tabwire client proof",
        }
    }
}

/// A fresh random value from one side of the exchange.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Nonce(pub [u8; NONCE_BYTES]);

impl Nonce {
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }

    /// Exactly 64 hex digits.
    pub fn parse(text: &str) -> Option<Nonce> {
        let bytes = unhex(text)?;
        Some(Nonce(bytes.try_into().ok()?))
    }

    /// The subprotocol that offers it: `tabwire.nonce.<hex>`.
    pub fn subprotocol(&self) -> String {
        format!("{NONCE_PREFIX}{}", self.to_hex())
    }

    /// The nonce of a `tabwire.nonce.<hex>` subprotocol.
    pub fn from_subprotocol(offered: &str) -> Option<Nonce> {
        Nonce::parse(offered.strip_prefix(NONCE_PREFIX)?)
    }
}

impl std::fmt::Debug for Nonce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Nonce({})", self.to_hex())
    }
}

/// Why a handshake frame was not the one expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HandshakeError {
    #[error("the first frame is not a {0} frame")]
    NotAProofFrame(&'static str),
    #[error("the listener speaks protocol {0}; this side speaks {PROTOCOL_VERSION}")]
    OtherProtocol(u64),
    #[error("the proof does not check: the other side does not know the pairing secret")]
    WrongProof,
}

/// The server's first frame, read but not checked yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerProof {
    pub nonce: Nonce,
    pub proof: String,
}

impl ServerProof {
    pub fn parse(frame: &str) -> Result<ServerProof, HandshakeError> {
        let not_proof = HandshakeError::NotAProofFrame("server_proof");
        let frame: Value = serde_json::from_str(frame).map_err(|_| not_proof.clone())?;
        if frame["type"] != "server_proof" {
            return Err(not_proof);
        }
        match frame["protocol"].as_u64() {
            Some(v) if v == u64::from(PROTOCOL_VERSION) => {}
            Some(other) => return Err(HandshakeError::OtherProtocol(other)),
            None => return Err(not_proof),
        }
        let nonce = frame["nonce"].as_str().and_then(Nonce::parse);
        match (nonce, frame["proof"].as_str()) {
            (Some(nonce), Some(proof)) => Ok(ServerProof {
                nonce,
                proof: proof.to_owned(),
            }),
            _ => Err(not_proof),
        }
    }
}

/// The proof in a client's answer.
pub fn parse_client_proof(frame: &str) -> Result<String, HandshakeError> {
    let not_proof = HandshakeError::NotAProofFrame("client_proof");
    let frame: Value = serde_json::from_str(frame).map_err(|_| not_proof.clone())?;
    match (&frame["type"], frame["proof"].as_str()) {
        (Value::String(t), Some(proof)) if t == "client_proof" => Ok(proof.to_owned()),
        _ => Err(not_proof),
    }
}

/// The client's answer carrying its `proof` (hex).
pub fn client_proof_frame(proof: &str) -> String {
    json!({"type": "client_proof", "proof": proof}).to_string()
}

/// Whether two proofs (hex) are equal, looking at every byte whatever the first difference.
pub fn proofs_equal(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let differences = a
        .iter()
        .zip(b)
        .fold(0u8, |acc, (x, y)| acc | std::hint::black_box(x ^ y));
    a.len() == b.len() && differences == 0
}

/// One connection's exchange: what both proofs are computed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exchange {
    pub role: Role,
    pub port: u16,
    pub client: Nonce,
    pub server: Nonce,
}

impl Exchange {
    /// What `side`'s proof is the HMAC-SHA256 of (under the pairing secret as key).
    pub fn message(&self, side: Side) -> String {
        format!(
            "{}\0{}\0{}\0{}\0{}",
            side.label(),
            self.role.subprotocol(),
            self.port,
            self.client.to_hex(),
            self.server.to_hex()
        )
    }
}

/// Computing and checking proofs with RustCrypto's HMAC (the server, and tests). The service
/// worker uses the browser's `crypto.subtle` over [`Exchange::message`] instead, which costs its
/// wasm module nothing.
#[cfg(feature = "mac")]
impl Exchange {
    fn mac(&self, secret: &str, side: Side) -> Hmac<Sha256> {
        let mut mac =
            Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key length");
        mac.update(self.message(side).as_bytes());
        mac
    }

    /// `side`'s proof, hex.
    pub fn proof(&self, secret: &str, side: Side) -> String {
        hex(&self.mac(secret, side).finalize().into_bytes())
    }

    fn check(&self, secret: &str, side: Side, proof: &str) -> bool {
        // `verify_slice` compares in constant time.
        unhex(proof).is_some_and(|bytes| self.mac(secret, side).verify_slice(&bytes).is_ok())
    }

    /// The server's first frame: its nonce and its proof.
    pub fn server_proof_frame(&self, secret: &str) -> String {
        json!({
            "type": "server_proof",
            "protocol": PROTOCOL_VERSION,
            "nonce": self.server.to_hex(),
            "proof": self.proof(secret, Side::Server),
        })
        .to_string()
    }

    /// The client's answer once the server's proof checked.
    pub fn client_proof_frame(&self, secret: &str) -> String {
        client_proof_frame(&self.proof(secret, Side::Client))
    }

    /// The client's side: reads the server's first frame into the exchange (whose `server` nonce
    /// it fills in) and checks its proof. `Ok` only when the listener knows the secret.
    pub fn accept_server_proof(
        role: Role,
        port: u16,
        client: Nonce,
        secret: &str,
        frame: &str,
    ) -> Result<Exchange, HandshakeError> {
        let first = ServerProof::parse(frame)?;
        let exchange = Exchange {
            role,
            port,
            client,
            server: first.nonce,
        };
        if exchange.check(secret, Side::Server, &first.proof) {
            Ok(exchange)
        } else {
            Err(HandshakeError::WrongProof)
        }
    }

    /// The server's side: checks the client's answer.
    pub fn check_client_proof_frame(
        &self,
        secret: &str,
        frame: &str,
    ) -> Result<(), HandshakeError> {
        let proof = parse_client_proof(frame)?;
        if self.check(secret, Side::Client, &proof) {
            Ok(())
        } else {
            Err(HandshakeError::WrongProof)
        }
    }
}

/// Lower-case hex of `bytes`: how nonces and proofs travel.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    bytes
        .iter()
        .flat_map(|b| [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 15)]])
        .map(char::from)
        .collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    text.as_bytes()
        .chunks(2)
        .map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn exchange() -> Exchange {
        Exchange {
            role: Role::Browser,
            port: 17373,
            client: Nonce([1; NONCE_BYTES]),
            server: Nonce([2; NONCE_BYTES]),
        }
    }

    fn proof_of(frame: &str) -> String {
        let v: Value = serde_json::from_str(frame).unwrap();
        v["proof"].as_str().unwrap().to_owned()
    }

    #[test]
    fn both_sides_with_the_secret_prove_themselves() {
        let server = exchange();
        let first = server.server_proof_frame(SECRET);
        let client =
            Exchange::accept_server_proof(Role::Browser, 17373, server.client, SECRET, &first)
                .unwrap();
        assert_eq!(client, server);
        let answer = client.client_proof_frame(SECRET);
        assert_eq!(server.check_client_proof_frame(SECRET, &answer), Ok(()));
    }

    #[test]
    fn the_proof_matches_hmac_sha256_over_the_documented_message() {
        // What a Python or JavaScript side computes: the test harness does exactly this.
        let e = exchange();
        let message = format!(
            "tabwire server proof\0tabwire.v3\017373\0{}\0{}",
            "01".repeat(32),
            "02".repeat(32)
        );
        let mut mac = Hmac::<Sha256>::new_from_slice(SECRET.as_bytes()).unwrap();
        mac.update(message.as_bytes());
        let expected = hex(&mac.finalize().into_bytes());
        assert_eq!(proof_of(&e.server_proof_frame(SECRET)), expected);
    }

    #[test]
    fn a_listener_without_the_secret_is_not_believed() {
        let e = exchange();
        let forged = e.server_proof_frame(&"0".repeat(64));
        assert_eq!(
            Exchange::accept_server_proof(Role::Browser, 17373, e.client, SECRET, &forged),
            Err(HandshakeError::WrongProof)
        );
        let v = PROTOCOL_VERSION;
        for not_proof in [
            String::new(),
            "{}".to_owned(),
            format!(r#"{{"type":"welcome","protocol":{v}}}"#),
            format!(r#"{{"type":"server_proof","protocol":{v},"nonce":"zz","proof":"00"}}"#),
            format!(r#"{{"type":"server_proof","protocol":{v}}}"#),
        ] {
            let not_proof = not_proof.as_str();
            assert_eq!(
                Exchange::accept_server_proof(Role::Browser, 17373, e.client, SECRET, not_proof),
                Err(HandshakeError::NotAProofFrame("server_proof")),
                "{not_proof}"
            );
        }
        for version in [1, 2] {
            let old =
                format!(r#"{{"type":"server_proof","protocol":{version},"nonce":"","proof":""}}"#);
            assert_eq!(
                Exchange::accept_server_proof(Role::Browser, 17373, e.client, SECRET, &old),
                Err(HandshakeError::OtherProtocol(version))
            );
        }
    }

    #[test]
    fn a_proof_is_bound_to_its_role_port_nonces_and_direction() {
        let e = exchange();
        let server_proof = proof_of(&e.server_proof_frame(SECRET));
        let replayed = |other: Exchange| {
            let frame = json!({"type": "server_proof", "protocol": PROTOCOL_VERSION,
                "nonce": other.server.to_hex(), "proof": server_proof})
            .to_string();
            Exchange::accept_server_proof(other.role, other.port, other.client, SECRET, &frame)
        };
        assert!(replayed(e).is_ok());
        for other in [
            Exchange {
                role: Role::Peer,
                ..e
            },
            Exchange { port: 17374, ..e },
            Exchange {
                client: Nonce([3; NONCE_BYTES]),
                ..e
            },
            Exchange {
                server: Nonce([3; NONCE_BYTES]),
                ..e
            },
        ] {
            assert_eq!(
                replayed(other),
                Err(HandshakeError::WrongProof),
                "{other:?}"
            );
        }
        // The server's proof reflected back is no client proof.
        let reflected = json!({"type": "client_proof", "proof": server_proof}).to_string();
        assert_eq!(
            e.check_client_proof_frame(SECRET, &reflected),
            Err(HandshakeError::WrongProof)
        );
    }

    #[test]
    fn a_client_without_the_secret_is_refused() {
        let e = exchange();
        // A proof made with another secret, and one too short to be any proof.
        let wrong = e.client_proof_frame("secret");
        let short = json!({"type": "client_proof", "proof": "ab"}).to_string();
        for refused in [wrong, short] {
            assert_eq!(
                e.check_client_proof_frame(SECRET, &refused),
                Err(HandshakeError::WrongProof),
                "{refused}"
            );
        }
        for not_proof in [
            r#"{"type":"hello","protocol":3}"#,
            r#"{"type":"client_proof"}"#,
            "not json",
        ] {
            assert_eq!(
                e.check_client_proof_frame(SECRET, not_proof),
                Err(HandshakeError::NotAProofFrame("client_proof"))
            );
        }
    }

    #[test]
    fn frames_never_hold_the_secret() {
        let e = exchange();
        for frame in [e.server_proof_frame(SECRET), e.client_proof_frame(SECRET)] {
            assert!(!frame.contains(SECRET), "{frame}");
        }
    }

    #[test]
    fn subprotocols_name_roles_and_carry_nonces() {
        for role in Role::ALL {
            assert_eq!(Role::from_subprotocol(role.subprotocol()), Some(role));
            assert_eq!(Role::from_subprotocol(role.legacy_subprotocol()), None);
        }
        let n = Nonce([0xab; NONCE_BYTES]);
        assert_eq!(Nonce::from_subprotocol(&n.subprotocol()), Some(n));
        assert_eq!(Nonce::from_subprotocol("tabwire.nonce.abcd"), None);
        assert_eq!(
            Nonce::from_subprotocol(&format!("tabwire.nonce.{}", "g".repeat(64))),
            None
        );
    }

    #[test]
    fn proofs_are_compared_whole() {
        assert!(proofs_equal("abcd", "abcd"));
        assert!(!proofs_equal("abcd", "abce"));
        assert!(!proofs_equal("abcd", "abc"));
        assert!(!proofs_equal("", "a"));
    }
}

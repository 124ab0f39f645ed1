//! Who may open the browser WebSocket: the decision on a handshake request (a pure function), and
//! what becomes of a client that failed to prove the pairing secret (the diagnostics record that
//! `tabwire status` and `tabwire doctor` read, and a rate-limited log line).
//!
//! Any web page can open `ws://127.0.0.1:PORT`, so a browser's handshake is accepted only when
//! its `Origin` is exactly `chrome-extension://<our id>`, or the one Firefox add-on origin the
//! pairing pinned (`firefox_pin.rs`: before any is pinned, a `moz-extension://<uuid>` may try to
//! prove the secret, and the first that proves it pins its origin). Another `tabwire` process (a peer, or
//! `tabwire status`) sends no `Origin` or `Origin: tabwire-peer`, which no browser page or
//! extension can send. Every client offers its role's subprotocol and a fresh nonce; the secret
//! is proved both ways after the upgrade (`bridge::handshake`), never sent. The URL is never
//! looked at. A client of the previous protocol, which offered the secret itself in a
//! subprotocol, is refused with a clear message (and that subprotocol is never logged).

use std::sync::Arc;

use bridge::handshake::{Nonce, Role};
use tokio_tungstenite::tungstenite::http::{HeaderMap, header};

use crate::firefox_pin::FirefoxPin;
use crate::listen::Refusals;
use crate::pairing::Secret;

/// The `Origin` a peer may send (it needs none).
pub const PEER_ORIGIN: &str = "tabwire-peer";

/// What a handshake must present, and the secret the exchange after it proves.
#[derive(Debug, Clone)]
pub struct HandshakePolicy {
    expected_origin: String,
    secret: Secret,
    firefox: Arc<FirefoxPin>,
}

impl HandshakePolicy {
    /// A policy whose Firefox pin lives in this process only (see [`Self::with_firefox_pin`]).
    pub fn new(extension_id: &str, secret: Secret) -> Self {
        HandshakePolicy {
            expected_origin: format!("chrome-extension://{extension_id}"),
            secret,
            firefox: Arc::new(FirefoxPin::in_memory()),
        }
    }

    /// Keeps the pinned Firefox add-on origin where `pin` says (the file beside the secret).
    pub fn with_firefox_pin(mut self, pin: FirefoxPin) -> Self {
        self.firefox = Arc::new(pin);
        self
    }

    pub fn firefox_pin(&self) -> &FirefoxPin {
        &self.firefox
    }

    /// Whether a browser may start a handshake from `origin` (bytes, as the header came).
    fn admits_browser(&self, origin: &[u8]) -> bool {
        // Exact byte equality: `chrome-extension://<id>.evil` and friends must not pass.
        origin == self.expected_origin.as_bytes()
            || std::str::from_utf8(origin).is_ok_and(|o| self.firefox.admits(o))
    }

    pub fn secret(&self) -> &Secret {
        &self.secret
    }
}

/// An accepted handshake: who the client says it is, and its nonce for the exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offer {
    pub role: Role,
    pub nonce: Nonce,
}

/// Why a handshake was refused. The `Display` text is the HTTP 403 body: short, and never
/// containing anything the client sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("origin not allowed")]
    OriginNotAllowed,
    #[error("subprotocol tabwire.v3 not offered")]
    ProtocolNotOffered,
    #[error(
        "this client speaks an older tabwire protocol (1 or 2), which sent the pairing secret \
         itself; this tabwire speaks protocol {}: update the client (reload the extension, restart \
         the other tabwire)",
        bridge::PROTOCOL_VERSION
    )]
    OldProtocol(Role),
    #[error("no nonce offered (subprotocol tabwire.nonce.<64 hex digits>)")]
    NoNonce,
}

/// Accepts the handshake whose headers are `headers`, or says why not.
pub fn authorize(policy: &HandshakePolicy, headers: &HeaderMap) -> Result<Offer, Refusal> {
    let offered = || {
        headers
            .get_all(header::SEC_WEBSOCKET_PROTOCOL)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
    };
    let role = offered().find_map(Role::from_subprotocol);
    let origin = headers.get(header::ORIGIN);
    let Some(role) = role else {
        let legacy = Role::ALL
            .into_iter()
            .find(|r| offered().any(|p| p == r.legacy_subprotocol()));
        return Err(if let Some(role) = legacy {
            Refusal::OldProtocol(role)
        } else if origin.is_some_and(|o| !policy.admits_browser(o.as_bytes())) {
            Refusal::OriginNotAllowed
        } else {
            Refusal::ProtocolNotOffered
        });
    };
    let origin_ok = match role {
        // Browsers always send an Origin, and never this one: no page or extension is a peer.
        Role::Peer | Role::Status => origin.is_none_or(|o| o.as_bytes() == PEER_ORIGIN.as_bytes()),
        Role::Browser => origin.is_some_and(|o| policy.admits_browser(o.as_bytes())),
    };
    if !origin_ok {
        return Err(Refusal::OriginNotAllowed);
    }
    let nonce = offered()
        .find_map(Nonce::from_subprotocol)
        .ok_or(Refusal::NoNonce)?;
    Ok(Offer { role, nonce })
}

// ----- failed proofs ----------------------------------------------------------------------

/// A client that connected but did not prove it knows the pairing secret, or could not check
/// this tabwire's proof (it holds another secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProofFailure {
    /// `the extension`, `a tabwire peer` or `` `tabwire status` ``.
    pub client: &'static str,
    /// The `Origin` it sent, if any.
    pub origin: Option<String>,
    pub what: ProofFailureKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProofFailureKind {
    /// It refused this tabwire's proof: it holds a different secret.
    OtherSecret,
    /// It answered with a wrong proof, or something else: it does not know the secret.
    WrongProof,
    /// It stayed silent until the handshake deadline.
    NoProof,
    /// It speaks protocol 1 or 2 (it sent its secret in the clear).
    OldProtocol,
}

impl ProofFailure {
    pub fn new(role: Role, origin: Option<&str>, what: ProofFailureKind) -> Self {
        ProofFailure {
            client: match role {
                Role::Browser => "the extension",
                Role::Peer => "a tabwire peer",
                Role::Status => "`tabwire status`",
            },
            origin: origin.map(str::to_owned),
            what,
        }
    }

    /// One line for the log.
    pub fn describe(&self) -> String {
        let who = self.client;
        let origin = self
            .origin
            .as_deref()
            .map(|o| format!(" (origin {o})"))
            .unwrap_or_default();
        match self.what {
            ProofFailureKind::OtherSecret => format!(
                "pairing mismatch: {who}{origin} tried with a different secret (pair it again: \
                 `tabwire pair`)"
            ),
            ProofFailureKind::WrongProof => {
                format!("{who}{origin} did not prove it knows the pairing secret")
            }
            ProofFailureKind::NoProof => {
                format!("{who}{origin} connected and never proved it knows the pairing secret")
            }
            ProofFailureKind::OldProtocol => format!(
                "{who}{origin} of an older version (protocol 1 or 2) tried to connect: update it"
            ),
        }
    }
}

/// Where failed proofs go: the diagnostics record (`tabwire status` and `tabwire doctor` read
/// it), for every client that offered a wrong secret, and the listener's refusal log, a few lines
/// of each kind a minute (a flood of bad clients costs no log).
pub struct ProofFailures {
    log: Arc<Refusals>,
}

impl ProofFailures {
    pub fn new(log: Arc<Refusals>) -> Self {
        ProofFailures { log }
    }

    pub fn record(&self, failure: &ProofFailure) {
        if matches!(
            failure.what,
            ProofFailureKind::OtherSecret | ProofFailureKind::WrongProof
        ) {
            crate::diagnostics::pairing_failed(failure.origin.as_deref());
        }
        self.log
            .warn(&format!("proof {:?}", failure.what), failure.describe());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_tungstenite::tungstenite::http::Request;

    const ID: &str = "nfoddanklbblmbkneanahdhgiikgphao";

    fn secret() -> Secret {
        Secret::parse(&"5e".repeat(32)).unwrap()
    }

    fn policy() -> HandshakePolicy {
        HandshakePolicy::new(ID, secret())
    }

    fn nonce() -> Nonce {
        Nonce([7; 32])
    }

    fn request(uri: &str, origin: Option<&str>, protocols: Option<&str>) -> Request<()> {
        let mut builder = Request::get(uri);
        if let Some(origin) = origin {
            builder = builder.header("Origin", origin);
        }
        if let Some(protocols) = protocols {
            builder = builder.header("Sec-WebSocket-Protocol", protocols);
        }
        builder.body(()).unwrap()
    }

    fn decide(origin: Option<&str>, protocols: Option<&str>) -> Result<Offer, Refusal> {
        authorize(&policy(), request("/", origin, protocols).headers())
    }

    fn offer(role: Role) -> String {
        format!("{}, {}", role.subprotocol(), nonce().subprotocol())
    }

    fn ours() -> String {
        format!("chrome-extension://{ID}")
    }

    #[test]
    fn our_extension_offering_a_nonce_is_accepted() {
        let wanted = Ok(Offer {
            role: Role::Browser,
            nonce: nonce(),
        });
        assert_eq!(decide(Some(&ours()), Some(&offer(Role::Browser))), wanted);
        // Order and spacing of the list do not matter, nor several headers.
        let reversed = format!("{},tabwire.v3", nonce().subprotocol());
        assert_eq!(decide(Some(&ours()), Some(&reversed)), wanted);
        let req = Request::get("/")
            .header("Origin", ours())
            .header("Sec-WebSocket-Protocol", "tabwire.v3")
            .header("Sec-WebSocket-Protocol", nonce().subprotocol())
            .body(())
            .unwrap();
        assert_eq!(authorize(&policy(), req.headers()), wanted);
    }

    #[test]
    fn a_firefox_add_on_origin_is_admitted_only_while_nothing_or_it_is_pinned() {
        let firefox = "moz-extension://0f4e3c2a-1b2c-4d5e-8f90-123456789abc";
        let other = "moz-extension://99999999-1b2c-4d5e-8f90-123456789abc";
        let policy = policy();
        let decide = |origin: &str| {
            authorize(
                &policy,
                request("/", Some(origin), Some(&offer(Role::Browser))).headers(),
            )
        };
        assert!(decide(firefox).is_ok() && decide(other).is_ok());
        policy.firefox_pin().pin(firefox).unwrap();
        assert!(decide(firefox).is_ok());
        assert_eq!(decide(other), Err(Refusal::OriginNotAllowed));
        assert_eq!(
            decide("moz-extension://0f4e3c2a-1b2c-4d5e-8f90-123456789abc.evil"),
            Err(Refusal::OriginNotAllowed)
        );
        // The Chrome extension stays admitted beside it.
        assert!(decide(&ours()).is_ok());
    }

    #[test]
    fn foreign_origins_are_refused() {
        let protocols = offer(Role::Browser);
        for origin in [
            "http://127.0.0.1:17373",
            "https://evil.example",
            "chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            &format!("chrome-extension://{ID}.evil"),
            &format!("chrome-extension://{ID}/"),
            &format!("CHROME-EXTENSION://{ID}"),
            "null",
        ] {
            assert_eq!(
                decide(Some(origin), Some(&protocols)),
                Err(Refusal::OriginNotAllowed),
                "{origin}"
            );
        }
        assert_eq!(
            decide(None, Some(&protocols)),
            Err(Refusal::OriginNotAllowed)
        );
        assert_eq!(
            decide(Some("https://evil.example"), None),
            Err(Refusal::OriginNotAllowed)
        );
    }

    #[test]
    fn a_client_without_a_role_or_a_nonce_is_refused() {
        assert_eq!(
            decide(Some(&ours()), None),
            Err(Refusal::ProtocolNotOffered)
        );
        assert_eq!(
            decide(Some(&ours()), Some(&nonce().subprotocol())),
            Err(Refusal::ProtocolNotOffered)
        );
        for protocols in [
            "tabwire.v3".to_owned(),
            "tabwire.v3, tabwire.nonce.".to_owned(),
            format!("tabwire.v3, tabwire.nonce.{}", "ab".repeat(31)),
            format!("tabwire.v3, tabwire.nonce.{}", "zz".repeat(32)),
        ] {
            assert_eq!(
                decide(Some(&ours()), Some(&protocols)),
                Err(Refusal::NoNonce),
                "{protocols}"
            );
        }
    }

    #[test]
    fn a_client_of_protocol_1_or_2_is_told_to_update_and_never_sees_its_secret_back() {
        let secret = secret();
        for (origin, legacy) in [
            (Some(ours()), "tabwire.v1"),
            (None, "tabwire.peer.v1"),
            (None, "tabwire.status.v1"),
        ] {
            let protocols = format!("{legacy}, tabwire.secret.{}", secret.expose());
            let refusal = decide(origin.as_deref(), Some(&protocols)).unwrap_err();
            assert!(matches!(refusal, Refusal::OldProtocol(_)), "{refusal:?}");
            let ours = format!("protocol {}", bridge::PROTOCOL_VERSION);
            assert!(refusal.to_string().contains(&ours));
        }
    }

    #[test]
    fn refusal_texts_never_hold_the_secret() {
        for refusal in [
            Refusal::OriginNotAllowed,
            Refusal::ProtocolNotOffered,
            Refusal::OldProtocol(Role::Browser),
            Refusal::NoNonce,
        ] {
            assert!(!refusal.to_string().contains(secret().expose()));
        }
    }

    #[test]
    fn a_peer_is_accepted_without_origin_or_with_the_peer_origin() {
        for role in [Role::Peer, Role::Status] {
            let wanted = Ok(Offer {
                role,
                nonce: nonce(),
            });
            assert_eq!(decide(None, Some(&offer(role))), wanted);
            assert_eq!(decide(Some(PEER_ORIGIN), Some(&offer(role))), wanted);
        }
    }

    #[test]
    fn a_browser_origin_is_never_accepted_as_a_peer() {
        for role in [Role::Peer, Role::Status] {
            let protocols = format!("{}, tabwire.v3", offer(role));
            for origin in [
                ours(),
                "http://127.0.0.1:17373".to_owned(),
                "https://evil.example".to_owned(),
                "null".to_owned(),
                format!("{PEER_ORIGIN}.evil"),
            ] {
                assert_eq!(
                    decide(Some(&origin), Some(&protocols)),
                    Err(Refusal::OriginNotAllowed),
                    "{origin}"
                );
            }
        }
    }

    #[test]
    fn failures_are_described_for_the_log_and_never_hold_a_secret() {
        let failure = ProofFailure::new(
            Role::Browser,
            Some("chrome-extension://x"),
            ProofFailureKind::OtherSecret,
        );
        assert_eq!(
            failure.describe(),
            "pairing mismatch: the extension (origin chrome-extension://x) tried with a different \
             secret (pair it again: `tabwire pair`)"
        );
        let silent = ProofFailure::new(Role::Status, None, ProofFailureKind::NoProof);
        assert!(
            silent
                .describe()
                .starts_with("`tabwire status` connected and never proved")
        );
    }
}

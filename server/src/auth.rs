//! Who may open the browser WebSocket: the decision on a handshake request, kept a pure function.
//!
//! Any web page can open `ws://127.0.0.1:PORT`, so a handshake is accepted only when its `Origin`
//! is exactly `chrome-extension://<our id>` and its `Sec-WebSocket-Protocol` list offers
//! `tabwire.v1` and `tabwire.secret.<secret>` (compared in constant time). The URL is never
//! looked at: a secret there would end up in logs and histories.
//!
//! Another `tabwire` process (a peer, or `tabwire status`) offers `tabwire.peer.v1` or
//! `tabwire.status.v1` plus the same secret, with no `Origin` or `Origin: tabwire-peer`: a
//! browser page or extension can never pass as one.

use subtle::ConstantTimeEq;
use tokio_tungstenite::tungstenite::http::{HeaderMap, header};

use crate::pairing::Secret;

/// The subprotocol both sides speak; the server answers with it.
pub const PROTOCOL: &str = "tabwire.v1";

/// The subprotocol of another tabwire process relaying its MCP client's calls to this hub.
pub const PEER_PROTOCOL: &str = "tabwire.peer.v1";

/// The subprotocol of `tabwire status`: one status frame, then close.
pub const STATUS_PROTOCOL: &str = "tabwire.status.v1";

/// The `Origin` a peer may send (it needs none).
pub const PEER_ORIGIN: &str = "tabwire-peer";

const SECRET_PREFIX: &str = "tabwire.secret.";

/// Who an accepted handshake came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    Browser,
    Peer,
    Status,
}

impl Client {
    /// The subprotocol the server answers with.
    pub fn protocol(self) -> &'static str {
        match self {
            Client::Browser => PROTOCOL,
            Client::Peer => PEER_PROTOCOL,
            Client::Status => STATUS_PROTOCOL,
        }
    }
}

/// What a handshake must present.
#[derive(Debug, Clone)]
pub struct HandshakePolicy {
    expected_origin: String,
    secret: Secret,
}

impl HandshakePolicy {
    pub fn new(extension_id: &str, secret: Secret) -> Self {
        HandshakePolicy {
            expected_origin: format!("chrome-extension://{extension_id}"),
            secret,
        }
    }

    pub fn secret(&self) -> &Secret {
        &self.secret
    }
}

/// Why a handshake was refused. The `Display` text is the HTTP 403 body: short, and never
/// containing anything the client sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("origin not allowed")]
    OriginNotAllowed,
    #[error("subprotocol tabwire.v1 not offered")]
    ProtocolNotOffered,
    #[error("missing or wrong pairing secret")]
    BadSecret,
}

/// Accepts the handshake whose headers are `headers`, or says why not.
pub fn authorize(policy: &HandshakePolicy, headers: &HeaderMap) -> Result<Client, Refusal> {
    let offered = || {
        headers
            .get_all(header::SEC_WEBSOCKET_PROTOCOL)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
    };
    let origin = headers.get(header::ORIGIN);
    let tool_client = if offered().any(|p| p == PEER_PROTOCOL) {
        Some(Client::Peer)
    } else if offered().any(|p| p == STATUS_PROTOCOL) {
        Some(Client::Status)
    } else {
        None
    };
    if let Some(client) = tool_client {
        // Browsers always send an Origin, and never this one: no page or extension is a peer.
        if origin.is_some_and(|o| o.as_bytes() != PEER_ORIGIN.as_bytes()) {
            return Err(Refusal::OriginNotAllowed);
        }
        return check_secret(policy, offered()).map(|()| client);
    }
    let origin = origin.ok_or(Refusal::OriginNotAllowed)?;
    // Exact byte equality: `chrome-extension://<id>.evil` and friends must not pass.
    if origin.as_bytes() != policy.expected_origin.as_bytes() {
        return Err(Refusal::OriginNotAllowed);
    }
    if !offered().any(|p| p == PROTOCOL) {
        return Err(Refusal::ProtocolNotOffered);
    }
    check_secret(policy, offered()).map(|()| Client::Browser)
}

fn check_secret<'a>(
    policy: &HandshakePolicy,
    offered: impl Iterator<Item = &'a str>,
) -> Result<(), Refusal> {
    let expected = policy.secret.expose().as_bytes();
    // Fold over every offered secret without stopping early, so timing says nothing about
    // which entry (if any) matched.
    let matched = offered
        .filter_map(|p| p.strip_prefix(SECRET_PREFIX))
        .fold(subtle::Choice::from(0), |acc, candidate| {
            acc | candidate.as_bytes().ct_eq(expected)
        });
    if bool::from(matched) {
        Ok(())
    } else {
        Err(Refusal::BadSecret)
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

    fn decide(uri: &str, origin: Option<&str>, protocols: Option<&str>) -> Result<Client, Refusal> {
        authorize(&policy(), request(uri, origin, protocols).headers())
    }

    fn good_protocols() -> String {
        format!("tabwire.v1, tabwire.secret.{}", secret().expose())
    }

    #[test]
    fn our_extension_with_the_secret_is_accepted() {
        let origin = format!("chrome-extension://{ID}");
        assert_eq!(
            decide("/", Some(&origin), Some(&good_protocols())),
            Ok(Client::Browser)
        );
        // Order and spacing of the list do not matter.
        let reversed = format!("tabwire.secret.{},tabwire.v1", secret().expose());
        assert_eq!(
            decide("/", Some(&origin), Some(&reversed)),
            Ok(Client::Browser)
        );
    }

    #[test]
    fn protocols_split_over_several_headers_are_accepted() {
        let req = Request::get("/")
            .header("Origin", format!("chrome-extension://{ID}"))
            .header("Sec-WebSocket-Protocol", "tabwire.v1")
            .header(
                "Sec-WebSocket-Protocol",
                format!("tabwire.secret.{}", secret().expose()),
            )
            .body(())
            .unwrap();
        assert_eq!(authorize(&policy(), req.headers()), Ok(Client::Browser));
    }

    #[test]
    fn foreign_origins_are_refused() {
        let protocols = good_protocols();
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
                decide("/", Some(origin), Some(&protocols)),
                Err(Refusal::OriginNotAllowed),
                "{origin}"
            );
        }
        assert_eq!(
            decide("/", None, Some(&protocols)),
            Err(Refusal::OriginNotAllowed)
        );
    }

    #[test]
    fn missing_short_or_wrong_secrets_are_refused() {
        let origin = format!("chrome-extension://{ID}");
        let s = secret();
        for protocols in [
            "tabwire.v1".to_owned(),
            format!("tabwire.v1, tabwire.secret.{}", "0".repeat(64)),
            format!("tabwire.v1, tabwire.secret.{}", &s.expose()[..63]),
            format!("tabwire.v1, tabwire.secret.{}0", s.expose()),
            format!("tabwire.v1, {}", s.expose()),
            "tabwire.v1, tabwire.secret.".to_owned(),
        ] {
            assert_eq!(
                decide("/", Some(&origin), Some(&protocols)),
                Err(Refusal::BadSecret),
                "{protocols}"
            );
        }
        assert_eq!(
            decide("/", Some(&origin), None),
            Err(Refusal::ProtocolNotOffered)
        );
    }

    #[test]
    fn the_secret_in_the_url_is_not_accepted() {
        let origin = format!("chrome-extension://{ID}");
        let uri = format!("/?secret={}", secret().expose());
        assert_eq!(
            decide(&uri, Some(&origin), Some("tabwire.v1")),
            Err(Refusal::BadSecret)
        );
    }

    #[test]
    fn the_secret_without_tabwire_v1_is_refused() {
        let origin = format!("chrome-extension://{ID}");
        let protocols = format!("tabwire.secret.{}", secret().expose());
        assert_eq!(
            decide("/", Some(&origin), Some(&protocols)),
            Err(Refusal::ProtocolNotOffered)
        );
    }

    #[test]
    fn refusal_texts_never_hold_the_secret() {
        for refusal in [
            Refusal::OriginNotAllowed,
            Refusal::ProtocolNotOffered,
            Refusal::BadSecret,
        ] {
            assert!(!refusal.to_string().contains(secret().expose()));
        }
    }

    #[test]
    fn a_peer_with_the_secret_is_accepted_without_origin_or_with_the_peer_origin() {
        for (wanted, protocol) in [
            (Client::Peer, PEER_PROTOCOL),
            (Client::Status, STATUS_PROTOCOL),
        ] {
            let protocols = format!("{protocol}, tabwire.secret.{}", secret().expose());
            assert_eq!(decide("/", None, Some(&protocols)), Ok(wanted));
            assert_eq!(decide("/", Some(PEER_ORIGIN), Some(&protocols)), Ok(wanted));
            assert_eq!(wanted.protocol(), protocol);
        }
    }

    #[test]
    fn a_peer_must_present_the_secret() {
        for protocols in [
            PEER_PROTOCOL.to_owned(),
            format!("{PEER_PROTOCOL}, tabwire.secret.{}", "0".repeat(64)),
            format!("{STATUS_PROTOCOL}, tabwire.secret."),
        ] {
            assert_eq!(
                decide("/", None, Some(&protocols)),
                Err(Refusal::BadSecret),
                "{protocols}"
            );
        }
    }

    #[test]
    fn a_browser_origin_is_never_accepted_as_a_peer() {
        for protocol in [PEER_PROTOCOL, STATUS_PROTOCOL] {
            let protocols = format!(
                "{protocol}, tabwire.v1, tabwire.secret.{}",
                secret().expose()
            );
            for origin in [
                format!("chrome-extension://{ID}"),
                "http://127.0.0.1:17373".to_owned(),
                "https://evil.example".to_owned(),
                "null".to_owned(),
                format!("{PEER_ORIGIN}.evil"),
            ] {
                assert_eq!(
                    decide("/", Some(&origin), Some(&protocols)),
                    Err(Refusal::OriginNotAllowed),
                    "{origin}"
                );
            }
        }
    }
}

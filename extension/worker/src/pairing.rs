//! The pairing config: which port the server listens on and the secret it expects. Read from
//! `chrome.storage.local` key `pairing` (set by hand or a future pairing UI) or else the
//! `extension/pairing.json` that `tabwire pair` writes.

use bridge::handshake::{Nonce, Role};
use serde::Deserialize;

#[derive(Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Pairing {
    pub port: u16,
    pub secret: String,
    /// Where `tabwire pair` wrote this file (for the popup's fix command); absent in older files.
    #[serde(default)]
    pub path: Option<String>,
}

impl Pairing {
    /// The WebSocket URL.
    pub fn url(&self) -> String {
        format!("ws://127.0.0.1:{}/", self.port)
    }

    /// The subprotocols offered: the extension's role and this socket's fresh nonce. The secret
    /// is only ever used to check and make proofs (`bridge::handshake`).
    pub fn protocols(nonce: &Nonce) -> [String; 2] {
        [Role::Browser.subprotocol().to_owned(), nonce.subprotocol()]
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PairingError {
    #[error("pairing config is not valid JSON with \"port\" and \"secret\": {0}")]
    Malformed(String),
    #[error("pairing secret must be hex digits (run `tabwire pair` again)")]
    BadSecret,
    #[error("pairing port 0 is not a port")]
    BadPort,
    #[error("no pairing config: run `tabwire setup` ({0})")]
    Missing(String),
}

/// Parses and checks a pairing config (the secret becomes part of a header, so only hex passes).
pub fn parse_pairing(json: &str) -> Result<Pairing, PairingError> {
    let pairing: Pairing =
        serde_json::from_str(json).map_err(|e| PairingError::Malformed(e.to_string()))?;
    if pairing.secret.is_empty() || !pairing.secret.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(PairingError::BadSecret);
    }
    if pairing.port == 0 {
        return Err(PairingError::BadPort);
    }
    Ok(pairing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_and_bad_configs() {
        let p = parse_pairing(r#"{"port": 17373, "secret": "ab12", "extra": 1}"#).unwrap();
        assert_eq!(p.url(), "ws://127.0.0.1:17373/");
        let offered = Pairing::protocols(&Nonce([0xab; 32]));
        assert_eq!(offered[0], "tabwire.v3");
        assert_eq!(offered[1], format!("tabwire.nonce.{}", "ab".repeat(32)));
        assert!(
            !offered.iter().any(|o| o.contains(&p.secret)),
            "the secret is never offered"
        );
        assert_eq!(
            parse_pairing(r#"{"port": 1, "secret": "a b"}"#),
            Err(PairingError::BadSecret)
        );
        assert_eq!(
            parse_pairing(r#"{"port": 0, "secret": "ab"}"#),
            Err(PairingError::BadPort)
        );
        assert!(matches!(
            parse_pairing("{}"),
            Err(PairingError::Malformed(_))
        ));
    }
}

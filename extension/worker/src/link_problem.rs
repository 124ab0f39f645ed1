//! Why the extension is not connected, decided from what a connection attempt saw, so the popup
//! (and `tabwire doctor`'s advice) can name the cause and its fix instead of "not reachable".
//! Pure, host-tested; the glue reports the probe's answer and whether the socket ever opened.

use serde::Serialize;

/// What the HTTP probe of the port (before each WebSocket) got back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Probe {
    /// Tabwire's answer (204).
    Tabwire,
    /// An HTTP answer that is not tabwire's: another program holds the port.
    OtherAnswer,
    /// No answer: nothing listens (or the probe was blocked).
    #[default]
    NoAnswer,
}

/// Why the link is down. Serialized into the status the popup renders (`kind` plus fields).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Problem {
    /// No usable pairing config (`extension/pairing.json` missing or malformed).
    NotPaired { detail: String },
    /// Nothing answers on the port: tabwire is not running (or runs on another port).
    NotRunning,
    /// Tabwire answered the probe but refused the WebSocket upgrade (an older tabwire, which
    /// does not speak this extension's protocol, or one that expects another extension id). A
    /// tabwire with another pairing secret accepts the socket and then fails its proof:
    /// [`Problem::Unproven`].
    Refused,
    /// Another program answers on the port.
    OtherProgram,
    /// Something accepted the socket but did not prove it knows the pairing secret (`detail`
    /// says how it failed): another program posing as tabwire, or a tabwire paired with another
    /// secret. It was told nothing.
    Unproven { detail: String },
    /// An open connection closed; reconnecting.
    Closed { code: u16 },
    /// The browser would not create the socket.
    SocketError { detail: String },
}

impl Problem {
    /// What a connection attempt that ended saw: whether its socket `opened`, and the close code.
    pub fn of_attempt(probe: Probe, opened: bool, close_code: u16) -> Problem {
        match (opened, probe) {
            (true, _) => Problem::Closed { code: close_code },
            (false, Probe::Tabwire) => Problem::Refused,
            (false, Probe::OtherAnswer) => Problem::OtherProgram,
            (false, Probe::NoAnswer) => Problem::NotRunning,
        }
    }

    /// One line for logs and the popup's reason.
    pub fn describe(&self, port: Option<u16>) -> String {
        let at = port.map_or("its port".to_owned(), |p| format!("127.0.0.1:{p}"));
        match self {
            Problem::NotPaired { detail } => format!("not paired with tabwire: {detail}"),
            Problem::NotRunning => format!("tabwire is not running on {at}"),
            Problem::Refused => format!(
                "tabwire on {at} refused this extension's handshake: an older tabwire (update \
                 it), or one expecting another extension id"
            ),
            Problem::Unproven { detail } => format!(
                "something else is listening on {at}: it did not prove it knows this \
                 extension's pairing secret ({detail}), so Tabwire told it nothing and obeys \
                 nothing from it: a pairing mismatch with a tabwire paired with another secret \
                 (pair again), or another program"
            ),
            Problem::OtherProgram => format!("another program (not tabwire) holds {at}"),
            Problem::Closed { code } => {
                format!("the connection closed (code {code}); reconnecting")
            }
            Problem::SocketError { detail } => {
                format!("the WebSocket could not be created: {detail}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_attempt_outcome_names_its_cause() {
        assert_eq!(
            Problem::of_attempt(Probe::NoAnswer, false, 1006),
            Problem::NotRunning
        );
        assert_eq!(
            Problem::of_attempt(Probe::Tabwire, false, 1006),
            Problem::Refused
        );
        assert_eq!(
            Problem::of_attempt(Probe::OtherAnswer, false, 0),
            Problem::OtherProgram
        );
        assert_eq!(
            Problem::of_attempt(Probe::Tabwire, true, 1001),
            Problem::Closed { code: 1001 }
        );
    }

    #[test]
    fn problems_serialize_with_their_kind_for_the_popup() {
        let json = serde_json::to_value(Problem::NotPaired { detail: "x".into() }).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"kind": "not_paired", "detail": "x"})
        );
        assert_eq!(
            serde_json::to_value(Problem::Refused).unwrap(),
            serde_json::json!({"kind": "refused"})
        );
        assert!(
            Problem::Refused
                .describe(Some(4000))
                .contains("127.0.0.1:4000")
        );
    }
}

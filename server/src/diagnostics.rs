//! What this process saw on the browser side that no tool result shows, kept in one small record:
//! the last client that failed to prove the pairing secret (when, and its `Origin`), the version
//! of the last extension that said hello, and when the extension's probe last reached the port
//! (the sign that a browser is starting to connect).
//!
//! The WebSocket layer and the hub each fill it with a one-line call ([`pairing_failed`],
//! [`probe_answered`], [`extension_said_hello`]); `tabwire status` and `tabwire doctor` read it
//! ([`report`]), and so do `NOT_CONNECTED` messages and the wait for a connecting browser
//! ([`connect_window_end`]). A process-wide record: every caller is in this one process, and a
//! call site needs no handle passed down to it.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::hub::Link;

/// How long after the server started, or after the extension's probe last reached the port, a
/// browser tool waits for the extension instead of answering NOT_CONNECTED: the extension
/// connects within about a second of either (RELIABILITY.md).
pub const CONNECT_WINDOW: Duration = Duration::from_secs(3);

/// A client that offered a wrong (or no) pairing secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairingFailure {
    /// Milliseconds since the Unix epoch.
    pub at_unix_ms: u64,
    /// The `Origin` it sent (an extension's is `chrome-extension://<id>`).
    pub origin: Option<String>,
    /// How many failed since this process started.
    pub count: u64,
}

/// What `tabwire status` carries of this record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    #[serde(default)]
    pub pairing_failure: Option<PairingFailure>,
    #[serde(default)]
    pub extension_version: Option<String>,
}

struct Record {
    started: Option<Instant>,
    last_probe: Option<Instant>,
    report: Report,
}

static RECORD: Mutex<Record> = Mutex::new(Record {
    started: None,
    last_probe: None,
    report: Report {
        pairing_failure: None,
        extension_version: None,
    },
});

fn record() -> MutexGuard<'static, Record> {
    RECORD.lock().unwrap_or_else(PoisonError::into_inner)
}

fn now_unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The server starts serving (opens the connect window).
pub fn server_started() {
    record().started.get_or_insert_with(Instant::now);
}

/// A handshake offered a wrong or missing pairing secret, from `origin`.
pub fn pairing_failed(origin: Option<&str>) {
    let mut record = record();
    let count = record
        .report
        .pairing_failure
        .as_ref()
        .map_or(0, |f| f.count)
        + 1;
    record.report.pairing_failure = Some(PairingFailure {
        at_unix_ms: now_unix_ms(),
        origin: origin.map(str::to_owned),
        count,
    });
}

/// The extension's HTTP probe reached the port: a browser is connecting.
pub fn probe_answered() {
    record().last_probe = Some(Instant::now());
}

/// An extension introduced itself (its `hello`).
pub fn extension_said_hello(version: &str) {
    record().report.extension_version = Some(version.to_owned());
}

pub fn report() -> Report {
    record().report.clone()
}

/// Until when a browser tool waits for a browser that is not connected yet: [`CONNECT_WINDOW`]
/// after the server started or the last probe, whichever is later (`None`: neither happened).
pub fn connect_window_end() -> Option<Instant> {
    let record = record();
    record
        .started
        .max(record.last_probe)
        .map(|at| at + CONNECT_WINDOW)
}

/// What a browser tool answers with no browser connected: why (as far as this process can tell)
/// and what the user should do. `link` is whether tabwire could open its port.
pub fn not_connected_advice(port: u16, link: Option<&Link>) -> String {
    let why = match link {
        Some(Link::PortInUse) => format!(
            "No browser can connect: something else is listening on port {port} of 127.0.0.1 \
             and did not prove it knows the pairing secret (another program, or a tabwire with \
             another pairing secret), so tabwire told it nothing. Ask the user to stop that \
             program, or to move Tabwire to a free port with `tabwire setup --port N` and \
             reload the extension."
        ),
        Some(Link::Failed(reason)) => {
            format!("No browser can connect: tabwire cannot listen on 127.0.0.1:{port} ({reason}).")
        }
        Some(Link::Listening) | None => format!(
            "No browser is connected: the Tabwire extension has not connected to tabwire on \
             127.0.0.1:{port}. Ask the user to open Chrome with the Tabwire extension loaded (its \
             toolbar popup says why it is not connected), or to run `tabwire setup` if it was \
             never installed."
        ),
    };
    let pairing = report().pairing_failure.map(|failure| {
        format!(
            " An extension tried to connect {} with the wrong pairing secret: ask the user to run \
             `tabwire setup` (or `tabwire pair` for the folder the extension was loaded from) and \
             reload the extension.",
            ago(failure.at_unix_ms)
        )
    });
    format!(
        "{why}{} `tabwire doctor` checks everything and prints each fix.",
        pairing.unwrap_or_default()
    )
}

/// "12 s ago", "3 min ago": how long before now a failure happened.
pub fn ago(at_unix_ms: u64) -> String {
    let seconds = now_unix_ms().saturating_sub(at_unix_ms) / 1000;
    match seconds {
        0..=119 => format!("{seconds} s ago"),
        120..=7199 => format!("{} min ago", seconds / 60),
        _ => format!("{} h ago", seconds / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The record is process-wide: one test exercises it, in order.
    #[test]
    fn the_record_keeps_the_last_failure_counts_them_and_opens_the_connect_window() {
        pairing_failed(Some("chrome-extension://abc"));
        pairing_failed(None);
        let failure = report().pairing_failure.unwrap();
        assert_eq!(failure.origin, None);
        assert!(failure.count >= 2);
        extension_said_hello("9.9.9");
        assert_eq!(report().extension_version.as_deref(), Some("9.9.9"));
        let before = Instant::now();
        probe_answered();
        let end = connect_window_end().unwrap();
        assert!(end >= before + CONNECT_WINDOW);
        assert_eq!(ago(now_unix_ms() - 5_000), "5 s ago");
        assert_eq!(ago(now_unix_ms() - 600_000), "10 min ago");
    }
}

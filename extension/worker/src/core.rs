//! The service worker's brain, free of browser APIs so it is tested on the host: the link state
//! (down / awaiting `welcome` / ready), the outbox, the adapters, the tab registry, and the
//! routing of server frames, page messages and tab events into [`Action`]s the browser glue
//! carries out. What pages and tabs say is handled in `core/pages.rs`.

use std::collections::HashMap;

use bridge::handshake::{self, Exchange, Nonce, Role, ServerProof, Side};
use bridge::page::ToPage;
use bridge::protocol::{BrowserInfo, RequestId, TabId};
use bridge::{ErrorCode, ToExtension, ToServer, WireError};
use serde::Serialize;

mod pages;

pub use pages::{channel_closed, classify_send_failure};

use crate::adapters::AdapterSet;
use crate::backoff::Backoff;
use crate::link_problem::Problem;
use crate::outbox::Outbox;
use crate::pairing::Pairing;
use crate::tabs::TabRegistry;
use bridge::packed::PackedAdapter;

/// The largest page answer forwarded: a bridge message, less room for the frame around it.
pub const MAX_RESULT_BYTES: usize = bridge::MAX_MESSAGE_BYTES - 4096;

/// What to do with the page's answer to a message sent to a tab.
#[derive(Debug, Clone, PartialEq)]
pub enum OnReply {
    /// It answers `call_tool` request `id`.
    CallTool(RequestId),
    /// It answers `request_state` request `id`.
    State(RequestId),
    /// Nothing, but if the tab has no runtime yet, inject it (its URL matches an adapter).
    InjectIfMissing,
    Nothing,
}

/// Work for the browser glue.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Write this frame on the WebSocket (the link is ready).
    Frame(String),
    /// Close the WebSocket with this code and reason (the listener did not prove the secret).
    Close {
        code: u16,
        reason: String,
    },
    /// HMAC-SHA256 both messages under `key` (the browser's `crypto.subtle`), then hand the
    /// results (hex) to [`Core::proofs_made`].
    MakeProofs {
        key: String,
        server_message: String,
        client_message: String,
    },
    /// `chrome.tabs.sendMessage(tab, message, {frameId: 0})`.
    ToTab {
        tab: TabId,
        message: String,
        on_reply: OnReply,
    },
    OpenTab {
        id: RequestId,
        url: String,
        tab: Option<TabId>,
        /// Answer once the page has loaded (at most this long), saying whether it runs the runtime.
        wait_loaded_ms: Option<u64>,
    },
    /// Make the dynamic content script cover exactly these match patterns (none: unregister).
    SyncContentScripts(Vec<String>),
    /// Push the adapters to every open tab they match (injecting the runtime where missing) and
    /// to every known tab (which then drops tools that no longer apply).
    RefreshTabs,
    /// Write the tab registry and the status to `chrome.storage.session`.
    PersistTabs,
    /// Write the adapters to `chrome.storage.session` (a restarted worker answers pages with them).
    PersistAdapters,
    Log(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkState {
    Disconnected,
    /// The socket is open; waiting for the listener to prove it knows the pairing secret.
    /// Nothing has been sent, and nothing it says is obeyed.
    Proving,
    /// The listener proved itself, and this side its proof and `hello` sent; waiting for
    /// `welcome`.
    Handshaking,
    Connected,
}

/// What the popup shows.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    pub state: LinkState,
    pub port: Option<u16>,
    /// Why the link is down (kept while reconnecting, cleared by `welcome`).
    pub problem: Option<Problem>,
    /// The same, as a sentence.
    pub last_error: Option<String>,
    /// The pairing file this extension was paired with (for the popup's fix command).
    pub pairing_file: Option<String>,
    pub server_version: Option<String>,
    pub queued: usize,
    pub dropped: usize,
}

/// How long a listener may take to prove itself once the socket is open.
pub const PROOF_TIMEOUT_MS: u32 = 5000;

/// The current socket's side of the handshake: what its proof is checked against, and the
/// `hello` sent once it checked.
struct Proof {
    port: u16,
    secret: String,
    nonce: Nonce,
    hello: Option<String>,
    /// The listener's first frame, while its proof is being checked.
    claimed: Option<ServerProof>,
    /// This socket's listener failed to prove itself, and was closed for it.
    failed: bool,
}

pub struct Core {
    extension_id: String,
    /// The server's adapters and the bundled code adapters (`adapters/code`), packed.
    adapters: AdapterSet,
    tabs: TabRegistry,
    /// Calls sent to a tab and not answered yet.
    calls: HashMap<RequestId, TabId>,
    /// Calls whose `navigate` step is loading a new page in the tab: the rest of the call
    /// (`continue_tool`), sent once the new page announces its tools.
    continuations: HashMap<TabId, (RequestId, String, ToPage)>,
    outbox: Outbox,
    link: LinkState,
    backoff: Backoff,
    port: Option<u16>,
    problem: Option<Problem>,
    pairing_file: Option<String>,
    proof: Option<Proof>,
    server_version: Option<String>,
}

impl Core {
    pub fn new(extension_id: impl Into<String>) -> Core {
        Core {
            extension_id: extension_id.into(),
            adapters: AdapterSet::default(),
            tabs: TabRegistry::default(),
            calls: HashMap::new(),
            continuations: HashMap::new(),
            outbox: Outbox::default(),
            link: LinkState::Disconnected,
            backoff: Backoff::default(),
            port: None,
            problem: None,
            pairing_file: None,
            proof: None,
            server_version: None,
        }
    }

    /// State a previous incarnation of the worker left in `chrome.storage.session`.
    pub fn restore(
        &mut self,
        tabs_json: Option<&str>,
        adapters_json: Option<&str>,
        live: &[(TabId, String)],
    ) {
        if let Some(json) = tabs_json {
            self.tabs = TabRegistry::restore(json, live);
        }
        if let Some(json) = adapters_json {
            self.adapters.restore(json);
        }
    }

    pub fn link(&self) -> LinkState {
        self.link
    }

    pub fn status(&self) -> Status {
        Status {
            state: self.link,
            port: self.port,
            problem: self.problem.clone(),
            last_error: self.problem.as_ref().map(|p| p.describe(self.port)),
            pairing_file: self.pairing_file.clone(),
            server_version: self.server_version.clone(),
            queued: self.outbox.len(),
            dropped: self.outbox.dropped(),
        }
    }

    pub fn tabs_json(&self) -> String {
        self.tabs.to_json()
    }

    pub fn adapters_json(&self) -> String {
        self.adapters.to_json()
    }

    pub fn tab_ids(&self) -> Vec<TabId> {
        self.tabs.ids()
    }

    /// The union of the adapters' match patterns (what the content script is registered for).
    pub fn match_patterns(&self) -> Vec<String> {
        self.adapters.match_patterns()
    }

    /// The `adapters` message for a page at `url`.
    pub fn adapters_message(&self, url: &str) -> String {
        self.adapters.message_for(url)
    }

    pub fn any_adapter_matches(&self, url: &str) -> bool {
        self.adapters.any_matches(url)
    }

    // ---- the link -------------------------------------------------------------------------

    /// A connection attempt with `pairing` (read from its `path`) and this socket's fresh `nonce`
    /// starts.
    pub fn connecting(&mut self, pairing: &Pairing, nonce: Nonce) {
        self.port = Some(pairing.port);
        self.pairing_file = pairing.path.clone();
        self.proof = Some(Proof {
            port: pairing.port,
            secret: pairing.secret.clone(),
            nonce,
            hello: None,
            claimed: None,
            failed: false,
        });
    }

    /// The socket opened. Nothing is sent until the listener proved it knows the secret; the
    /// `hello` (with what the extension says about itself) waits for that.
    pub fn socket_opened(
        &mut self,
        extension_version: &str,
        instance_id: &str,
        browser: BrowserInfo,
    ) {
        self.link = LinkState::Proving;
        let hello = ToServer::Hello {
            protocol: bridge::PROTOCOL_VERSION,
            extension_version: extension_version.to_owned(),
            instance_id: instance_id.to_owned(),
            browser,
            code_adapters: self.adapters.declared_code().to_vec(),
        }
        .encode();
        if let Some(proof) = &mut self.proof {
            proof.hello = Some(hello);
        }
    }

    /// The listener's first frame: its proof, to be checked (by [`Action::MakeProofs`], then
    /// [`Core::proofs_made`]). Any other frame, or a second one before the check, and the
    /// listener is given up on.
    fn on_listener_proof(&mut self, text: &str) -> Vec<Action> {
        let Some(proof) = self.proof.as_mut().filter(|p| p.claimed.is_none()) else {
            return self.listener_unproven("it spoke before its proof was checked");
        };
        match ServerProof::parse(text) {
            Ok(claimed) => {
                let exchange = Exchange {
                    role: Role::Browser,
                    port: proof.port,
                    client: proof.nonce,
                    server: claimed.nonce,
                };
                proof.claimed = Some(claimed);
                vec![Action::MakeProofs {
                    key: proof.secret.clone(),
                    server_message: exchange.message(Side::Server),
                    client_message: exchange.message(Side::Client),
                }]
            }
            Err(e) => self.listener_unproven(&e.to_string()),
        }
    }

    /// The proofs [`Action::MakeProofs`] asked for (hex), or why the browser could not make
    /// them. The listener's proof equal to the server's: this side's proof and `hello` go out.
    pub fn proofs_made(&mut self, made: Result<(String, String), String>) -> Vec<Action> {
        let claimed = self.proof.as_ref().and_then(|p| p.claimed.as_ref());
        if self.link != LinkState::Proving || claimed.is_none() {
            return Vec::new(); // the socket is gone, or already given up on
        }
        let (server, client) = match made {
            Ok(made) => made,
            Err(why) => return self.listener_unproven(&format!("making the proofs failed: {why}")),
        };
        if !claimed.is_some_and(|c| handshake::proofs_equal(&c.proof, &server)) {
            return self.listener_unproven(&handshake::HandshakeError::WrongProof.to_string());
        }
        self.link = LinkState::Handshaking;
        let mut actions = vec![Action::Frame(handshake::client_proof_frame(&client))];
        actions.extend(
            self.proof
                .as_mut()
                .and_then(|p| p.hello.take())
                .map(Action::Frame),
        );
        actions
    }

    /// The listener sent no proof in time (the glue's timer, [`PROOF_TIMEOUT_MS`]).
    pub fn proof_timed_out(&mut self) -> Vec<Action> {
        if self.link != LinkState::Proving {
            return Vec::new();
        }
        self.listener_unproven(&format!("no proof within {PROOF_TIMEOUT_MS} ms"))
    }

    fn listener_unproven(&mut self, why: &str) -> Vec<Action> {
        let problem = Problem::Unproven {
            detail: why.to_owned(),
        };
        let message = problem.describe(self.port);
        self.problem = Some(problem);
        if let Some(proof) = &mut self.proof {
            proof.failed = true;
        }
        vec![
            Action::Log(message),
            Action::Close {
                code: handshake::CLOSE_UNPROVEN,
                reason: "the listener did not prove the pairing secret".to_owned(),
            },
        ]
    }

    /// The socket closed or never opened (or pairing failed before any socket), for the reason
    /// `problem`; returns the delay before the next attempt.
    pub fn socket_closed(&mut self, problem: Problem, random: f64) -> u32 {
        if self.link == LinkState::Connected {
            self.backoff.reset();
        }
        self.link = LinkState::Disconnected;
        // The reason an unproven listener was closed for says more than the close itself.
        if !self.proof.take().is_some_and(|p| p.failed) {
            self.problem = Some(problem);
        }
        self.backoff.next_delay_ms(random)
    }

    /// A message for the server: written now when the link is ready, else queued.
    fn send(&mut self, msg: ToServer, actions: &mut Vec<Action>) {
        if self.link == LinkState::Connected {
            actions.push(Action::Frame(msg.encode()));
        } else if let Some(dropped) = self.outbox.push(msg) {
            actions.push(Action::Log(format!(
                "server unreachable and {} messages queued: dropped the oldest ({})",
                crate::outbox::OUTBOX_CAPACITY,
                dropped.type_name()
            )));
        }
    }

    /// The application-level keep-alive (only while connected).
    pub fn ping(&mut self, nonce: u64) -> Option<String> {
        (self.link == LinkState::Connected).then(|| ToServer::Ping { nonce }.encode())
    }

    // ---- frames from the server ----------------------------------------------------------

    pub fn on_server_frame(&mut self, text: &str) -> Vec<Action> {
        match self.link {
            LinkState::Proving => return self.on_listener_proof(text),
            // A frame of a socket already given up on (the glue ignores these).
            LinkState::Disconnected => return Vec::new(),
            LinkState::Handshaking | LinkState::Connected => {}
        }
        let mut actions = Vec::new();
        let msg = match ToExtension::decode(text) {
            Ok(msg) => msg,
            Err(bad) => {
                actions.push(Action::Log(format!(
                    "undecodable frame from the server: {}",
                    bad.error
                )));
                let reply = ToServer::Error {
                    in_reply_to: bad.request_id.clone(),
                    error: bad.to_wire_error(),
                };
                self.send(reply, &mut actions);
                return actions;
            }
        };
        match msg {
            ToExtension::Welcome {
                server_version,
                adapters,
                code_adapters,
                protocol,
                ..
            } => {
                if protocol != bridge::PROTOCOL_VERSION {
                    actions.push(Action::Log(format!(
                        "server speaks protocol {protocol}, this extension {}",
                        bridge::PROTOCOL_VERSION
                    )));
                }
                self.link = LinkState::Connected;
                self.backoff.reset();
                self.problem = None;
                self.server_version = Some(server_version);
                self.adapters.set_validated_code(code_adapters);
                self.set_adapters(adapters, &mut actions);
                let snapshot = ToServer::ToolsSnapshot {
                    tabs: self.tabs.snapshot(),
                };
                actions.push(Action::Frame(snapshot.encode()));
                for queued in self.outbox.drain_after_snapshot() {
                    actions.push(Action::Frame(queued.encode()));
                }
                actions.push(Action::RefreshTabs);
                actions.push(Action::PersistTabs);
            }
            ToExtension::AdaptersUpdated { adapters } => {
                self.set_adapters(adapters, &mut actions);
                actions.push(Action::RefreshTabs);
            }
            // The server chose the tab by the tools it offers; the page answers for itself
            // should they have changed since.
            ToExtension::CallTool {
                id,
                tab,
                tool,
                args,
                timeout_ms,
            } => {
                let message = ToPage::CallTool {
                    id: id.clone(),
                    tool,
                    args,
                    timeout_ms,
                };
                self.calls.insert(id.clone(), tab);
                actions.push(Action::ToTab {
                    tab,
                    message: serde_json::to_string(&message).expect("page messages serialize"),
                    on_reply: OnReply::CallTool(id),
                });
            }
            ToExtension::Cancel { id } => {
                if let Some(&tab) = self.calls.get(&id) {
                    actions.push(Action::ToTab {
                        tab,
                        message: serde_json::to_string(&ToPage::Cancel { id })
                            .expect("page messages serialize"),
                        on_reply: OnReply::Nothing,
                    });
                }
            }
            ToExtension::RequestState { id, tab } => {
                if self.tabs.contains(tab) {
                    actions.push(Action::ToTab {
                        tab,
                        message: serde_json::to_string(&ToPage::RequestState { id: id.clone() })
                            .expect("page messages serialize"),
                        on_reply: OnReply::State(id),
                    });
                } else {
                    let error = WireError::new(
                        ErrorCode::NoSuchTab,
                        format!("tab {tab} has no Tabwire runtime (no adapter serves its page)"),
                    );
                    self.send(ToServer::StateError { id, error }, &mut actions);
                }
            }
            // Whoever asks, the extension opens web pages only.
            ToExtension::OpenTab { id, url, .. } if !bridge::pattern::is_web_url(&url) => {
                let error = WireError::new(
                    ErrorCode::InvalidArgs,
                    format!(
                        "{url:?} is not an http:// or https:// URL: the extension opens no other"
                    ),
                );
                self.send(ToServer::OpenTabError { id, error }, &mut actions);
            }
            ToExtension::OpenTab {
                id,
                url,
                tab,
                wait_loaded_ms,
            } => actions.push(Action::OpenTab {
                id,
                url,
                tab,
                wait_loaded_ms,
            }),
            ToExtension::Ping { nonce } => self.send(ToServer::Pong { nonce }, &mut actions),
            ToExtension::Pong { .. } => {}
            ToExtension::Error { in_reply_to, error } => {
                actions.push(Action::Log(format!(
                    "server reports an error (re {in_reply_to:?}): {error}"
                )));
            }
        }
        actions
    }

    /// The code adapters' declarations (JSON, from the bundle); unreadable ones are logged and
    /// skipped (the server validates the others, and says what is wrong with them).
    pub fn set_code_adapters(&mut self, declarations: &[String]) -> Vec<Action> {
        let mut actions: Vec<Action> = self
            .adapters
            .set_declared_code(declarations)
            .into_iter()
            .map(|why| Action::Log(format!("code adapter skipped: {why}")))
            .collect();
        self.adapters_changed(&mut actions);
        actions
    }

    fn set_adapters(&mut self, adapters: Vec<PackedAdapter>, actions: &mut Vec<Action>) {
        self.adapters.set_server(adapters);
        self.adapters_changed(actions);
    }

    fn adapters_changed(&mut self, actions: &mut Vec<Action>) {
        actions.push(Action::SyncContentScripts(self.match_patterns()));
        actions.push(Action::PersistAdapters);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tabs::{self, Sender};
    use bridge::page::FromPage;
    use bridge::protocol::LoadedPage;
    use bridge::protocol::OfferedTool;
    use serde_json::{Value, json};

    const ME: &str = "extid";

    fn adapter_json() -> Value {
        json!({
            "name": "todomvc", "match": ["http://127.0.0.1/*"],
            "tools": [{"name": "list_todos", "description": "List", "steps": [{"step": "click", "selector": "#b"}]}]
        })
    }

    fn welcome() -> String {
        json!({"type": "welcome", "protocol": bridge::PROTOCOL_VERSION, "server_version": "0.1.0", "instance_id": "s",
               "adapters": [adapter_json()]})
        .to_string()
    }

    fn sender(tab: TabId) -> Sender {
        Sender {
            extension_id: Some(ME.into()),
            tab: Some(tab),
            frame_id: Some(0),
            url: "http://127.0.0.1:8000/examples/vanillajs/".into(),
        }
    }

    fn frames(actions: &[Action]) -> Vec<Value> {
        actions
            .iter()
            .filter_map(|a| match a {
                Action::Frame(f) => Some(serde_json::from_str(f).unwrap()),
                _ => None,
            })
            .collect()
    }

    fn pairing() -> Pairing {
        Pairing {
            port: 17373,
            secret: "5e".repeat(32),
            path: None,
        }
    }

    /// The server's side of the exchange for a socket `core` opens with `pairing()`.
    fn server_exchange() -> Exchange {
        Exchange {
            role: Role::Browser,
            port: 17373,
            client: Nonce([1; 32]),
            server: Nonce([2; 32]),
        }
    }

    /// What the glue does with [`Action::MakeProofs`] (there through `crypto.subtle`).
    fn make_proofs(core: &mut Core, actions: Vec<Action>) -> Vec<Action> {
        let [
            Action::MakeProofs {
                key,
                server_message,
                client_message,
            },
        ] = &actions[..]
        else {
            return actions;
        };
        assert_eq!(key, &pairing().secret);
        // The server's nonce closes the message (whatever the listener sent).
        let server = Nonce::parse(&server_message[server_message.len() - 64..]).unwrap();
        let exchange = Exchange {
            server,
            ..server_exchange()
        };
        assert_eq!(server_message, &exchange.message(Side::Server));
        assert_eq!(client_message, &exchange.message(Side::Client));
        core.proofs_made(Ok((
            exchange.proof(key, Side::Server),
            exchange.proof(key, Side::Client),
        )))
    }

    /// Opens a socket and plays a server that proves itself; checks the extension's proof and
    /// returns its `hello`.
    fn open_and_prove(core: &mut Core) -> Value {
        core.connecting(&pairing(), server_exchange().client);
        core.socket_opened("0.1.0", "inst", BrowserInfo::default());
        assert_eq!(core.link(), LinkState::Proving);
        let exchange = server_exchange();
        let asked = core.on_server_frame(&exchange.server_proof_frame(&pairing().secret));
        assert!(
            frames(&asked).is_empty(),
            "nothing is sent before the check"
        );
        let sent = frames(&make_proofs(core, asked));
        assert_eq!(sent.len(), 2, "{sent:?}");
        exchange
            .check_client_proof_frame(&pairing().secret, &sent[0].to_string())
            .expect("the extension proves it knows the secret");
        assert_eq!(core.link(), LinkState::Handshaking);
        sent[1].clone()
    }

    fn connected() -> Core {
        let mut core = Core::new(ME);
        let hello = open_and_prove(&mut core);
        assert_eq!(hello["type"], "hello");
        assert_eq!(hello["protocol"], bridge::PROTOCOL_VERSION);
        core.on_server_frame(&welcome());
        assert_eq!(core.link(), LinkState::Connected);
        core
    }

    #[test]
    fn a_listener_that_cannot_prove_the_secret_is_told_nothing_and_obeyed_in_nothing() {
        let forged = Exchange {
            server: Nonce([3; 32]),
            ..server_exchange()
        }
        .server_proof_frame(&"0".repeat(64));
        let open_tab = r#"{"type":"open_tab","id":"o","url":"file:///etc/passwd"}"#;
        for first in [forged.as_str(), &welcome(), open_tab, "not json"] {
            let mut core = Core::new(ME);
            announce(&mut core, 5); // queued while the link is down
            core.connecting(&pairing(), server_exchange().client);
            core.socket_opened("0.1.0", "inst", BrowserInfo::default());
            let asked = core.on_server_frame(first);
            let actions = make_proofs(&mut core, asked);
            assert!(frames(&actions).is_empty(), "{first}: {actions:?}");
            assert!(
                actions.contains(&Action::Close {
                    code: handshake::CLOSE_UNPROVEN,
                    reason: "the listener did not prove the pairing secret".into()
                }),
                "{first}: {actions:?}"
            );
            assert!(
                !actions.iter().any(|a| matches!(
                    a,
                    Action::OpenTab { .. } | Action::SyncContentScripts(_) | Action::ToTab { .. }
                )),
                "{first}: {actions:?}"
            );
            // Whatever it says next is not obeyed either.
            assert!(
                core.on_server_frame(open_tab)
                    .iter()
                    .all(|a| !matches!(a, Action::OpenTab { .. } | Action::Frame(_)))
            );
            // The popup says why, and keeps saying it once the socket closed.
            core.socket_closed(Problem::Closed { code: 1005 }, 0.5);
            let status = core.status();
            assert!(matches!(status.problem, Some(Problem::Unproven { .. })));
            let shown = status.last_error.unwrap();
            assert!(
                shown.starts_with(
                    "something else is listening on 127.0.0.1:17373: it did not prove"
                ),
                "{shown}"
            );
            // The next attempt that finds nobody says so instead.
            core.socket_closed(Problem::NotRunning, 0.5);
            assert_eq!(core.status().problem, Some(Problem::NotRunning));
        }
    }

    #[test]
    fn a_listener_that_speaks_again_before_its_proof_is_checked_is_given_up_on() {
        let mut core = Core::new(ME);
        core.connecting(&pairing(), server_exchange().client);
        core.socket_opened("0.1.0", "inst", BrowserInfo::default());
        let first = server_exchange().server_proof_frame(&pairing().secret);
        assert!(matches!(
            &core.on_server_frame(&first)[..],
            [Action::MakeProofs { .. }]
        ));
        let again = core.on_server_frame(&welcome());
        assert!(again.iter().any(|a| matches!(a, Action::Close { .. })));
        // The proofs arriving afterwards change nothing.
        let late = core.proofs_made(Ok(("x".into(), "y".into())));
        assert!(frames(&late).is_empty());
        assert!(matches!(
            core.status().problem,
            Some(Problem::Unproven { .. })
        ));
    }

    /// The worker does not validate adapters (the validator stays out of its wasm): the server
    /// refuses a bad one at load (`bridge::adapter`'s tests: reserved names, navigate's schemes),
    /// and adapters are taken from a listener only once it proved it is that server.
    #[test]
    fn adapters_are_taken_only_from_a_listener_that_proved_the_secret() {
        let mut bad = adapter_json();
        bad["name"] = json!("browser");
        let updated =
            json!({"type": "adapters_updated", "adapters": [adapter_json(), bad]}).to_string();
        for first in [welcome(), updated.clone()] {
            let mut core = Core::new(ME);
            core.connecting(&pairing(), server_exchange().client);
            core.socket_opened("0.1.0", "inst", BrowserInfo::default());
            let actions = core.on_server_frame(&first);
            assert!(
                !actions
                    .iter()
                    .any(|a| matches!(a, Action::SyncContentScripts(_) | Action::PersistAdapters)),
                "{actions:?}"
            );
            core.on_server_frame(&updated);
            assert_eq!(core.adapters_json(), AdapterSet::default().to_json());
        }
        let mut core = connected();
        assert_ne!(core.adapters_json(), AdapterSet::default().to_json());
        let actions = core.on_server_frame(&updated);
        assert!(actions.contains(&Action::PersistAdapters), "{actions:?}");
    }

    #[test]
    fn only_web_pages_are_opened_whoever_asks() {
        let mut core = connected();
        for url in [
            "file:///etc/passwd",
            "chrome://settings",
            "javascript:alert(1)",
            "data:text/html,x",
        ] {
            let frame = json!({"type": "open_tab", "id": "o", "url": url, "tab": 3}).to_string();
            let actions = core.on_server_frame(&frame);
            assert!(
                !actions.iter().any(|a| matches!(a, Action::OpenTab { .. })),
                "{url}: {actions:?}"
            );
            let sent = frames(&actions);
            assert_eq!(sent[0]["type"], "open_tab_error", "{url}");
            assert_eq!(sent[0]["error"]["code"], "INVALID_ARGS", "{url}");
        }
    }

    #[test]
    fn a_silent_listener_is_given_up_on_after_the_proof_timeout() {
        let mut core = Core::new(ME);
        core.connecting(&pairing(), server_exchange().client);
        core.socket_opened("0.1.0", "inst", BrowserInfo::default());
        let actions = core.proof_timed_out();
        assert!(actions.iter().any(
            |a| matches!(a, Action::Close { code, .. } if *code == handshake::CLOSE_UNPROVEN)
        ));
        // Once proved, the timer has nothing to say.
        let mut core = Core::new(ME);
        open_and_prove(&mut core);
        assert!(core.proof_timed_out().is_empty());
    }

    fn announce(core: &mut Core, tab: TabId) -> Vec<Action> {
        let tools = vec![OfferedTool::Adapter("todomvc_list_todos".into())];
        let msg = FromPage::ToolsUpdated {
            url: "http://page-claims-anything/".into(),
            title: "Todos".into(),
            tools,
        };
        core.on_page_message(&sender(tab), Some(&serde_json::to_string(&msg).unwrap()))
            .1
    }

    #[test]
    fn welcome_registers_scripts_snapshots_and_flushes_the_queue() {
        let mut core = Core::new(ME);
        announce(&mut core, 5); // queued: the link is down
        core.on_open_tab_reply("o1", Ok(9), None); // queued
        open_and_prove(&mut core);
        let actions = core.on_server_frame(&welcome());
        assert!(actions.contains(&Action::SyncContentScripts(vec![
            "http://127.0.0.1/*".into()
        ])));
        assert!(actions.contains(&Action::RefreshTabs));
        let sent = frames(&actions);
        assert_eq!(sent.len(), 2, "{sent:#?}");
        assert_eq!(sent[0]["type"], "tools_snapshot");
        assert_eq!(sent[0]["tabs"][0]["tab"], 5);
        assert_eq!(
            sent[0]["tabs"][0]["url"],
            "http://127.0.0.1:8000/examples/vanillajs/"
        );
        assert_eq!(
            sent[1],
            json!({"type": "open_tab_result", "id": "o1", "tab": 9})
        );
    }

    #[test]
    fn page_ready_gets_matching_adapters_and_tools_are_forwarded() {
        let mut core = connected();
        let ready = r#"{"type":"page_ready","url":"x","title":"T","runtime":"wasm"}"#;
        let (reply, _) = core.on_page_message(&sender(3), Some(ready));
        let reply: Value = serde_json::from_str(&reply.unwrap()).unwrap();
        assert_eq!(reply["type"], "adapters");
        assert_eq!(reply["adapters"][0]["name"], "todomvc");
        let elsewhere = Sender {
            url: "https://example.com/".into(),
            ..sender(4)
        };
        let (reply, _) = core.on_page_message(&elsewhere, Some(ready));
        assert_eq!(reply.unwrap(), r#"{"type":"adapters","adapters":[]}"#);

        let sent = frames(&announce(&mut core, 3));
        assert_eq!(sent[0]["type"], "tools_updated");
        assert_eq!(sent[0]["tab"], 3);
        // By name: the server describes its adapters' tools itself.
        assert_eq!(sent[0]["tools"], json!(["todomvc_list_todos"]));
        assert!(core.tabs_json().contains(r#""runtime":"wasm""#));
    }

    #[test]
    fn messages_from_strangers_are_ignored() {
        let mut core = connected();
        let frame = Sender {
            frame_id: Some(2),
            ..sender(3)
        };
        let (reply, actions) = core.on_page_message(
            &frame,
            Some(r#"{"type":"page_ready","url":"x","title":"T"}"#),
        );
        assert!(reply.is_none());
        assert!(matches!(&actions[..], [Action::Log(_)]));
        let (reply, _) = core.on_page_message(&sender(3), Some("{not json"));
        assert!(reply.is_none());
    }

    #[test]
    fn a_call_that_navigates_continues_in_the_next_page() {
        let mut core = connected();
        announce(&mut core, 3);
        let call = json!({"type":"call_tool","id":"n1","tab":3,"tool":"todomvc_list_todos","args":{"q":1},"timeout_ms":500});
        core.on_server_frame(&call.to_string());
        let onward = json!({"type":"call_tool_continue","id":"n1","tool":"todomvc_list_todos",
                            "resume_at":2,"vars":{"q":1,"seen":"x"},"timeout_ms":400});
        let actions = core.on_call_reply("n1", Ok(Some(onward.to_string())));
        assert!(actions.is_empty(), "nothing to answer yet: {actions:?}");

        // The new page announces its tools: the rest of the call goes to it, answered as a call.
        let actions = announce(&mut core, 3);
        let Some(Action::ToTab {
            tab: 3,
            message,
            on_reply: OnReply::CallTool(id),
        }) = actions.iter().find(|a| matches!(a, Action::ToTab { .. }))
        else {
            panic!("{actions:?}")
        };
        assert_eq!(id, "n1");
        let message: Value = serde_json::from_str(message).unwrap();
        assert_eq!(
            message,
            json!({"type":"continue_tool","id":"n1","tool":"todomvc_list_todos","resume_at":2,
                   "vars":{"q":1,"seen":"x"},"timeout_ms":400})
        );
        let done = r#"{"type":"call_tool_result","id":"n1","result":7}"#;
        let sent = frames(&core.on_call_reply("n1", Ok(Some(done.into()))));
        assert_eq!(
            sent,
            vec![json!({"type":"call_tool_result","id":"n1","result":7})]
        );

        // Closing the tab while the next page loads fails the call with TAB_CLOSED.
        core.on_server_frame(&call.to_string().replace("n1", "n2"));
        core.on_call_reply("n2", Ok(Some(onward.to_string().replace("n1", "n2"))));
        let sent = frames(&core.on_tab_removed(3));
        assert_eq!(sent[0]["type"], "call_tool_error");
        assert_eq!(sent[0]["id"], "n2");
        assert_eq!(sent[0]["error"]["code"], "TAB_CLOSED");
    }

    #[test]
    fn a_navigation_to_a_page_without_the_tool_fails_the_call() {
        let mut core = connected();
        announce(&mut core, 3);
        let call = json!({"type":"call_tool","id":"n3","tab":3,"tool":"todomvc_list_todos","args":{},"timeout_ms":500});
        core.on_server_frame(&call.to_string());
        let onward = json!({"type":"call_tool_continue","id":"n3","tool":"todomvc_list_todos",
                            "resume_at":1,"vars":{},"timeout_ms":400});
        core.on_call_reply("n3", Ok(Some(onward.to_string())));
        let none = json!({"type":"tools_updated","url":"u","title":"Other","tools":[]});
        let (_, actions) = core.on_page_message(&sender(3), Some(&none.to_string()));
        let sent = frames(&actions);
        let error = sent
            .iter()
            .find(|f| f["type"] == "call_tool_error")
            .expect("an error");
        assert_eq!(error["id"], "n3");
        assert_eq!(error["error"]["code"], "NAVIGATED");
        assert!(!actions.iter().any(|a| matches!(a, Action::ToTab { .. })));
    }

    #[test]
    fn calls_route_to_the_tab_and_answers_come_back() {
        let mut core = connected();
        announce(&mut core, 3);
        let call = json!({"type":"call_tool","id":"c1","tab":3,"tool":"todomvc_list_todos","args":{},"timeout_ms":500});
        let actions = core.on_server_frame(&call.to_string());
        let [
            Action::ToTab {
                tab: 3,
                message,
                on_reply: OnReply::CallTool(id),
            },
        ] = &actions[..]
        else {
            panic!("{actions:?}")
        };
        assert_eq!(id, "c1");
        let message: Value = serde_json::from_str(message).unwrap();
        assert_eq!(
            message,
            json!({"type":"call_tool","id":"c1","tool":"todomvc_list_todos","args":{},"timeout_ms":500})
        );

        let answer =
            r#"{"type":"call_tool_result","id":"c1","result":[{"title":"a","completed":false}]}"#;
        let sent = frames(&core.on_call_reply("c1", Ok(Some(answer.into()))));
        assert_eq!(
            sent,
            vec![
                json!({"type":"call_tool_result","id":"c1","result":[{"title":"a","completed":false}]})
            ]
        );
        // A second answer for the same id is dropped.
        assert!(core.on_call_reply("c1", Ok(Some(answer.into()))).is_empty());
    }

    #[test]
    fn a_result_is_passed_on_as_the_page_wrote_it_or_queued_while_the_link_is_down() {
        let mut core = connected();
        announce(&mut core, 3);
        let call = json!({"type":"call_tool","id":"p1","tab":3,"tool":"todomvc_list_todos","args":{},"timeout_ms":500});
        core.on_server_frame(&call.to_string());
        let page = r#"{"type":"call_tool_result","id":"p1","result":{"n":1.50,"s":"\u00e9"}}"#;
        assert_eq!(
            core.on_call_reply("p1", Ok(Some(page.into()))),
            [Action::Frame(page.into())],
            "the very text, not decoded and written again"
        );
        core.on_server_frame(&call.to_string().replace("p1", "p2"));
        core.socket_closed(Problem::Closed { code: 1006 }, 0.5);
        let page = page.replace("p1", "p2");
        assert!(core.on_call_reply("p2", Ok(Some(page))).is_empty());
        open_and_prove(&mut core);
        let sent = frames(&core.on_server_frame(&welcome()));
        assert_eq!(
            sent[1],
            json!({"type":"call_tool_result","id":"p2","result":{"n":1.5,"s":"é"}})
        );
    }

    #[test]
    fn unknown_tools_and_dead_tabs_fail_clearly() {
        let mut core = connected();
        announce(&mut core, 3);
        // The server decides which tab offers a tool; the page answers for itself if its tools
        // changed meanwhile, so the worker passes the call on.
        let call = json!({"type":"call_tool","id":"c2","tab":3,"tool":"todomvc_nope","args":{},"timeout_ms":500});
        let actions = core.on_server_frame(&call.to_string());
        assert!(
            matches!(&actions[..], [Action::ToTab { tab: 3, on_reply: OnReply::CallTool(id), .. }] if id == "c2"),
            "{actions:?}"
        );
        let refused =
            r#"{"type":"call_tool_error","id":"c2","error":{"code":"NO_SUCH_TOOL","message":"m"}}"#;
        let sent = frames(&core.on_call_reply("c2", Ok(Some(refused.into()))));
        assert_eq!(sent[0]["error"]["code"], "NO_SUCH_TOOL");

        let call =
            json!({"type":"call_tool","id":"c3","tab":77,"tool":"x","args":{},"timeout_ms":500});
        core.on_server_frame(&call.to_string());
        let sent = frames(&core.on_call_reply("c3", Err("No tab with id: 77.".into())));
        assert_eq!(sent[0]["error"]["code"], "TAB_CLOSED");

        let call =
            json!({"type":"call_tool","id":"c4","tab":78,"tool":"x","args":{},"timeout_ms":500});
        core.on_server_frame(&call.to_string());
        let why = "Could not establish connection. Receiving end does not exist.";
        let sent = frames(&core.on_call_reply("c4", Err(why.into())));
        assert_eq!(sent[0]["error"]["code"], "NO_SUCH_TOOL");
    }

    #[test]
    fn a_page_gone_mid_call_is_navigated_and_a_closed_tab_is_tab_closed() {
        let bfcache = "The page keeping the extension port is moved into back/forward cache, \
                       so the message channel is closed.";
        let closed = "A listener indicated an asynchronous response by returning true, but the \
                      message channel closed before a response was received";
        for why in [bfcache, closed] {
            assert!(channel_closed(why));
            assert_eq!(
                classify_send_failure(3, why, true).code,
                ErrorCode::Navigated
            );
        }
        // What the glue passes on when chrome.tabs.get says the tab is gone.
        let gone = classify_send_failure(3, "No tab with id: 3.", true);
        assert_eq!(gone.code, ErrorCode::TabClosed);
    }

    #[test]
    fn another_tab_cannot_answer_a_call() {
        let mut core = connected();
        announce(&mut core, 3);
        announce(&mut core, 4);
        let call = json!({"type":"call_tool","id":"c11","tab":3,"tool":"todomvc_list_todos","args":{},"timeout_ms":500});
        core.on_server_frame(&call.to_string());
        // Tab 4 (or tab 3 itself) posting an answer as a message is ignored: answers travel
        // only through the response channel of the message sent to the called tab.
        let forged = json!({"type":"call_tool_result","id":"c11","result":"forged"}).to_string();
        for tab in [4, 3] {
            let (reply, actions) = core.on_page_message(&sender(tab), Some(&forged));
            assert!(reply.is_none() && frames(&actions).is_empty());
        }
        let genuine = json!({"type":"call_tool_result","id":"c11","result":"genuine"}).to_string();
        let sent = frames(&core.on_call_reply("c11", Ok(Some(genuine))));
        assert_eq!(sent[0]["result"], "genuine");
    }

    #[test]
    fn an_oversized_answer_fails_its_call_with_too_large() {
        let mut core = connected();
        announce(&mut core, 3);
        let call = json!({"type":"call_tool","id":"c9","tab":3,"tool":"todomvc_list_todos","args":{},"timeout_ms":500});
        core.on_server_frame(&call.to_string());
        let answer =
            json!({"type":"call_tool_result","id":"c9","result":"x".repeat(MAX_RESULT_BYTES)});
        let sent = frames(&core.on_call_reply("c9", Ok(Some(answer.to_string()))));
        assert_eq!(sent[0]["type"], "call_tool_error");
        assert_eq!(sent[0]["error"]["code"], "TOO_LARGE");
        assert!(sent[0].to_string().len() < 1024);
    }

    #[test]
    fn closing_a_tab_fails_its_calls_and_tells_the_server() {
        let mut core = connected();
        announce(&mut core, 3);
        let call = json!({"type":"call_tool","id":"c5","tab":3,"tool":"todomvc_list_todos","args":{},"timeout_ms":500});
        core.on_server_frame(&call.to_string());
        let sent = frames(&core.on_tab_removed(3));
        assert_eq!(sent[0]["error"]["code"], "TAB_CLOSED");
        assert_eq!(sent[1], json!({"type":"tab_closed","tab":3}));
        assert!(frames(&core.on_tab_removed(3)).is_empty());
    }

    #[test]
    fn cancel_goes_to_the_calls_tab() {
        let mut core = connected();
        core.on_server_frame(
            &json!({"type":"call_tool","id":"c6","tab":4,"tool":"x","args":{},"timeout_ms":500})
                .to_string(),
        );
        let actions = core.on_server_frame(r#"{"type":"cancel","id":"c6"}"#);
        assert!(
            matches!(&actions[..], [Action::ToTab { tab: 4, message, .. }] if message.contains("cancel"))
        );
        assert!(
            core.on_server_frame(r#"{"type":"cancel","id":"unknown"}"#)
                .is_empty()
        );
    }

    #[test]
    fn navigation_events_only_for_relevant_tabs() {
        let mut core = connected();
        announce(&mut core, 3);
        let actions = core.on_tab_updated(3, Some("http://127.0.0.1:8000/other"), None);
        assert_eq!(
            frames(&actions)[0],
            json!({"type":"tab_navigated","tab":3,"url":"http://127.0.0.1:8000/other"})
        );
        assert!(
            actions
                .iter()
                .any(|a| matches!(a, Action::ToTab { tab: 3, .. }))
        );
        assert!(frames(&core.on_tab_updated(9, Some("https://private.example/"), None)).is_empty());
        assert!(frames(&core.on_tab_activated(9)).is_empty());
        assert_eq!(
            frames(&core.on_tab_activated(3))[0],
            json!({"type":"tab_focused","tab":3})
        );
    }

    #[test]
    fn state_requests_go_to_the_tab_and_state_updates_to_the_server() {
        let mut core = connected();
        announce(&mut core, 3);
        let actions = core.on_server_frame(r#"{"type":"request_state","id":"s1","tab":3}"#);
        let [
            Action::ToTab {
                tab: 3,
                message,
                on_reply: OnReply::State(id),
            },
        ] = &actions[..]
        else {
            panic!("{actions:?}")
        };
        assert_eq!(id, "s1");
        assert_eq!(
            serde_json::from_str::<Value>(message).unwrap(),
            json!({"type":"request_state","id":"s1"})
        );
        let answer = r#"{"type":"state_response","id":"s1","state":{"todomvc":{"n":2}}}"#;
        assert_eq!(
            frames(&core.on_state_reply("s1", 3, Ok(Some(answer.into())))),
            vec![json!({"type":"state_response","id":"s1","state":{"todomvc":{"n":2}}})]
        );
        let failed =
            r#"{"type":"state_error","id":"s2","error":{"code":"ADAPTER_ERROR","message":"m"}}"#;
        let sent = frames(&core.on_state_reply("s2", 3, Ok(Some(failed.into()))));
        assert_eq!(sent[0]["type"], "state_error");
        assert_eq!(sent[0]["error"]["code"], "ADAPTER_ERROR");
        let sent = frames(&core.on_state_reply("s3", 3, Ok(Some(answer.into()))));
        assert_eq!(
            sent[0]["error"]["code"], "INTERNAL",
            "an answer to another request"
        );
        let sent = frames(&core.on_state_reply("s4", 3, Ok(None)));
        assert_eq!(sent[0]["error"]["code"], "NO_SUCH_TAB");

        let update = r#"{"type":"state_update","state":{"todomvc":{"n":3}},"ts":42}"#;
        let (_, actions) = core.on_page_message(&sender(3), Some(update));
        assert_eq!(
            frames(&actions),
            vec![json!({"type":"state_update","tab":3,"state":{"todomvc":{"n":3}},"ts":42})]
        );
    }

    #[test]
    fn hello_names_the_code_adapters_and_open_tab_reports_the_loaded_page() {
        let mut core = Core::new(ME);
        core.set_code_adapters(&[r#"{"name": "calc", "match": ["http://127.0.0.1/*"],
            "tools": [{"name": "sum", "description": "Add."}]}"#
            .into()]);
        let hello = open_and_prove(&mut core);
        // The declarations, for the server to validate and describe.
        assert_eq!(
            hello["code_adapters"],
            json!([{"name": "calc", "match": ["http://127.0.0.1/*"],
                    "tools": [{"name": "sum", "description": "Add."}]}])
        );
        core.on_server_frame(&welcome());
        let actions = core.on_server_frame(
            r#"{"type":"open_tab","id":"o","url":"http://a/","wait_loaded_ms":800}"#,
        );
        assert!(
            actions.contains(&Action::OpenTab {
                id: "o".into(),
                url: "http://a/".into(),
                tab: None,
                wait_loaded_ms: Some(800),
            }),
            "{actions:?}"
        );
        let sent = frames(&core.on_open_tab_reply("o", Ok(4), Some(LoadedPage { runtime: true })));
        assert_eq!(
            sent,
            [json!({"type": "open_tab_result", "id": "o", "tab": 4, "loaded": {"runtime": true}})]
        );
    }

    #[test]
    fn code_adapters_join_the_servers_and_survive_updates() {
        let mut core = connected();
        let declaration = r#"{"name": "calc", "match": ["http://127.0.0.1/*"],
            "tools": [{"name": "sum", "description": "Add."}]}"#;
        let actions = core.set_code_adapters(&[declaration.into(), r#"{"match": []}"#.into()]);
        assert!(matches!(&actions[0], Action::Log(m) if m.contains("code adapter skipped")));
        let names =
            |core: &Core| -> Vec<String> { core.adapters.all().map(|a| a.name.clone()).collect() };
        // The server validates the declaration and sends it back as an adapter.
        let calc = json!({"name": "calc", "match": ["http://127.0.0.1/*"], "tools": [
            {"name": "sum", "description": "Add.", "steps": [{"step": "return", "value": 1}]}]});
        core.on_server_frame(
            &json!({"type": "welcome", "protocol": bridge::PROTOCOL_VERSION, "server_version": "0.1.0",
                    "instance_id": "s", "adapters": [adapter_json()], "code_adapters": [calc]})
            .to_string(),
        );
        assert_eq!(names(&core), ["todomvc", "calc"]);
        core.on_server_frame(
            &json!({"type": "adapters_updated", "adapters": [adapter_json()]}).to_string(),
        );
        assert_eq!(names(&core), ["todomvc", "calc"]);
        // What the server sent is kept for a restarted worker.
        let kept: Value = serde_json::from_str(&core.adapters_json()).unwrap();
        assert_eq!(kept["code"][0]["name"], "calc");
        let url = "http://127.0.0.1:8000/x";
        let offered = vec![OfferedTool::Adapter("calc_sum".into())];
        let (accepted, refused) = tabs::accept_tools(&core.adapters, url, &offered);
        assert_eq!((accepted, refused), (offered, 0));
    }

    #[test]
    fn a_refresh_reaches_the_tabs_adapters_match_and_the_known_ones() {
        let mut core = connected();
        announce(&mut core, 3);
        let open = [
            (3, "https://moved.example/".to_owned()),
            (5, "http://127.0.0.1:8000/new".to_owned()),
            (6, "https://private.example/".to_owned()),
        ];
        let actions = core.refresh(&open);
        let sent: Vec<(TabId, OnReply, Value)> = actions
            .into_iter()
            .map(|a| match a {
                Action::ToTab {
                    tab,
                    message,
                    on_reply,
                } => (tab, on_reply, serde_json::from_str(&message).unwrap()),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            sent.len(),
            2,
            "nothing for a tab no adapter serves: {sent:?}"
        );
        assert_eq!((sent[0].0, &sent[0].1), (3, &OnReply::Nothing));
        assert_eq!(
            sent[0].2["adapters"],
            json!([]),
            "the known tab drops its tools"
        );
        assert_eq!((sent[1].0, &sent[1].1), (5, &OnReply::InjectIfMissing));
        assert_eq!(sent[1].2["adapters"][0]["name"], "todomvc");
    }

    #[test]
    fn protocol_chatter() {
        let mut core = connected();
        assert_eq!(
            frames(&core.on_server_frame(r#"{"type":"ping","nonce":7}"#)),
            vec![json!({"type":"pong","nonce":7})]
        );
        let sent = frames(&core.on_server_frame(r#"{"type":"teleport","id":"r1"}"#));
        assert_eq!(sent[0]["type"], "error");
        assert_eq!(sent[0]["in_reply_to"], "r1");
        assert_eq!(sent[0]["error"]["code"], "PROTOCOL");
        let sent = frames(&core.on_server_frame(r#"{"type":"request_state","id":"s1","tab":1}"#));
        assert_eq!(sent[0]["type"], "state_error");
        assert!(core.ping(1).is_some());
        core.socket_closed(Problem::Closed { code: 1001 }, 0.5);
        assert!(core.ping(2).is_none());
        assert_eq!(core.status().state, LinkState::Disconnected);
        assert_eq!(core.status().problem, Some(Problem::Closed { code: 1001 }));
    }

    #[test]
    fn backoff_restarts_after_a_good_connection() {
        let mut core = Core::new(ME);
        assert_eq!(core.socket_closed(Problem::Refused, 0.5), 100);
        assert_eq!(core.socket_closed(Problem::Refused, 0.5), 200);
        assert!(
            core.status()
                .last_error
                .unwrap()
                .contains("refused this extension's handshake")
        );
        open_and_prove(&mut core);
        core.on_server_frame(&welcome());
        assert_eq!(core.status().problem, None, "welcome clears the problem");
        assert_eq!(core.socket_closed(Problem::Closed { code: 1006 }, 0.5), 100);
    }
}

//! The service worker's brain, free of browser APIs so it is tested on the host: the link state
//! (down / awaiting `welcome` / ready), the outbox, the adapters, the tab registry, and the
//! routing of server frames, page messages and tab events into [`Action`]s the browser glue
//! carries out.

use std::collections::HashMap;

use bridge::adapter::Adapter;
use bridge::handshake::{self, Exchange, Nonce, Role, ServerProof, Side};
use bridge::page::{FromPage, ToPage};
use bridge::protocol::{AdapterMatch, BrowserInfo, LoadedPage, RequestId, TabId, TabTools};
use bridge::{ErrorCode, ToExtension, ToServer, WireError};
use serde::Serialize;

use crate::backoff::Backoff;
use crate::link_problem::Problem;
use crate::outbox::Outbox;
use crate::pairing::Pairing;
use crate::tabs::{self, Sender, TabRegistry};

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
    /// The server's adapters merged with the code adapters (which win on a name clash).
    adapters: Vec<Adapter>,
    /// Code adapters bundled into the extension (`adapters/code`), validated.
    code_adapters: Vec<Adapter>,
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
            adapters: Vec::new(),
            code_adapters: Vec::new(),
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
        // Through a `Value`, like every message: the wasm then holds one adapter decoder.
        let adapters = adapters_json.and_then(|j| serde_json::from_str(j).ok());
        if let Some(adapters) = adapters.and_then(|v| serde_json::from_value(v).ok()) {
            self.adapters = adapters;
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
        serde_json::to_string(&self.adapters).expect("adapters serialize")
    }

    pub fn tab_ids(&self) -> Vec<TabId> {
        self.tabs.ids()
    }

    /// The union of the adapters' match patterns (what the content script is registered for).
    pub fn match_patterns(&self) -> Vec<String> {
        let mut patterns: Vec<String> = self
            .adapters
            .iter()
            .flat_map(|a| a.matches.iter().cloned())
            .collect();
        patterns.sort();
        patterns.dedup();
        patterns
    }

    /// The `adapters` message for a page at `url`.
    pub fn adapters_message(&self, url: &str) -> String {
        let adapters = tabs::adapters_for(&self.adapters, url)
            .into_iter()
            .cloned()
            .collect();
        serde_json::to_string(&ToPage::Adapters { adapters }).expect("page messages serialize")
    }

    pub fn any_adapter_matches(&self, url: &str) -> bool {
        self.adapters.iter().any(|a| a.matches_url(url))
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
            code_adapters: self
                .code_adapters
                .iter()
                .map(|a| AdapterMatch {
                    name: a.name.clone(),
                    matches: a.matches.clone(),
                })
                .collect(),
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
            ToExtension::CallTool {
                id,
                tab,
                tool,
                args,
                timeout_ms,
            } => {
                if let Some(entry) = self.tabs.get(tab)
                    && !entry.tools.iter().any(|t| t.name == tool)
                {
                    let error = WireError::new(
                        ErrorCode::NoSuchTool,
                        format!(
                            "tab {tab} ({}) offers no tool {tool:?}; it offers: {}",
                            entry.url,
                            tool_list(entry)
                        ),
                    );
                    self.send(ToServer::CallToolError { id, error }, &mut actions);
                } else {
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

    /// The code adapters' declarations (JSON, from the bundle); invalid ones are logged and skipped.
    pub fn set_code_adapters(&mut self, declarations: &[String]) -> Vec<Action> {
        let mut actions = Vec::new();
        self.code_adapters.clear();
        for declaration in declarations {
            match bridge::code_adapter::parse(declaration) {
                Ok(adapter) => self.code_adapters.push(adapter),
                Err(problems) => {
                    let problems: Vec<String> = problems.iter().map(ToString::to_string).collect();
                    actions.push(Action::Log(format!(
                        "code adapter skipped: {}",
                        problems.join("; ")
                    )));
                }
            }
        }
        let current = std::mem::take(&mut self.adapters);
        self.set_adapters(current, &mut actions);
        actions
    }

    fn set_adapters(&mut self, adapters: Vec<Adapter>, actions: &mut Vec<Action>) {
        let code = &self.code_adapters;
        let mut merged: Vec<Adapter> = adapters
            .into_iter()
            .filter(|a| !code.iter().any(|c| c.name == a.name))
            // Checked as the server checks them, whoever sent them.
            .filter(|a| {
                let problems = a.validate();
                if let Some(first) = problems.first() {
                    actions.push(Action::Log(format!(
                        "adapter {:?} from the server refused: {first}",
                        a.name
                    )));
                }
                problems.is_empty()
            })
            .collect();
        merged.extend(code.iter().cloned());
        self.adapters = merged;
        actions.push(Action::SyncContentScripts(self.match_patterns()));
        actions.push(Action::PersistAdapters);
    }

    // ---- answers from tabs ---------------------------------------------------------------

    /// The page answered `call_tool` `id` (`Ok`: the response, possibly `None` when the page
    /// gave none) or `chrome.tabs.sendMessage` failed (`Err`: Chrome's message).
    pub fn on_call_reply(
        &mut self,
        id: &str,
        reply: Result<Option<String>, String>,
    ) -> Vec<Action> {
        let mut actions = Vec::new();
        let Some(tab) = self.calls.remove(id) else {
            return actions; // already answered (the tab closed meanwhile)
        };
        let msg = match reply {
            Ok(Some(text)) => match serde_json::from_str::<FromPage>(&text) {
                Ok(FromPage::CallToolContinue {
                    id: got,
                    tool,
                    resume_at,
                    vars,
                    timeout_ms,
                }) if got == id => {
                    // Still pending: a closed tab or a page without the tool fails it.
                    self.calls.insert(got.clone(), tab);
                    let rest = ToPage::ContinueTool {
                        id: got.clone(),
                        tool: tool.clone(),
                        resume_at,
                        vars,
                        timeout_ms,
                    };
                    self.continuations.insert(tab, (got, tool, rest));
                    return actions;
                }
                // Forwarded, it would be a frame the server must refuse (closing the socket and
                // every other call on it): fail this call alone.
                _ if text.len() > MAX_RESULT_BYTES => ToServer::CallToolError {
                    id: id.to_owned(),
                    error: WireError::new(
                        ErrorCode::TooLarge,
                        format!(
                            "tab {tab} answered with {} bytes, more than the {MAX_RESULT_BYTES} a result may have",
                            text.len()
                        ),
                    ),
                },
                Ok(FromPage::CallToolResult { id: got, result }) if got == id => {
                    ToServer::CallToolResult {
                        id: id.to_owned(),
                        result,
                    }
                }
                Ok(FromPage::CallToolError { id: got, error }) if got == id => {
                    ToServer::CallToolError {
                        id: id.to_owned(),
                        error,
                    }
                }
                other => ToServer::CallToolError {
                    id: id.to_owned(),
                    error: WireError::new(
                        ErrorCode::Internal,
                        format!(
                            "tab {tab} answered call {id} with something else{}",
                            match other {
                                Ok(_) => String::new(),
                                Err(e) => format!(": {e}"),
                            }
                        ),
                    ),
                },
            },
            Ok(None) => ToServer::CallToolError {
                id: id.to_owned(),
                error: WireError::new(
                    ErrorCode::NoSuchTool,
                    format!(
                        "tab {tab} has no Tabwire runtime to answer (no adapter matches its page, or it is still loading)"
                    ),
                ),
            },
            Err(why) => ToServer::CallToolError {
                id: id.to_owned(),
                error: classify_send_failure(tab, &why, self.tabs.contains(tab)),
            },
        };
        self.send(msg, &mut actions);
        actions
    }

    /// The page answered `request_state` `id`, or `chrome.tabs.sendMessage` to `tab` failed.
    pub fn on_state_reply(
        &mut self,
        id: &str,
        tab: TabId,
        reply: Result<Option<String>, String>,
    ) -> Vec<Action> {
        let mut actions = Vec::new();
        let id = id.to_owned();
        let msg = match reply.map(|text| text.map(|t| serde_json::from_str::<FromPage>(&t))) {
            Ok(Some(Ok(FromPage::StateResponse { id: got, state }))) if got == id => {
                ToServer::StateResponse { id, state }
            }
            Ok(Some(Ok(FromPage::StateError { id: got, error }))) if got == id => {
                ToServer::StateError { id, error }
            }
            Ok(None) => ToServer::StateError {
                id,
                error: WireError::new(
                    ErrorCode::NoSuchTab,
                    format!("tab {tab} has no Tabwire runtime to answer"),
                ),
            },
            Ok(_) => ToServer::StateError {
                id,
                error: WireError::new(
                    ErrorCode::Internal,
                    format!("tab {tab} answered the state request with something else"),
                ),
            },
            Err(why) => ToServer::StateError {
                error: classify_send_failure(tab, &why, self.tabs.contains(tab)),
                id,
            },
        };
        self.send(msg, &mut actions);
        actions
    }

    /// The tab `open_tab` `id` opened (with what was seen once its page loaded, when asked to
    /// wait for that), or why it could not.
    pub fn on_open_tab_reply(
        &mut self,
        id: &str,
        reply: Result<TabId, String>,
        loaded: Option<LoadedPage>,
    ) -> Vec<Action> {
        let mut actions = Vec::new();
        let msg = match reply {
            Ok(tab) => ToServer::OpenTabResult {
                id: id.to_owned(),
                tab,
                loaded,
            },
            Err(why) => {
                let code = if why.contains("No tab with id") {
                    ErrorCode::NoSuchTab
                } else {
                    ErrorCode::Internal
                };
                ToServer::OpenTabError {
                    id: id.to_owned(),
                    error: WireError::new(code, format!("could not open the URL: {why}")),
                }
            }
        };
        self.send(msg, &mut actions);
        actions
    }

    // ---- messages from pages -------------------------------------------------------------

    /// A `runtime.onMessage` message; returns the response to give (if any) and the actions.
    pub fn on_page_message(
        &mut self,
        sender: &Sender,
        text: Option<&str>,
    ) -> (Option<String>, Vec<Action>) {
        let mut actions = Vec::new();
        let tab = match tabs::check_sender(sender, &self.extension_id) {
            Ok(tab) => tab,
            Err(why) => {
                actions.push(Action::Log(format!("ignored a message {why}")));
                return (None, actions);
            }
        };
        let Some(text) = text.filter(|t| t.len() <= bridge::MAX_MESSAGE_BYTES) else {
            actions.push(Action::Log(format!(
                "ignored a non-text or oversized message from tab {tab}"
            )));
            return (None, actions);
        };
        let msg = match serde_json::from_str::<FromPage>(text) {
            Ok(msg) => msg,
            Err(e) => {
                actions.push(Action::Log(format!(
                    "ignored an undecodable message from tab {tab}: {e}"
                )));
                return (None, actions);
            }
        };
        // Chrome's idea of the page's URL, not the page's own claim.
        let url = sender.url.as_str();
        match msg {
            FromPage::PageReady { title, runtime, .. } => {
                self.tabs.page_ready(tab, url, &title, runtime);
                actions.push(Action::PersistTabs);
                (Some(self.adapters_message(url)), actions)
            }
            FromPage::ToolsUpdated { title, tools, .. } => {
                let (accepted, refused) = tabs::accept_tools(&self.adapters, url, &tools);
                if refused > 0 {
                    actions.push(Action::Log(format!(
                        "tab {tab} offered {refused} tool(s) no adapter for {url} defines: dropped"
                    )));
                }
                let continuing = self.continuations.remove(&tab).map(|(id, tool, rest)| {
                    let offered = accepted.iter().any(|t| t.name == tool);
                    (id, tool, rest, offered)
                });
                let update = self.tabs.set_tools(tab, url, &title, accepted);
                self.send(ToServer::ToolsUpdated(update), &mut actions);
                if let Some((id, tool, rest, offered)) = continuing {
                    if offered {
                        actions.push(Action::ToTab {
                            tab,
                            message: serde_json::to_string(&rest).expect("page messages serialize"),
                            on_reply: OnReply::CallTool(id),
                        });
                    } else {
                        self.calls.remove(&id);
                        let error = WireError::new(
                            ErrorCode::Navigated,
                            format!(
                                "the call navigated tab {tab} to {url}, whose page offers no tool {tool:?} to continue it"
                            ),
                        );
                        self.send(ToServer::CallToolError { id, error }, &mut actions);
                    }
                }
                actions.push(Action::PersistTabs);
                (None, actions)
            }
            FromPage::StateUpdate { state, ts } => {
                self.send(ToServer::StateUpdate { tab, state, ts }, &mut actions);
                (None, actions)
            }
            FromPage::CallToolResult { .. }
            | FromPage::CallToolError { .. }
            | FromPage::StateResponse { .. }
            | FromPage::StateError { .. }
            | FromPage::CallToolContinue { .. } => {
                actions.push(Action::Log(format!(
                    "tab {tab} sent a call answer outside its response channel: ignored"
                )));
                (None, actions)
            }
        }
    }

    // ---- tab events ----------------------------------------------------------------------

    pub fn on_tab_removed(&mut self, tab: TabId) -> Vec<Action> {
        let mut actions = Vec::new();
        self.continuations.remove(&tab);
        let pending: Vec<RequestId> = self
            .calls
            .iter()
            .filter(|(_, t)| **t == tab)
            .map(|(id, _)| id.clone())
            .collect();
        for id in pending {
            self.calls.remove(&id);
            let error = WireError::new(
                ErrorCode::TabClosed,
                format!("tab {tab} was closed during the call"),
            );
            self.send(ToServer::CallToolError { id, error }, &mut actions);
        }
        if self.tabs.remove(tab) {
            self.send(ToServer::TabClosed { tab }, &mut actions);
            actions.push(Action::PersistTabs);
        }
        actions
    }

    /// `tabs.onUpdated`: `url` when it changed, the tab's current URL and title.
    pub fn on_tab_updated(
        &mut self,
        tab: TabId,
        changed_url: Option<&str>,
        title: Option<&str>,
    ) -> Vec<Action> {
        let mut actions = Vec::new();
        if let Some(url) = changed_url {
            // Only tabs we know or that an adapter covers: the server has no business seeing
            // the rest of the user's browsing.
            let known = self.tabs.navigated(tab, url);
            if known || self.any_adapter_matches(url) {
                self.send(
                    ToServer::TabNavigated {
                        tab,
                        url: url.to_owned(),
                    },
                    &mut actions,
                );
            }
            if known {
                actions.push(Action::PersistTabs);
                // An in-place navigation (history.pushState) keeps the runtime alive: push it
                // the adapters for the new URL so it announces again. After a full navigation
                // nobody listens yet and the new page's own `page_ready` follows.
                actions.push(Action::ToTab {
                    tab,
                    message: self.adapters_message(url),
                    on_reply: OnReply::Nothing,
                });
            }
        }
        if let Some(title) = title
            && self.tabs.contains(tab)
        {
            self.tabs.set_title(tab, title);
            actions.push(Action::PersistTabs);
        }
        actions
    }

    pub fn on_tab_activated(&mut self, tab: TabId) -> Vec<Action> {
        let mut actions = Vec::new();
        if self.tabs.contains(tab) {
            self.send(ToServer::TabFocused { tab }, &mut actions);
        }
        actions
    }
}

fn tool_list(entry: &TabTools) -> String {
    if entry.tools.is_empty() {
        return "none".into();
    }
    entry
        .tools
        .iter()
        .map(|t| t.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether a `tabs.sendMessage` rejection says the page went away before answering: it
/// navigated, reloaded, went into the back/forward cache, or its tab closed.
pub fn channel_closed(why: &str) -> bool {
    why.contains("message channel closed")
        || why.contains("message port closed")
        || why.contains("message channel is closed")
        || why.contains("back/forward cache")
}

/// Turns Chrome's `tabs.sendMessage` rejection into an error the client can act on.
pub fn classify_send_failure(tab: TabId, why: &str, had_runtime: bool) -> WireError {
    if why.contains("No tab with id") {
        WireError::new(
            ErrorCode::TabClosed,
            format!("tab {tab} does not exist (closed?)"),
        )
    } else if why.contains("Receiving end does not exist") {
        if had_runtime {
            WireError::new(
                ErrorCode::Navigated,
                format!(
                    "tab {tab} navigated away; its tools will be back once the new page registers them"
                ),
            )
        } else {
            WireError::new(
                ErrorCode::NoSuchTool,
                format!(
                    "tab {tab} has no Tabwire runtime (no adapter matches its page, or it is still loading)"
                ),
            )
        }
    } else if channel_closed(why) {
        WireError::new(
            ErrorCode::Navigated,
            format!("tab {tab} navigated or reloaded before the call finished"),
        )
    } else {
        WireError::new(
            ErrorCode::Internal,
            format!("sending to tab {tab} failed: {why}"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bridge::protocol::ToolSpec;
    use serde_json::{Value, json};

    const ME: &str = "extid";

    fn adapter_json() -> Value {
        json!({
            "name": "todomvc", "match": ["http://127.0.0.1/*"],
            "tools": [{"name": "list_todos", "description": "List", "steps": [{"step": "click", "selector": "#b"}]}]
        })
    }

    fn welcome() -> String {
        json!({"type": "welcome", "protocol": 1, "server_version": "0.1.0", "instance_id": "s",
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

    #[test]
    fn adapters_are_validated_as_the_server_does() {
        let mut core = connected();
        let mut bad = adapter_json();
        bad["name"] = json!("browser");
        let mut navigates = adapter_json();
        navigates["name"] = json!("nav");
        navigates["tools"][0]["steps"] = json!([{"step": "navigate", "url": "file:///etc/passwd"}]);
        let actions = core.on_server_frame(
            &json!({"type": "adapters_updated", "adapters": [adapter_json(), bad, navigates]})
                .to_string(),
        );
        let refused: Vec<&String> = actions
            .iter()
            .filter_map(|a| match a {
                Action::Log(m) if m.contains("refused") => Some(m),
                _ => None,
            })
            .collect();
        assert_eq!(refused.len(), 2, "{actions:?}");
        let names: Vec<String> = serde_json::from_str::<Vec<Adapter>>(&core.adapters_json())
            .unwrap()
            .into_iter()
            .map(|a| a.name)
            .collect();
        assert_eq!(names, ["todomvc"]);
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
        let tools = vec![ToolSpec {
            name: "todomvc_list_todos".into(),
            adapter: "todomvc".into(),
            description: "x".into(),
            input_schema: json!({}),
            output_schema: None,
            annotations: Default::default(),
        }];
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
        assert_eq!(sent[0]["tools"][0]["description"], "List");
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
    fn unknown_tools_and_dead_tabs_fail_clearly() {
        let mut core = connected();
        announce(&mut core, 3);
        let call = json!({"type":"call_tool","id":"c2","tab":3,"tool":"todomvc_nope","args":{},"timeout_ms":500});
        let sent = frames(&core.on_server_frame(&call.to_string()));
        assert_eq!(sent[0]["error"]["code"], "NO_SUCH_TOOL");
        assert!(
            sent[0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("todomvc_list_todos")
        );

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
        assert_eq!(
            hello["code_adapters"],
            json!([{"name": "calc", "match": ["http://127.0.0.1/*"]}])
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
        let actions = core.set_code_adapters(&[declaration.into(), r#"{"name": "Bad"}"#.into()]);
        assert!(matches!(&actions[0], Action::Log(m) if m.contains("code adapter skipped")));
        let names = |core: &Core| -> Vec<String> {
            serde_json::from_str::<Vec<Adapter>>(&core.adapters_json())
                .unwrap()
                .into_iter()
                .map(|a| a.name)
                .collect()
        };
        assert_eq!(names(&core), ["todomvc", "calc"]);
        core.on_server_frame(
            &json!({"type": "adapters_updated", "adapters": [adapter_json()]}).to_string(),
        );
        assert_eq!(names(&core), ["todomvc", "calc"]);
        let url = "http://127.0.0.1:8000/x";
        let offered = vec![ToolSpec {
            name: "calc_sum".into(),
            adapter: "calc".into(),
            description: "forged".into(),
            input_schema: json!({}),
            output_schema: None,
            annotations: Default::default(),
        }];
        let (accepted, refused) = tabs::accept_tools(&core.adapters, url, &offered);
        assert_eq!((accepted.len(), refused), (1, 0));
        assert_eq!(accepted[0].description, "Add.");
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

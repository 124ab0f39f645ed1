//! The service worker's brain, free of browser APIs so it is tested on the host: the link state
//! (down / awaiting `welcome` / ready), the outbox, the adapters, the tab registry, and the
//! routing of server frames, page messages and tab events into [`Action`]s the browser glue
//! carries out. What pages and tabs say is handled in `core/pages.rs`.

use std::collections::{HashMap, HashSet};

use bridge::browser_ops::BrowserOp;
use bridge::grants::GrantChange;
use bridge::handshake::{self, Exchange, Nonce, Role, ServerProof, Side};
use bridge::page::{PageCall, ToPage};
use bridge::page_ops::ACT;
use bridge::protocol::{BrowserInfo, RequestId, TabId};
use bridge::{ErrorCode, ToExtension, ToServer, WireError};
use serde::Serialize;
use serde_json::Value;

mod answer_check;
mod hurry;
mod navigation;
mod pages;
mod recording;

pub use navigation::{ANNOUNCE_GRACE_MS, NavEvent, Timer};
pub use pages::{
    FrameInfo, FrameRequest, channel_closed, classify_send_failure, frame_send_failure,
};
pub use recording::{RecordAction, TabRecording};

use crate::adapters::AdapterSet;
use crate::backoff::Backoff;
use crate::link_problem::Problem;
use crate::outbox::Outbox;
use crate::pairing::Pairing;
use crate::tabs::TabRegistry;
use bridge::packed::PackedAdapter;

/// How long after a change of the tabs their copy in `storage.session` (the popup's, and the next
/// worker's) is written: a page's load brings several changes in a burst (its URL, its title, its
/// tools), each an event of its own, written once. (Side by side, 0 and 250 ms made no measurable
/// difference to the first call on a page: BENCHMARKS.md.)
pub const PERSIST_TABS_AFTER_MS: f64 = 250.0;

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
    /// A page tool's call: to `tab` (absent: the focused tab), injecting the runtime first where
    /// it does not run (see [`Core::page_op`]).
    PageOp {
        id: RequestId,
        tab: Option<TabId>,
        call: PageCall,
    },
    /// Perform a page's trusted input through Chrome's debugger (`glue.rs`'s `debugger`) and give
    /// the page the answer; the call is one the server sent with `trusted_input`, the commands
    /// `Input` ones (checked by [`Core::on_page_message`]).
    TrustedInput {
        tab: TabId,
        commands: Vec<bridge::trusted_input::Command>,
    },
    OpenTab {
        id: RequestId,
        url: String,
        tab: Option<TabId>,
        /// Answer once the page has loaded (at most this long), saying whether it runs the runtime.
        wait_loaded_ms: Option<u64>,
    },
    /// Perform browser request `id` (`browser.rs`) and answer it with [`Core::on_browser_reply`].
    Browser {
        id: RequestId,
        op: BrowserOp,
    },
    /// Make the dynamic content script cover exactly these match patterns (none: unregister).
    SyncContentScripts(Vec<String>),
    /// Push the adapters to every open tab they match (injecting the runtime where missing) and
    /// to every known tab (which then drops tools that no longer apply).
    RefreshTabs,
    /// Write the tab registry and the status to `chrome.storage.session` now (the core asks for
    /// it [`PERSIST_TABS_AFTER_MS`] after a change of the tabs: [`Core::tabs_changed`]).
    PersistTabs,
    /// Write the adapters to `chrome.storage.session` (a restarted worker answers pages with them).
    PersistAdapters,
    /// Write the grants the server pushed (its `grants` frame, JSON) to `chrome.storage.session`,
    /// where the popup reads them.
    PersistGrants(String),
    /// Write the agents the server pushed (its `agents` frame, JSON) to `chrome.storage.session`,
    /// where the popup reads them, and put each agent's tabs in a tab group named after it
    /// (issue 28; `tab_groups.rs`).
    ShowAgents {
        frame: String,
        agents: Vec<bridge::agents::AgentView>,
    },
    /// Write the recordings ([`Core::recordings_json`]) to `chrome.storage.session`, where the
    /// popup reads them.
    PersistRecordings,
    /// Answer the popup's request `id` (see [`Core::change_grant`], [`Core::save_recording`]):
    /// what was made, or why not.
    AnswerPopup {
        id: RequestId,
        answer: Result<crate::popup::Answered, String>,
    },
    /// Ask Chrome whether `tab` still loads (`tabs.get`'s `status`) and tell
    /// [`Core::on_load_looked`], for its load `load`.
    LookAtLoad {
        tab: TabId,
        load: u64,
    },
    /// Have the runtime of `tab`'s page (`document`, else its top frame's) begin its compile at
    /// once: the load is Tabwire's (`core/hurry.rs`).
    HurryRuntime {
        tab: TabId,
        document: Option<String>,
    },
    /// Call [`Core::on_timer`] with `timer` after `ms`.
    After {
        ms: f64,
        timer: Timer,
    },
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

/// How many trusted calls' marks are kept before the ended ones are swept.
const MAX_TRUSTED_CALLS: usize = 64;

pub struct Core {
    extension_id: String,
    /// The server's adapters and the bundled code adapters (`adapters/code`), packed.
    adapters: AdapterSet,
    tabs: TabRegistry,
    /// Calls sent to a tab and not answered yet.
    calls: HashMap<RequestId, TabId>,
    /// Those of them whose input goes through Chrome's debugger (the server said so).
    trusted_calls: std::collections::HashSet<RequestId>,
    /// The files of the running calls that carry some, for the steps after a navigation
    /// ([`ToPage::ContinueTool`]); only calls still running are kept.
    call_files: std::collections::HashMap<RequestId, Vec<bridge::upload::UploadFile>>,
    /// Calls waiting for their files' `upload_chunk` frames; freed when the socket closes.
    uploads: bridge::upload::Assemblies<ToExtension>,
    /// Tabs loading another page and what waits for them (`core/navigation.rs`).
    nav: navigation::Navigation,
    /// The tabs requests went to lately, whose loads are hurried (`core/hurry.rs`).
    driven: hurry::Driven,
    /// Tabs whose page waits for a person to answer a dialog (`FromPage::DialogShown`): frozen,
    /// so a call there fails at once with `DIALOG_OPEN` instead of running out its time.
    dialogs_open: HashSet<TabId>,
    outbox: Outbox,
    link: LinkState,
    backoff: Backoff,
    port: Option<u16>,
    problem: Option<Problem>,
    pairing_file: Option<String>,
    proof: Option<Proof>,
    server_version: Option<String>,
    /// The popup's recordings, by tab (`core/recording.rs`).
    recordings: recording::Recordings,
    /// The patterns of the origins whose pages get the runtime as they load (`preload.rs`).
    preload: Vec<String>,
    /// Page tool answers checked after the fact (`core/answer_check.rs`).
    answer_check: answer_check::AnswerCheck,
    /// Whether a write of the tabs is due ([`Timer::PersistTabs`]).
    tabs_write_due: bool,
}

impl Core {
    pub fn new(extension_id: impl Into<String>) -> Core {
        Core {
            extension_id: extension_id.into(),
            adapters: AdapterSet::default(),
            tabs: TabRegistry::default(),
            calls: HashMap::new(),
            trusted_calls: Default::default(),
            call_files: Default::default(),
            uploads: Default::default(),
            nav: navigation::Navigation::default(),
            driven: hurry::Driven::default(),
            dialogs_open: HashSet::new(),
            outbox: Outbox::default(),
            link: LinkState::Disconnected,
            backoff: Backoff::default(),
            port: None,
            problem: None,
            pairing_file: None,
            proof: None,
            server_version: None,
            recordings: recording::Recordings::default(),
            preload: Vec::new(),
            answer_check: Default::default(),
            tabs_write_due: false,
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

    /// The recordings a previous incarnation of the worker left (`recordings_json`).
    pub fn restore_recordings(&mut self, json: &str) {
        self.recordings.restore(json);
    }

    /// The last `grants` frame a previous incarnation of the worker kept (`PersistGrants`): the
    /// origins whose pages get the runtime as they load stay registered across a restart,
    /// before the server says them again.
    pub fn restore_grants(&mut self, frame_json: &str) {
        let frame: serde_json::Value = serde_json::from_str(frame_json).unwrap_or_default();
        let grants = serde_json::from_value(frame["grants"].clone()).unwrap_or_default();
        let all_origins = frame["all_origins"].as_bool().unwrap_or(false);
        self.preload = crate::preload::preload_patterns(&grants, all_origins);
        self.recordings.set_grants(grants, all_origins);
    }

    /// This extension's id (`chrome.runtime.id`): whose messages the worker takes.
    pub fn extension_id(&self) -> &str {
        &self.extension_id
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

    /// The tabs changed: their copy is written [`PERSIST_TABS_AFTER_MS`] from now, once for
    /// all the changes until then.
    fn tabs_changed(&mut self, actions: &mut Vec<Action>) {
        if !std::mem::replace(&mut self.tabs_write_due, true) {
            actions.push(Action::After {
                ms: PERSIST_TABS_AFTER_MS,
                timer: Timer::PersistTabs,
            });
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
    /// What the dynamic content script covers: the adapters' patterns and the origins whose
    /// pages get the runtime as they load.
    pub fn match_patterns(&self) -> Vec<String> {
        crate::preload::script_patterns(self.adapters.match_patterns(), &self.preload)
    }

    /// The `adapters` message for a page at `url`.
    pub fn adapters_message(&self, url: &str) -> String {
        self.adapters.message_for(url)
    }

    pub fn any_adapter_matches(&self, url: &str) -> bool {
        self.adapters.any_matches(url)
    }

    /// Whether `url`'s page gets the runtime as it loads because its origin allows page tools
    /// (`preload.rs`).
    pub fn preloads(&self, url: &str) -> bool {
        crate::preload::covers(&self.preload, url)
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
        // Their server failed those calls when the socket went: nothing waits for the rest.
        self.uploads.clear();
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

    /// The browser finished request `id`.
    pub fn on_browser_reply(
        &mut self,
        id: RequestId,
        reply: Result<Value, WireError>,
    ) -> Vec<Action> {
        let mut actions = Vec::new();
        let msg = match reply {
            Ok(result) => ToServer::BrowserResult { id, result },
            Err(error) => ToServer::BrowserError { id, error },
        };
        self.send(msg, &mut actions);
        actions
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
        let Some((msg, files)) = self.with_files(msg, &mut actions) else {
            return actions;
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
                // The link is up: the popup (which reads the status written with the tabs) says
                // so at once.
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
                trusted_input,
                files: _,
            } => {
                if self.dialog_open_in(tab) {
                    let error = bridge::dialog::open_in_tab(tab);
                    self.send(ToServer::CallToolError { id, error }, &mut actions);
                    return actions;
                }
                self.keep_files(&id, &files);
                let message = ToPage::CallTool {
                    id: id.clone(),
                    tool,
                    args,
                    timeout_ms,
                    trusted_input,
                    files,
                };
                self.calls.insert(id.clone(), tab);
                if trusted_input {
                    self.trust_call(&id);
                }
                let action = Action::ToTab {
                    tab,
                    message: serde_json::to_string(&message).expect("page messages serialize"),
                    on_reply: OnReply::CallTool(id.clone()),
                };
                // A tab loading another page: the call runs in the page it is going to.
                self.send_when_loaded(tab, id, action, timeout_ms as f64, &mut actions);
            }
            ToExtension::PageOp { id, tab, call } => {
                if call.trusted_input {
                    self.trust_call(&id);
                }
                actions.extend(self.page_op(id, tab, call.with_files(files)));
            }
            ToExtension::Cancel { id } => {
                if self.uploads.forget(&id) || self.drop_held(&id) {
                    self.calls.remove(&id);
                } else if let Some(&tab) = self.calls.get(&id) {
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
                    // The state read is the page's content: checked after the fact like a page
                    // tool's answer, against the origin the tab shows now (issue 26).
                    let shown = self.shown_origin(tab);
                    self.gate_answer(&id, shown.as_deref(), false);
                    let action = Action::ToTab {
                        tab,
                        message: serde_json::to_string(&ToPage::RequestState { id: id.clone() })
                            .expect("page messages serialize"),
                        on_reply: OnReply::State(id.clone()),
                    };
                    let bound = navigation::HELD_OTHER_MS;
                    self.send_when_loaded(tab, id, action, bound, &mut actions);
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
            } => {
                let open = Action::OpenTab {
                    id: id.clone(),
                    url,
                    tab,
                    wait_loaded_ms,
                };
                match tab {
                    // Not in the middle of a load (a form's POST would lose its answer).
                    Some(tab) => {
                        let bound = navigation::HELD_OTHER_MS;
                        self.send_when_loaded(tab, id, open, bound, &mut actions);
                    }
                    None => actions.push(open),
                }
            }
            ToExtension::Browser { id, op } => actions.push(Action::Browser { id, op }),
            // The frame itself is what the popup reads (its `grants` and `all_origins`).
            ToExtension::Grants {
                grants,
                all_origins,
            } => {
                let preload = crate::preload::preload_patterns(&grants, all_origins);
                self.recordings.set_grants(grants, all_origins);
                actions.push(Action::PersistGrants(text.to_owned()));
                if preload != self.preload {
                    self.preload = preload;
                    actions.push(Action::SyncContentScripts(self.match_patterns()));
                }
            }
            ToExtension::Agents { agents } => actions.push(Action::ShowAgents {
                frame: text.to_owned(),
                agents,
            }),
            ToExtension::GrantResult { id, changed } => actions.push(Action::AnswerPopup {
                id,
                answer: Ok(crate::popup::Answered::Grant { changed }),
            }),
            ToExtension::RecordingSaved {
                id,
                tool,
                file,
                parameters,
            } => {
                if let Some(tab) = self.recordings.saved(&id) {
                    self.forget_recording(tab, &mut actions);
                }
                actions.push(Action::AnswerPopup {
                    id,
                    answer: Ok(crate::popup::Answered::Saved {
                        tool,
                        file,
                        parameters,
                    }),
                });
            }
            ToExtension::RecordingError { id, error } => {
                self.recordings.saved(&id);
                actions.push(Action::AnswerPopup {
                    id,
                    answer: Err(error.message),
                });
            }
            ToExtension::GrantError { id, error } => actions.push(Action::AnswerPopup {
                id,
                answer: Err(error.message),
            }),
            ToExtension::Ping { nonce } => self.send(ToServer::Pong { nonce }, &mut actions),
            // Taken by `with_files`.
            ToExtension::UploadChunk { .. } | ToExtension::Pong { .. } => {}
            ToExtension::Error { in_reply_to, error } => {
                actions.push(Action::Log(format!(
                    "server reports an error (re {in_reply_to:?}): {error}"
                )));
            }
        }
        actions
    }

    /// Whether `tab`'s page waits for a person to answer one of its dialogs.
    pub fn dialog_open_in(&self, tab: TabId) -> bool {
        self.dialogs_open.contains(&tab)
    }

    /// The popup's request `id` to make `change` (checked by the glue against what `tab` shows):
    /// sent to the server now, or refused when there is no server to make it. Never queued: a
    /// grant change the user made must not happen minutes later, unseen.
    pub fn change_grant(
        &mut self,
        id: RequestId,
        change: GrantChange,
        tab: Option<TabId>,
    ) -> Result<Vec<Action>, String> {
        if self.link != LinkState::Connected {
            return Err(format!(
                "tabwire is not connected, so the change was not made: {}",
                self.problem
                    .as_ref()
                    .map_or_else(|| "it is connecting".to_owned(), |p| p.describe(self.port))
            ));
        }
        let frame = ToServer::ChangeGrant { id, change, tab }.encode();
        Ok(vec![Action::Frame(frame)])
    }

    /// The person's word about agents from the popup (issue 28): stop or allow one, or share a
    /// tab; the server decides, and its next `agents` frame shows the outcome.
    pub fn agent_request(&mut self, request: ToServer) -> Result<Vec<Action>, String> {
        if self.link != LinkState::Connected {
            return Err("tabwire is not connected, so nothing was changed".to_owned());
        }
        Ok(vec![Action::Frame(request.encode())])
    }

    /// A call with the files it puts on the page: a call declaring files waits for their
    /// chunks, and is answered here once the last one is in; any other message goes on at once.
    /// A call whose chunks are wrong fails, with nothing sent to its page.
    fn with_files(
        &mut self,
        msg: ToExtension,
        actions: &mut Vec<Action>,
    ) -> Option<(ToExtension, Vec<bridge::upload::UploadFile>)> {
        self.uploads.receive(msg).unwrap_or_else(|(id, error)| {
            self.send(ToServer::CallToolError { id, error }, actions);
            None
        })
    }

    /// Keeps call `id`'s `files` (if any) for its steps after a navigation, forgetting those of
    /// calls that ended.
    fn keep_files(&mut self, id: &str, files: &[bridge::upload::UploadFile]) {
        let calls = &self.calls;
        self.call_files.retain(|call, _| calls.contains_key(call));
        if !files.is_empty() {
            self.call_files.insert(id.to_owned(), files.to_vec());
        }
    }

    /// A page tool's call: to a tab loading another page, it waits for that page (a page tool
    /// acts on what the tab is going to show); to the focused tab (`None`), the glue looks which
    /// tab that is and comes back here with it. Once it has a tab it is a call like any other,
    /// failed when the tab closes.
    pub fn page_op(&mut self, id: RequestId, tab: Option<TabId>, call: PageCall) -> Vec<Action> {
        let mut actions = Vec::new();
        let timeout_ms = call.timeout_ms;
        let Some(tool) = call.op.tool() else {
            let error = WireError::new(ErrorCode::Protocol, "its `op` names no page tool");
            return self.fail_call(&id, error);
        };
        self.gate_answer(&id, call.origin.as_deref(), tool == ACT);
        let action = Action::PageOp {
            id: id.clone(),
            tab,
            call,
        };
        match tab {
            Some(tab) if self.dialog_open_in(tab) => {
                let error = bridge::dialog::open_in_tab(tab);
                self.send(ToServer::CallToolError { id, error }, &mut actions);
            }
            Some(tab) => {
                self.calls.insert(id.clone(), tab);
                self.send_when_loaded(tab, id, action, timeout_ms as f64, &mut actions);
            }
            None => actions.push(action),
        }
        actions
    }

    /// Marks call `id` as one whose input goes through the debugger. Past a bound, forgets the
    /// marks of calls that ended without an answer from their page (a closed tab, a timeout).
    fn trust_call(&mut self, id: &str) {
        if self.trusted_calls.len() >= MAX_TRUSTED_CALLS {
            let nav = &self.nav;
            let calls = &self.calls;
            self.trusted_calls.retain(|call| {
                calls.contains_key(call) || nav.continuations.values().any(|c| &c.id == call)
            });
        }
        self.trusted_calls.insert(id.to_owned());
    }

    /// Fails call `id` before it reached a page (no tab to send it to, or no runtime there).
    pub fn fail_call(&mut self, id: &str, error: WireError) -> Vec<Action> {
        let mut actions = Vec::new();
        self.calls.remove(id);
        let id = id.to_owned();
        self.send(ToServer::CallToolError { id, error }, &mut actions);
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
#[path = "core/page_asks_tests.rs"]
mod page_asks_tests;
#[cfg(test)]
#[path = "core/recording_tests.rs"]
mod recording_tests;
#[cfg(test)]
mod tests;

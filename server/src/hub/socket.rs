//! The socket side of the [`Hub`]: extension connections come and go, and each frame one sends
//! is decoded and applied (tabs and tools to the registry, answers to the requests waiting for
//! them, the popup's asks to the tasks that serve them). Bad input is answered, never fatal.

use bridge::{ToExtension, ToServer, WireError};
use tokio::time::Instant;

use super::inbox::Inbox;
use super::pending::Answer;
use super::{
    CallDone, ConnId, GrantRequest, Hub, OpenedTab, Outbox, PageProgress, RecordingRequest,
    StateSource,
};

impl Hub {
    /// Registers a new extension socket whose writer task drains `outbox`.
    pub fn connect(&self, outbox: Outbox) -> ConnId {
        self.change(|r| r.connect(outbox, false))
    }

    /// A connection to the hub this process is a peer of (which looks like a browser to us,
    /// and decides holds itself).
    pub fn connect_relay(&self, outbox: Outbox) -> ConnId {
        let conn = self.change(|r| r.connect(outbox, true));
        self.introduce_agents(conn);
        conn
    }

    /// The socket closed: its tabs go away and its pending requests fail at once.
    pub fn disconnect(&self, conn: ConnId) {
        self.apply(|r| r.disconnect(conn, Instant::now()));
    }

    /// Handles one text frame from `conn`. Bad input is answered, never fatal.
    pub fn handle_frame(&self, conn: ConnId, text: &str) {
        match ToServer::decode(text) {
            Ok(message) => self.handle_message(conn, message),
            Err(bad) => {
                tracing::warn!(conn, error = %bad.error, "undecodable frame from the extension");
                let error = bad.to_wire_error();
                let mut registry = self.registry();
                // A malformed answer fails its request now rather than at its timeout.
                if let Some(id) = &bad.request_id {
                    registry.resolve(conn, id, Answer::Failed(error.clone()));
                }
                registry.send(
                    conn,
                    &ToExtension::Error {
                        in_reply_to: bad.request_id,
                        error,
                    },
                );
            }
        }
    }

    /// Tells the extension this frame type is not something a server accepts.
    pub fn refuse_binary_frame(&self, conn: ConnId) {
        self.registry().send(
            conn,
            &ToExtension::Error {
                in_reply_to: None,
                error: WireError::new(
                    bridge::ErrorCode::Protocol,
                    "binary frames are not supported",
                ),
            },
        );
    }

    fn handle_message(&self, conn: ConnId, message: ToServer) {
        match message {
            ToServer::Hello {
                protocol,
                extension_version,
                instance_id,
                browser,
                code_adapters,
            } => {
                tracing::info!(conn, protocol, %extension_version, %instance_id,
                    browser = %browser.name, version = %browser.version, "extension said hello");
                crate::diagnostics::extension_said_hello(&extension_version);
                self.apply(|r| r.hello(conn, protocol, browser, code_adapters));
            }
            ToServer::ToolsSnapshot { tabs } => self.apply(|r| r.snapshot(conn, tabs)),
            ToServer::ToolsUpdated(tab) => self.apply(|r| r.update_tab(conn, tab)),
            ToServer::TabClosed { tab } => self.apply(|r| r.close_tab(conn, tab)),
            ToServer::TabNavigated { tab, url } => self.apply(|r| r.navigate_tab(conn, tab, url)),
            ToServer::TabFocused { tab } => self.apply(|r| r.focus_tab(conn, tab)),
            ToServer::ChangeGrant { id, change, tab } => {
                tracing::info!(conn, origin = %change.origin, change = %change.describe(),
                    "the popup asks to change a grant");
                let request = GrantRequest {
                    conn,
                    id: id.clone(),
                    change,
                    tab,
                };
                self.hand_over(
                    conn,
                    &self.grant_requests,
                    request,
                    "keeps no grants",
                    |error| ToExtension::GrantError { id, error },
                );
            }
            ToServer::AgentControl { agent, stop } => {
                let live = self.set_agent_stopped(&agent, stop);
                tracing::info!(
                    conn,
                    agent,
                    stop,
                    live,
                    "the person stops or allows an agent"
                );
            }
            ToServer::ShareTab { tab } => {
                let held = self.share_tab(tab);
                tracing::info!(conn, tab, held, "the person shares a tab");
            }
            ToServer::SaveRecording {
                id,
                tab,
                origin,
                start_url,
                tool,
                steps,
            } => {
                tracing::info!(conn, tab, %origin, tool = %tool.name, steps = steps.len(),
                    "the popup saves a recording");
                let request = RecordingRequest {
                    conn,
                    id: id.clone(),
                    tab,
                    origin,
                    start_url,
                    tool,
                    steps,
                };
                let saver = &self.recording_requests;
                self.hand_over(conn, saver, request, "saves no recordings", |error| {
                    ToExtension::RecordingError { id, error }
                });
            }
            ToServer::CallToolResult {
                id,
                result,
                navigated,
            } => self.answer(conn, &id, Answer::Call(Ok(CallDone { result, navigated }))),
            ToServer::CallToolError { id, error } => {
                self.answer(conn, &id, Answer::Call(Err(error)))
            }
            ToServer::OpenTabResult { id, tab, loaded } => {
                self.answer(conn, &id, Answer::OpenTab(Ok(OpenedTab { tab, loaded })))
            }
            ToServer::OpenTabError { id, error } => {
                self.answer(conn, &id, Answer::OpenTab(Err(error)))
            }
            ToServer::StateResponse { id, state } => {
                self.answer(conn, &id, Answer::State(Ok(state)))
            }
            ToServer::StateError { id, error } => self.answer(conn, &id, Answer::State(Err(error))),
            ToServer::BrowserResult { id, result } => {
                self.answer(conn, &id, Answer::Browser(Ok(result)))
            }
            ToServer::BrowserError { id, error } => {
                self.answer(conn, &id, Answer::Browser(Err(error)))
            }
            ToServer::Error {
                in_reply_to: Some(id),
                error,
            } => {
                tracing::warn!(conn, %id, %error, "the extension reported an error");
                self.answer(conn, &id, Answer::Failed(error));
            }
            ToServer::Error {
                in_reply_to: None,
                error,
            } => tracing::warn!(conn, %error, "the extension reported an error"),
            ToServer::Ping { nonce } => self.registry().send(conn, &ToExtension::Pong { nonce }),
            ToServer::Pong { .. } => {}
            ToServer::StateUpdate { tab, state, ts } => {
                tracing::trace!(conn, tab, "tab state cached");
                self.apply(|r| {
                    r.store_state(conn, tab, state, ts, StateSource::Push, Instant::now())
                })
            }
            ToServer::Progress {
                id,
                message,
                progress,
                total,
            } => {
                let report = PageProgress {
                    message,
                    progress,
                    total,
                };
                self.registry().progress(conn, &id, report);
            }
        }
    }

    /// Queues a popup's `request` for the task that serves it; when that task is gone (this
    /// tabwire is shutting down) the popup is answered at once, with `refusal`, rather than left
    /// waiting. `gone` says what this tabwire no longer does.
    fn hand_over<R>(
        &self,
        conn: ConnId,
        inbox: &Inbox<R>,
        request: R,
        gone: &str,
        refusal: impl FnOnce(WireError) -> ToExtension,
    ) {
        if inbox.send(request).is_err() {
            let error = WireError::new(
                bridge::ErrorCode::Internal,
                format!("this tabwire {gone} (it is shutting down)"),
            );
            self.send_to(conn, &refusal(error));
        }
    }

    fn answer(&self, conn: ConnId, id: &str, answer: Answer) {
        self.registry().resolve(conn, id, answer);
    }
}

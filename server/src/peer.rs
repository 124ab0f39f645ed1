//! Several MCP clients, one browser. The first `tabwire` process owns the loopback port (the
//! hub); a later one connects to it as a peer over the same WebSocket (subprotocol
//! `tabwire.peer.v3`, after both proved the secret: `bridge::handshake`) and relays at the bridge level: to its own [`Hub`] the hub
//! looks like one more browser extension (it pushes `hello`, `tools_snapshot`, `tab_focused` and
//! `state_update` frames mirroring its own tabs), and the peer's `call_tool`, `open_tab`,
//! `request_state` and `cancel` frames become calls on the hub, which gives them fresh request
//! ids toward the browser. So the MCP layer is the same in hub and peer. The hub mirrors its
//! browser only while it has one (`peer_browser_gone` when it leaves), so a peer's calls fail
//! with NOT_CONNECTED exactly when the hub's would.
//!
//! Also here: `tabwire status`'s question (subprotocol `tabwire.status.v3`) and its answer, and
//! the client side of the handshake both use: the listener must prove it knows the secret before
//! this side sends anything but its nonce.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bridge::handshake::{self, Exchange, Role};
use bridge::page::PageCall;
use bridge::protocol::{BrowserInfo, RequestId};
use bridge::upload::Assemblies;
use bridge::{ErrorCode, PROTOCOL_VERSION, ToExtension, ToServer, WireError};
use futures_util::{SinkExt, StreamExt};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderValue, header};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};

use crate::auth;
use crate::hub::agents::{self, AgentFrame, AgentName};
use crate::hub::{CallFiles, Hub, Outbox, PageProgress, TabInfo};
use crate::pairing::Secret;
use crate::ws::{FrameRate, fresh_nonce, socket_config, spawn_writer};

/// A peer that connects but does not introduce itself is dropped after this long.
const HELLO_TIMEOUT: Duration = Duration::from_secs(5);

/// A tabwire hub answers a handshake on loopback at once; a program that accepts and stays
/// silent is not one.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// How long a listener that failed its proof has to answer our close.
const CLOSE_TIMEOUT: Duration = Duration::from_millis(500);

/// A tabwire process: who a peer says it is in its first frame, and who the hub is.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PeerHello {
    pub pid: u32,
    pub version: String,
}

/// What a peer sends before bridge frames: `{"type":"peer_hello","pid":..,"version":..}`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
enum PeerFrame {
    PeerHello(PeerHello),
}

/// The peers connected to this hub, for `tabwire status`.
#[derive(Default)]
pub struct Peers {
    next: AtomicU64,
    connected: Mutex<BTreeMap<u64, PeerHello>>,
}

impl Peers {
    fn add(&self, hello: PeerHello) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.list().insert(id, hello);
        id
    }

    fn remove(&self, id: u64) {
        self.list().remove(&id);
    }

    fn list(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, PeerHello>> {
        self.connected
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// The hub's answer to `tabwire status` (never holding the secret).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Status {
    pub hub: PeerHello,
    pub port: u16,
    pub peers: Vec<PeerHello>,
    /// One per extension connection; `None` before its `hello`.
    pub browsers: Vec<Option<BrowserInfo>>,
    pub tabs: Vec<TabInfo>,
    pub tools: Vec<String>,
    /// What went wrong on the hub's browser side (a wrong pairing secret, ...).
    #[serde(default)]
    pub diagnostics: crate::diagnostics::Report,
    /// The agents (MCP sessions) of the hub and its peers, with the tabs each holds.
    #[serde(default)]
    pub agents: Vec<bridge::agents::AgentView>,
}

fn this_process() -> PeerHello {
    PeerHello {
        pid: std::process::id(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
    }
}

type Socket<S> = WebSocketStream<S>;

/// The hub's frame telling a peer that the hub's browser left: the peer drops the hub as a
/// browser connection (so its calls say NOT_CONNECTED) until the next `hello`.
const BROWSER_GONE: &str = r#"{"type":"peer_browser_gone"}"#;

/// Frames from the hub to one peer.
#[derive(Clone)]
struct PeerOutbox(Outbox);

impl PeerOutbox {
    fn send(&self, message: ToServer) -> Result<(), mpsc::error::SendError<String>> {
        self.0.send(message.encode())
    }

    fn browser_gone(&self) {
        let _ = self.0.send(BROWSER_GONE.to_owned());
    }
}

// ----- the hub side ---------------------------------------------------------------------------

/// Answers `tabwire status` with one frame, then closes.
pub async fn serve_status<S>(mut socket: Socket<S>, hub: &Hub, peers: &Peers, port: u16)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let status = Status {
        hub: this_process(),
        port,
        peers: peers.list().values().cloned().collect(),
        browsers: hub.browsers(),
        tabs: hub.tabs(),
        tools: hub
            .exported_tools()
            .iter()
            .map(|t| t.name.clone())
            .collect(),
        diagnostics: crate::diagnostics::report(),
        agents: hub.agents(),
    };
    let frame = serde_json::to_string(&status).unwrap_or_default();
    let _ = socket.send(Message::Text(Utf8Bytes::from(frame))).await;
    let _ = socket.close(None).await;
}

/// Serves one peer until its socket closes: mirrors the hub's tabs to it and runs its calls.
pub async fn serve_peer<S>(socket: Socket<S>, hub: Arc<Hub>, peers: Arc<Peers>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (sink, mut frames) = socket.split();
    let hello = match tokio::time::timeout(HELLO_TIMEOUT, frames.next()).await {
        Ok(Some(Ok(Message::Text(text)))) => serde_json::from_str::<PeerFrame>(text.as_str()),
        _ => {
            tracing::debug!("a peer closed or stayed silent before peer_hello");
            return;
        }
    };
    let hello = match hello {
        Ok(PeerFrame::PeerHello(hello)) => hello,
        Err(e) => {
            tracing::warn!(error = %e, "a peer's first frame was not peer_hello");
            return;
        }
    };
    tracing::info!(pid = hello.pid, version = %hello.version, "a tabwire peer joined");
    let pid = hello.pid;
    let peer_id = peers.add(hello);

    let (frames_out, writer) = spawn_writer(sink);
    let outbox = PeerOutbox(frames_out);
    let mirror = tokio::spawn(mirror_tabs(hub.clone(), outbox.clone()));
    let mut running: HashMap<RequestId, AbortHandle> = HashMap::new();
    // Dropped with the socket: a peer gone mid-upload leaves nothing held.
    let mut uploads: Assemblies<ToExtension> = Assemblies::default();
    let mut rate = FrameRate::default();
    let who = format!("tabwire peer {pid}");
    // Dropped with the socket: the peer's agents leave, their tabs are shared again.
    let mut agents = PeerAgents::new(hub.clone());

    while let Some(frame) = frames.next().await {
        rate.admit(&who).await;
        let text = match frame {
            Ok(Message::Text(text)) => text,
            Ok(Message::Close(_)) | Err(_) => break,
            Ok(_) => continue,
        };
        if let Some(frame) = AgentFrame::decode(text.as_str()) {
            agents.heard(frame, &outbox);
            continue;
        }
        let message = match ToExtension::decode(text.as_str()) {
            Ok(message) => message,
            Err(bad) => {
                tracing::warn!(pid, error = %bad.error, "undecodable frame from a peer");
                continue;
            }
        };
        running.retain(|_, task| !task.is_finished());
        // A call carrying files runs once their chunks are in, with the files the peer read:
        // names are resolved once, in the uploads directory of the process the client called.
        let (message, files) = match uploads.receive(message) {
            Ok(Some(ready)) => ready,
            Ok(None) => continue,
            Err((id, error)) => {
                let _ = outbox.send(ToServer::CallToolError { id, error });
                continue;
            }
        };
        let files = CallFiles::Read(files);
        // The agent (issue 28) the peer's session calls for: the hub names it, and holds and
        // stops apply to it here.
        let agent = match agents.of(text.as_str()) {
            Ok(agent) => agent,
            Err(error) => {
                if let Some(id) = request_id(&message) {
                    let _ = outbox.send(ToServer::CallToolError { id, error });
                }
                continue;
            }
        };
        let serve = Serve {
            hub: &hub,
            agent: &agent,
            outbox: &outbox,
        };
        match message {
            ToExtension::CallTool {
                id,
                tab,
                tool,
                args,
                ..
            } => {
                let work = run_call(
                    hub.clone(),
                    outbox.clone(),
                    id.clone(),
                    tab,
                    (tool, args, files),
                );
                serve.run(&mut running, id, call_error, work);
            }
            ToExtension::OpenTab {
                id,
                url,
                tab,
                wait_loaded_ms,
            } => {
                let (h, answer_id) = (hub.clone(), id.clone());
                let wait_loaded = wait_loaded_ms.map(Duration::from_millis);
                let work = async move {
                    let opened = h.open_tab(&url, tab, wait_loaded).await?;
                    Ok(ToServer::OpenTabResult {
                        id: answer_id,
                        tab: opened.tab,
                        loaded: opened.loaded,
                    })
                };
                let failed = |id, error| ToServer::OpenTabError { id, error };
                serve.run(&mut running, id, failed, work);
            }
            // A peer's page tool call: the hub runs it in its browser and answers like a call.
            ToExtension::PageOp {
                id,
                tab,
                call:
                    PageCall {
                        op,
                        doc,
                        origin,
                        trusted_input,
                        ..
                    },
                ..
            } => {
                let (h, answer_id) = (hub.clone(), id.clone());
                // The peer's permission gate decided both, from the same grants file.
                let work = async move {
                    // The peer read the client's arguments; its encoding is decoded, not re-read.
                    let op = op.decode().map_err(|e| {
                        WireError::new(ErrorCode::Protocol, format!("the peer's page_op: {e}"))
                    })?;
                    let result = h
                        .page_op(&op, tab, doc, origin, trusted_input, files)
                        .await?;
                    Ok(ToServer::CallToolResult {
                        id: answer_id,
                        result,
                        navigated: None,
                    })
                };
                serve.run(&mut running, id, call_error, work);
            }
            ToExtension::RequestState { id, tab } => {
                let (h, answer_id) = (hub.clone(), id.clone());
                let work = async move {
                    let state = h.request_state(tab).await?;
                    Ok(ToServer::StateResponse {
                        id: answer_id,
                        state,
                    })
                };
                let failed = |id, error| ToServer::StateError { id, error };
                serve.run(&mut running, id, failed, work);
            }
            ToExtension::Browser { id, op } => {
                let (h, answer_id) = (hub.clone(), id.clone());
                let work = async move {
                    let result = h.browser(op).await?;
                    Ok(ToServer::BrowserResult {
                        id: answer_id,
                        result,
                    })
                };
                let failed = |id, error| ToServer::BrowserError { id, error };
                serve.run(&mut running, id, failed, work);
            }
            // Dropping the hub's call future cancels it on the page.
            ToExtension::Cancel { id } => {
                uploads.forget(&id);
                if let Some(task) = running.remove(&id) {
                    task.abort();
                }
            }
            ToExtension::Ping { nonce } => {
                let _ = outbox.send(ToServer::Pong { nonce });
            }
            // What the peer's own hub tells the browser it sees in us: the hub has its own.
            ToExtension::Welcome { .. }
            | ToExtension::UploadChunk { .. }
            | ToExtension::AdaptersUpdated { .. }
            | ToExtension::Grants { .. }
            | ToExtension::Agents { .. }
            | ToExtension::GrantResult { .. }
            | ToExtension::GrantError { .. }
            | ToExtension::RecordingSaved { .. }
            | ToExtension::RecordingError { .. }
            | ToExtension::Pong { .. }
            | ToExtension::Error { .. } => {}
        }
    }
    for task in running.values() {
        task.abort();
    }
    mirror.abort();
    // The peer is gone: nothing queued for it matters any more.
    writer.abort();
    peers.remove(peer_id);
    tracing::info!(pid, "a tabwire peer left");
}

/// The agents of one peer's sessions, by the name the peer gave each (unique in the peer),
/// as this hub named them (unique among all agents).
struct PeerAgents {
    hub: Arc<Hub>,
    named: HashMap<String, AgentName>,
}

impl PeerAgents {
    fn new(hub: Arc<Hub>) -> PeerAgents {
        PeerAgents {
            hub,
            named: HashMap::new(),
        }
    }

    /// The agent `frame` is sent for, joining it on its first frame; `None` for a frame of
    /// no agent (`tabwire adapters test`'s own calls). A peer has at most
    /// [`MAX_AGENTS_PER_PEER`] agents.
    fn of(&mut self, frame: &str) -> Result<Option<AgentName>, WireError> {
        match agents::stamped(frame) {
            Some(local) => self.join(&local).map(Some),
            None => Ok(None),
        }
    }

    /// What the peer said of its agents: one joined (answered with the name the hub gave it),
    /// or left.
    fn heard(&mut self, frame: AgentFrame, outbox: &PeerOutbox) {
        match frame {
            AgentFrame::Join { local } => match self.join(&local) {
                Ok(name) => {
                    let name = name.to_string();
                    let _ = outbox.0.send(AgentFrame::Named { local, name }.encode());
                }
                Err(e) => tracing::warn!(error = %e.message, "a peer's agent was refused"),
            },
            AgentFrame::Leave { local } => {
                if let Some(agent) = self.named.remove(&local) {
                    self.hub.leave_agent(&agent);
                }
            }
            AgentFrame::Named { local, .. } => {
                tracing::warn!(
                    local,
                    "a peer sent agent_named, which only hubs send; ignored"
                );
            }
        }
    }

    /// The agent the peer calls `local`, joining it the first time.
    fn join(&mut self, local: &str) -> Result<AgentName, WireError> {
        if let Some(agent) = self.named.get(local) {
            return Ok(agent.clone());
        }
        if self.named.len() >= MAX_AGENTS_PER_PEER {
            return Err(WireError::new(
                ErrorCode::TooMany,
                format!("a tabwire peer may have {MAX_AGENTS_PER_PEER} agents at most"),
            ));
        }
        let agent = self.hub.join_agent(local);
        tracing::info!(agent = %agent, "a peer's session joined as an agent");
        self.named.insert(local.to_owned(), agent.clone());
        Ok(agent)
    }
}

impl Drop for PeerAgents {
    fn drop(&mut self) {
        for agent in self.named.values() {
            self.hub.leave_agent(agent);
        }
    }
}

/// The id of a peer's request (one the hub answers), for answering it with an error.
fn request_id(message: &ToExtension) -> Option<RequestId> {
    match message {
        ToExtension::CallTool { id, .. }
        | ToExtension::OpenTab { id, .. }
        | ToExtension::PageOp { id, .. }
        | ToExtension::RequestState { id, .. }
        | ToExtension::Browser { id, .. } => Some(id.clone()),
        ToExtension::Welcome { .. }
        | ToExtension::UploadChunk { .. }
        | ToExtension::Cancel { .. }
        | ToExtension::AdaptersUpdated { .. }
        | ToExtension::Grants { .. }
        | ToExtension::Agents { .. }
        | ToExtension::GrantResult { .. }
        | ToExtension::GrantError { .. }
        | ToExtension::RecordingSaved { .. }
        | ToExtension::RecordingError { .. }
        | ToExtension::Ping { .. }
        | ToExtension::Pong { .. }
        | ToExtension::Error { .. } => None,
    }
}

/// The most agents (MCP sessions) one peer process may have.
const MAX_AGENTS_PER_PEER: usize = 64;

/// The error frame a request of a stopped agent is answered with.
type StoppedAnswer = fn(RequestId, WireError) -> ToServer;

fn call_error(id: RequestId, error: WireError) -> ToServer {
    ToServer::CallToolError { id, error }
}

/// How a peer's request runs: as its agent, in a task of its own, answered with what its work
/// gives or, when it fails (its agent stopped included), with its `failed` frame.
struct Serve<'a> {
    hub: &'a Hub,
    agent: &'a Option<AgentName>,
    outbox: &'a PeerOutbox,
}

impl Serve<'_> {
    /// Runs `work` for request `id`, keeping its task in `running` for a `cancel` to abort.
    fn run(
        &self,
        running: &mut HashMap<RequestId, AbortHandle>,
        id: RequestId,
        failed: StoppedAnswer,
        work: impl std::future::Future<Output = Result<ToServer, WireError>> + Send + 'static,
    ) {
        let on_stop = {
            let (outbox, id) = (self.outbox.clone(), id.clone());
            move |error| {
                let _ = outbox.send(failed(id, error));
            }
        };
        let (outbox, answer_id) = (self.outbox.clone(), id.clone());
        let task = AgentRun::new(self.hub, self.agent.clone(), on_stop).spawn(async move {
            let answer = work.await.unwrap_or_else(|error| failed(answer_id, error));
            let _ = outbox.send(answer);
        });
        running.insert(id, task.abort_handle());
    }
}

/// A peer's request run as its agent: holds apply to it, and it ends, answered by `on_stop`,
/// when the person stops the agent.
struct AgentRun<S> {
    agent: Option<AgentName>,
    call: Option<agents::CallOf>,
    on_stop: S,
}

impl<S: FnOnce(WireError) + Send + 'static> AgentRun<S> {
    fn new(hub: &Hub, agent: Option<AgentName>, on_stop: S) -> AgentRun<S> {
        let call = agent.as_deref().and_then(|a| hub.agent_call(a));
        AgentRun {
            agent,
            call,
            on_stop,
        }
    }

    fn spawn(
        self,
        work: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> tokio::task::JoinHandle<()> {
        let AgentRun {
            agent,
            call,
            on_stop,
        } = self;
        tokio::spawn(async move {
            let Some(agent) = agent else {
                return work.await;
            };
            let error = agents::stopped_error(&agent);
            tokio::select! {
                () = agents::as_agent(agent, work) => {}
                () = agents::until_stopped_opt(call.as_ref()) => on_stop(error),
            }
        })
    }
}

async fn run_call(
    hub: Arc<Hub>,
    outbox: PeerOutbox,
    id: RequestId,
    tab: bridge::TabId,
    (tool, args, files): (String, serde_json::Value, CallFiles),
) -> Result<ToServer, WireError> {
    let (progress, mut reports) = mpsc::unbounded_channel::<PageProgress>();
    let forward = {
        let (outbox, id) = (outbox.clone(), id.clone());
        async move {
            while let Some(report) = reports.recv().await {
                let _ = outbox.send(ToServer::Progress {
                    id: id.clone(),
                    message: report.message,
                    progress: report.progress,
                    total: report.total,
                });
            }
        }
    };
    let call = hub.call_tool_carrying(&tool, args, Some(tab), Some(progress), files);
    let (answer, ()) = tokio::join!(call, forward);
    let done = answer?;
    Ok(ToServer::CallToolResult {
        id,
        result: done.result,
        navigated: done.navigated,
    })
}

/// Once a browser has told the hub its tabs, pushes `hello`, then the hub's tabs whenever they
/// change, and each tab's new state. (Until then the peer has no browser either, so its
/// calls fail with NOT_CONNECTED and its first `tools/list` waits for the browser, as the
/// hub's do.)
async fn mirror_tabs(hub: Arc<Hub>, outbox: PeerOutbox) {
    let mut tabs_changed = hub.subscribe_tabs();
    let mut states = hub.subscribe_states();
    loop {
        while !hub.browser_ready() {
            if tabs_changed.changed().await.is_err() {
                return;
            }
        }
        let browser = hub
            .browsers()
            .into_iter()
            .flatten()
            .next()
            .unwrap_or_default();
        let _ = outbox.send(ToServer::Hello {
            protocol: PROTOCOL_VERSION,
            extension_version: format!("tabwire hub {}", env!("CARGO_PKG_VERSION")),
            instance_id: format!("hub-{}", std::process::id()),
            browser,
            code_adapters: hub.code_adapters(),
        });
        for tab in hub.tabs_with_state() {
            send_state(&hub, &outbox, tab);
        }
        let mut last_sent = None;
        loop {
            tabs_changed.mark_unchanged();
            if !hub.browser_ready() {
                break;
            }
            let current = hub.tab_tools();
            if last_sent.as_ref() != Some(&current) {
                let (tabs, focused) = current.clone();
                let _ = outbox.send(ToServer::ToolsSnapshot { tabs });
                if let Some(tab) = focused {
                    let _ = outbox.send(ToServer::TabFocused { tab });
                }
                last_sent = Some(current);
            }
            tokio::select! {
                changed = tabs_changed.changed() => if changed.is_err() { return },
                tab = states.recv() => match tab {
                    Ok(tab) => send_state(&hub, &outbox, tab),
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        for tab in hub.tabs_with_state() {
                            send_state(&hub, &outbox, tab);
                        }
                    }
                    Err(_) => return,
                },
            }
        }
        outbox.browser_gone();
    }
}

fn send_state(hub: &Hub, outbox: &PeerOutbox, tab: bridge::TabId) {
    if let Some(cached) = hub.cached_state(tab) {
        let _ = outbox.send(ToServer::StateUpdate {
            tab,
            state: cached.state,
            ts: cached.page_ts,
        });
    }
}

// ----- the peer side --------------------------------------------------------------------------

/// Why another tabwire process could not be reached on the port.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// Nothing listens there (any more).
    #[error("no tabwire hub is running on 127.0.0.1:{0}")]
    NoHub(u16),
    /// Something listens but did not prove it knows the pairing secret. It was sent nothing
    /// but a nonce.
    #[error(
        "something else is listening on port {0} of 127.0.0.1: it did not prove it knows the \
         pairing secret (another program, a tabwire paired with another secret, or an older \
         tabwire), so it was told nothing"
    )]
    Unproven(u16),
}

/// Opens a WebSocket to the hub on `port` as `role` (peer or status), and runs the client side
/// of the handshake: nothing but a fresh nonce goes out before the hub proved it knows the
/// secret; then this side proves it back.
pub async fn connect(
    port: u16,
    secret: &Secret,
    role: Role,
) -> Result<Socket<TcpStream>, ConnectError> {
    let stream = TcpStream::connect(("127.0.0.1", port))
        .await
        .map_err(|_| ConnectError::NoHub(port))?;
    let _ = stream.set_nodelay(true);
    let unproven = ConnectError::Unproven(port);
    let nonce = fresh_nonce();
    let mut request = format!("ws://127.0.0.1:{port}/")
        .into_client_request()
        .map_err(|_| ConnectError::Unproven(port))?;
    let offered = format!("{}, {}", role.subprotocol(), nonce.subprotocol());
    let offered = HeaderValue::from_str(&offered).map_err(|_| ConnectError::Unproven(port))?;
    request
        .headers_mut()
        .insert(header::SEC_WEBSOCKET_PROTOCOL, offered);
    request
        .headers_mut()
        .insert(header::ORIGIN, HeaderValue::from_static(auth::PEER_ORIGIN));
    let proved = async {
        let (mut socket, _) =
            tokio_tungstenite::client_async_with_config(request, stream, Some(socket_config()))
                .await
                .map_err(|e| tracing::debug!(error = %e, "peer handshake failed"))?;
        let first = match socket.next().await {
            Some(Ok(Message::Text(text))) => text,
            _ => return Err(()),
        };
        let checked =
            Exchange::accept_server_proof(role, port, nonce, secret.expose(), first.as_str());
        let exchange = match checked {
            Ok(exchange) => exchange,
            Err(e) => {
                tracing::debug!(error = %e, "the listener's proof did not check");
                let close = CloseFrame {
                    code: CloseCode::from(handshake::CLOSE_UNPROVEN),
                    reason: Utf8Bytes::from_static("the listener did not prove the secret"),
                };
                // Close politely (the close frame says why), without waiting long for the answer.
                let closing = async {
                    let _ = socket.close(Some(close)).await;
                    while let Some(Ok(_)) = socket.next().await {}
                };
                let _ = tokio::time::timeout(CLOSE_TIMEOUT, closing).await;
                return Err(());
            }
        };
        let answer = exchange.client_proof_frame(secret.expose());
        socket
            .send(Message::Text(Utf8Bytes::from(answer)))
            .await
            .map_err(|_| ())?;
        Ok(socket)
    };
    match tokio::time::timeout(CONNECT_TIMEOUT, proved).await {
        Ok(Ok(socket)) => Ok(socket),
        Ok(Err(())) | Err(_) => Err(unproven),
    }
}

/// Relays between the hub behind `socket` and this process's own `hub`, to which the remote
/// hub is one more browser connection. Returns when the hub's socket closes.
pub async fn relay(socket: Socket<TcpStream>, hub: &Hub) {
    let (mut sink, mut frames) = socket.split();
    let hello = serde_json::to_string(&PeerFrame::PeerHello(this_process())).unwrap_or_default();
    if sink
        .send(Message::Text(Utf8Bytes::from(hello)))
        .await
        .is_err()
    {
        return;
    }
    let (outbox, writer) = spawn_writer(sink);
    // The hub's browser becomes ours with the hub's first frame (its `hello`).
    let mut conn = None;
    while let Some(frame) = frames.next().await {
        match frame {
            Ok(Message::Text(text)) if text.as_str() == BROWSER_GONE => {
                if let Some(conn) = conn.take() {
                    hub.disconnect(conn);
                }
            }
            Ok(Message::Text(text)) => {
                let conn = *conn.get_or_insert_with(|| hub.connect_relay(outbox.clone()));
                match AgentFrame::decode(text.as_str()) {
                    Some(named) => hub.hub_named(named),
                    None => hub.handle_frame(conn, text.as_str()),
                }
            }
            Ok(Message::Close(_)) | Err(_) => break,
            Ok(_) => {}
        }
    }
    if let Some(conn) = conn {
        hub.disconnect(conn);
    }
    writer.abort();
}

/// Asks the hub on `port` for its status.
pub async fn fetch_status(port: u16, secret: &Secret) -> Result<Status, StatusError> {
    let mut socket = connect(port, secret, Role::Status).await?;
    let frame = tokio::time::timeout(HELLO_TIMEOUT, socket.next())
        .await
        .map_err(|_| StatusError::NoAnswer)?;
    match frame {
        Some(Ok(Message::Text(text))) => {
            serde_json::from_str(text.as_str()).map_err(|e| StatusError::Bad(e.to_string()))
        }
        _ => Err(StatusError::NoAnswer),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    #[error(transparent)]
    Connect(#[from] ConnectError),
    #[error("the hub did not answer the status request")]
    NoAnswer,
    #[error("the hub's status answer is malformed: {0}")]
    Bad(String),
}

/// The status as `tabwire status` prints it.
pub fn render_status(status: &Status) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "hub: pid {}, tabwire {}, ws://127.0.0.1:{}/",
        status.hub.pid, status.hub.version, status.port
    );
    let _ = writeln!(out, "peers: {}", status.peers.len());
    for peer in &status.peers {
        let _ = writeln!(out, "  peer: pid {}, tabwire {}", peer.pid, peer.version);
    }
    let _ = writeln!(out, "browsers: {}", status.browsers.len());
    for browser in &status.browsers {
        match browser {
            Some(b) => {
                let _ = writeln!(out, "  browser: {} {}", b.name, b.version);
            }
            None => {
                let _ = writeln!(out, "  browser: (not introduced yet)");
            }
        }
    }
    let _ = writeln!(out, "tabs: {}", status.tabs.len());
    for tab in &status.tabs {
        let _ = writeln!(
            out,
            "  tab {}{}: {} {:?} tools: {}",
            tab.id,
            if tab.focused { " (focused)" } else { "" },
            tab.url,
            tab.title,
            tab.tools.join(", ")
        );
    }
    let _ = writeln!(out, "tools: {}", status.tools.join(", "));
    let _ = writeln!(out, "agents: {}", status.agents.len());
    for agent in &status.agents {
        let tabs: Vec<String> = agent.tabs.iter().map(ToString::to_string).collect();
        let _ = writeln!(
            out,
            "  agent {} ({:?}){}, {} running: tabs {}",
            agent.name,
            agent.client,
            if agent.stopped { " stopped" } else { "" },
            agent.running,
            match tabs.is_empty() {
                true => "none".to_owned(),
                false => tabs.join(", "),
            }
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_hello_has_a_fixed_wire_shape() {
        let frame = PeerFrame::PeerHello(PeerHello {
            pid: 42,
            version: "0.1.0".into(),
        });
        let text = serde_json::to_string(&frame).unwrap();
        assert_eq!(text, r#"{"type":"peer_hello","pid":42,"version":"0.1.0"}"#);
        assert_eq!(serde_json::from_str::<PeerFrame>(&text).unwrap(), frame);
        // Anything else as a first frame is not a peer's hello.
        for other in [
            r#"{"type":"hello","pid":1,"version":""}"#,
            r#"{"type":"peer_hello"}"#,
            r#"{"pid":1,"version":""}"#,
        ] {
            assert!(serde_json::from_str::<PeerFrame>(other).is_err(), "{other}");
        }
    }

    #[test]
    fn status_lists_hub_peers_browsers_tabs_and_tools() {
        let status = Status {
            hub: PeerHello {
                pid: 10,
                version: "0.1.0".into(),
            },
            port: 17373,
            peers: vec![PeerHello {
                pid: 11,
                version: "0.1.0".into(),
            }],
            browsers: vec![
                Some(BrowserInfo {
                    name: "Chrome".into(),
                    version: "140".into(),
                    user_agent: String::new(),
                }),
                None,
            ],
            tabs: vec![TabInfo {
                id: 7,
                url: "http://127.0.0.1/".into(),
                title: "TodoMVC".into(),
                tools: vec!["todomvc_add_todo".into()],
                focused: true,
                runtime: None,
            }],
            tools: vec!["todomvc_add_todo".into()],
            diagnostics: Default::default(),
            agents: vec![bridge::agents::AgentView {
                name: "claude-code-2".into(),
                client: "claude-code".into(),
                stopped: true,
                tabs: vec![7],
                running: 2,
            }],
        };
        assert_eq!(
            render_status(&status),
            "hub: pid 10, tabwire 0.1.0, ws://127.0.0.1:17373/\n\
             peers: 1\n  peer: pid 11, tabwire 0.1.0\n\
             browsers: 2\n  browser: Chrome 140\n  browser: (not introduced yet)\n\
             tabs: 1\n  tab 7 (focused): http://127.0.0.1/ \"TodoMVC\" tools: todomvc_add_todo\n\
             tools: todomvc_add_todo\n\
             agents: 1\n  agent claude-code-2 (\"claude-code\") stopped, 2 running: tabs 7\n"
        );
    }
}

//! The browser side of tabwire, independent of MCP and of the socket library: the connected
//! extensions (each reached through the outbox of its socket's writer task), their tabs and
//! tools, the requests waiting for an answer, and the routing of calls to tabs.
//!
//! Every request is correlated by a UUID, bounded by a timeout (then cancelled on the page) and
//! never lost silently: a closed tab, a closed socket or a bad frame fails it at once.
//! Any change to the exported tool set bumps a `watch` generation counter that the MCP side
//! turns into `tools/list_changed`. Each tab's last `state_update` is cached here (the
//! "hybrid" state design) and every change to it is broadcast for resource subscribers.
//! A request's timeout restarts whenever its page reports progress, up to a hard ceiling.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bridge::adapter::Adapter;
use bridge::protocol::{
    AdapterMatch, BrowserInfo, LoadedPage, RequestId, RuntimeKind, TabTools, ToolSpec,
};
use bridge::{ErrorCode, PROTOCOL_VERSION, TabId, ToExtension, ToServer, WireError};
use serde_json::Value;
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::time::Instant;

/// A call's timeout restarts on progress, but the call never runs longer than this many
/// timeouts in all.
const PROGRESS_CEILING_FACTOR: u32 = 4;

/// How many closed tab ids are remembered, so that a call naming one fails with TAB_CLOSED.
const CLOSED_TABS_REMEMBERED: usize = 256;
/// How long after its browser connection dropped a tab is expected back: a stopped service worker
/// restarts, reconnects and re-announces its tabs well within this (RELIABILITY.md). A call to such a
/// tab meanwhile waits for it instead of answering that there is no such tab.
const REANNOUNCE_GRACE: Duration = Duration::from_secs(2);
/// At most this many tabs of dropped connections are awaited (a browser with more tabs than that
/// still gets its most recent ones back without a NO_SUCH_TAB).
const ORPHANS_REMEMBERED: usize = 1024;

/// Identifies one extension connection (one socket) for the life of the process.
pub type ConnId = u64;

/// Tabs one browser connection (or peer) may register; more are refused with `TOO_MANY`.
pub const MAX_TABS_PER_CONNECTION: usize = 512;
/// Tools one tab may offer; more are dropped (the worker keeps 128 per tab too).
pub const MAX_TOOLS_PER_TAB: usize = 128;
/// Requests waiting for the browser at once; more fail with `TOO_MANY` at once.
pub const MAX_PENDING: usize = 1024;

/// Encoded frames on their way to one socket's writer task.
pub type Outbox = mpsc::UnboundedSender<String>;

/// Whether tabwire could open its WebSocket port; decides what `NOT_CONNECTED` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Link {
    Listening,
    /// Something that cannot prove it knows the secret holds the port. We never take it from
    /// them, and tell them nothing.
    PortInUse,
    Failed(String),
}

#[derive(Debug, Clone)]
pub struct HubConfig {
    pub port: u16,
    pub call_timeout: Duration,
    /// This process, as told to the extension in `welcome`.
    pub instance_id: String,
    pub adapters: Vec<Adapter>,
}

/// A tab as `browser_tabs` shows it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TabInfo {
    pub id: TabId,
    pub url: String,
    pub title: String,
    pub tools: Vec<String>,
    /// The most recently focused tab (the one per-site tools go to by default).
    pub focused: bool,
    /// Which injector build runs there: `wasm`, or `js` on pages whose CSP forbids wasm.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime: Option<RuntimeKind>,
}

/// A page's report on a long request (`progress` frame).
#[derive(Debug, Clone, PartialEq)]
pub struct PageProgress {
    pub message: Option<String>,
    pub progress: Option<f64>,
    pub total: Option<f64>,
}

/// Where a state answer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StateSource {
    /// Pushed by the page (`state_update`) after a state-changing call or on load.
    Push,
    /// Asked of the page (`request_state`).
    Page,
}

/// A tab's last known adapter state.
#[derive(Debug, Clone)]
pub struct CachedState {
    pub state: Value,
    /// The page's own timestamp (ms since the epoch) for `state_update`s, 0 for answers.
    pub page_ts: u64,
    pub received: Instant,
    pub source: StateSource,
    /// The tab closed after reporting it: this is its last state, kept readable (for as long as
    /// the tab is among the recently closed ones).
    pub tab_closed: bool,
}

/// A tab `open_tab` opened, and what the extension saw of its page once it had loaded (`None`:
/// not loaded within the wait, or an extension that does not tell).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpenedTab {
    pub tab: TabId,
    pub loaded: Option<LoadedPage>,
}

/// How waiting for a tab's tools ended.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolsWait {
    Registered(Vec<String>),
    TabClosed,
    TimedOut,
}

pub struct Hub {
    config: HubConfig,
    /// The adapters served now (live reload replaces them) and `welcome` encoded with them.
    adapters: Mutex<(Arc<Vec<Adapter>>, String)>,
    state: Mutex<State>,
    /// Bumped when the exported tool set changes.
    tools_generation: watch::Sender<u64>,
    /// Bumped on every change to connections or tabs (what waiters re-check).
    tabs_generation: watch::Sender<u64>,
    /// The tab whose cached state changed (set, replaced or dropped).
    state_changes: broadcast::Sender<TabId>,
}

#[derive(Default)]
struct State {
    /// `None` until the listener has tried the port.
    link: Option<Link>,
    next_conn: ConnId,
    connections: HashMap<ConnId, Connection>,
    tabs: HashMap<TabId, Tab>,
    pending: HashMap<RequestId, Pending>,
    /// A logical clock ordering focus and registration events.
    clock: u64,
    /// The tools offered to MCP clients, one per name (from the highest-ranked tab offering it).
    exported: BTreeMap<String, Arc<ToolSpec>>,
    /// Each tab's last state, with the connection that reported it.
    states: HashMap<TabId, (ConnId, CachedState)>,
    /// Recently closed tabs, oldest first.
    closed_tabs: VecDeque<TabId>,
    /// Tabs whose connection dropped lately, oldest first, with when: the browser may re-announce
    /// them once it reconnects.
    orphans: VecDeque<(TabId, Instant)>,
}

struct Connection {
    outbox: Outbox,
    browser: Option<BrowserInfo>,
    /// It sent `tools_snapshot`, so its tabs are known.
    snapshot_seen: bool,
    /// The code adapters its `hello` named.
    code_adapters: Vec<AdapterMatch>,
    /// It was told that tabs over the bound were refused (logged once).
    refused_tabs: bool,
}

struct Tab {
    conn: ConnId,
    url: String,
    title: String,
    tools: Vec<Arc<ToolSpec>>,
    runtime: Option<RuntimeKind>,
    /// Clock of the last `tab_focused` (0: never).
    focused_at: u64,
    /// Clock of the last registration of its tools.
    registered_at: u64,
}

impl Tab {
    /// Per-site calls without `tab_id` go to the highest rank: the most recently focused
    /// tab, else the most recently registered.
    fn rank(&self) -> (u64, u64) {
        (self.focused_at, self.registered_at)
    }

    fn offers(&self, tool: &str) -> bool {
        self.tools.iter().any(|t| t.name == tool)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RequestKind {
    CallTool,
    OpenTab,
    State,
}

struct Pending {
    conn: ConnId,
    tab: Option<TabId>,
    kind: RequestKind,
    reply: oneshot::Sender<Result<Value, WireError>>,
    /// Where the page's `progress` frames for this request go.
    progress: mpsc::UnboundedSender<PageProgress>,
}

/// What a started request waits on.
struct Started {
    id: RequestId,
    answer: oneshot::Receiver<Result<Value, WireError>>,
    progress: mpsc::UnboundedReceiver<PageProgress>,
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    // The state stays consistent between statements, so a panic elsewhere must not take
    // the browser side down with it.
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Hub {
    pub fn new(config: HubConfig) -> Hub {
        let adapters = Mutex::new(welcome(&config, config.adapters.clone()));
        Hub {
            config,
            adapters,
            state: Mutex::default(),
            tools_generation: watch::Sender::new(0),
            tabs_generation: watch::Sender::new(0),
            state_changes: broadcast::Sender::new(256),
        }
    }

    pub fn adapters(&self) -> Arc<Vec<Adapter>> {
        self.adapters
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .0
            .clone()
    }

    /// Live reload: serve `adapters` from now on and push them to every connected extension,
    /// whose tabs then announce their tools again (which moves the tool generation).
    pub fn set_adapters(&self, adapters: Vec<Adapter>) {
        let frame = ToExtension::AdaptersUpdated {
            adapters: adapters.clone(),
        }
        .encode();
        *self.adapters.lock().unwrap_or_else(PoisonError::into_inner) =
            welcome(&self.config, adapters);
        for c in lock(&self.state).connections.values() {
            let _ = c.outbox.send(frame.clone());
        }
    }

    pub fn set_link(&self, link: Link) {
        lock(&self.state).link = Some(link);
    }

    /// The current tool generation (see [`Hub::subscribe_tools`]).
    pub fn tools_generation(&self) -> u64 {
        *self.tools_generation.borrow()
    }

    /// Watches the exported tool set: the value changes whenever the set does.
    pub fn subscribe_tools(&self) -> watch::Receiver<u64> {
        self.tools_generation.subscribe()
    }

    /// Watches the tabs: the value changes whenever a tab or connection does.
    pub fn subscribe_tabs(&self) -> watch::Receiver<u64> {
        self.tabs_generation.subscribe()
    }

    /// Receives the id of each tab whose cached state changes.
    pub fn subscribe_states(&self) -> broadcast::Receiver<TabId> {
        self.state_changes.subscribe()
    }

    // ----- the socket side ------------------------------------------------------------------

    /// Registers a new extension socket whose writer task drains `outbox`.
    pub fn connect(&self, outbox: Outbox) -> ConnId {
        let mut st = lock(&self.state);
        st.next_conn += 1;
        let conn = st.next_conn;
        st.connections.insert(
            conn,
            Connection {
                outbox,
                browser: None,
                snapshot_seen: false,
                code_adapters: Vec::new(),
                refused_tabs: false,
            },
        );
        drop(st);
        self.tabs_generation.send_modify(|g| *g += 1);
        conn
    }

    /// The socket closed: its tabs go away and its pending requests fail at once.
    pub fn disconnect(&self, conn: ConnId) {
        let mut st = lock(&self.state);
        if st.connections.remove(&conn).is_none() {
            return;
        }
        let now = Instant::now();
        let lost: Vec<TabId> = st
            .tabs
            .iter()
            .filter(|(_, tab)| tab.conn == conn)
            .map(|(id, _)| *id)
            .collect();
        st.orphans.extend(lost.into_iter().map(|tab| (tab, now)));
        while st.orphans.len() > ORPHANS_REMEMBERED
            || st
                .orphans
                .front()
                .is_some_and(|(_, at)| *at + REANNOUNCE_GRACE < now)
        {
            st.orphans.pop_front();
        }
        st.tabs.retain(|_, tab| tab.conn != conn);
        let dropped_states = drop_states(&mut st, |c, _| c == conn);
        let failed = take_pending(&mut st, |p| p.conn == conn);
        let tools_changed = self.refresh_exported(&mut st);
        drop(st);
        self.announce_states(dropped_states);
        for pending in failed {
            let _ = pending.reply.send(Err(WireError::new(
                ErrorCode::NotConnected,
                "the browser extension disconnected during the call (its service worker \
                 stopped, or the browser closed); retry once it reconnects (browser_tabs shows it)",
            )));
        }
        self.bump(tools_changed);
    }

    /// Handles one text frame from `conn`. Bad input is answered, never fatal.
    pub fn handle_frame(&self, conn: ConnId, text: &str) {
        match ToServer::decode(text) {
            Ok(message) => self.handle_message(conn, message),
            Err(bad) => {
                tracing::warn!(conn, error = %bad.error, "undecodable frame from the extension");
                let error = bad.to_wire_error();
                // A malformed answer fails its request now rather than at its timeout.
                if let Some(id) = &bad.request_id {
                    self.resolve(conn, id, None, Err(error.clone()));
                }
                self.send_to(
                    conn,
                    ToExtension::Error {
                        in_reply_to: bad.request_id,
                        error,
                    },
                );
            }
        }
    }

    /// Tells the extension this frame type is not something a server accepts.
    pub fn refuse_binary_frame(&self, conn: ConnId) {
        self.send_to(
            conn,
            ToExtension::Error {
                in_reply_to: None,
                error: WireError::new(ErrorCode::Protocol, "binary frames are not supported"),
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
                if protocol != PROTOCOL_VERSION {
                    tracing::warn!(
                        conn,
                        protocol,
                        ours = PROTOCOL_VERSION,
                        "protocol versions differ"
                    );
                }
                let welcome_frame = self
                    .adapters
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .1
                    .clone();
                let mut st = lock(&self.state);
                if let Some(c) = st.connections.get_mut(&conn) {
                    c.browser = Some(browser);
                    c.code_adapters = code_adapters;
                    let _ = c.outbox.send(welcome_frame);
                }
            }
            ToServer::ToolsSnapshot { tabs } => self.snapshot(conn, tabs),
            ToServer::ToolsUpdated(tab) => self.update_tab(conn, tab),
            ToServer::TabClosed { tab } => self.close_tab(conn, tab),
            ToServer::TabNavigated { tab, url } => self.navigate_tab(conn, tab, url),
            ToServer::TabFocused { tab } => self.focus_tab(conn, tab),
            ToServer::CallToolResult { id, result } => {
                self.resolve(conn, &id, Some(RequestKind::CallTool), Ok(result))
            }
            ToServer::CallToolError { id, error } => {
                self.resolve(conn, &id, Some(RequestKind::CallTool), Err(error))
            }
            ToServer::OpenTabResult { id, tab, loaded } => self.resolve(
                conn,
                &id,
                Some(RequestKind::OpenTab),
                Ok(serde_json::json!({"tab": tab, "loaded": loaded})),
            ),
            ToServer::OpenTabError { id, error } => {
                self.resolve(conn, &id, Some(RequestKind::OpenTab), Err(error))
            }
            ToServer::Error {
                in_reply_to: Some(id),
                error,
            } => {
                tracing::warn!(conn, %id, %error, "the extension reported an error");
                self.resolve(conn, &id, None, Err(error));
            }
            ToServer::Error {
                in_reply_to: None,
                error,
            } => tracing::warn!(conn, %error, "the extension reported an error"),
            ToServer::Ping { nonce } => self.send_to(conn, ToExtension::Pong { nonce }),
            ToServer::Pong { .. } => {}
            ToServer::StateResponse { id, state } => {
                self.resolve(conn, &id, Some(RequestKind::State), Ok(state))
            }
            ToServer::StateError { id, error } => {
                self.resolve(conn, &id, Some(RequestKind::State), Err(error))
            }
            ToServer::StateUpdate { tab, state, ts } => {
                self.store_state(conn, tab, state, ts, StateSource::Push)
            }
            ToServer::Progress {
                id,
                message,
                progress,
                total,
            } => self.progress(
                conn,
                &id,
                PageProgress {
                    message,
                    progress,
                    total,
                },
            ),
        }
    }

    fn snapshot(&self, conn: ConnId, tabs: Vec<TabTools>) {
        // The adapters served now (live reload may have replaced the startup ones), taken before
        // the state lock so the two locks are never held in the other order.
        let adapters = self.adapters();
        let mut st = lock(&self.state);
        let Some(c) = st.connections.get_mut(&conn) else {
            return;
        };
        c.snapshot_seen = true;
        // Keep the focus order of tabs that survive the snapshot.
        let focus: HashMap<TabId, u64> = st
            .tabs
            .iter()
            .filter(|(_, t)| t.conn == conn)
            .map(|(id, t)| (*id, t.focused_at))
            .collect();
        st.tabs.retain(|_, t| t.conn != conn);
        let offered = tabs.len();
        for tab in tabs.into_iter().take(MAX_TABS_PER_CONNECTION) {
            let focused_at = focus.get(&tab.tab).copied().unwrap_or(0);
            register(&mut st, conn, vet_tools(&adapters, tab), focused_at);
        }
        let tools_changed = self.refresh_exported(&mut st);
        drop(st);
        if offered > MAX_TABS_PER_CONNECTION {
            self.refuse_tabs(conn, offered - MAX_TABS_PER_CONNECTION);
        }
        self.bump(tools_changed);
    }

    fn update_tab(&self, conn: ConnId, tab: TabTools) {
        let adapters = self.adapters();
        let mut st = lock(&self.state);
        if !st.connections.contains_key(&conn) {
            return;
        }
        let known = st.tabs.get(&tab.tab).filter(|t| t.conn == conn);
        let focused_at = known.map_or(0, |t| t.focused_at);
        if known.is_none() && tabs_of(&st, conn) >= MAX_TABS_PER_CONNECTION {
            drop(st);
            return self.refuse_tabs(conn, 1);
        }
        register(&mut st, conn, vet_tools(&adapters, tab), focused_at);
        let tools_changed = self.refresh_exported(&mut st);
        drop(st);
        self.bump(tools_changed);
    }

    /// Tells the connection (and the log, once per connection) that `count` tabs were refused.
    fn refuse_tabs(&self, conn: ConnId, count: usize) {
        let mut st = lock(&self.state);
        let Some(c) = st.connections.get_mut(&conn) else {
            return;
        };
        if !std::mem::replace(&mut c.refused_tabs, true) {
            tracing::warn!(
                conn,
                "a browser connection reports more than {MAX_TABS_PER_CONNECTION} tabs with tools: \
                 the rest are refused"
            );
        }
        let error = WireError::new(
            ErrorCode::TooMany,
            format!(
                "{count} tab(s) refused: a browser connection may report at most \
                 {MAX_TABS_PER_CONNECTION} tabs with tools"
            ),
        );
        let _ = c.outbox.send(
            ToExtension::Error {
                in_reply_to: None,
                error,
            }
            .encode(),
        );
    }

    fn close_tab(&self, conn: ConnId, tab: TabId) {
        let mut st = lock(&self.state);
        if st.tabs.get(&tab).is_some_and(|t| t.conn == conn) {
            st.tabs.remove(&tab);
            st.closed_tabs.push_back(tab);
            if st.closed_tabs.len() > CLOSED_TABS_REMEMBERED
                && let Some(forgotten) = st.closed_tabs.pop_front()
            {
                st.states.remove(&forgotten);
            }
        }
        // Its last state stays readable, marked as a closed tab's.
        let mut closed_states = Vec::new();
        if let Some((c, cached)) = st.states.get_mut(&tab)
            && *c == conn
        {
            cached.tab_closed = true;
            closed_states.push(tab);
        }
        let failed = take_pending(&mut st, |p| p.conn == conn && p.tab == Some(tab));
        let tools_changed = self.refresh_exported(&mut st);
        drop(st);
        self.announce_states(closed_states);
        for pending in failed {
            let _ = pending.reply.send(Err(WireError::new(
                ErrorCode::TabClosed,
                format!("tab {tab} was closed during the call"),
            )));
        }
        self.bump(tools_changed);
    }

    /// The tab shows another page: tools of adapters that do not serve the new URL are gone.
    /// (Tools that still apply stay until the page registers again, so a same-site navigation
    /// never makes the tool list flicker.)
    fn navigate_tab(&self, conn: ConnId, tab: TabId, url: String) {
        let mut st = lock(&self.state);
        let Some(t) = st.tabs.get_mut(&tab).filter(|t| t.conn == conn) else {
            return;
        };
        let adapters = self.adapters();
        t.tools.retain(|tool| {
            adapters
                .iter()
                .any(|a| a.name == tool.adapter && a.matches_url(&url))
        });
        t.url = url;
        // The state described the page the tab showed before; the new page pushes its own.
        let dropped_states = drop_states(&mut st, |c, t| c == conn && t == tab);
        let tools_changed = self.refresh_exported(&mut st);
        drop(st);
        self.announce_states(dropped_states);
        self.bump(tools_changed);
    }

    /// Caches `tab`'s state and tells subscribers.
    fn store_state(
        &self,
        conn: ConnId,
        tab: TabId,
        state: Value,
        page_ts: u64,
        source: StateSource,
    ) {
        let mut st = lock(&self.state);
        if !st.connections.contains_key(&conn) {
            return;
        }
        let cached = CachedState {
            state,
            page_ts,
            received: Instant::now(),
            source,
            tab_closed: st.closed_tabs.contains(&tab),
        };
        st.states.insert(tab, (conn, cached));
        drop(st);
        tracing::trace!(conn, tab, ?source, "tab state cached");
        let _ = self.state_changes.send(tab);
    }

    fn announce_states(&self, tabs: Vec<TabId>) {
        for tab in tabs {
            let _ = self.state_changes.send(tab);
        }
    }

    /// Passes a page's progress report to whoever waits for request `id`.
    fn progress(&self, conn: ConnId, id: &str, report: PageProgress) {
        let st = lock(&self.state);
        match st.pending.get(id) {
            Some(pending) if pending.conn == conn => {
                let _ = pending.progress.send(report);
            }
            _ => tracing::debug!(conn, %id, "progress for an unknown or finished request; dropped"),
        }
    }

    fn focus_tab(&self, conn: ConnId, tab: TabId) {
        let mut st = lock(&self.state);
        if !st.connections.contains_key(&conn) {
            return;
        }
        st.clock += 1;
        let now = st.clock;
        st.tabs
            .entry(tab)
            .or_insert_with(|| Tab {
                conn,
                url: String::new(),
                title: String::new(),
                tools: Vec::new(),
                runtime: None,
                focused_at: 0,
                registered_at: 0,
            })
            .focused_at = now;
        let tools_changed = self.refresh_exported(&mut st);
        drop(st);
        self.bump(tools_changed);
    }

    /// Delivers an answer to whoever waits for request `id`; answers for requests that
    /// finished already (late after a timeout) or belong to another socket are dropped.
    fn resolve(
        &self,
        conn: ConnId,
        id: &str,
        answers: Option<RequestKind>,
        outcome: Result<Value, WireError>,
    ) {
        let mut st = lock(&self.state);
        let Some(pending) = st.pending.get(id) else {
            drop(st);
            tracing::debug!(conn, %id, "answer for an unknown or finished request; dropped");
            return;
        };
        if pending.conn != conn {
            drop(st);
            tracing::warn!(conn, %id, "answer from a socket the request was not sent to; dropped");
            return;
        }
        let Some(pending) = st.pending.remove(id) else {
            return;
        };
        drop(st);
        let outcome = match answers {
            Some(kind) if kind != pending.kind => Err(WireError::new(
                ErrorCode::Protocol,
                format!(
                    "the extension answered a {:?} request with a {kind:?} answer",
                    pending.kind
                ),
            )),
            _ => outcome,
        };
        let _ = pending.reply.send(outcome);
    }

    fn send_to(&self, conn: ConnId, message: ToExtension) {
        let st = lock(&self.state);
        if let Some(c) = st.connections.get(&conn) {
            let _ = c.outbox.send(message.encode());
        }
    }

    /// Recomputes the exported tool set; true when it changed.
    fn refresh_exported(&self, st: &mut State) -> bool {
        let mut tabs: Vec<&Tab> = st.tabs.values().filter(|t| !t.tools.is_empty()).collect();
        tabs.sort_by_key(|t| std::cmp::Reverse(t.rank()));
        let mut exported = BTreeMap::new();
        for tab in tabs {
            for tool in &tab.tools {
                exported
                    .entry(tool.name.clone())
                    .or_insert_with(|| tool.clone());
            }
        }
        if exported == st.exported {
            return false;
        }
        st.exported = exported;
        true
    }

    fn bump(&self, tools_changed: bool) {
        if tools_changed {
            self.tools_generation.send_modify(|g| *g += 1);
        }
        self.tabs_generation.send_modify(|g| *g += 1);
    }

    // ----- the MCP side ---------------------------------------------------------------------

    /// The tools offered to MCP clients, one per name, sorted by name.
    pub fn exported_tools(&self) -> Vec<Arc<ToolSpec>> {
        lock(&self.state).exported.values().cloned().collect()
    }

    pub fn exported_tool(&self, name: &str) -> Option<Arc<ToolSpec>> {
        lock(&self.state).exported.get(name).cloned()
    }

    /// Every known tab, the one calls go to by default first.
    pub fn tabs(&self) -> Vec<TabInfo> {
        let st = lock(&self.state);
        let mut tabs: Vec<(&TabId, &Tab)> = st.tabs.iter().collect();
        tabs.sort_by_key(|(id, t)| (std::cmp::Reverse(t.rank()), **id));
        let focused = tabs
            .first()
            .filter(|(_, t)| t.focused_at > 0)
            .map(|(id, _)| **id);
        tabs.into_iter()
            .map(|(id, t)| TabInfo {
                id: *id,
                url: t.url.clone(),
                title: t.title.clone(),
                tools: t.tools.iter().map(|tool| tool.name.clone()).collect(),
                focused: Some(*id) == focused,
                runtime: t.runtime,
            })
            .collect()
    }

    /// Every known tab with its full tool specs (for peers), and the most recently focused one.
    pub fn tab_tools(&self) -> (Vec<TabTools>, Option<TabId>) {
        let st = lock(&self.state);
        let mut tabs: Vec<(&TabId, &Tab)> = st.tabs.iter().collect();
        tabs.sort_by_key(|(id, _)| **id);
        let focused = tabs
            .iter()
            .filter(|(_, t)| t.focused_at > 0)
            .max_by_key(|(_, t)| t.rank())
            .map(|(id, _)| **id);
        let tabs = tabs
            .into_iter()
            .map(|(id, t)| TabTools {
                tab: *id,
                url: t.url.clone(),
                title: t.title.clone(),
                tools: t.tools.iter().map(|tool| ToolSpec::clone(tool)).collect(),
                runtime: t.runtime,
            })
            .collect();
        (tabs, focused)
    }

    /// The code adapters the connected extensions bundle (from their `hello`), by connection.
    pub fn code_adapters(&self) -> Vec<AdapterMatch> {
        let st = lock(&self.state);
        let mut conns: Vec<_> = st.connections.iter().collect();
        conns.sort_by_key(|(id, _)| **id);
        conns
            .into_iter()
            .flat_map(|(_, c)| c.code_adapters.iter().cloned())
            .collect()
    }

    /// The names of the code adapters whose match patterns cover `url`.
    pub fn code_adapters_matching(&self, url: &str) -> Vec<String> {
        self.code_adapters()
            .into_iter()
            .filter(|a| {
                a.matches.iter().any(|p| {
                    bridge::pattern::MatchPattern::parse(p)
                        .is_ok_and(|pattern| pattern.matches(url))
                })
            })
            .map(|a| a.name)
            .collect()
    }

    /// What each connected extension said about its browser (`None` before its `hello`).
    pub fn browsers(&self) -> Vec<Option<BrowserInfo>> {
        let st = lock(&self.state);
        let mut conns: Vec<_> = st.connections.iter().collect();
        conns.sort_by_key(|(id, _)| **id);
        conns.into_iter().map(|(_, c)| c.browser.clone()).collect()
    }

    /// `tab`'s cached state, if the page reported one.
    pub fn cached_state(&self, tab: TabId) -> Option<CachedState> {
        lock(&self.state).states.get(&tab).map(|(_, s)| s.clone())
    }

    /// The tabs that have a cached state, by id.
    pub fn tabs_with_state(&self) -> Vec<TabId> {
        let mut tabs: Vec<TabId> = lock(&self.state).states.keys().copied().collect();
        tabs.sort_unstable();
        tabs
    }

    /// The tab state queries go to without an explicit tab: the most recently focused tab
    /// that has site tools or a cached state.
    pub fn default_state_tab(&self) -> Option<TabId> {
        let st = lock(&self.state);
        st.tabs
            .iter()
            .filter(|(id, t)| !t.tools.is_empty() || st.states.contains_key(id))
            .max_by_key(|(id, t)| (t.rank(), **id))
            .map(|(id, _)| *id)
    }

    /// Asks `tab`'s page for its current state; a fresh answer also refreshes the cache.
    pub async fn request_state(&self, tab: TabId) -> Result<Value, WireError> {
        let (started, conn) = {
            let mut st = lock(&self.state);
            self.check_connected(&st)?;
            let conn = match st.tabs.get(&tab) {
                Some(t) => t.conn,
                None => match st.states.get(&tab) {
                    Some((conn, cached)) if !cached.tab_closed => *conn,
                    _ => return Err(unknown_tab(&st, tab)),
                },
            };
            let started = start(&mut st, conn, Some(tab), RequestKind::State, |id| {
                ToExtension::RequestState { id, tab }
            })?;
            (started, conn)
        };
        let state = self
            .finish(started, None, || format!("the state of tab {tab}"))
            .await?;
        self.store_state(conn, tab, state.clone(), 0, StateSource::Page);
        Ok(state)
    }

    /// A logical time: registrations after it are newer (see [`Hub::wait_for_tools`]).
    pub fn now(&self) -> u64 {
        lock(&self.state).clock
    }

    /// Whether an extension socket is open.
    pub fn connected(&self) -> bool {
        !lock(&self.state).connections.is_empty()
    }

    /// Whether an extension is connected and has told us its tabs.
    pub fn browser_ready(&self) -> bool {
        lock(&self.state)
            .connections
            .values()
            .any(|c| c.snapshot_seen)
    }

    /// Waits until [`Hub::browser_ready`], at most `timeout`; returns whether it is.
    pub async fn wait_for_browser(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        self.wait_until(deadline, || self.browser_ready().then_some(()))
            .await
            .is_some()
    }

    /// Waits until `tab` registers, after logical time `since`, tools of one of `adapters` (of
    /// any adapter when `adapters` is empty).
    pub async fn wait_for_tools(
        &self,
        tab: TabId,
        adapters: &[&str],
        since: u64,
        timeout: Duration,
    ) -> ToolsWait {
        let deadline = Instant::now() + timeout;
        let mut seen = false;
        let outcome = self
            .wait_until(deadline, || {
                let st = lock(&self.state);
                let Some(t) = st.tabs.get(&tab) else {
                    // It was known and is gone: closed.
                    return seen.then_some(ToolsWait::TabClosed);
                };
                seen = true;
                let fresh = t.registered_at > since
                    && t.tools.iter().any(|tool| {
                        adapters.is_empty() || adapters.contains(&tool.adapter.as_str())
                    });
                fresh.then(|| {
                    ToolsWait::Registered(t.tools.iter().map(|tool| tool.name.clone()).collect())
                })
            })
            .await;
        outcome.unwrap_or(ToolsWait::TimedOut)
    }

    /// Re-checks `ready` after every tab change until it yields or `deadline` passes.
    async fn wait_until<T>(
        &self,
        deadline: Instant,
        mut ready: impl FnMut() -> Option<T>,
    ) -> Option<T> {
        let mut changes = self.tabs_generation.subscribe();
        loop {
            changes.mark_unchanged();
            if let Some(value) = ready() {
                return Some(value);
            }
            match tokio::time::timeout_at(deadline, changes.changed()).await {
                Ok(Ok(())) => continue,
                _ => return ready(),
            }
        }
    }

    /// Calls `tool` with `args` in `tab` (or the best tab offering it) and waits for the answer.
    #[cfg_attr(not(test), allow(dead_code))] // For callers that want no progress reports.
    pub async fn call_tool(
        &self,
        tool: &str,
        args: Value,
        tab: Option<TabId>,
    ) -> Result<Value, WireError> {
        self.call_tool_reporting(tool, args, tab, None).await
    }

    /// [`Hub::call_tool`], passing the page's progress reports to `progress`.
    pub async fn call_tool_reporting(
        &self,
        tool: &str,
        args: Value,
        tab: Option<TabId>,
        progress: Option<mpsc::UnboundedSender<PageProgress>>,
    ) -> Result<Value, WireError> {
        let timeout_ms = self.page_budget_ms();
        self.await_reannounced(tool, tab).await;
        let (started, tab) = {
            let mut st = lock(&self.state);
            self.check_connected(&st)?;
            let (tab, conn) = select_tab(&st, tool, tab)?;
            let started = start(&mut st, conn, Some(tab), RequestKind::CallTool, |id| {
                ToExtension::CallTool {
                    id,
                    tab,
                    tool: tool.to_owned(),
                    args,
                    timeout_ms,
                }
            })?;
            (started, tab)
        };
        self.finish(started, progress, || format!("{tool} in tab {tab}"))
            .await
    }

    /// While a dropped browser connection may still re-announce its tabs, a call that finds no tab
    /// for it waits for them (until the grace period of the tab it names, or of the latest dropped
    /// tab), so a call made as the extension reconnects is not told the tab is gone.
    async fn await_reannounced(&self, tool: &str, tab: Option<TabId>) {
        let until = {
            let st = lock(&self.state);
            if select_tab(&st, tool, tab).is_ok() {
                return;
            }
            let dropped = st
                .orphans
                .iter()
                .filter(|(id, _)| tab.is_none_or(|tab| tab == *id))
                .map(|(_, at)| *at + REANNOUNCE_GRACE)
                .max();
            match dropped {
                Some(until) if until > Instant::now() => until,
                _ => return,
            }
        };
        self.wait_until(until, || {
            select_tab(&lock(&self.state), tool, tab).ok().map(drop)
        })
        .await;
    }

    /// Navigates `tab` to `url`, or opens a new tab; returns the tab's id. With `wait_loaded`,
    /// the extension answers once the page has loaded (at most that long) and says what it saw.
    pub async fn open_tab(
        &self,
        url: &str,
        tab: Option<TabId>,
        wait_loaded: Option<Duration>,
    ) -> Result<OpenedTab, WireError> {
        let started = {
            let mut st = lock(&self.state);
            self.check_connected(&st)?;
            let conn = match tab.and_then(|t| st.tabs.get(&t)) {
                Some(t) => t.conn,
                // A tab we know nothing about (no tools) or a new tab: the connection of the
                // most recently focused tab, else the newest connection. It knows all its tabs.
                None => st
                    .tabs
                    .values()
                    .max_by_key(|t| t.rank())
                    .map(|t| t.conn)
                    .or_else(|| st.connections.keys().max().copied())
                    .ok_or_else(|| self.not_connected(&st))?,
            };
            start(&mut st, conn, tab, RequestKind::OpenTab, |id| {
                ToExtension::OpenTab {
                    id,
                    url: url.to_owned(),
                    tab,
                    // Within the call's own deadline, so the answer always comes first.
                    wait_loaded_ms: wait_loaded.map(|wait| {
                        u64::try_from(wait.as_millis())
                            .unwrap_or(u64::MAX)
                            .min(self.page_budget_ms())
                    }),
                }
            })?
        };
        let opened = self
            .finish(started, None, || format!("opening {url}"))
            .await?;
        Ok(OpenedTab {
            tab: opened["tab"].as_u64().ok_or_else(|| {
                WireError::new(ErrorCode::Protocol, "open_tab_result carried no tab id")
            })?,
            loaded: serde_json::from_value(opened["loaded"].clone()).unwrap_or(None),
        })
    }

    fn timeout_ms(&self) -> u64 {
        u64::try_from(self.config.call_timeout.as_millis()).unwrap_or(u64::MAX)
    }

    /// The time the page is given: a little less than ours, so that a page's own, more precise
    /// failure ("no element matches ...") arrives before our generic TIMEOUT.
    fn page_budget_ms(&self) -> u64 {
        let total = self.timeout_ms();
        total - (total / 10).min(1000)
    }

    /// Waits for a started request's answer. The timeout restarts on every progress report
    /// (each also passed on to `report`), but never runs past the hard ceiling.
    async fn finish(
        &self,
        started: Started,
        report: Option<mpsc::UnboundedSender<PageProgress>>,
        what: impl FnOnce() -> String,
    ) -> Result<Value, WireError> {
        let Started {
            id,
            mut answer,
            mut progress,
        } = started;
        // Whatever ends this wait (an answer, the timeout, or the caller giving up and dropping
        // this future), the guard makes sure nothing stays pending and the page is told to stop.
        let _guard = AbandonOnDrop { hub: self, id };
        let timeout = self.config.call_timeout;
        let ceiling = Instant::now() + timeout * PROGRESS_CEILING_FACTOR;
        let mut deadline = Instant::now() + timeout;
        let mut progressed = false;
        loop {
            tokio::select! {
                outcome = &mut answer => {
                    return outcome.unwrap_or_else(|_| Err(WireError::new(
                        ErrorCode::Internal,
                        "the request was dropped without an answer",
                    )));
                }
                Some(step) = progress.recv() => {
                    progressed = true;
                    deadline = (Instant::now() + timeout).min(ceiling);
                    if let Some(report) = &report {
                        let _ = report.send(step);
                    }
                }
                () = tokio::time::sleep_until(deadline) => {
                    let message = if progressed && deadline >= ceiling {
                        format!(
                            "{} was still reporting progress after {} ms, the most any call may \
                             take; the call was cancelled",
                            what(),
                            self.timeout_ms() * u64::from(PROGRESS_CEILING_FACTOR)
                        )
                    } else {
                        format!(
                            "{} did not answer within {} ms; the call was cancelled",
                            what(),
                            self.timeout_ms()
                        )
                    };
                    return Err(WireError::new(ErrorCode::Timeout, message));
                }
            }
        }
    }

    /// Forgets request `id` if it is still pending and tells its page to cancel it.
    fn abandon(&self, id: &str) {
        let mut st = lock(&self.state);
        let Some(pending) = st.pending.remove(id) else {
            return;
        };
        tracing::debug!(%id, "request abandoned (timeout or caller gone); cancelling it");
        if let Some(c) = st.connections.get(&pending.conn) {
            let _ = c
                .outbox
                .send(ToExtension::Cancel { id: id.to_owned() }.encode());
        }
    }

    fn check_connected(&self, st: &State) -> Result<(), WireError> {
        if st.connections.is_empty() {
            Err(self.not_connected(st))
        } else {
            Ok(())
        }
    }

    /// The NOT_CONNECTED error a browser tool answers now.
    pub fn not_connected_error(&self) -> WireError {
        self.not_connected(&lock(&self.state))
    }

    /// NOT_CONNECTED, saying why and what the user should do (the model relays it).
    fn not_connected(&self, st: &State) -> WireError {
        let message = crate::diagnostics::not_connected_advice(self.config.port, st.link.as_ref());
        WireError::new(ErrorCode::NotConnected, message)
    }
}

struct AbandonOnDrop<'a> {
    hub: &'a Hub,
    id: RequestId,
}

impl Drop for AbandonOnDrop<'_> {
    fn drop(&mut self) {
        self.hub.abandon(&self.id);
    }
}

/// Tool names a site tool may never take: the meta-tools (mcp.rs checks this list against its own).
pub(crate) const RESERVED_TOOL_NAMES: &[&str] = bridge::names::META_TOOL_NAMES;

/// Longest description, and largest input schema (as JSON), of a tool no loaded adapter defines
/// (one the page registered itself): page text costs the model's context and is untrusted.
const MAX_PEER_DESCRIPTION: usize = 1024;
const MAX_PEER_SCHEMA_BYTES: usize = 16 * 1024;

/// Vets the tools a peer registers for a tab. A tool of a loaded adapter must be one that adapter
/// defines, and is described in the adapter's own words (never the peer's copy). A tool of any
/// other adapter (a page's own registration) must carry a clean `<adapter>_<tool>` name, gets its
/// description capped and a bounded schema. None may take a meta-tool's name or a loaded
/// adapter's tool name, and a name is offered once per tab.
fn vet_tools(adapters: &[Adapter], mut tab: TabTools) -> TabTools {
    use bridge::names::{MAX_TOOL_NAME, is_identifier, public_tool_name};
    let offered = std::mem::take(&mut tab.tools);
    let mut refused = 0;
    for mut spec in offered {
        let vetted = match adapters.iter().find(|a| a.name == spec.adapter) {
            Some(adapter) => adapter
                .tools
                .iter()
                .find(|t| public_tool_name(&adapter.name, &t.name) == spec.name)
                .map(|t| ToolSpec {
                    name: spec.name.clone(),
                    adapter: adapter.name.clone(),
                    description: t.description.clone(),
                    input_schema: t.input_schema.clone(),
                    output_schema: t.output_schema.clone(),
                    annotations: t.annotations,
                }),
            None => {
                let clean = is_identifier(&spec.name, MAX_TOOL_NAME)
                    && spec.name.starts_with(&format!("{}_", spec.adapter))
                    && !adapters.iter().any(|a| {
                        a.tools
                            .iter()
                            .any(|t| public_tool_name(&a.name, &t.name) == spec.name)
                    })
                    && spec.input_schema.is_object()
                    && spec.input_schema.to_string().len() <= MAX_PEER_SCHEMA_BYTES;
                clean.then(|| {
                    if let Some((cut, _)) =
                        spec.description.char_indices().nth(MAX_PEER_DESCRIPTION)
                    {
                        spec.description.truncate(cut);
                    }
                    // MCP clients check results against an output schema: only an adapter's own
                    // is trusted (the worker drops a page's, too).
                    spec.output_schema = None;
                    spec
                })
            }
        };
        match vetted {
            Some(v)
                if !RESERVED_TOOL_NAMES.contains(&v.name.as_str())
                    && tab.tools.len() < MAX_TOOLS_PER_TAB
                    && !tab.tools.iter().any(|t| t.name == v.name) =>
            {
                tab.tools.push(v)
            }
            _ => refused += 1,
        }
    }
    if refused > 0 {
        tracing::warn!(
            tab = tab.tab,
            refused,
            "dropped tools with unclean names, tools a loaded adapter does not define, or tools \
             that would shadow a meta-tool or an adapter's tool"
        );
    }
    tab
}

/// Records `tab`'s tools as registered now.
/// The adapters and the `welcome` frame that carries them.
fn welcome(config: &HubConfig, adapters: Vec<Adapter>) -> (Arc<Vec<Adapter>>, String) {
    let frame = ToExtension::Welcome {
        protocol: PROTOCOL_VERSION,
        server_version: env!("CARGO_PKG_VERSION").to_owned(),
        instance_id: config.instance_id.clone(),
        adapters: adapters.clone(),
    }
    .encode();
    (Arc::new(adapters), frame)
}

/// How many tabs `conn` has registered.
fn tabs_of(st: &State, conn: ConnId) -> usize {
    st.tabs.values().filter(|t| t.conn == conn).count()
}

fn register(st: &mut State, conn: ConnId, tab: TabTools, focused_at: u64) {
    st.clock += 1;
    let registered_at = st.clock;
    if let Some(previous) = st.tabs.get(&tab.tab)
        && previous.conn != conn
    {
        tracing::warn!(
            tab = tab.tab,
            "two browser connections report the same tab id; the newer wins"
        );
    }
    st.orphans.retain(|(id, _)| *id != tab.tab);
    st.tabs.insert(
        tab.tab,
        Tab {
            conn,
            url: tab.url,
            title: tab.title,
            tools: tab.tools.into_iter().map(Arc::new).collect(),
            runtime: tab.runtime,
            focused_at,
            registered_at,
        },
    );
}

/// The tab a call of `tool` goes to: `explicit` if given (it must offer the tool), else the
/// highest-ranked tab offering it.
fn select_tab(
    st: &State,
    tool: &str,
    explicit: Option<TabId>,
) -> Result<(TabId, ConnId), WireError> {
    if let Some(id) = explicit {
        let tab = st.tabs.get(&id).ok_or_else(|| unknown_tab(st, id))?;
        if !tab.offers(tool) {
            return Err(WireError::new(
                ErrorCode::NoSuchTool,
                format!("tab {id} does not offer {tool}; browser_tabs lists each tab's tools"),
            ));
        }
        return Ok((id, tab.conn));
    }
    st.tabs
        .iter()
        .filter(|(_, t)| t.offers(tool))
        .max_by_key(|(_, t)| t.rank())
        .map(|(id, t)| (*id, t.conn))
        .ok_or_else(|| {
            WireError::new(
                ErrorCode::NoSuchTool,
                format!("no open tab offers {tool}; open its site with browser_open"),
            )
        })
}

/// The error for a call naming a tab we do not know: TAB_CLOSED if it closed lately.
fn unknown_tab(st: &State, id: TabId) -> WireError {
    if st.closed_tabs.contains(&id) {
        WireError::new(ErrorCode::TabClosed, format!("tab {id} was closed"))
    } else {
        WireError::new(
            ErrorCode::NoSuchTab,
            format!("there is no tab {id} with site tools; browser_tabs lists the tabs"),
        )
    }
}

/// Removes the cached states `which(conn, tab)` selects; returns their tabs.
fn drop_states(st: &mut State, which: impl Fn(ConnId, TabId) -> bool) -> Vec<TabId> {
    let tabs: Vec<TabId> = st
        .states
        .iter()
        .filter(|(tab, (conn, _))| which(*conn, **tab))
        .map(|(tab, _)| *tab)
        .collect();
    for tab in &tabs {
        st.states.remove(tab);
    }
    tabs
}

/// Registers a pending request and sends its frame; the receiver gets the answer.
fn start(
    st: &mut State,
    conn: ConnId,
    tab: Option<TabId>,
    kind: RequestKind,
    frame: impl FnOnce(RequestId) -> ToExtension,
) -> Result<Started, WireError> {
    if st.pending.len() >= MAX_PENDING {
        return Err(WireError::new(
            ErrorCode::TooMany,
            format!(
                "{MAX_PENDING} requests are waiting for the browser already; try again shortly"
            ),
        ));
    }
    let id = uuid::Uuid::new_v4().to_string();
    let encoded = frame(id.clone()).encode();
    let sent = st
        .connections
        .get(&conn)
        .is_some_and(|c| c.outbox.send(encoded).is_ok());
    if !sent {
        return Err(WireError::new(
            ErrorCode::NotConnected,
            "the browser connection closed",
        ));
    }
    let (reply, answer) = oneshot::channel();
    let (progress_tx, progress) = mpsc::unbounded_channel();
    st.pending.insert(
        id.clone(),
        Pending {
            conn,
            tab,
            kind,
            reply,
            progress: progress_tx,
        },
    );
    Ok(Started {
        id,
        answer,
        progress,
    })
}

fn take_pending(st: &mut State, which: impl Fn(&Pending) -> bool) -> Vec<Pending> {
    let ids: Vec<RequestId> = st
        .pending
        .iter()
        .filter(|(_, p)| which(p))
        .map(|(id, _)| id.clone())
        .collect();
    ids.iter().filter_map(|id| st.pending.remove(id)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct FakeExtension {
        conn: ConnId,
        frames: mpsc::UnboundedReceiver<String>,
    }

    impl FakeExtension {
        fn connect(hub: &Hub) -> FakeExtension {
            let (outbox, frames) = mpsc::unbounded_channel();
            FakeExtension {
                conn: hub.connect(outbox),
                frames,
            }
        }

        fn say(&self, hub: &Hub, message: serde_json::Value) {
            hub.handle_frame(self.conn, &message.to_string());
        }

        /// The next frame the hub sent to this extension.
        async fn next(&mut self) -> ToExtension {
            let frame = tokio::time::timeout(Duration::from_secs(5), self.frames.recv())
                .await
                .expect("a frame within 5 s")
                .expect("outbox open");
            ToExtension::decode(&frame).expect("the hub sends valid frames")
        }

        async fn next_call(&mut self) -> (RequestId, TabId, String, Value) {
            match self.next().await {
                ToExtension::CallTool {
                    id,
                    tab,
                    tool,
                    args,
                    ..
                } => (id, tab, tool, args),
                other => panic!("expected call_tool, got {other:?}"),
            }
        }
    }

    fn tool(name: &str) -> serde_json::Value {
        json!({"name": name, "adapter": name.split('_').next().unwrap(), "description": "d",
               "input_schema": {"type": "object"}})
    }

    fn hub_with_timeout(call_timeout: Duration) -> Arc<Hub> {
        let mut adapters = crate::adapters::load(&[], &[]).unwrap().adapters;
        // The tests' tabs offer todomvc_a and todomvc_b: make them tools the adapter defines.
        let todomvc = adapters.iter_mut().find(|a| a.name == "todomvc").unwrap();
        for name in ["a", "b"] {
            let mut tool = todomvc.tools[0].clone();
            tool.name = name.into();
            todomvc.tools.push(tool);
        }
        let hub = Hub::new(HubConfig {
            port: 17373,
            call_timeout,
            instance_id: "test".into(),
            adapters,
        });
        hub.set_link(Link::Listening);
        Arc::new(hub)
    }

    fn hub() -> Arc<Hub> {
        hub_with_timeout(Duration::from_secs(30))
    }

    /// One extension with tabs 1 (todomvc_a) and 2 (todomvc_a, todomvc_b).
    fn two_tabs(hub: &Hub) -> FakeExtension {
        let ext = FakeExtension::connect(hub);
        ext.say(
            hub,
            json!({"type": "tools_snapshot", "tabs": [
                {"tab": 1, "url": "http://todomvc.com/examples/a", "title": "A", "tools": [tool("todomvc_a")]},
                {"tab": 2, "url": "http://todomvc.com/examples/b", "title": "B",
                 "tools": [tool("todomvc_a"), tool("todomvc_b")]},
            ]}),
        );
        ext
    }

    fn spawn_call(
        hub: &Arc<Hub>,
        tool: &str,
        tab: Option<TabId>,
    ) -> tokio::task::JoinHandle<Result<Value, WireError>> {
        let hub = hub.clone();
        let tool = tool.to_owned();
        tokio::spawn(async move { hub.call_tool(&tool, json!({"x": 1}), tab).await })
    }

    fn code(result: Result<Value, WireError>) -> ErrorCode {
        result.expect_err("expected an error").code
    }

    #[tokio::test]
    async fn tabs_tools_and_pending_calls_are_bounded_with_typed_errors() {
        let hub = hub();
        let mut ext = FakeExtension::connect(&hub);
        // A snapshot of more tabs than a connection may have keeps the first ones.
        let many: Vec<Value> = (0..MAX_TABS_PER_CONNECTION as u64 + 10)
            .map(|tab| {
                json!({"tab": tab, "url": "http://todomvc.com/x", "title": "t",
                              "tools": [tool("todomvc_a")]})
            })
            .collect();
        ext.say(&hub, json!({"type": "tools_snapshot", "tabs": many}));
        assert_eq!(hub.tabs().len(), MAX_TABS_PER_CONNECTION);
        match ext.next().await {
            ToExtension::Error { error, .. } => {
                assert_eq!(error.code, ErrorCode::TooMany);
                assert!(error.message.starts_with("10 tab(s) refused"), "{error}");
            }
            other => panic!("expected an error frame, got {other:?}"),
        }
        // One more tab is refused; a known tab still updates.
        let extra = json!({"type": "tools_updated", "tab": 100_000, "url": "http://todomvc.com/x",
                           "title": "t", "tools": [tool("todomvc_a")]});
        ext.say(&hub, extra);
        assert!(matches!(ext.next().await, ToExtension::Error { .. }));
        assert_eq!(hub.tabs().len(), MAX_TABS_PER_CONNECTION);
        let known = json!({"type": "tools_updated", "tab": 0, "url": "http://todomvc.com/x",
                           "title": "renamed", "tools": [tool("todomvc_a"), tool("todomvc_b")]});
        ext.say(&hub, known);
        assert!(hub.tabs().iter().any(|t| t.id == 0 && t.title == "renamed"));

        // A tab offering more tools than allowed keeps the first ones.
        let hub = hub_with_timeout(Duration::from_secs(30));
        let ext = FakeExtension::connect(&hub);
        let tools: Vec<Value> = (0..MAX_TOOLS_PER_TAB + 5)
            .map(|i| tool(&format!("page_t{i}")))
            .collect();
        ext.say(
            &hub,
            json!({"type": "tools_snapshot", "tabs": [
                {"tab": 1, "url": "http://a/", "title": "t", "tools": tools}]}),
        );
        assert_eq!(hub.tabs()[0].tools.len(), MAX_TOOLS_PER_TAB);
    }

    #[tokio::test]
    async fn past_the_pending_bound_a_call_fails_at_once_with_too_many() {
        let hub = hub();
        let mut ext = two_tabs(&hub);
        let waiting: Vec<_> = (0..MAX_PENDING)
            .map(|_| spawn_call(&hub, "todomvc_a", Some(1)))
            .collect();
        for _ in 0..MAX_PENDING {
            ext.next_call().await;
        }
        let refused = hub.call_tool("todomvc_a", json!({}), Some(1)).await;
        assert_eq!(code(refused), ErrorCode::TooMany);
        for call in waiting {
            call.abort();
        }
    }

    #[tokio::test]
    async fn hello_is_answered_with_welcome_and_the_adapters() {
        let hub = hub();
        let mut ext = FakeExtension::connect(&hub);
        ext.say(
            &hub,
            json!({"type": "hello", "protocol": 1, "instance_id": "b1"}),
        );
        match ext.next().await {
            ToExtension::Welcome {
                protocol,
                instance_id,
                adapters,
                ..
            } => {
                assert_eq!(protocol, PROTOCOL_VERSION);
                assert_eq!(instance_id, "test");
                assert!(adapters.iter().any(|a| a.name == "todomvc"));
            }
            other => panic!("expected welcome, got {other:?}"),
        }
        ext.say(&hub, json!({"type": "ping", "nonce": 7}));
        assert_eq!(ext.next().await, ToExtension::Pong { nonce: 7 });
    }

    #[tokio::test]
    async fn new_adapters_are_pushed_to_every_extension_and_greet_later_ones() {
        let hub = hub();
        let mut first = FakeExtension::connect(&hub);
        let mut second = FakeExtension::connect(&hub);
        let mut renamed = hub.adapters()[0].clone();
        renamed.name = "renamed".into();
        hub.set_adapters(vec![renamed]);
        for ext in [&mut first, &mut second] {
            match ext.next().await {
                ToExtension::AdaptersUpdated { adapters } => {
                    assert_eq!(adapters.len(), 1);
                    assert_eq!(adapters[0].name, "renamed");
                }
                other => panic!("expected adapters_updated, got {other:?}"),
            }
        }
        assert_eq!(hub.adapters()[0].name, "renamed");
        let mut late = FakeExtension::connect(&hub);
        late.say(&hub, json!({"type": "hello", "protocol": 1}));
        match late.next().await {
            ToExtension::Welcome { adapters, .. } => assert_eq!(adapters[0].name, "renamed"),
            other => panic!("expected welcome, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn without_tab_id_calls_go_to_the_most_recently_focused_tab_offering_the_tool() {
        let hub = hub();
        let mut ext = two_tabs(&hub);
        // Nobody focused yet: the most recently registered tab offering it (2).
        let call = spawn_call(&hub, "todomvc_a", None);
        let (id, tab, tool, args) = ext.next_call().await;
        assert_eq!(
            (tab, tool.as_str(), args),
            (2, "todomvc_a", json!({"x": 1}))
        );
        ext.say(
            &hub,
            json!({"type": "call_tool_result", "id": id, "result": "two"}),
        );
        assert_eq!(call.await.unwrap(), Ok(json!("two")));

        ext.say(&hub, json!({"type": "tab_focused", "tab": 1}));
        let call = spawn_call(&hub, "todomvc_a", None);
        let (id, tab, ..) = ext.next_call().await;
        assert_eq!(tab, 1);
        ext.say(
            &hub,
            json!({"type": "call_tool_result", "id": id, "result": "one"}),
        );
        assert_eq!(call.await.unwrap(), Ok(json!("one")));

        // Only tab 2 offers todomvc_b, focused or not.
        let call = spawn_call(&hub, "todomvc_b", None);
        let (id, tab, ..) = ext.next_call().await;
        assert_eq!(tab, 2);
        ext.say(
            &hub,
            json!({"type": "call_tool_result", "id": id, "result": {}}),
        );
        assert!(call.await.unwrap().is_ok());

        let focused: Vec<_> = hub
            .tabs()
            .into_iter()
            .filter(|t| t.focused)
            .map(|t| t.id)
            .collect();
        assert_eq!(focused, [1]);
    }

    #[tokio::test]
    async fn explicit_tab_id_wins_and_is_checked_at_once() {
        let hub = hub();
        let mut ext = two_tabs(&hub);
        ext.say(&hub, json!({"type": "tab_focused", "tab": 2}));
        let call = spawn_call(&hub, "todomvc_a", Some(1));
        let (id, tab, ..) = ext.next_call().await;
        assert_eq!(tab, 1);
        ext.say(
            &hub,
            json!({"type": "call_tool_result", "id": id, "result": 1}),
        );
        assert_eq!(call.await.unwrap(), Ok(json!(1)));

        assert_eq!(
            code(hub.call_tool("todomvc_a", json!({}), Some(99)).await),
            ErrorCode::NoSuchTab
        );
        assert_eq!(
            code(hub.call_tool("todomvc_b", json!({}), Some(1)).await),
            ErrorCode::NoSuchTool
        );
        assert_eq!(
            code(hub.call_tool("todomvc_zzz", json!({}), None).await),
            ErrorCode::NoSuchTool
        );
        assert!(ext.frames.is_empty(), "refused calls send nothing");
    }

    #[tokio::test]
    async fn concurrent_calls_are_correlated_by_id() {
        let hub = hub();
        let mut ext = two_tabs(&hub);
        let calls: Vec<_> = (0..16)
            .map(|_| spawn_call(&hub, "todomvc_a", Some(1)))
            .collect();
        let mut ids = Vec::new();
        for _ in 0..16 {
            ids.push(ext.next_call().await.0);
        }
        // Answer in reverse order, each with its own id as the result.
        for id in ids.iter().rev() {
            ext.say(
                &hub,
                json!({"type": "call_tool_result", "id": id, "result": id}),
            );
        }
        let mut answered = Vec::new();
        for call in calls {
            answered.push(call.await.unwrap().unwrap());
        }
        let mut expected: Vec<Value> = ids.iter().map(|id| json!(id)).collect();
        expected.sort_by_key(|v| v.to_string());
        answered.sort_by_key(|v| v.to_string());
        assert_eq!(answered, expected);
    }

    #[tokio::test]
    async fn page_errors_reach_the_caller() {
        let hub = hub();
        let mut ext = two_tabs(&hub);
        let call = spawn_call(&hub, "todomvc_a", None);
        let (id, ..) = ext.next_call().await;
        ext.say(
            &hub,
            json!({"type": "call_tool_error", "id": id, "error": {"code": "ELEMENT_NOT_FOUND", "message": "no .x"}}),
        );
        assert_eq!(
            call.await.unwrap(),
            Err(WireError::new(ErrorCode::ElementNotFound, "no .x"))
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_timeout_fails_the_call_and_cancels_it_on_the_page() {
        let hub = hub_with_timeout(Duration::from_millis(500));
        let mut ext = two_tabs(&hub);
        let call = spawn_call(&hub, "todomvc_a", None);
        let (id, ..) = ext.next_call().await;
        let outcome = call.await.unwrap();
        assert_eq!(code(outcome.clone()), ErrorCode::Timeout, "{outcome:?}");
        assert_eq!(ext.next().await, ToExtension::Cancel { id: id.clone() });
        // A late answer is dropped quietly, and the hub keeps working.
        ext.say(
            &hub,
            json!({"type": "call_tool_result", "id": id, "result": 1}),
        );
        assert!(lock(&hub.state).pending.is_empty());
        assert!(ext.frames.is_empty(), "a late answer gets no reply");
    }

    #[tokio::test]
    async fn a_closed_tab_fails_its_pending_calls_at_once() {
        let hub = hub();
        let mut ext = two_tabs(&hub);
        let on_tab_1 = spawn_call(&hub, "todomvc_a", Some(1));
        ext.next_call().await;
        let on_tab_2 = spawn_call(&hub, "todomvc_a", Some(2));
        let (id2, ..) = ext.next_call().await;
        let mut tools = hub.subscribe_tools();
        ext.say(&hub, json!({"type": "tab_closed", "tab": 1}));
        assert_eq!(code(on_tab_1.await.unwrap()), ErrorCode::TabClosed);
        // Tab 2's tools are the same set, so closing tab 1 changed nothing for MCP clients.
        assert!(!tools.has_changed().unwrap());
        ext.say(
            &hub,
            json!({"type": "call_tool_result", "id": id2, "result": 2}),
        );
        assert_eq!(on_tab_2.await.unwrap(), Ok(json!(2)));
        ext.say(&hub, json!({"type": "tab_closed", "tab": 2}));
        assert!(tools.has_changed().unwrap());
        tools.mark_unchanged();
        assert!(hub.exported_tools().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_closed_socket_fails_its_pending_calls_and_drops_its_tabs() {
        let hub = hub();
        let mut ext = two_tabs(&hub);
        let call = spawn_call(&hub, "todomvc_a", None);
        ext.next_call().await;
        let tools = hub.subscribe_tools();
        hub.disconnect(ext.conn);
        let outcome = call.await.unwrap();
        assert_eq!(code(outcome.clone()), ErrorCode::NotConnected);
        assert!(
            outcome
                .unwrap_err()
                .message
                .contains("disconnected during the call")
        );
        assert!(tools.has_changed().unwrap());
        assert!(hub.tabs().is_empty());
        let err = hub
            .call_tool("todomvc_a", json!({}), None)
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::NotConnected);
        assert!(err.message.contains("not connected"), "{err}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_made_while_the_browser_reconnects_waits_for_its_tab() {
        let hub = hub();
        let ext = two_tabs(&hub);
        hub.disconnect(ext.conn);
        // Named and unnamed: both wait, then go to the tab the new connection re-announced.
        let named = spawn_call(&hub, "todomvc_b", Some(2));
        let unnamed = spawn_call(&hub, "todomvc_a", None);
        tokio::time::sleep(REANNOUNCE_GRACE / 2).await;
        assert!(!named.is_finished() && !unnamed.is_finished());
        let mut back = two_tabs(&hub);
        let mut calls = Vec::new();
        for _ in 0..2 {
            let (id, tab, tool, _) = back.next_call().await;
            back.say(
                &hub,
                json!({"type": "call_tool_result", "id": id, "result": tab}),
            );
            calls.push((tool, tab));
        }
        assert!(calls.contains(&("todomvc_b".to_owned(), 2)), "{calls:?}");
        assert_eq!(named.await.unwrap(), Ok(json!(2)));
        assert!(unnamed.await.unwrap().is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn a_tab_that_does_not_come_back_is_not_connected_or_gone_after_the_grace() {
        let hub = hub();
        let ext = two_tabs(&hub);
        hub.disconnect(ext.conn);
        // No browser came back: a retryable NOT_CONNECTED once the grace period is over.
        let started = Instant::now();
        let err = hub
            .call_tool("todomvc_b", json!({}), Some(2))
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::NotConnected, "{err}");
        assert!(started.elapsed() >= REANNOUNCE_GRACE);
        // The browser comes back without tab 2 (closed meanwhile): after the grace, no such tab.
        let again = two_tabs(&hub);
        hub.disconnect(again.conn);
        let back = FakeExtension::connect(&hub);
        back.say(&hub, json!({"type": "tools_snapshot", "tabs": [
            {"tab": 1, "url": "http://todomvc.com/examples/a", "title": "A", "tools": [tool("todomvc_a")]},
        ]}));
        let err = hub
            .call_tool("todomvc_b", json!({}), Some(2))
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::NoSuchTab, "{err}");
    }

    #[tokio::test]
    async fn a_closed_tab_keeps_its_last_state_marked_closed_and_is_not_asked_again() {
        let hub = hub();
        let ext = two_tabs(&hub);
        let mut changes = hub.subscribe_states();
        ext.say(
            &hub,
            json!({"type": "state_update", "tab": 1, "state": {"n": 1}, "ts": 5}),
        );
        assert_eq!(changes.recv().await.unwrap(), 1);
        ext.say(&hub, json!({"type": "tab_closed", "tab": 1}));
        assert_eq!(
            changes.recv().await.unwrap(),
            1,
            "subscribers hear that the tab closed"
        );
        let last = hub.cached_state(1).expect("the closed tab's state is kept");
        assert!(last.tab_closed);
        assert_eq!(last.state, json!({"n": 1}));
        assert_eq!(hub.tabs_with_state(), vec![1]);
        let err = hub.request_state(1).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::TabClosed, "{err}");
    }

    #[tokio::test]
    async fn port_in_use_is_explained() {
        let hub = hub();
        hub.set_link(Link::PortInUse);
        let err = hub
            .call_tool("todomvc_a", json!({}), None)
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::NotConnected);
        assert!(
            err.message.starts_with(
                "No browser can connect: something else is listening on port 17373 of 127.0.0.1 and did not prove"
            ) && err.message.contains("tabwire setup --port N"),
            "{err}"
        );
        assert!(err.message.contains("tabwire setup --port N"), "{err}");
    }

    #[tokio::test]
    async fn answers_for_unknown_ids_are_dropped() {
        let hub = hub();
        let mut ext = two_tabs(&hub);
        ext.say(
            &hub,
            json!({"type": "call_tool_result", "id": "nobody", "result": 1}),
        );
        ext.say(&hub, json!({"type": "ping", "nonce": 1}));
        // The only reply is the pong: nothing was sent about the unknown id.
        assert_eq!(ext.next().await, ToExtension::Pong { nonce: 1 });
    }

    #[tokio::test]
    async fn answers_from_another_socket_are_ignored() {
        let hub = hub();
        let mut ext = two_tabs(&hub);
        let intruder = FakeExtension::connect(&hub);
        let call = spawn_call(&hub, "todomvc_a", Some(1));
        let (id, ..) = ext.next_call().await;
        intruder.say(
            &hub,
            json!({"type": "call_tool_result", "id": id, "result": "forged"}),
        );
        ext.say(
            &hub,
            json!({"type": "call_tool_result", "id": id, "result": "real"}),
        );
        assert_eq!(call.await.unwrap(), Ok(json!("real")));
    }

    #[tokio::test]
    async fn bad_frames_get_an_error_reply_and_fail_their_request() {
        let hub = hub();
        let mut ext = two_tabs(&hub);
        hub.handle_frame(ext.conn, "not json");
        match ext.next().await {
            ToExtension::Error {
                in_reply_to: None,
                error,
            } => {
                assert_eq!(error.code, ErrorCode::Protocol);
                assert!(error.message.contains("not JSON"), "{error}");
            }
            other => panic!("expected error, got {other:?}"),
        }
        ext.say(&hub, json!({"type": "launch_missiles"}));
        assert!(matches!(ext.next().await, ToExtension::Error { .. }));

        let call = spawn_call(&hub, "todomvc_a", None);
        let (id, ..) = ext.next_call().await;
        // A result frame missing its `result`: the call fails now instead of timing out.
        ext.say(&hub, json!({"type": "call_tool_result", "id": id}));
        let outcome = call.await.unwrap();
        assert_eq!(code(outcome.clone()), ErrorCode::Protocol, "{outcome:?}");
        match ext.next().await {
            ToExtension::Error { in_reply_to, error } => {
                assert_eq!(in_reply_to.as_deref(), Some(id.as_str()));
                assert_eq!(error.code, ErrorCode::Protocol);
            }
            other => panic!("expected error, got {other:?}"),
        }
        // The socket is still usable.
        ext.say(&hub, json!({"type": "ping", "nonce": 2}));
        assert_eq!(ext.next().await, ToExtension::Pong { nonce: 2 });
    }

    #[tokio::test]
    async fn the_tool_generation_moves_only_when_the_tool_set_changes() {
        let hub = hub();
        let mut tools = hub.subscribe_tools();
        let ext = two_tabs(&hub);
        assert!(tools.has_changed().unwrap());
        tools.mark_unchanged();
        let names: Vec<_> = hub
            .exported_tools()
            .iter()
            .map(|t| t.name.clone())
            .collect();
        assert_eq!(names, ["todomvc_a", "todomvc_b"]);

        // The same tools registered again (a reload): no change.
        ext.say(
            &hub,
            json!({"type": "tools_updated", "tab": 1, "url": "http://todomvc.com/examples/a",
                             "title": "A", "tools": [tool("todomvc_a")]}),
        );
        ext.say(&hub, json!({"type": "tab_focused", "tab": 1}));
        assert!(!tools.has_changed().unwrap());

        // Navigating tab 2 away from every adapter's pages drops its tools.
        ext.say(
            &hub,
            json!({"type": "tab_navigated", "tab": 2, "url": "https://example.com/"}),
        );
        assert!(tools.has_changed().unwrap());
        let names: Vec<_> = hub
            .exported_tools()
            .iter()
            .map(|t| t.name.clone())
            .collect();
        assert_eq!(names, ["todomvc_a"]);
    }

    #[tokio::test]
    async fn open_tab_returns_the_tab_and_waiting_for_tools_sees_the_registration() {
        let hub = hub();
        let mut ext = FakeExtension::connect(&hub);
        ext.say(&hub, json!({"type": "tools_snapshot", "tabs": []}));
        assert!(hub.wait_for_browser(Duration::from_secs(1)).await);
        let since = hub.now();
        let opener = {
            let hub = hub.clone();
            tokio::spawn(async move {
                hub.open_tab("http://todomvc.com/examples/x", None, None)
                    .await
            })
        };
        let id = match ext.next().await {
            ToExtension::OpenTab {
                id,
                url,
                tab: None,
                wait_loaded_ms: None,
            } => {
                assert_eq!(url, "http://todomvc.com/examples/x");
                id
            }
            other => panic!("expected open_tab, got {other:?}"),
        };
        ext.say(&hub, json!({"type": "open_tab_result", "id": id, "tab": 5}));
        assert_eq!(
            opener.await.unwrap(),
            Ok(OpenedTab {
                tab: 5,
                loaded: None
            })
        );

        let waiter = {
            let hub = hub.clone();
            tokio::spawn(async move {
                hub.wait_for_tools(5, &["todomvc"], since, Duration::from_secs(5))
                    .await
            })
        };
        ext.say(
            &hub,
            json!({"type": "tools_updated", "tab": 5, "url": "http://todomvc.com/examples/x",
                             "title": "X", "tools": [tool("todomvc_a")]}),
        );
        assert_eq!(
            waiter.await.unwrap(),
            ToolsWait::Registered(vec!["todomvc_a".into()])
        );
    }

    #[tokio::test]
    async fn hello_names_code_adapters_and_open_tab_can_wait_for_the_page_to_load() {
        let hub = hub();
        let mut ext = FakeExtension::connect(&hub);
        ext.say(
            &hub,
            json!({"type": "hello", "protocol": 1, "code_adapters": [
                {"name": "listcode", "match": ["http://127.0.0.1/*", "not a pattern"]},
                {"name": "other", "match": ["https://example.com/*"]}
            ]}),
        );
        ext.say(&hub, json!({"type": "tools_snapshot", "tabs": []}));
        assert!(hub.wait_for_browser(Duration::from_secs(1)).await);
        assert_eq!(
            hub.code_adapters_matching("http://127.0.0.1:8000/live/"),
            ["listcode"]
        );
        assert!(hub.code_adapters_matching("http://localhost/").is_empty());

        let since = hub.now();
        let opener = {
            let hub = hub.clone();
            tokio::spawn(async move {
                hub.open_tab("http://127.0.0.1/x", None, Some(Duration::from_millis(700)))
                    .await
            })
        };
        let id = loop {
            match ext.next().await {
                ToExtension::OpenTab {
                    id, wait_loaded_ms, ..
                } => {
                    assert_eq!(wait_loaded_ms, Some(700));
                    break id;
                }
                ToExtension::Welcome { .. } => continue,
                other => panic!("expected open_tab, got {other:?}"),
            }
        };
        ext.say(
            &hub,
            json!({"type": "open_tab_result", "id": id, "tab": 6, "loaded": {"runtime": true}}),
        );
        assert_eq!(
            opener.await.unwrap(),
            Ok(OpenedTab {
                tab: 6,
                loaded: Some(LoadedPage { runtime: true })
            })
        );
        // Waiting for any adapter's tools: a WebMCP page's.
        let waiter = {
            let hub = hub.clone();
            tokio::spawn(async move {
                hub.wait_for_tools(6, &[], since, Duration::from_secs(5))
                    .await
            })
        };
        ext.say(
            &hub,
            json!({"type": "tools_updated", "tab": 6, "url": "http://127.0.0.1/x",
                             "title": "X", "tools": [tool("webmcp_note")]}),
        );
        assert_eq!(
            waiter.await.unwrap(),
            ToolsWait::Registered(vec!["webmcp_note".into()])
        );
    }

    #[test]
    fn vetting_keeps_adapter_words_and_refuses_shadows() {
        let adapters = crate::adapters::load(&[], &[]).unwrap().adapters;
        let spec = |name: &str, adapter: &str, description: &str| ToolSpec {
            name: name.into(),
            adapter: adapter.into(),
            description: description.into(),
            input_schema: json!({"type": "object"}),
            output_schema: None,
            annotations: Default::default(),
        };
        let tab = TabTools {
            tab: 1,
            url: String::new(),
            title: String::new(),
            tools: vec![
                spec("todomvc_add_todo", "todomvc", "forged description"),
                spec("todomvc_add_todo", "todomvc", "twice"),
                spec("todomvc_nope", "todomvc", "not defined by the adapter"),
                spec("browser_tabs", "browser", "shadows a meta-tool"),
                spec("todomvc_list_todos", "evil", "another adapter's name"),
                spec("Evil Tool!", "evil", "unclean name"),
                ToolSpec {
                    output_schema: Some(json!({"type": "object", "properties": {}})),
                    ..spec("evil_page_tool", "evil", &"x".repeat(5000))
                },
                ToolSpec {
                    output_schema: Some(json!({"type": "object", "required": ["forged"]})),
                    ..spec("todomvc_list_todos", "todomvc", "forged schema")
                },
            ],
            runtime: None,
        };
        let vetted = vet_tools(&adapters, tab);
        let names: Vec<&str> = vetted.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            ["todomvc_add_todo", "evil_page_tool", "todomvc_list_todos"]
        );
        assert_eq!(
            vetted.tools[0].description,
            "Add a todo with the given title."
        );
        assert_eq!(vetted.tools[1].description.len(), MAX_PEER_DESCRIPTION);
        assert_eq!(vetted.tools[1].output_schema, None);
        let todomvc = adapters.iter().find(|a| a.name == "todomvc").unwrap();
        let list = todomvc
            .tools
            .iter()
            .find(|t| t.name == "list_todos")
            .unwrap();
        assert!(list.output_schema.is_some());
        assert_eq!(vetted.tools[2].output_schema, list.output_schema);
    }
}

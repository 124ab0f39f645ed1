//! Everything the hub knows about the browser side, under one lock and with no waiting: the
//! adapters served, the extension connections (each with what its `hello` said and the outbox of
//! its socket's writer), their tabs and the tools each offers, the tools exported to MCP clients,
//! each tab's last state, recently closed tabs, tabs expected back after a dropped connection,
//! and the requests waiting for an answer. Each change returns what watchers must hear of
//! ([`Changes`]); the async [`super::Hub`] turns that into notifications.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use bridge::adapter::Adapter;
use bridge::packed::PackedAdapter;
use bridge::protocol::{BrowserInfo, OfferedTool, RequestId, TabTools, ToolSpec};
use bridge::upload::UploadFile;
use bridge::{ErrorCode, PROTOCOL_VERSION, TabId, ToExtension, WireError};
use serde_json::Value;
use tokio::time::Instant;

use super::agents::{self, Agents};
use super::pending::{Answer, Kind, PageProgress, PendingTable, Resolution, Started};
use super::tabs::{self, Tab};
use super::text::{self, Link};
use super::vetting::{self, Known};
use super::{CachedState, ConnId, Outbox, StateSource, TabInfo, ToolsWait};

/// How many closed tab ids are remembered, so that a call naming one fails with TAB_CLOSED.
const CLOSED_TABS_REMEMBERED: usize = 256;
/// How long after its browser connection dropped a tab is expected back: a stopped service worker
/// restarts, reconnects and re-announces its tabs well within this (RELIABILITY.md). A call to such a
/// tab meanwhile waits for it instead of answering that there is no such tab.
pub const REANNOUNCE_GRACE: Duration = Duration::from_secs(2);
/// At most this many tabs of dropped connections are awaited (a browser with more tabs than that
/// still gets its most recent ones back without a NO_SUCH_TAB).
const ORPHANS_REMEMBERED: usize = 1024;
/// Tabs one browser connection (or peer) may register; more are refused with `TOO_MANY`.
pub const MAX_TABS_PER_CONNECTION: usize = 512;
/// Requests waiting for the browser at once; more fail with `TOO_MANY` at once.
pub const MAX_PENDING: usize = 1024;

/// What a change means for those watching the hub.
#[derive(Debug, Default, PartialEq)]
#[must_use]
pub struct Changes {
    /// The exported tool set changed.
    pub tools: bool,
    /// A tab or a connection changed.
    pub tabs: bool,
    /// The tabs whose cached state changed (set, replaced, dropped or marked closed).
    pub states: Vec<TabId>,
}

impl Changes {
    pub(super) fn tabs(tools: bool) -> Changes {
        Changes {
            tools,
            tabs: true,
            states: Vec::new(),
        }
    }
}

/// What a connection said in `hello`.
struct Hello {
    protocol: u32,
    browser: BrowserInfo,
    /// The code adapters its extension bundles, as declared, and those that validated.
    declared: Vec<PackedAdapter>,
    code: Vec<Adapter>,
}

struct Connection {
    outbox: Outbox,
    hello: Option<Hello>,
    /// It sent `tools_snapshot`, so its tabs are known.
    snapshot_seen: bool,
    /// It was told that tabs over the bound were refused (logged once).
    refused_tabs: bool,
    /// It is the hub this process is a peer of: the hub decides holds, so requests to it are
    /// not checked here but carry their agent's name.
    relays_hub: bool,
}

impl Connection {
    fn code(&self) -> &[Adapter] {
        self.hello.as_ref().map_or(&[], |h| &h.code)
    }

    fn compatible(&self) -> bool {
        self.hello
            .as_ref()
            .is_none_or(|h| h.protocol == PROTOCOL_VERSION)
    }
}

pub struct Registry {
    /// The WebSocket port (what NOT_CONNECTED names) and this process's id (in `welcome`).
    port: u16,
    instance_id: String,
    /// The adapters served now (live reload replaces them), and packed for the extension.
    adapters: Arc<Vec<Adapter>>,
    packed: Vec<PackedAdapter>,
    /// `None` until the listener has tried the port.
    link: Option<Link>,
    next_conn: ConnId,
    connections: HashMap<ConnId, Connection>,
    tabs: HashMap<TabId, Tab>,
    pending: PendingTable,
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
    /// The `grants` frame the extensions were told last (`None` until the grants were read).
    grants: Option<String>,
    /// The agents and the tabs they hold (issue 28).
    pub agents: Agents,
    /// The `agents` frame the extensions were told last.
    pub agents_told: Option<String>,
}

impl Registry {
    pub fn new(port: u16, instance_id: String, adapters: Vec<Adapter>) -> Registry {
        let mut registry = Registry {
            port,
            instance_id,
            adapters: Arc::default(),
            packed: Vec::new(),
            link: None,
            next_conn: 0,
            connections: HashMap::new(),
            tabs: HashMap::new(),
            pending: PendingTable::default(),
            clock: 0,
            exported: BTreeMap::new(),
            states: HashMap::new(),
            closed_tabs: VecDeque::new(),
            orphans: VecDeque::new(),
            grants: None,
            agents: Agents::default(),
            agents_told: None,
        };
        registry.set_adapters(adapters);
        registry
    }

    // ----- adapters and the link ------------------------------------------------------------

    pub fn adapters(&self) -> Arc<Vec<Adapter>> {
        self.adapters.clone()
    }

    /// Serves `adapters` from now on and pushes them to every connected extension, whose tabs then
    /// announce their tools again.
    pub fn set_adapters(&mut self, adapters: Vec<Adapter>) {
        self.packed = adapters.iter().map(PackedAdapter::pack).collect();
        self.adapters = Arc::new(adapters);
        if !self.connections.is_empty() {
            let frame = ToExtension::AdaptersUpdated {
                adapters: self.packed.clone(),
            }
            .encode();
            for c in self.connections.values() {
                let _ = c.outbox.send(frame.clone());
            }
        }
    }

    /// Tells every extension the grants `frame` (a `grants` message) when it differs from what
    /// they were told last, and every extension that says hello from now on; whether it differed.
    pub fn set_grants(&mut self, frame: String) -> bool {
        if self.grants.as_ref() == Some(&frame) {
            return false;
        }
        for c in self.connections.values().filter(|c| c.hello.is_some()) {
            let _ = c.outbox.send(frame.clone());
        }
        self.grants = Some(frame);
        true
    }

    pub fn set_link(&mut self, link: Link) {
        self.link = Some(link);
    }

    // ----- connections ----------------------------------------------------------------------

    pub fn connect(&mut self, outbox: Outbox, relays_hub: bool) -> (ConnId, Changes) {
        self.next_conn += 1;
        let conn = self.next_conn;
        self.connections.insert(
            conn,
            Connection {
                outbox,
                hello: None,
                snapshot_seen: false,
                refused_tabs: false,
                relays_hub,
            },
        );
        (conn, Changes::tabs(false))
    }

    /// The socket closed: its tabs go away (expected back for a moment) and its pending requests
    /// fail at once.
    pub fn disconnect(&mut self, conn: ConnId, now: Instant) -> Changes {
        if self.connections.remove(&conn).is_none() {
            return Changes::default();
        }
        let lost: Vec<TabId> = self
            .tabs
            .iter()
            .filter(|(_, tab)| tab.conn == conn)
            .map(|(id, _)| *id)
            .collect();
        self.orphans.extend(lost.into_iter().map(|tab| (tab, now)));
        while self.orphans.len() > ORPHANS_REMEMBERED
            || self
                .orphans
                .front()
                .is_some_and(|(_, at)| *at + REANNOUNCE_GRACE < now)
        {
            self.orphans.pop_front();
        }
        self.tabs.retain(|_, tab| tab.conn != conn);
        let states = self.drop_states(|c, _| c == conn);
        self.pending
            .fail_where(|p| p.conn == conn, &text::disconnected_during_call());
        Changes {
            states,
            ..Changes::tabs(self.refresh_exported())
        }
    }

    /// A connection introduced itself: its code adapters are validated, and it is answered with
    /// `welcome`, which carries the adapters and the code adapters that validated (or, speaking
    /// another protocol version, with an `error` saying so).
    pub fn hello(
        &mut self,
        conn: ConnId,
        protocol: u32,
        browser: BrowserInfo,
        declared: Vec<PackedAdapter>,
    ) -> Changes {
        let agents_told = self.agents_told.clone();
        let Some(c) = self.connections.get_mut(&conn) else {
            return Changes::default();
        };
        let code: Vec<Adapter> = declared
            .iter()
            .filter_map(|packed| {
                bridge::code_adapter::parse(packed.json().clone())
                    .map_err(|problems| {
                        let problems: Vec<String> =
                            problems.iter().map(ToString::to_string).collect();
                        tracing::warn!(conn, adapter = %packed.name, problems = %problems.join("; "),
                            "the extension's code adapter is invalid; its tools are not offered");
                    })
                    .ok()
            })
            .collect();
        let frame = if protocol == PROTOCOL_VERSION {
            ToExtension::Welcome {
                protocol: PROTOCOL_VERSION,
                server_version: env!("CARGO_PKG_VERSION").to_owned(),
                instance_id: self.instance_id.clone(),
                adapters: self.packed.clone(),
                code_adapters: code.iter().map(PackedAdapter::pack).collect(),
            }
            .encode()
        } else {
            let error = text::incompatible(protocol, PROTOCOL_VERSION);
            tracing::warn!(conn, protocol, ours = PROTOCOL_VERSION, "{}", error.message);
            ToExtension::Error {
                in_reply_to: None,
                error,
            }
            .encode()
        };
        let _ = c.outbox.send(frame);
        if protocol == PROTOCOL_VERSION
            && let Some(grants) = &self.grants
        {
            let _ = c.outbox.send(grants.clone());
        }
        if protocol == PROTOCOL_VERSION
            && !c.relays_hub
            && let Some(agents) = &agents_told
        {
            let _ = c.outbox.send(agents.clone());
        }
        c.hello = Some(Hello {
            protocol,
            browser,
            declared,
            code,
        });
        Changes::tabs(false)
    }

    pub fn send(&self, conn: ConnId, message: &ToExtension) {
        self.send_text(conn, message.encode());
    }

    /// Sends the encoded frame `frame` to connection `conn`.
    pub fn send_text(&self, conn: ConnId, frame: String) {
        if let Some(c) = self.connections.get(&conn) {
            let _ = c.outbox.send(frame);
        }
    }

    /// The browser connections that said hello in our protocol (not a hub we are a peer of).
    pub fn browser_connections(&self) -> impl Iterator<Item = ConnId> + '_ {
        self.connections
            .iter()
            .filter(|(_, c)| !c.relays_hub && c.hello.is_some() && c.compatible())
            .map(|(conn, _)| *conn)
    }

    /// The connections to the hub this process is a peer of.
    pub fn relay_connections(&self) -> impl Iterator<Item = ConnId> + '_ {
        self.connections
            .iter()
            .filter(|(_, c)| c.relays_hub)
            .map(|(conn, _)| *conn)
    }

    /// The NOT_CONNECTED a browser request answers when no browser is connected.
    pub fn not_connected(&self) -> WireError {
        text::not_connected(self.link.as_ref(), self.port)
    }

    /// Whether a browser request can be made: some connection that speaks our protocol.
    pub fn check_connected(&self) -> Result<(), WireError> {
        if self.connections.values().any(Connection::compatible) {
            return Ok(());
        }
        let theirs = self
            .connections
            .values()
            .filter_map(|c| c.hello.as_ref())
            .map(|h| h.protocol)
            .next();
        Err(match theirs {
            Some(theirs) => text::incompatible(theirs, PROTOCOL_VERSION),
            None => self.not_connected(),
        })
    }

    // ----- tabs -----------------------------------------------------------------------------

    /// The full list of a connection's tabs, after every (re)connect.
    pub fn snapshot(&mut self, conn: ConnId, tabs: Vec<TabTools>) -> Changes {
        let Some(c) = self.connections.get_mut(&conn) else {
            return Changes::default();
        };
        c.snapshot_seen = true;
        // Keep the focus order of tabs that survive the snapshot.
        let focus: HashMap<TabId, u64> = self
            .tabs
            .iter()
            .filter(|(_, t)| t.conn == conn)
            .map(|(id, t)| (*id, t.focused_at))
            .collect();
        self.tabs.retain(|_, t| t.conn != conn);
        let offered = tabs.len();
        for tab in tabs.into_iter().take(MAX_TABS_PER_CONNECTION) {
            let focused_at = focus.get(&tab.tab).copied().unwrap_or(0);
            self.register(conn, tab, focused_at);
        }
        if offered > MAX_TABS_PER_CONNECTION {
            self.refuse_tabs(conn, offered - MAX_TABS_PER_CONNECTION);
        }
        Changes::tabs(self.refresh_exported())
    }

    /// One tab's tools changed.
    pub fn update_tab(&mut self, conn: ConnId, tab: TabTools) -> Changes {
        if !self.connections.contains_key(&conn) {
            return Changes::default();
        }
        let known = self.tabs.get(&tab.tab).filter(|t| t.conn == conn);
        let focused_at = known.map_or(0, |t| t.focused_at);
        if known.is_none() && self.tabs_of(conn) >= MAX_TABS_PER_CONNECTION {
            self.refuse_tabs(conn, 1);
            return Changes::default();
        }
        self.register(conn, tab, focused_at);
        Changes::tabs(self.refresh_exported())
    }

    /// How many tabs `conn` has registered.
    fn tabs_of(&self, conn: ConnId) -> usize {
        self.tabs.values().filter(|t| t.conn == conn).count()
    }

    /// Tells the connection (and the log, once per connection) that `count` tabs were refused.
    fn refuse_tabs(&mut self, conn: ConnId, count: usize) {
        let Some(c) = self.connections.get_mut(&conn) else {
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

    /// Records `tab`'s tools, vetted, as registered now.
    fn register(&mut self, conn: ConnId, tab: TabTools, focused_at: u64) {
        let known = Known {
            code: self.connections.get(&conn).map_or(&[], Connection::code),
            adapters: &self.adapters,
        };
        let (tools, refused) = vetting::vet(&known, tab.tools);
        if refused > 0 {
            tracing::warn!(
                tab = tab.tab,
                refused,
                "dropped tools no loaded adapter defines, tools with unclean names, or tools that \
                 would shadow a meta-tool or an adapter's tool"
            );
        }
        if let Some(previous) = self.tabs.get(&tab.tab)
            && previous.conn != conn
        {
            tracing::warn!(
                tab = tab.tab,
                "two browser connections report the same tab id; the newer wins"
            );
        }
        self.clock += 1;
        self.orphans.retain(|(id, _)| *id != tab.tab);
        self.tabs.insert(
            tab.tab,
            Tab {
                conn,
                url: tab.url,
                title: tab.title,
                tools,
                runtime: tab.runtime,
                focused_at,
                registered_at: self.clock,
            },
        );
    }

    /// The tab closed: its calls fail at once, its last state stays readable marked closed.
    pub fn close_tab(&mut self, conn: ConnId, tab: TabId) -> Changes {
        if self.tabs.get(&tab).is_some_and(|t| t.conn == conn) {
            self.tabs.remove(&tab);
            self.closed_tabs.push_back(tab);
            if self.closed_tabs.len() > CLOSED_TABS_REMEMBERED
                && let Some(forgotten) = self.closed_tabs.pop_front()
            {
                self.states.remove(&forgotten);
            }
        }
        if self.agents.holder(tab).is_some() {
            self.agents.tab_closed(tab);
            let _ = self.agents_changed();
        }
        let mut states = Vec::new();
        if let Some((c, cached)) = self.states.get_mut(&tab)
            && *c == conn
        {
            cached.tab_closed = true;
            states.push(tab);
        }
        self.pending.fail_where(
            |p| p.conn == conn && p.tab == Some(tab),
            &text::tab_closed_during_call(tab),
        );
        Changes {
            states,
            ..Changes::tabs(self.refresh_exported())
        }
    }

    /// The tab shows another page: tools of adapters that do not serve the new URL are gone.
    /// (Tools that still apply stay until the page registers again, so a same-site navigation
    /// never makes the tool list flicker.) The state described the page it showed before.
    pub fn navigate_tab(&mut self, conn: ConnId, tab: TabId, url: String) -> Changes {
        let Some(t) = self.tabs.get_mut(&tab).filter(|t| t.conn == conn) else {
            return Changes::default();
        };
        let code = self
            .connections
            .get(&conn)
            .map_or(&[][..], Connection::code);
        t.tools.retain(|tool| {
            self.adapters
                .iter()
                .chain(code)
                .any(|a| a.name == tool.adapter && a.matches_url(&url))
        });
        t.url = url;
        let states = self.drop_states(|c, t| c == conn && t == tab);
        Changes {
            states,
            ..Changes::tabs(self.refresh_exported())
        }
    }

    pub fn focus_tab(&mut self, conn: ConnId, tab: TabId) -> Changes {
        if !self.connections.contains_key(&conn) {
            return Changes::default();
        }
        self.clock += 1;
        let now = self.clock;
        self.tabs
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
        Changes::tabs(self.refresh_exported())
    }

    /// Recomputes the exported tool set; whether it changed.
    fn refresh_exported(&mut self) -> bool {
        let exported = tabs::exported(&self.tabs);
        if exported == self.exported {
            return false;
        }
        self.exported = exported;
        true
    }

    // ----- states ---------------------------------------------------------------------------

    /// Caches `tab`'s state.
    pub fn store_state(
        &mut self,
        conn: ConnId,
        tab: TabId,
        state: Value,
        page_ts: u64,
        source: StateSource,
        now: Instant,
    ) -> Changes {
        if !self.connections.contains_key(&conn) {
            return Changes::default();
        }
        let cached = CachedState {
            state,
            page_ts,
            received: now,
            source,
            tab_closed: self.closed_tabs.contains(&tab),
        };
        self.states.insert(tab, (conn, cached));
        Changes {
            states: vec![tab],
            ..Changes::default()
        }
    }

    /// Removes the cached states `which(conn, tab)` selects; returns their tabs.
    fn drop_states(&mut self, which: impl Fn(ConnId, TabId) -> bool) -> Vec<TabId> {
        let tabs: Vec<TabId> = self
            .states
            .iter()
            .filter(|(tab, (conn, _))| which(*conn, **tab))
            .map(|(tab, _)| *tab)
            .collect();
        for tab in &tabs {
            self.states.remove(tab);
        }
        tabs
    }

    pub fn cached_state(&self, tab: TabId) -> Option<CachedState> {
        self.states.get(&tab).map(|(_, s)| s.clone())
    }

    pub fn tabs_with_state(&self) -> Vec<TabId> {
        let mut tabs: Vec<TabId> = self.states.keys().copied().collect();
        tabs.sort_unstable();
        tabs
    }

    /// The tab state queries go to without an explicit tab: the most recently focused tab that
    /// has site tools or a cached state.
    pub fn default_state_tab(&self) -> Option<TabId> {
        self.tabs
            .iter()
            .filter(|(id, t)| !t.tools.is_empty() || self.states.contains_key(id))
            .max_by_key(|(id, t)| (t.rank(), **id))
            .map(|(id, _)| *id)
    }

    /// The connection a state request for `tab` goes to: the tab's, or that of its last state
    /// while the tab is not closed.
    pub fn state_connection(&self, tab: TabId) -> Result<ConnId, WireError> {
        match self.tabs.get(&tab) {
            Some(t) => Ok(t.conn),
            None => match self.states.get(&tab) {
                Some((conn, cached)) if !cached.tab_closed => Ok(*conn),
                _ => Err(text::unknown_tab(tab, self.closed_tabs.contains(&tab))),
            },
        }
    }

    // ----- requests -------------------------------------------------------------------------

    /// Registers request `frame` (given its new id) to `conn` about `tab`, and sends it.
    pub fn start<T>(
        &mut self,
        conn: ConnId,
        tab: Option<TabId>,
        kind: Kind<T>,
        frame: impl FnOnce(RequestId) -> ToExtension,
    ) -> Result<Started<T>, WireError> {
        self.start_carrying(conn, tab, kind, &[], frame)
    }

    /// [`Registry::start`] for a call that carries `files`: its frame declares them, and their
    /// bytes follow it in `upload_chunk` frames.
    pub fn start_carrying<T>(
        &mut self,
        conn: ConnId,
        tab: Option<TabId>,
        kind: Kind<T>,
        files: &[UploadFile],
        frame: impl FnOnce(RequestId) -> ToExtension,
    ) -> Result<Started<T>, WireError> {
        if self.pending.len() >= MAX_PENDING {
            return Err(WireError::new(
                ErrorCode::TooMany,
                format!(
                    "{MAX_PENDING} requests are waiting for the browser already; try again shortly"
                ),
            ));
        }
        // The hold check is made here, under the lock the request starts under, by the hub;
        // a peer passes its caller's name on for the hub to decide.
        let caller = agents::caller();
        let relays_hub = self.relays_hub(conn);
        if !relays_hub {
            self.agents.admit(caller.as_ref(), tab)?;
        }
        let id = uuid::Uuid::new_v4().to_string();
        let mut encoded = frame(id.clone()).encode();
        if let (true, Some(caller)) = (relays_hub, &caller) {
            agents::stamp(&mut encoded, caller);
        }
        let call = &id;
        let chunks = files.iter().enumerate().flat_map(|(file, upload)| {
            upload.chunks().enumerate().map(move |(index, data)| {
                ToExtension::UploadChunk {
                    id: call.clone(),
                    file,
                    index,
                    data: data.to_owned(),
                }
                .encode()
            })
        });
        let sent = self.connections.get(&conn).is_some_and(|c| {
            std::iter::once(encoded)
                .chain(chunks)
                .all(|frame| c.outbox.send(frame).is_ok())
        });
        if !sent {
            return Err(text::connection_closed());
        }
        Ok(self.pending.insert(id, conn, tab, kind))
    }

    /// Whether connection `conn` is the hub this process is a peer of.
    pub fn relays_hub(&self, conn: ConnId) -> bool {
        self.connections.get(&conn).is_some_and(|c| c.relays_hub)
    }

    /// Delivers `conn`'s answer to whoever waits for request `id`; answers for requests that
    /// finished already (late after a timeout) or belong to another connection are dropped.
    pub fn resolve(&mut self, conn: ConnId, id: &str, answer: Answer) {
        match self.pending.resolve(conn, id, answer) {
            Resolution::Delivered => {}
            Resolution::Unknown => {
                tracing::debug!(conn, %id, "answer for an unknown or finished request; dropped")
            }
            Resolution::WrongConnection => {
                tracing::warn!(conn, %id, "answer from a socket the request was not sent to; dropped")
            }
        }
    }

    pub fn progress(&self, conn: ConnId, id: &str, report: PageProgress) {
        if !self.pending.progress(conn, id, report) {
            tracing::debug!(conn, %id, "progress for an unknown or finished request; dropped");
        }
    }

    /// Forgets request `id` if it is still pending and tells its page to cancel it.
    pub fn abandon(&mut self, id: &str) {
        if let Some(conn) = self.pending.remove(id) {
            tracing::debug!(%id, "request abandoned (timeout or caller gone); cancelling it");
            self.send(conn, &ToExtension::Cancel { id: id.to_owned() });
        }
    }

    #[cfg_attr(not(test), allow(dead_code))] // For tests, and the bound on pending requests.
    pub fn pending_requests(&self) -> usize {
        self.pending.len()
    }

    // ----- tools ----------------------------------------------------------------------------

    /// The tab a call of `tool` goes to, and its connection.
    pub fn select(&self, tool: &str, tab: Option<TabId>) -> Result<(TabId, ConnId), WireError> {
        let caller = agents::caller();
        let usable = |t: TabId| self.agents.admit(caller.as_ref(), Some(t)).is_ok();
        tabs::select(
            &self.tabs,
            |t| self.closed_tabs.contains(&t),
            usable,
            tool,
            tab,
        )
    }

    /// Until when a call that finds no tab for `tool` waits for the tabs of a dropped connection
    /// to come back (the tab it names, or the latest dropped one): `None` when it should not.
    pub fn reannounce_deadline(
        &self,
        tool: &str,
        tab: Option<TabId>,
        now: Instant,
    ) -> Option<Instant> {
        if self.select(tool, tab).is_ok() {
            return None;
        }
        self.orphans
            .iter()
            .filter(|(id, _)| tab.is_none_or(|tab| tab == *id))
            .map(|(_, at)| *at + REANNOUNCE_GRACE)
            .max()
            .filter(|until| *until > now)
    }

    pub fn exported_tools(&self) -> Vec<Arc<ToolSpec>> {
        self.exported.values().cloned().collect()
    }

    pub fn exported_tools_named(&self, name: &str) -> Option<Arc<ToolSpec>> {
        self.exported.get(name).cloned()
    }

    /// The site tool named `name`: the exported one, else one a loaded adapter (or a connected
    /// extension's code adapter) defines though no tab offers it now. The one place that decides
    /// whether a site tool exists.
    pub fn tool(&self, name: &str) -> Result<Arc<ToolSpec>, WireError> {
        if let Some(spec) = self.exported.get(name) {
            return Ok(spec.clone());
        }
        let code = self.connections.values().flat_map(Connection::code);
        self.adapters
            .iter()
            .chain(code)
            .find_map(|a| Some(ToolSpec::of(a, a.tool_named(name)?)))
            .map(Arc::new)
            .ok_or_else(|| text::no_such_tool(name))
    }

    /// The arguments of site tool `name` whose files its `upload` steps put on the page (the hub
    /// reads them before the call starts); none for a tool it does not know.
    pub fn upload_arguments(&self, name: &str) -> Vec<String> {
        self.adapters
            .iter()
            .find_map(|a| a.tool_named(name))
            .map(|tool| {
                tool.upload_arguments()
                    .into_iter()
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The URL `tab` showed last.
    pub fn tab_url(&self, tab: TabId) -> Option<&str> {
        self.tabs.get(&tab).map(|t| t.url.as_str())
    }

    /// Every known tab, the one calls go to by default first.
    pub fn tabs(&self) -> Vec<TabInfo> {
        let (list, focused) = tabs::ranked(&self.tabs);
        list.into_iter()
            .map(|(id, t)| TabInfo {
                id,
                url: t.url.clone(),
                title: t.title.clone(),
                tools: t.tool_names(),
                focused: Some(id) == focused,
                runtime: t.runtime,
            })
            .collect()
    }

    /// Every known tab with its full tool specs (what a hub mirrors to its peers), by id, and the
    /// most recently focused one.
    pub fn tab_tools(&self) -> (Vec<TabTools>, Option<TabId>) {
        let (_, focused) = tabs::ranked(&self.tabs);
        let mut ids: Vec<&TabId> = self.tabs.keys().collect();
        ids.sort_unstable();
        let tabs = ids
            .into_iter()
            .map(|id| {
                let t = &self.tabs[id];
                TabTools {
                    tab: *id,
                    url: t.url.clone(),
                    title: t.title.clone(),
                    tools: t
                        .tools
                        .iter()
                        .map(|tool| OfferedTool::Described(ToolSpec::clone(tool)))
                        .collect(),
                    runtime: t.runtime,
                }
            })
            .collect();
        (tabs, focused)
    }

    /// Whether `tab` registered, after logical time `since`, tools of one of `adapters` (of any
    /// adapter when empty); `seen` remembers it was known, so that its absence means closed.
    pub fn tools_registered(
        &self,
        tab: TabId,
        adapters: &[&str],
        since: u64,
        seen: &mut bool,
    ) -> Option<ToolsWait> {
        let Some(t) = self.tabs.get(&tab) else {
            return seen.then_some(ToolsWait::TabClosed);
        };
        *seen = true;
        let fresh = t.registered_at > since
            && t.tools
                .iter()
                .any(|tool| adapters.is_empty() || adapters.contains(&tool.adapter.as_str()));
        fresh.then(|| ToolsWait::Registered(t.tool_names()))
    }

    /// The connection `open_tab` goes to: `tab`'s, else that of the most recently focused tab,
    /// else the newest connection (it knows all its tabs).
    pub fn open_tab_connection(&self, tab: Option<TabId>) -> Result<ConnId, WireError> {
        match tab.and_then(|t| self.tabs.get(&t)) {
            Some(t) => Ok(t.conn),
            None => self
                .tabs
                .values()
                .max_by_key(|t| t.rank())
                .map(|t| t.conn)
                .or_else(|| self.connections.keys().max().copied())
                .ok_or_else(|| self.not_connected()),
        }
    }

    // ----- what the connections said -------------------------------------------------------

    /// The code adapters the connected extensions bundle (as their `hello` declared them), by
    /// connection.
    pub fn code_adapters(&self) -> Vec<PackedAdapter> {
        self.by_connection()
            .filter_map(|c| c.hello.as_ref())
            .flat_map(|h| h.declared.iter().cloned())
            .collect()
    }

    /// What each connected extension said about its browser (`None` before its `hello`).
    pub fn browsers(&self) -> Vec<Option<BrowserInfo>> {
        self.by_connection()
            .map(|c| c.hello.as_ref().map(|h| h.browser.clone()))
            .collect()
    }

    fn by_connection(&self) -> impl Iterator<Item = &Connection> {
        let mut conns: Vec<(&ConnId, &Connection)> = self.connections.iter().collect();
        conns.sort_by_key(|(id, _)| **id);
        conns.into_iter().map(|(_, c)| c)
    }

    pub fn clock(&self) -> u64 {
        self.clock
    }

    pub fn connected(&self) -> bool {
        !self.connections.is_empty()
    }

    /// Whether an extension is connected and has told us its tabs.
    pub fn browser_ready(&self) -> bool {
        self.connections.values().any(|c| c.snapshot_seen)
    }
}

#[cfg(test)]
mod tests;

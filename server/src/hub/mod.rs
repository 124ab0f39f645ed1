//! The browser side of tabwire, independent of MCP and of the socket library. [`Hub`] is its
//! async face: frames from the extension connections in, requests to their tabs out, each
//! correlated by a UUID, bounded by a timeout (then cancelled on the page) and never lost
//! silently; a closed tab, a closed socket or a bad frame fails it at once. A request's timeout
//! restarts whenever its page reports progress, up to a hard ceiling. Watchers hear of changes
//! through a tool-set generation (MCP's `tools/list_changed`), a tab generation and the tabs
//! whose cached state changed (resource subscribers).
//!
//! Its parts, each testable alone:
//! - [`registry`]: everything known (connections, tabs, tools, states, pending requests) under
//!   one lock, changed synchronously;
//! - [`pending`]: the typed table of requests waiting for an answer;
//! - [`socket`]: the extension connections and the frames they send;
//! - [`vetting`]: the tools a tab may offer, and their specs;
//! - [`tabs`]: tab ranking and which tab a call goes to;
//! - [`text`]: what a person is told when something is not there or did not work.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bridge::adapter::Adapter;
use bridge::browser_ops::{BrowserOp, TabAction};
use bridge::grants::{GrantChange, GrantList};
use bridge::packed::PackedAdapter;
use bridge::page::PageCall;
use bridge::page_ops::{PageOp, WireOp};
use bridge::protocol::{BrowserInfo, RequestId, RuntimeKind, TabTools, ToolSpec};
use bridge::upload::UploadFile;
use bridge::{ErrorCode, TabId, ToExtension, WireError};
use serde_json::Value;
use tokio::sync::{broadcast, mpsc, watch};
use tokio::time::Instant;

pub mod agents;
mod holding;
mod inbox;
mod pending;
mod registry;
mod socket;
mod tabs;
pub mod text;
mod vetting;

pub use inbox::Inbox;
pub use pending::{CallDone, OpenedTab, PageProgress};
pub use text::Link;
#[cfg(test)]
pub(crate) use vetting::RESERVED_TOOL_NAMES;

use pending::{Started, Waiter};
use registry::{Changes, Registry};

/// A call's timeout restarts on progress, but the call never runs longer than this many
/// timeouts in all.
const PROGRESS_CEILING_FACTOR: u32 = 4;

/// Identifies one extension connection (one socket) for the life of the process.
pub type ConnId = u64;

/// Encoded frames on their way to one socket's writer task.
pub type Outbox = mpsc::UnboundedSender<String>;

#[derive(Debug, Clone)]
pub struct HubConfig {
    pub port: u16,
    pub call_timeout: Duration,
    /// This process, as told to the extension in `welcome`.
    pub instance_id: String,
    pub adapters: Vec<Adapter>,
    /// The user's grants, read at each call for trusted input (`None`: never trusted input).
    pub grants: Option<crate::grants::Grants>,
    /// Where calls' files come from (`None`: calls cannot upload).
    pub uploads: Option<crate::uploads::Uploads>,
}

/// A change of a grant the user asked for in the popup, from connection `conn`: the grant keeper
/// (`grant_sync.rs`) makes it and answers `id` on `conn` ([`Hub::send_to`]).
#[derive(Debug, Clone, PartialEq)]
pub struct GrantRequest {
    pub conn: ConnId,
    pub id: RequestId,
    pub change: GrantChange,
    pub tab: Option<TabId>,
}

/// A recording the user saves from the popup, from connection `conn`: the recorder
/// (`recorder.rs`) drafts its tool, saves it and answers `id` on `conn` ([`Hub::send_to`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordingRequest {
    pub conn: ConnId,
    pub id: RequestId,
    pub tab: TabId,
    pub origin: String,
    pub start_url: String,
    pub tool: bridge::recording::ToolDraft,
    pub steps: Vec<bridge::recording::RecordedStep>,
}

/// The files a call puts on the page.
#[derive(Debug, Clone, PartialEq)]
pub enum CallFiles {
    /// Names in this process's uploads directory, read before the call starts.
    Named(Vec<String>),
    /// Read already, by the peer that routed the call here (its uploads directory decided).
    Read(Vec<UploadFile>),
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

/// How waiting for a tab's tools ended.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolsWait {
    Registered(Vec<String>),
    TabClosed,
    TimedOut,
}

pub struct Hub {
    call_timeout: Duration,
    registry: Mutex<Registry>,
    /// Bumped when the exported tool set changes.
    tools_generation: watch::Sender<u64>,
    /// Bumped on every change to connections or tabs (what waiters re-check).
    tabs_generation: watch::Sender<u64>,
    /// The tab whose cached state changed (set, replaced or dropped).
    state_changes: broadcast::Sender<TabId>,
    grants: Option<crate::grants::Grants>,
    /// The popup's grant changes, for the grant keeper.
    grant_requests: Inbox<GrantRequest>,
    /// The popup's recordings to save, for the recorder.
    recording_requests: Inbox<RecordingRequest>,
    uploads: Option<crate::uploads::Uploads>,
}

impl Hub {
    pub fn new(config: HubConfig) -> Hub {
        Hub {
            grant_requests: Inbox::default(),
            recording_requests: Inbox::default(),
            call_timeout: config.call_timeout,
            registry: Mutex::new(Registry::new(
                config.port,
                config.instance_id,
                config.adapters,
            )),
            tools_generation: watch::Sender::new(0),
            tabs_generation: watch::Sender::new(0),
            state_changes: broadcast::Sender::new(256),
            grants: config.grants,
            uploads: config.uploads,
        }
    }

    /// A call's files, read before it starts: a name that breaks a rule fails the call with
    /// nothing sent.
    async fn read_uploads(&self, files: CallFiles) -> Result<Vec<UploadFile>, WireError> {
        let names = match files {
            CallFiles::Read(files) => return Ok(files),
            CallFiles::Named(names) if names.is_empty() => return Ok(Vec::new()),
            CallFiles::Named(names) => names,
        };
        let Some(uploads) = self.uploads.clone() else {
            return Err(WireError::new(
                ErrorCode::FileRefused,
                "this tabwire process has no uploads directory: calls cannot upload files",
            ));
        };
        tokio::task::spawn_blocking(move || uploads.read(&names))
            .await
            .map_err(|e| WireError::new(ErrorCode::Internal, format!("reading the files: {e}")))?
    }

    /// The file names site tool `tool`'s `upload` steps take from `args` (an absent or null
    /// argument: none, as for an upload in a branch the call does not take).
    fn site_tool_uploads(&self, tool: &str, args: &Value) -> Result<Vec<String>, WireError> {
        let mut names = Vec::new();
        for argument in self.registry().upload_arguments(tool) {
            match args.get(&argument) {
                None | Some(Value::Null) => {}
                Some(value) => names.extend(bridge::upload::names_in(value).map_err(|why| {
                    WireError::new(ErrorCode::InvalidArgs, format!("`{argument}`: {why}"))
                })?),
            }
        }
        Ok(names)
    }

    /// Whether a call's input in a tab showing `url` goes through Chrome's debugger: the user
    /// turned trusted input on for its origin (`tabwire allow --trusted-input`, the popup, or a
    /// yes to the question). Decided here, at each call, so a grant or revoke takes effect at once.
    fn trusted_input_at(&self, url: Option<&str>) -> bool {
        let origin = url.and_then(|url| bridge::Origin::of_url(url).ok());
        match (&self.grants, origin) {
            (Some(grants), Some(origin)) => {
                grants.allows(&origin, crate::grants::Need::TrustedInput)
            }
            _ => false,
        }
    }

    fn registry(&self) -> MutexGuard<'_, Registry> {
        // The registry is consistent between statements, so a panic elsewhere must not take
        // the browser side down with it.
        self.registry.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Changes the registry with `change`, then tells the watchers what changed.
    fn change<T>(&self, change: impl FnOnce(&mut Registry) -> (T, Changes)) -> T {
        let (value, changes) = change(&mut self.registry());
        for tab in changes.states {
            let _ = self.state_changes.send(tab);
        }
        if changes.tools {
            self.tools_generation.send_modify(|g| *g += 1);
        }
        if changes.tabs {
            self.tabs_generation.send_modify(|g| *g += 1);
        }
        value
    }

    fn apply(&self, change: impl FnOnce(&mut Registry) -> Changes) {
        self.change(|r| ((), change(r)));
    }

    pub fn adapters(&self) -> Arc<Vec<Adapter>> {
        self.registry().adapters()
    }

    /// Live reload: serve `adapters` from now on and push them to every connected extension,
    /// whose tabs then announce their tools again (which moves the tool generation).
    pub fn set_adapters(&self, adapters: Vec<Adapter>) {
        self.registry().set_adapters(adapters);
    }

    /// What an adapter store serves to (`AdapterStore::serve_to`): each set it serves replaces
    /// this hub's, unless equal. It holds the hub weakly, and the hub never the store.
    pub fn adapters_server(self: &Arc<Self>) -> impl Fn(Vec<Adapter>) + Send + Sync + 'static {
        let hub = Arc::downgrade(self);
        move |set| {
            if let Some(hub) = hub.upgrade()
                && *hub.adapters() != set
            {
                hub.set_adapters(set);
            }
        }
    }

    pub fn set_link(&self, link: Link) {
        self.registry().set_link(link);
    }

    /// The popup's grant changes as they arrive (the first caller gets them; later ones `None`).
    pub fn take_grant_requests(&self) -> Option<mpsc::UnboundedReceiver<GrantRequest>> {
        self.grant_requests.take()
    }

    /// The popup's recordings to save as they arrive (the first caller gets them).
    pub fn take_recording_requests(&self) -> Option<mpsc::UnboundedReceiver<RecordingRequest>> {
        self.recording_requests.take()
    }

    /// Tells the extensions `grants` when they differ from what they were told last (and every
    /// extension that connects later); whether they differed.
    pub fn set_grants(&self, grants: GrantList, all_origins: bool) -> bool {
        let frame = ToExtension::Grants {
            grants,
            all_origins,
        }
        .encode();
        self.registry().set_grants(frame)
    }

    /// Sends `message` to connection `conn` (if it is still there).
    pub fn send_to(&self, conn: ConnId, message: &ToExtension) {
        self.registry().send(conn, message);
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

    // ----- the MCP side ---------------------------------------------------------------------

    /// The tools offered to MCP clients, one per name, sorted by name.
    pub fn exported_tools(&self) -> Vec<Arc<ToolSpec>> {
        self.registry().exported_tools()
    }

    /// The tool a tab offers under `name`, as MCP clients see it.
    pub fn exported_tool(&self, name: &str) -> Option<Arc<ToolSpec>> {
        self.registry().exported_tools_named(name)
    }

    /// The site tool named `name`, offered by a tab or defined by a loaded adapter; NO_SUCH_TOOL
    /// when there is none.
    pub fn tool(&self, name: &str) -> Result<Arc<ToolSpec>, WireError> {
        self.registry().tool(name)
    }

    /// The tab a call of site tool `tool` goes to (`tab`, or the best one offering it), if any.
    pub fn pick_tab(&self, tool: &str, tab: Option<TabId>) -> Option<TabId> {
        self.registry().select(tool, tab).ok().map(|(tab, _)| tab)
    }

    /// Every known tab, the one calls go to by default first.
    pub fn tabs(&self) -> Vec<TabInfo> {
        self.registry().tabs()
    }

    /// The URL `tab` showed when its runtime last said (kept by `tab_navigated`), if it is known.
    pub fn tab_url(&self, tab: TabId) -> Option<String> {
        self.registry().tab_url(tab).map(str::to_owned)
    }

    /// Every known tab with its full tool specs (for peers), and the most recently focused one.
    pub fn tab_tools(&self) -> (Vec<TabTools>, Option<TabId>) {
        self.registry().tab_tools()
    }

    /// The NOT_CONNECTED error a browser tool answers now.
    pub fn not_connected_error(&self) -> WireError {
        self.registry().not_connected()
    }

    /// The code adapters the connected extensions bundle (from their `hello`), by connection.
    pub fn code_adapters(&self) -> Vec<PackedAdapter> {
        self.registry().code_adapters()
    }

    /// The names of the code adapters whose match patterns cover `url`.
    pub fn code_adapters_matching(&self, url: &str) -> Vec<String> {
        self.code_adapters()
            .into_iter()
            .filter(|a| a.matches_url(url))
            .map(|a| a.name)
            .collect()
    }

    /// What each connected extension said about its browser (`None` before its `hello`).
    pub fn browsers(&self) -> Vec<Option<BrowserInfo>> {
        self.registry().browsers()
    }

    /// `tab`'s cached state, if the page reported one.
    pub fn cached_state(&self, tab: TabId) -> Option<CachedState> {
        self.registry().cached_state(tab)
    }

    /// The tabs that have a cached state, by id.
    pub fn tabs_with_state(&self) -> Vec<TabId> {
        self.registry().tabs_with_state()
    }

    /// The tab state queries go to without an explicit tab: the most recently focused tab
    /// that has site tools or a cached state.
    pub fn default_state_tab(&self) -> Option<TabId> {
        self.registry().default_state_tab()
    }

    /// A logical time: registrations after it are newer (see [`Hub::wait_for_tools`]).
    pub fn now(&self) -> u64 {
        self.registry().clock()
    }

    /// Whether an extension socket is open.
    pub fn connected(&self) -> bool {
        self.registry().connected()
    }

    /// Whether an extension is connected and has told us its tabs.
    pub fn browser_ready(&self) -> bool {
        self.registry().browser_ready()
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
        self.wait_until(deadline, || {
            self.registry()
                .tools_registered(tab, adapters, since, &mut seen)
        })
        .await
        .unwrap_or(ToolsWait::TimedOut)
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

    /// Asks `tab`'s page for its current state; a fresh answer also refreshes the cache.
    pub async fn request_state(&self, tab: TabId) -> Result<Value, WireError> {
        let (started, conn) = {
            let mut registry = self.registry();
            registry.check_connected()?;
            let conn = registry.state_connection(tab)?;
            let started = registry.start(conn, Some(tab), Waiter::State, |id| {
                ToExtension::RequestState { id, tab }
            })?;
            (started, conn)
        };
        let state = self
            .finish(started, None, || format!("the state of tab {tab}"))
            .await?;
        self.apply(|r| {
            r.store_state(
                conn,
                tab,
                state.clone(),
                0,
                StateSource::Page,
                Instant::now(),
            )
        });
        Ok(state)
    }

    /// Calls `tool` with `args` in `tab` (or the best tab offering it) and waits for the answer.
    pub async fn call_tool(
        &self,
        tool: &str,
        args: Value,
        tab: Option<TabId>,
    ) -> Result<Value, WireError> {
        self.call_tool_reporting(tool, args, tab, None)
            .await
            .map(|done| done.result)
    }

    /// [`Hub::call_tool`], passing the page's progress reports to `progress`.
    pub async fn call_tool_reporting(
        &self,
        tool: &str,
        args: Value,
        tab: Option<TabId>,
        progress: Option<mpsc::UnboundedSender<PageProgress>>,
    ) -> Result<CallDone, WireError> {
        let files = CallFiles::Named(self.site_tool_uploads(tool, &args)?);
        self.call_tool_carrying(tool, args, tab, progress, files)
            .await
    }

    /// [`Hub::call_tool_reporting`] with the call's `files` decided (a peer's routed call).
    pub async fn call_tool_carrying(
        &self,
        tool: &str,
        args: Value,
        tab: Option<TabId>,
        progress: Option<mpsc::UnboundedSender<PageProgress>>,
        files: CallFiles,
    ) -> Result<CallDone, WireError> {
        let timeout_ms = self.page_budget_ms();
        // While a dropped browser connection may still re-announce its tabs, a call that finds
        // no tab for it waits for them, so a call made as the extension reconnects is not told
        // the tab is gone.
        let reannounced = self
            .registry()
            .reannounce_deadline(tool, tab, Instant::now());
        if let Some(until) = reannounced {
            self.wait_until(until, || self.registry().select(tool, tab).ok().map(drop))
                .await;
        }
        let files = self.read_uploads(files).await?;
        let (started, tab, url, trusted_input) = {
            let mut registry = self.registry();
            registry.check_connected()?;
            let (tab, conn) = registry.select(tool, tab)?;
            let url = registry.tab_url(tab).map(str::to_owned);
            let trusted_input = self.trusted_input_at(url.as_deref());
            let started = registry.start_carrying(conn, Some(tab), Waiter::Call, &files, |id| {
                ToExtension::CallTool {
                    id,
                    tab,
                    tool: tool.to_owned(),
                    args,
                    timeout_ms,
                    trusted_input,
                    files: files.iter().map(UploadFile::declared).collect(),
                }
            })?;
            (started, tab, url, trusted_input)
        };
        self.finish(started, progress, || format!("{tool} in tab {tab}"))
            .await
            .map_err(|e| match trusted_input {
                true => e,
                false => text::with_trusted_input_hint(e, url.as_deref()),
            })
    }

    /// Runs page operation `op` ([`bridge::page_ops`]) in `tab` (absent: the browser's focused tab),
    /// whose runtime the extension injects where it does not run; `doc` is the document the
    /// call's ref came from; `origin` and `trusted_input` are what the permission gate allowed
    /// (it read the grants already); `files` what it puts on the page. Answers the page's result.
    #[allow(clippy::too_many_arguments)]
    pub async fn page_op(
        &self,
        op: &PageOp,
        tab: Option<TabId>,
        doc: Option<String>,
        origin: Option<String>,
        trusted_input: bool,
        files: CallFiles,
    ) -> Result<Value, WireError> {
        let timeout_ms = self.page_budget_ms();
        let files = self.read_uploads(files).await?;
        // A NO_EFFECT's advice names the origin the gate allowed (the registry may not know the
        // URL of a page whose runtime was only just injected).
        let hint_origin = origin.clone();
        // A ref of a cross-origin frame (`f3e12`) goes to that frame's runtime.
        let frame = op.named_ref().map_or(0, |r| r.frame);
        let call = PageCall {
            op: WireOp::of(op),
            frame,
            doc,
            origin,
            timeout_ms,
            trusted_input,
            files: files.iter().map(UploadFile::declared).collect(),
        };
        let (started, url) = {
            let mut registry = self.registry();
            registry.check_connected()?;
            let conn = registry.open_tab_connection(tab)?;
            let url = tab.and_then(|t| registry.tab_url(t)).map(str::to_owned);
            let started = registry.start_carrying(conn, tab, Waiter::Call, &files, |id| {
                ToExtension::PageOp { id, tab, call }
            })?;
            (started, url)
        };
        let what = match tab {
            Some(tab) => format!("{} in tab {tab}", op.tool()),
            None => format!("{} in the focused tab", op.tool()),
        };
        // An act that set a page loading is answered once that page committed: where it landed.
        self.finish(started, None, || what)
            .await
            .map(|done: CallDone| {
                let mut result = done.result;
                if let Some(landed) = done.navigated {
                    result["landed"] = landed.into();
                }
                result
            })
            .map_err(|e| match trusted_input {
                true => e,
                false => text::with_trusted_input_hint(e, hint_origin.or(url).as_deref()),
            })
    }

    /// Navigates `tab` to `url`, or opens a new tab; returns the tab's id. With `wait_loaded`,
    /// the extension answers once the page has loaded (at most that long) and says what it saw.
    pub async fn open_tab(
        &self,
        url: &str,
        tab: Option<TabId>,
        wait_loaded: Option<Duration>,
    ) -> Result<OpenedTab, WireError> {
        let budget = self.page_budget_ms();
        let (started, relayed) = {
            let mut registry = self.registry();
            registry.check_connected()?;
            let conn = registry.open_tab_connection(tab)?;
            let relayed = registry.relays_hub(conn);
            let started =
                registry.start(conn, tab, Waiter::OpenTab, |id| ToExtension::OpenTab {
                    id,
                    url: url.to_owned(),
                    tab,
                    // Within the call's own deadline, so the answer always comes first.
                    wait_loaded_ms: wait_loaded.map(|wait| {
                        u64::try_from(wait.as_millis())
                            .unwrap_or(u64::MAX)
                            .min(budget)
                    }),
                })?;
            (started, relayed)
        };
        let opened: OpenedTab = self
            .finish(started, None, || format!("opening {url}"))
            .await?;
        // The agent that opened a tab holds it (the hub of a peer decided that already).
        if !relayed {
            let caller = agents::caller();
            self.apply(|r| {
                r.agents.opened(caller.as_ref(), opened.tab);
                r.agents_changed()
            });
        }
        Ok(opened)
    }

    /// Has the browser perform `op` (on its tab's connection, else the most recent one) and
    /// returns its answer, undecoded (see [`bridge::browser_ops`] for each op's).
    pub async fn browser(&self, op: BrowserOp) -> Result<Value, WireError> {
        if let BrowserOp::Tab { tab, action } = &op
            && let Some(decided) = self.hold_change(*tab, *action)
        {
            return decided;
        }
        let tab = op.tab();
        let what = match &op {
            BrowserOp::ListTabs => "listing the tabs".to_owned(),
            BrowserOp::Tab { tab, action } => format!("{} of tab {tab}", action.as_str()),
            BrowserOp::Capture(capture) => format!("a screenshot of tab {}", capture.tab),
            BrowserOp::Downloads { tab } => format!("the downloads of tab {tab}"),
            BrowserOp::Handoff(show) => format!("handing tab {} to the person", show.tab),
            BrowserOp::HandoffAnswer { .. } => "the person's answer to a hand-off".to_owned(),
            BrowserOp::EndHandoff { .. } => "ending a hand-off".to_owned(),
        };
        // A request about the tab it closes must not fail as TAB_CLOSED when it succeeds.
        let fails_with_tab = match &op {
            BrowserOp::Tab {
                action: TabAction::Close,
                ..
            }
            | BrowserOp::ListTabs => None,
            BrowserOp::Tab { .. }
            | BrowserOp::Capture(_)
            | BrowserOp::Downloads { .. }
            | BrowserOp::Handoff(_) => tab,
            BrowserOp::HandoffAnswer { .. } | BrowserOp::EndHandoff { .. } => None,
        };
        // Issue 28: the hub marks a tab as waiting for the person while a hand-off shows.
        let handoff_mark = self.handoff_mark(&op);
        let lists_tabs = matches!(op, BrowserOp::ListTabs);
        let (started, relayed) = {
            let mut registry = self.registry();
            registry.check_connected()?;
            let conn = registry.open_tab_connection(tab)?;
            let started = registry.start(conn, fails_with_tab, Waiter::Browser, |id| {
                ToExtension::Browser { id, op }
            })?;
            (started, registry.relays_hub(conn))
        };
        let answer = self.finish(started, None, || what).await;
        // A hand-off shows once the browser showed it; it is over once asked to end, whatever
        // the browser answered (a browser gone has no window left either).
        if !relayed
            && let Some(mark) = handoff_mark
            && (answer.is_ok() || matches!(mark, holding::HandoffMark::Ended(_)))
        {
            self.mark_handoff(mark);
        }
        let answer = answer?;
        Ok(match lists_tabs {
            true => self.with_holders(answer, relayed),
            false => answer,
        })
    }

    fn timeout_ms(&self) -> u64 {
        u64::try_from(self.call_timeout.as_millis()).unwrap_or(u64::MAX)
    }

    /// The time the page is given: a little less than ours, so that a page's own, more precise
    /// failure ("no element matches ...") arrives before our generic TIMEOUT.
    fn page_budget_ms(&self) -> u64 {
        let total = self.timeout_ms();
        total - (total / 10).min(1000)
    }

    /// Waits for a started request's answer. The timeout restarts on every progress report
    /// (each also passed on to `report`), but never runs past the hard ceiling.
    async fn finish<T>(
        &self,
        started: Started<T>,
        report: Option<mpsc::UnboundedSender<PageProgress>>,
        what: impl FnOnce() -> String,
    ) -> Result<T, WireError> {
        let Started {
            id,
            mut answer,
            mut progress,
        } = started;
        // Whatever ends this wait (an answer, the timeout, or the caller giving up and dropping
        // this future), the guard makes sure nothing stays pending and the page is told to stop.
        let _guard = AbandonOnDrop { hub: self, id };
        let timeout = self.call_timeout;
        let ceiling = Instant::now() + timeout * PROGRESS_CEILING_FACTOR;
        let mut deadline = Instant::now() + timeout;
        let mut progressed = false;
        loop {
            tokio::select! {
                outcome = &mut answer => {
                    return outcome.unwrap_or_else(|_| Err(WireError::new(
                        bridge::ErrorCode::Internal,
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
                    let at_ceiling = progressed && deadline >= ceiling;
                    let ms = if at_ceiling {
                        self.timeout_ms() * u64::from(PROGRESS_CEILING_FACTOR)
                    } else {
                        self.timeout_ms()
                    };
                    return Err(text::timed_out(&what(), ms, at_ceiling));
                }
            }
        }
    }
}

struct AbandonOnDrop<'a> {
    hub: &'a Hub,
    id: bridge::protocol::RequestId,
}

impl Drop for AbandonOnDrop<'_> {
    fn drop(&mut self) {
        self.hub.registry().abandon(&self.id);
    }
}

#[cfg(test)]
mod tests;

//! The MCP face of tabwire, and (with the HTTP transport in `http`) the only module that knows rmcp: the meta-tools (`browser_tabs`,
//! `browser_open`, `site_call`, `site_state`), the per-site tools the hub exports, tool results
//! and errors, the tab and state resources, cancellation and progress of calls, and
//! `tools/list_changed` / `resources/updated` through both of rmcp's delivery paths (the legacy
//! notifications and the 2026-07-28 `subscriptions/listen` stream), fed by the hub.

use std::collections::HashSet;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bridge::args;
use bridge::protocol::ToolSpec;
use bridge::{ErrorCode, TabId, WireError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
    ServerCapabilities, ServerConfig, SubscribeRequestParams, SubscriptionFilter, Tool,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::service::{QuitReason, ServerInitializeError};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::{broadcast, mpsc, watch};

use crate::audit::{self, AuditLog};
use crate::browser_tools::{PageTab, Screenshots};
use crate::hub::agents::{self, AgentName};
use crate::hub::{Hub, PageProgress};
use crate::page_tools::PageTools;
use crate::permission::Permission;
use crate::site_state::{self, ResourceUri, STATE_URI_TEMPLATE, TABS_URI};

/// A burst of tool changes (a snapshot of many tabs) is announced once, this long after its
/// first change.
const COALESCE: Duration = Duration::from_millis(20);

/// At most one `tools/list_changed` per this long, whatever a page does: changes meanwhile are
/// announced together by the next one.
const MIN_NOTICE_INTERVAL: Duration = Duration::from_millis(500);

/// How long the first `tools/list` waits for an expected browser's tools.
const FIRST_LIST_WAIT: Duration = Duration::from_millis(1500);

const INSTRUCTIONS: &str = "Tabwire drives websites in the user's own browser. Site tools are \
named <site>_<tool> and act on the most recently focused tab offering them (pass tab_id to \
choose another). On any page, page_snapshot shows elements with refs (eN) that page_act acts on. browser_tabs lists tabs and their tools, browser_open opens a page and waits \
for its tools, site_call calls any site tool by name, site_state reads a tab's state. \
Resources: tabwire://tabs and tabwire://tabs/{tab_id}/state.";

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("starting MCP on stdio: {0}")]
    Start(Box<ServerInitializeError>),
    #[error("serving MCP on stdio: {0}")]
    Serve(tokio::task::JoinError),
}

/// What stands between the model and the user's browser: the permission gate, the audit log,
/// and where screenshots asked for as files and saved downloads go. One per process, shared by its MCP sessions.
pub struct Safeguards {
    pub permission: Permission,
    pub audit: AuditLog,
    pub screenshots: Screenshots,
    pub downloads: crate::downloads::Downloads,
    /// Where `site_save` saves (and so serves from).
    pub adapter_store: Arc<crate::adapter_store::AdapterStore>,
}

/// Serves MCP on stdin/stdout until stdin closes.
pub async fn serve_stdio(
    hub: Arc<Hub>,
    safeguards: Arc<Safeguards>,
    browser_expected: bool,
) -> Result<(), ServeError> {
    let (stdin, stdout) = rmcp::transport::io::stdio_pipes();
    let (closed, closing) = watch::channel(false);
    let handler = TabwireMcp::new(hub, safeguards, browser_expected, closing);
    let stdin = SignalEof {
        inner: stdin,
        closed,
    };
    let service = match handler.serve((stdin, stdout)).await {
        Ok(service) => service,
        Err(ServerInitializeError::ConnectionClosed(_)) => {
            tracing::info!("stdin closed before the MCP session started");
            return Ok(());
        }
        Err(e) => return Err(ServeError::Start(Box::new(e))),
    };
    let reason: QuitReason = service.waiting().await.map_err(ServeError::Serve)?;
    tracing::info!(?reason, "MCP session ended");
    Ok(())
}

/// Passes reads through and raises `closed` at end of input, so long-running handlers
/// (subscriptions, calls waiting for a page) end at once instead of holding up the exit:
/// rmcp waits for in-flight handlers for a while after stdin closes.
struct SignalEof<R> {
    inner: R,
    closed: watch::Sender<bool>,
}

impl<R: AsyncRead + Unpin> AsyncRead for SignalEof<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        let at_end = match &polled {
            Poll::Ready(Ok(())) => buf.filled().len() == before && buf.remaining() > 0,
            Poll::Ready(Err(_)) => true,
            Poll::Pending => false,
        };
        if at_end {
            this.closed.send_replace(true);
        }
        polled
    }
}

/// Resolves once stdin has closed.
async fn stdin_closed(mut closing: watch::Receiver<bool>) {
    // An error means the sender is gone, which also means the input is done.
    let _ = closing.wait_for(|closed| *closed).await;
}

pub struct TabwireMcp {
    pub(crate) hub: Arc<Hub>,
    pub(crate) safeguards: Arc<Safeguards>,
    /// Becomes true when stdin closes.
    closing: watch::Receiver<bool>,
    /// A browser connected to tabwire before: the first `tools/list` waits briefly for it.
    browser_expected: bool,
    first_list_done: AtomicBool,
    meta_tools: Vec<Tool>,
    pub(crate) page_tools: PageTools,
    /// The last `tools/list` answer and the tool generation it was built from.
    listed: Mutex<Option<(u64, Arc<Vec<Tool>>)>>,
    /// Resource URIs this session subscribed to with the legacy `resources/subscribe`.
    subscribed: Arc<Mutex<HashSet<String>>>,
    /// This session as an agent (issue 28), named once its client said who it is.
    agent: std::sync::OnceLock<AgentName>,
}

impl Drop for TabwireMcp {
    /// The session ended: its agent leaves, and the tabs it held are shared again.
    fn drop(&mut self) {
        if let Some(agent) = self.agent.get() {
            self.hub.leave_agent(agent);
        }
    }
}

impl TabwireMcp {
    pub fn new(
        hub: Arc<Hub>,
        safeguards: Arc<Safeguards>,
        browser_expected: bool,
        closing: watch::Receiver<bool>,
    ) -> Self {
        TabwireMcp {
            hub,
            safeguards,
            closing,
            browser_expected,
            first_list_done: AtomicBool::new(false),
            meta_tools: meta_tools(),
            page_tools: PageTools::default(),
            listed: Mutex::new(None),
            subscribed: Arc::default(),
            agent: std::sync::OnceLock::new(),
        }
    }

    /// This session's agent, named from its client's `clientInfo` name the first time it is
    /// needed (a client that skipped initialization is named `agent`).
    fn agent(&self, peer: &rmcp::Peer<RoleServer>) -> AgentName {
        self.agent
            .get_or_init(|| {
                let client = peer
                    .peer_info()
                    .map(|info| info.client_info.name.clone())
                    .unwrap_or_default();
                let name = self.hub.join_agent(&client);
                tracing::info!(agent = %name, client = %client, "an MCP session joined as an agent");
                name
            })
            .clone()
    }

    fn all_tools(&self) -> Arc<Vec<Tool>> {
        // Read the generation before the tools: a change in between only makes the cache
        // entry look older than it is, so it is rebuilt next time, never served stale.
        let generation = self.hub.tools_generation();
        let mut listed = self.listed.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((built_for, tools)) = listed.as_ref()
            && *built_for == generation
        {
            return tools.clone();
        }
        let mut tools = self.meta_tools.clone();
        tools.extend(self.hub.exported_tools().iter().map(|spec| site_tool(spec)));
        let tools = Arc::new(tools);
        *listed = Some((generation, tools.clone()));
        tools
    }

    /// Calls site tool `spec` with `args`, once they fit its schema (and, for a tool the model
    /// saved or recorded, once its tab's origin passed the page tools' gate).
    async fn call_site_tool(
        &self,
        spec: &ToolSpec,
        args: JsonObject,
        tab: Option<TabId>,
        report: Option<mpsc::UnboundedSender<PageProgress>>,
        peer: &rmcp::Peer<RoleServer>,
    ) -> Result<CallToolResult, WireError> {
        args::check(&spec.input_schema, &args).map_err(|e| e.for_tool(&spec.name))?;
        self.gate_learned_tool(spec, tab, peer).await?;
        let done = self
            .hub
            .call_tool_reporting(&spec.name, Value::Object(args), tab, report)
            .await
            .map_err(|e| with_locator_hint(spec, e))?;
        let mut result = success(done.result);
        if let Some(url) = done.navigated {
            // Said beside the result (whose shape the adapter's output schema may fix).
            result
                .content
                .push(ContentBlock::text(format!("The page navigated to {url}.")));
        }
        Ok(result)
    }

    /// A call made while the browser is probably connecting (within the connect window after the
    /// server started or the extension's probe reached the port) waits for it, bounded, instead
    /// of answering NOT_CONNECTED.
    async fn wait_for_connecting_browser(&self) {
        if self.hub.browser_ready() {
            return;
        }
        let Some(end) = crate::diagnostics::connect_window_end() else {
            return;
        };
        let left = end.saturating_duration_since(Instant::now());
        if !left.is_zero() {
            let ready = self.hub.wait_for_browser(left).await;
            tracing::debug!(ready, "a call waited for a connecting browser");
        }
    }

    /// Runs one tools/call; progress reports go to `report`. Calling a tool that does not exist
    /// is protocol misuse (a JSON-RPC error); every other failure, arguments that do not fit the
    /// tool's schema included, is a tool failure the model reads (SEP-1303), with its code.
    /// `target` learns the tab (and origin) the call acted on, for the audit log.
    async fn dispatch(
        &self,
        name: &str,
        mut args: JsonObject,
        report: Option<mpsc::UnboundedSender<PageProgress>>,
        peer: &rmcp::Peer<RoleServer>,
        target: &mut Option<PageTab>,
    ) -> Result<Result<CallToolResult, Failure>, ErrorData> {
        self.wait_for_connecting_browser().await;
        let outcome = match table::find(name) {
            Some(tool) => {
                let request = table::Request {
                    args,
                    peer,
                    report,
                    target,
                };
                tool.call(self, request).await
            }
            None => {
                let spec = self
                    .hub
                    .tool(name)
                    .map_err(|e| ErrorData::invalid_params(e.message, None))?;
                match dispatch::take_tab_id(&mut args) {
                    Ok(tab) => {
                        *target = self.site_tool_target(name, tab);
                        match self.hub.admit(target.as_ref().map(|t| t.tab)) {
                            Ok(()) => self
                                .call_site_tool(&spec, args, tab, report, peer)
                                .await
                                .map_err(Failure::from),
                            Err(held) => Err(held.into()),
                        }
                    }
                    Err(e) => Err(e.into()),
                }
            }
        };
        Ok(outcome)
    }

    /// The per-origin gate of a learned adapter's tool (issue 26): a tool of an adapter the model
    /// saved or the recorder made acts only on an origin the user allowed page tools on, as a
    /// page tool does; a hand-installed adapter's tools are not gated (SECURITY.md).
    async fn gate_learned_tool(
        &self,
        spec: &ToolSpec,
        tab: Option<TabId>,
        peer: &rmcp::Peer<RoleServer>,
    ) -> Result<(), WireError> {
        let learned = self.safeguards.adapter_store.is_learned(&spec.adapter);
        if !learned {
            return Ok(());
        }
        // Gated on the tab the call goes to now; no tab offering it means no call at all.
        let Some(target) = self.site_tool_target(&spec.name, tab) else {
            return Err(WireError::new(
                ErrorCode::NoSuchTool,
                format!(
                    "no open tab offers {}; open its site with browser_open",
                    spec.name
                ),
            ));
        };
        if target.origin.is_empty() {
            return Err(WireError::new(
                ErrorCode::PermissionRequired,
                format!(
                    "{} is a tool of an adapter the assistant saved or recorded: it acts only on \
                     a website the user allowed page tools on, and tab {} shows none",
                    spec.name, target.tab
                ),
            ));
        }
        let origin = target.origin;
        let permission = &self.safeguards.permission;
        permission
            .authorize(peer, &origin, crate::grants::Need::PageTools)
            .await
            .map(drop)
    }

    /// The tab a site tool call goes to, and its origin (for the audit log).
    fn site_tool_target(&self, tool: &str, tab: Option<TabId>) -> Option<PageTab> {
        let tab = self.hub.pick_tab(tool, tab)?;
        let url = self.hub.tabs().into_iter().find(|t| t.id == tab)?.url;
        Some(PageTab {
            tab,
            origin: bridge::origin::text_of(&url).unwrap_or_default(),
            url,
        })
    }

    /// Appends the call to the audit log.
    fn audit(
        &self,
        peer: &rmcp::Peer<RoleServer>,
        agent: &str,
        tool: &str,
        target: Option<PageTab>,
        outcome: &Result<Result<CallToolResult, Failure>, ErrorData>,
        started: Instant,
    ) {
        let outcome = match outcome {
            Ok(Ok(_)) => "ok".to_owned(),
            Ok(Err(failure)) => failure.error.code.as_str().to_owned(),
            Err(e) => format!("JSON-RPC {}", e.code.0),
        };
        self.record_audit(peer, agent, tool, target, outcome, started);
    }

    /// Appends a call (or a read the server made for one) to the audit log: `outcome` is `ok`
    /// or the failure's code.
    fn record_audit(
        &self,
        peer: &rmcp::Peer<RoleServer>,
        agent: &str,
        tool: &str,
        target: Option<PageTab>,
        outcome: String,
        started: Instant,
    ) {
        let client = peer
            .peer_info()
            .map(|info| info.client_info.name.clone())
            .unwrap_or_default();
        self.safeguards.audit.record(&audit::Entry {
            time: audit::now(),
            client,
            agent: Some(agent.to_owned()),
            tool: tool.to_owned(),
            origin: target
                .as_ref()
                .map(|t| t.origin.clone())
                .filter(|o| !o.is_empty()),
            tab: target.map(|t| t.tab),
            outcome,
            ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        });
    }

    /// The resources clients can list: the tab list and the state of each tab with tools
    /// or a cached state.
    fn resources(&self) -> Vec<Resource> {
        let mut tabs: Vec<TabId> = self
            .hub
            .tabs()
            .into_iter()
            .filter(|t| !t.tools.is_empty())
            .map(|t| t.id)
            .collect();
        tabs.extend(self.hub.tabs_with_state());
        tabs.sort_unstable();
        tabs.dedup();
        let mut resources = vec![
            Resource::new(TABS_URI, "tabs")
                .with_title("Browser tabs")
                .with_description("The tabs Tabwire sees, with their site tools")
                .with_mime_type("application/json"),
        ];
        resources.extend(tabs.into_iter().map(|tab| {
            Resource::new(site_state::state_uri(tab), format!("tab {tab} state"))
                .with_description("The site state of the tab, as its adapter reports it")
                .with_mime_type("application/json")
        }));
        resources
    }

    /// Sends the legacy `notifications/resources/updated` for subscribed resources.
    fn spawn_resource_notifier(&self, peer: rmcp::Peer<RoleServer>) {
        let mut changes = ResourceChanges::new(&self.hub);
        let subscribed = self.subscribed.clone();
        tokio::spawn(async move {
            while let Some(uri) = changes.next().await {
                let wanted = subscribed
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .contains(&uri);
                if !wanted {
                    continue;
                }
                let param = rmcp::model::ResourceUpdatedNotificationParam::new(uri);
                if let Err(e) = peer.notify_resource_updated(param).await {
                    tracing::debug!(error = %e, "client gone; no more resource notifications");
                    break;
                }
            }
        });
    }

    /// Sends the legacy `notifications/tools/list_changed` after every (coalesced) change.
    fn spawn_legacy_notifier(&self, peer: rmcp::Peer<RoleServer>) {
        let mut changes = ToolChanges::new(self.hub.subscribe_tools());
        tokio::spawn(async move {
            while changes.next().await {
                if let Err(e) = peer.notify_tool_list_changed().await {
                    tracing::debug!(error = %e, "client gone; no more tool-list notifications");
                    break;
                }
            }
        });
    }
}

/// The resources whose content changes, one URI at a time.
struct ResourceChanges {
    states: broadcast::Receiver<TabId>,
    tabs: watch::Receiver<u64>,
}

impl ResourceChanges {
    fn new(hub: &Hub) -> ResourceChanges {
        ResourceChanges {
            states: hub.subscribe_states(),
            tabs: hub.subscribe_tabs(),
        }
    }

    /// The next changed resource's URI; `None` once the hub is gone. (Both waits are
    /// cancel-safe, so this can sit in a `select!`.)
    async fn next(&mut self) -> Option<String> {
        tokio::select! {
            changed = self.states.recv() => match changed {
                Ok(tab) => Some(site_state::state_uri(tab)),
                // Missed some: the tab list at least is worth re-reading.
                Err(broadcast::error::RecvError::Lagged(_)) => Some(TABS_URI.to_owned()),
                Err(broadcast::error::RecvError::Closed) => None,
            },
            changed = self.tabs.changed() => {
                changed.ok()?;
                // A burst of tab changes is announced once.
                tokio::time::sleep(COALESCE).await;
                self.tabs.mark_unchanged();
                Some(TABS_URI.to_owned())
            }
        }
    }
}

/// Forwards a call's progress to the client as `notifications/progress` under `token`, with
/// a value that always grows (the page's own, when it gives one that does).
fn spawn_progress_forwarder(
    peer: rmcp::Peer<RoleServer>,
    token: ProgressToken,
) -> mpsc::UnboundedSender<PageProgress> {
    let (report, mut reports) = mpsc::unbounded_channel::<PageProgress>();
    tokio::spawn(async move {
        let mut last = 0.0_f64;
        while let Some(step) = reports.recv().await {
            last = match step.progress {
                Some(p) if p > last => p,
                _ => last + 1.0,
            };
            let mut param = ProgressNotificationParam::new(token.clone(), last);
            param.total = step.total.filter(|total| *total >= last);
            param.message = step.message;
            if let Err(e) = peer.notify_progress(param).await {
                tracing::debug!(error = %e, "client gone; no more progress");
                break;
            }
        }
    });
    report
}

/// The tool-set changes one client hears of, coalesced: a burst is announced once it settled
/// ([`COALESCE`]), and never sooner than [`MIN_NOTICE_INTERVAL`] after the last announcement.
struct ToolChanges {
    generation: watch::Receiver<u64>,
    last: Option<tokio::time::Instant>,
}

impl ToolChanges {
    fn new(generation: watch::Receiver<u64>) -> Self {
        ToolChanges {
            generation,
            last: None,
        }
    }

    /// Waits for the next change to announce; false when the hub is gone.
    async fn next(&mut self) -> bool {
        if self.generation.changed().await.is_err() {
            return false;
        }
        let settled = tokio::time::Instant::now() + COALESCE;
        let allowed = self.last.map_or(settled, |last| last + MIN_NOTICE_INTERVAL);
        tokio::time::sleep_until(settled.max(allowed)).await;
        self.generation.mark_unchanged();
        self.last = Some(tokio::time::Instant::now());
        true
    }
}

impl ServerHandler for TabwireMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .enable_resources_subscribe()
                .build(),
        )
        .with_server_info(Implementation::new("tabwire", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // Clients that ignore list_changed only ever see their first list: give an expected
        // browser a moment to report its tools.
        if !self.first_list_done.swap(true, Ordering::Relaxed)
            && (self.browser_expected || self.hub.connected())
            && !self.hub.browser_ready()
        {
            let ready = self.hub.wait_for_browser(FIRST_LIST_WAIT).await;
            tracing::debug!(ready, "first tools/list waited for the browser");
        }
        Ok(ListToolsResult::with_all_items(
            self.all_tools().as_ref().clone(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.meta_tools
            .iter()
            .find(|t| t.name == name)
            .cloned()
            .or_else(|| self.hub.exported_tool(name).map(|spec| site_tool(&spec)))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let report = context
            .meta
            .get_progress_token()
            .map(|token| spawn_progress_forwarder(context.peer.clone(), token));
        let started = Instant::now();
        let mut target = None;
        let agent = self.agent(&context.peer);
        let agent_call = self.hub.agent_call(&agent);
        let known_as: AgentName = self.hub.agent_known_as(&agent).into();
        let call = agents::as_agent_known_as(
            agent.clone(),
            known_as.clone(),
            self.dispatch(
                request.name.as_ref(),
                args,
                report,
                &context.peer,
                &mut target,
            ),
        );
        // Dropping the call (the client cancelled it, the person stopped its agent, or nobody
        // can read the answer once stdin is closed) frees its pending entry and cancels it on
        // the page.
        let outcome = tokio::select! {
            result = call => result,
            () = agents::until_stopped_opt(agent_call.as_ref()) => {
                Ok(Err(Failure::from(agents::stopped_error(&agent))))
            }
            () = context.ct.cancelled() => {
                tracing::debug!(id = %context.id, "the client cancelled the call");
                Err(ErrorData::internal_error("the client cancelled the call", None))
            }
            () = stdin_closed(self.closing.clone()) => {
                Err(ErrorData::internal_error("tabwire is shutting down", None))
            }
        };
        self.audit(
            &context.peer,
            &known_as,
            &request.name,
            target,
            &outcome,
            started,
        );
        outcome.map(|answer| answer.unwrap_or_else(Failure::into_result).into())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        tracing::info!("MCP client initialized");
        self.agent(&context.peer);
        self.spawn_legacy_notifier(context.peer.clone());
        self.spawn_resource_notifier(context.peer.clone());
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(self.resources()))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(STATE_URI_TEMPLATE, "tab state")
                .with_description("The site state of a tab, as its adapter reports it")
                .with_mime_type("application/json"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let value = match ResourceUri::parse(&uri) {
            Some(ResourceUri::Tabs) => json!({"tabs": self.hub.tabs()}),
            Some(ResourceUri::State(tab)) => site_state::site_state(&self.hub, tab, false)
                .await
                .map_err(|e| ErrorData::resource_not_found(format!("{uri}: {e}"), None))?,
            None => return Err(unknown_resource(&uri)),
        };
        let mut text = value.to_string();
        if let Some((_, short)) = site_state::cap(&value, &text) {
            text = short;
        }
        let contents = ResourceContents::text(text, uri).with_mime_type("application/json");
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    #[allow(deprecated)] // Legacy clients (before 2026-07-28) still subscribe this way.
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if ResourceUri::parse(&request.uri).is_none() {
            return Err(unknown_resource(&request.uri));
        }
        self.subscribed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(request.uri);
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscribed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&request.uri);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let tools = context.accepted().tools_list_changed == Some(true);
        let resources: HashSet<String> = context
            .accepted()
            .resource_subscriptions
            .iter()
            .flatten()
            .cloned()
            .collect();
        let mut tool_changes = ToolChanges::new(self.hub.subscribe_tools());
        let mut changes = ResourceChanges::new(&self.hub);
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                () = stdin_closed(self.closing.clone()) => return Ok(()),
                changed = tool_changes.next(), if tools => {
                    if !changed {
                        return Ok(());
                    }
                    if let Err(e) = context.sink().notify_tool_list_changed().await {
                        tracing::debug!(error = %e, "subscription closed");
                        return Ok(());
                    }
                }
                changed = changes.next(), if !resources.is_empty() => {
                    let Some(uri) = changed else { return Ok(()) };
                    if !resources.contains(&uri) {
                        continue;
                    }
                    if let Err(e) = context.sink().notify_resource_updated(uri).await {
                        tracing::debug!(error = %e, "subscription closed");
                        return Ok(());
                    }
                }
            }
        }
    }
}

/// An argument of a meta-tool that does not fit.
fn bad_argument(tool: &str, problem: &str) -> WireError {
    WireError::new(ErrorCode::InvalidArgs, format!("{tool}: {problem}"))
}

fn unknown_resource(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(
        format!("no resource {uri:?}; tabwire serves {TABS_URI} and {STATE_URI_TEMPLATE}"),
        None,
    )
}

/// An adapter step's missing element, told as the locator that no longer matches and that page
/// tools still work there ([`bridge::step_failure`]); a page's own (WebMCP) tools get no hint.
fn with_locator_hint(spec: &ToolSpec, mut error: WireError) -> WireError {
    if spec.adapter != bridge::webmcp::ADAPTER
        && let Some(failure) = bridge::step_failure::StepFailure::of(&error)
    {
        error.message.push_str(&failure.hint());
    }
    error
}

/// A tool that ran: `structuredContent` is the page's result if it is an object, else
/// `{"result": value}`; the text is the result's compact JSON.
pub(crate) fn success(value: Value) -> CallToolResult {
    let text = value.to_string();
    if let Some((structured, short)) = site_state::cap(&value, &text) {
        let mut result = CallToolResult::structured(structured);
        result.content = vec![ContentBlock::text(short)];
        return result;
    }
    let structured = match value {
        Value::Object(_) => value,
        other => json!({ "result": other }),
    };
    let mut result = CallToolResult::structured(structured);
    result.content = vec![ContentBlock::text(text)];
    result
}

/// A tool call that failed: its error, and what else its structured content says (a refused
/// save's kind, a dry run's results). The audit log reads its code from here.
pub(crate) struct Failure {
    pub error: WireError,
    details: JsonObject,
}

impl From<WireError> for Failure {
    fn from(error: WireError) -> Failure {
        Failure {
            error,
            details: JsonObject::new(),
        }
    }
}

impl Failure {
    /// `error`, with `details` (an object) beside it in the structured content.
    pub fn with(error: WireError, details: Value) -> Failure {
        Failure {
            error,
            details: match details {
                Value::Object(details) => details,
                _ => JsonObject::new(),
            },
        }
    }

    /// Text `"<CODE>: <message>"`, structured `{"error": {code, message}, ...details}`, with
    /// `"effect": "maybe"` when the action may have been performed.
    fn into_result(self) -> CallToolResult {
        let mut structured = JsonObject::new();
        structured.insert("error".into(), json!(self.error));
        structured.extend(self.details);
        let mut result = CallToolResult::structured_error(Value::Object(structured));
        result.content = vec![ContentBlock::text(self.error.to_string())];
        result
    }
}

pub(crate) fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

mod dispatch;
pub(crate) mod listing;
mod meta;
mod page;
mod save;
mod table;
pub(crate) mod typed;

pub use listing::meta_tool_summaries;
use listing::{meta_tools, site_tool};
pub(crate) use table::{About, Call, Hints, Needs, ReadFrom, Reading, ServerTool};
#[cfg(test)]
mod tests;

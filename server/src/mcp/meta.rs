//! The meta-tools that need no page of their own: `browser_tabs`, `browser_open`, `site_call`
//! and `site_state`, each one [`ServerTool`] (what it is, its typed arguments and its handler).

use std::time::{Duration, Instant};

use bridge::{ErrorCode, TabId, WireError};
use rmcp::model::{CallToolResult, JsonObject};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::listing::TAB_ID_DESCRIPTION;
use super::table::{About, Call, Hints, Needs, ReadFrom, Reading, ServerTool};
use super::typed::TabIdArgument;
use super::{Failure, TabwireMcp, bad_argument, success};
use crate::browser_tools::{self, PageTab};
use crate::hub::{PageProgress, ToolsWait};
use crate::site_state;

/// How long `browser_tabs` waits for the browser's list of every tab before it answers with
/// the tabs with site tools only (the worker answers within milliseconds; this bounds a stuck one).
const TAB_LIST_WAIT: Duration = Duration::from_millis(1500);

/// How long `browser_open` waits for the page to register its site tools.
const OPEN_WAIT: Duration = Duration::from_secs(10);

/// How long `browser_open` waits, on a page no adapter matches, for the tools the page registered
/// itself (WebMCP) while loading to arrive once it has loaded.
const PAGE_TOOLS_WAIT: Duration = Duration::from_secs(3);

/// `browser_tabs`: whether a browser is connected (and how many), every http(s) tab with its
/// site tools and whether page tools are allowed on its origin (only the tabs with tools when
/// the browser cannot list them), and when there is nothing to use, a note saying why and
/// what the user should do.
pub(crate) struct BrowserTabs;

/// A tool that takes no arguments of its own.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct NoArgs {}

impl ServerTool for BrowserTabs {
    const ABOUT: About = About {
        name: "browser_tabs",
        title: "Browser tabs",
        description: "Whether a browser is connected, and every web tab: id, URL, title, site \
            tools, and whether page tools are allowed on its origin. When nothing can be used, a \
            note says why and what the user should do.",
        hints: Hints::READS_AGAIN_ALIKE,
        tab_id: TabIdArgument::None,
        needs: Needs::Nothing,
    };
    type Given = NoArgs;
    type Args = NoArgs;

    async fn run(mcp: &TabwireMcp, _: Call<NoArgs>) -> Result<CallToolResult, Failure> {
        Ok(success(browser_tabs(mcp).await))
    }
}

async fn browser_tabs(mcp: &TabwireMcp) -> Value {
    let browsers = mcp.hub.browsers().len();
    let tabs = mcp.hub.tabs();
    let mut answer = json!({"connected": browsers > 0, "browsers": browsers, "tabs": tabs});
    if browsers > 0 {
        let all = browser_tools::all_tabs(&mcp.hub, &mcp.safeguards.permission);
        match tokio::time::timeout(TAB_LIST_WAIT, all).await {
            Ok(Ok(Value::Object(all))) => answer.as_object_mut().expect("an object").extend(all),
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::debug!(error = %e, "the browser could not list its tabs"),
            Err(_) => tracing::debug!("the browser did not list its tabs in time"),
        }
    }
    if browsers == 0 {
        answer["note"] = Value::from(mcp.hub.not_connected_error().message);
    } else if answer["tabs"].as_array().is_some_and(Vec::is_empty) {
        answer["note"] = Value::from(
            "a browser is connected but no open tab offers tools: open a site with \
             browser_open (one an adapter covers, or a page with WebMCP tools)",
        );
    }
    answer
}

/// `browser_open`: opens a URL (or navigates `tab_id`) and waits for the page's site tools.
pub(crate) struct BrowserOpen;

#[derive(Deserialize, JsonSchema)]
pub(crate) struct OpenArgs {
    /// An http(s) URL
    url: String,
}

impl ServerTool for BrowserOpen {
    const ABOUT: About = About {
        name: "browser_open",
        title: "Open a page",
        description: "Open a URL in a new tab (or navigate tab_id) and wait until the page's site \
            tools are ready. Returns the tab id and its tools.",
        hints: Hints::says(false, false, true),
        tab_id: TabIdArgument::Shown(Some("Navigate this tab instead of opening a new one")),
        needs: Needs::Nothing,
    };
    type Given = OpenArgs;
    type Args = WebUrl;

    async fn run(mcp: &TabwireMcp, call: Call<WebUrl>) -> Result<CallToolResult, Failure> {
        open(mcp, call.args.0, call.tab, call.report.as_ref()).await
    }
}

/// An http(s) URL: what `browser_open` opens.
pub(crate) struct WebUrl(String);

impl ReadFrom<OpenArgs> for WebUrl {
    fn read_from(given: OpenArgs, _: &mut Reading<'_>) -> Result<Self, WireError> {
        let OpenArgs { url } = given;
        if !bridge::pattern::is_web_url(&url) {
            return Err(bad_argument(
                BrowserOpen::ABOUT.name,
                &format!("{url:?} is not an http:// or https:// URL"),
            ));
        }
        Ok(WebUrl(url))
    }
}

async fn open(
    mcp: &TabwireMcp,
    url: String,
    tab: Option<TabId>,
    report: Option<&mpsc::UnboundedSender<PageProgress>>,
) -> Result<CallToolResult, Failure> {
    let since = mcp.hub.now();
    // One deadline for the load and the tools, so the call never takes longer than OPEN_WAIT.
    let deadline = Instant::now() + OPEN_WAIT;
    let opened = mcp.hub.open_tab(&url, tab, Some(OPEN_WAIT)).await?;
    let tab = opened.tab;
    let loaded = mcp.hub.adapters();
    let code_adapters = mcp.hub.code_adapters_matching(&url);
    let mut adapters: Vec<&str> = loaded
        .iter()
        .filter(|a| a.matches_url(&url))
        .map(|a| a.name.as_str())
        .chain(code_adapters.iter().map(String::as_str))
        .collect();
    if let Some(report) = report {
        let _ = report.send(PageProgress {
            message: Some(format!("tab {tab} is loading {url}")),
            progress: None,
            total: None,
        });
    }
    if adapters.is_empty() {
        // No adapter: only tools the page registers itself (WebMCP), which the extension saw
        // being asked for while the page loaded. A page that did not finish loading in time
        // (or an extension that does not say) may still have registered some already.
        let note = match opened.loaded {
            None => "no adapter matches this URL, and the page had not finished loading".to_owned(),
            Some(page) if !page.runtime => {
                "no adapter matches this URL and the page registered no tools while loading: \
                 the page tools (page_snapshot, page_act) work on it"
                    .to_owned()
            }
            Some(_) => format!(
                "the page did not register its tools within {} s of loading; browser_tabs \
                 shows them once it does",
                PAGE_TOOLS_WAIT.as_secs()
            ),
        };
        let wait = match opened.loaded {
            Some(page) if page.runtime => {
                PAGE_TOOLS_WAIT.min(deadline.saturating_duration_since(Instant::now()))
            }
            _ => Duration::ZERO,
        };
        let waited = mcp.hub.wait_for_tools(tab, &[], since, wait).await;
        return tools_answer(waited, tab, &url, "while its page loaded", note);
    }
    // A page an adapter serves may also register its own tools (WebMCP).
    adapters.push(bridge::webmcp::ADAPTER);
    let left = deadline.saturating_duration_since(Instant::now());
    let waited = mcp.hub.wait_for_tools(tab, &adapters, since, left).await;
    let note = format!(
        "the page did not register its site tools within {} s; browser_tabs shows them once it \
         does",
        OPEN_WAIT.as_secs()
    );
    tools_answer(
        waited,
        tab,
        &url,
        "before its page registered its tools",
        note,
    )
}

/// `browser_open`'s answer once the wait for the page's tools ended: its tools, or none and
/// `note` saying why, or `TAB_CLOSED` (the tab was closed `when`).
fn tools_answer(
    waited: ToolsWait,
    tab: TabId,
    url: &str,
    when: &str,
    note: String,
) -> Result<CallToolResult, Failure> {
    match waited {
        ToolsWait::Registered(tools) => {
            Ok(success(json!({"tab_id": tab, "url": url, "tools": tools})))
        }
        ToolsWait::TabClosed => {
            Err(WireError::new(ErrorCode::TabClosed, format!("tab {tab} was closed {when}")).into())
        }
        ToolsWait::TimedOut => Ok(success(
            json!({"tab_id": tab, "url": url, "tools": [], "note": note}),
        )),
    }
}

/// `site_call`: any site tool by name, for clients whose tool list is behind.
pub(crate) struct SiteCall;

/// `site_call`'s arguments: the site tool and its own arguments.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct SiteCallArgs {
    /// e.g. todomvc_add_todo
    tool: String,
    /// The tool's arguments
    #[serde(default)]
    args: JsonObject,
}

impl ServerTool for SiteCall {
    const ABOUT: About = About {
        name: "site_call",
        title: "Call a site tool",
        description: "Call a site tool by name (see browser_tabs) with its arguments, e.g. one \
            your tool list does not show yet.",
        hints: Hints::OPEN_WORLD,
        tab_id: TabIdArgument::Shown(Some(TAB_ID_DESCRIPTION)),
        needs: Needs::Nothing,
    };
    type Given = SiteCallArgs;
    type Args = SiteCallArgs;

    /// The site tool's tab, as a direct call of it records.
    fn audited(mcp: &TabwireMcp, args: &SiteCallArgs, tab: Option<TabId>) -> Option<PageTab> {
        mcp.site_tool_target(&args.tool, tab)
    }

    async fn run(mcp: &TabwireMcp, call: Call<SiteCallArgs>) -> Result<CallToolResult, Failure> {
        let spec = mcp.hub.tool(&call.args.tool)?;
        Ok(mcp
            .call_site_tool(&spec, call.args.args, call.tab, call.report, &call.peer)
            .await?)
    }
}

/// `site_state`: a tab's site state, cached or fresh.
pub(crate) struct SiteState;

#[derive(Deserialize, JsonSchema)]
pub(crate) struct StateArgs {
    /// Ask the page now
    #[serde(default)]
    force_refresh: bool,
}

impl ServerTool for SiteState {
    const ABOUT: About = About {
        name: "site_state",
        title: "Site state",
        description: "Read a tab's site state: cached (with its age) by default, fresh from the \
            page with force_refresh.",
        hints: Hints::READS_AGAIN_ALIKE,
        tab_id: TabIdArgument::Shown(Some(TAB_ID_DESCRIPTION)),
        needs: Needs::Nothing,
    };
    type Given = StateArgs;
    type Args = StateArgs;

    async fn run(mcp: &TabwireMcp, call: Call<StateArgs>) -> Result<CallToolResult, Failure> {
        let Some(tab) = call.tab.or_else(|| mcp.hub.default_state_tab()) else {
            return Err(WireError::new(
                ErrorCode::NoSuchTab,
                "no tab has site tools or state; open a site with browser_open",
            )
            .into());
        };
        Ok(success(
            site_state::site_state(&mcp.hub, tab, call.args.force_refresh).await?,
        ))
    }
}

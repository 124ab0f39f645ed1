//! Whether an adapter still works on its site: its read-only tools (those that need no argument)
//! run once in a tab that shows the site ([`run_read_only`]). `site_save` runs them before it
//! saves (the dry run), and `tabwire adapters test URL|--all` ([`run_cli`]) runs them for every
//! adapter of a page, or every adapter with a `test_url`, printing a table of pass/fail with the
//! failing step and the locator that no longer matches.
//!
//! `adapters test` reaches the browser as `tabwire mcp` does: it serves the port when no tabwire
//! holds it (the extension connects to it within seconds), or joins the running one as a peer
//! (`peer.rs`), whose browser then opens the pages. Either way the adapters that run are those
//! the browser was given: the running tabwire's own, when there is one.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use bridge::adapter::Adapter;
use bridge::browser_ops::{BrowserOp, TabAction};
use bridge::step_failure::StepFailure;
use bridge::{ErrorCode, TabId, WireError};
use serde_json::{Value, json};

use crate::adapter_store::AdapterStore;
use crate::cli::AdaptersTestArgs;
use crate::hub::{Hub, HubConfig, ToolsWait};

/// How long a tab may take to offer an adapter's tools once its page loads.
pub const TOOLS_WAIT: Duration = Duration::from_secs(10);

/// One read-only tool's answer.
#[derive(Debug)]
pub struct ToolRun {
    /// Its public name.
    pub tool: String,
    pub outcome: Result<Value, WireError>,
}

impl ToolRun {
    pub fn to_json(&self) -> Value {
        match &self.outcome {
            Ok(result) => json!({"tool": self.tool, "ok": true, "result": result}),
            Err(error) => json!({"tool": self.tool, "ok": false, "error": error}),
        }
    }
}

/// Waits (up to [`TOOLS_WAIT`]) until `tab` offers `adapter`'s tools registered after logical
/// time `since`, then runs each read-only tool that needs no argument.
pub async fn run_read_only(
    hub: &Hub,
    adapter: &Adapter,
    tab: TabId,
    since: u64,
) -> Result<Vec<ToolRun>, WireError> {
    match hub
        .wait_for_tools(tab, &[adapter.name.as_str()], since, TOOLS_WAIT)
        .await
    {
        ToolsWait::Registered(_) => {}
        ToolsWait::TabClosed => {
            return Err(WireError::new(
                ErrorCode::TabClosed,
                format!("tab {tab} was closed before it offered the adapter's tools"),
            ));
        }
        ToolsWait::TimedOut => {
            let url = hub.tab_url(tab).unwrap_or_default();
            return Err(WireError::new(
                ErrorCode::AdapterError,
                format!(
                    "tab {tab} ({url}) did not offer the tools of adapter {:?} within {} s: do \
                     its `match` patterns (and `match_selector`) fit this page?",
                    adapter.name,
                    TOOLS_WAIT.as_secs()
                ),
            ));
        }
    }
    let mut runs = Vec::new();
    for tool in &adapter.tools {
        let needs_arguments = tool
            .input_schema
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|required| !required.is_empty());
        if !tool.annotations.read_only || needs_arguments {
            continue;
        }
        let name = bridge::names::public_tool_name(&adapter.name, &tool.name);
        let outcome = hub.call_tool(&name, json!({}), Some(tab)).await;
        runs.push(ToolRun {
            tool: name,
            outcome,
        });
    }
    Ok(runs)
}

/// One line of `adapters test`'s table.
struct Row {
    adapter: String,
    tool: String,
    failure: Option<WireError>,
}

/// `tabwire adapters test`: the table on stdout; whether everything passed.
pub fn run_cli(
    args: &AdaptersTestArgs,
    user_adapters: std::path::PathBuf,
    secret: crate::pairing::Secret,
) -> anyhow::Result<bool> {
    let (_, loaded) = AdapterStore::open(user_adapters, &args.adapter_dirs, &[])?;
    for problem in &loaded.problems {
        eprintln!("{problem}");
    }
    let targets: Vec<(Adapter, String)> = match &args.url {
        Some(url) => loaded
            .adapters
            .iter()
            .filter(|a| a.matches_url(url))
            .map(|a| (a.clone(), url.clone()))
            .collect(),
        None => loaded
            .adapters
            .iter()
            .filter_map(|a| Some((a.clone(), a.test_url.clone()?)))
            .collect(),
    };
    if targets.is_empty() {
        anyhow::bail!(match &args.url {
            Some(url) => format!("no adapter matches {url}"),
            None => "no adapter has a test_url (add one to test it with --all, or name a URL)"
                .to_owned(),
        });
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let rows = runtime.block_on(async {
        let hub = Arc::new(Hub::new(HubConfig {
            port: args.connection.port,
            call_timeout: Duration::from_millis(args.call_timeout_ms),
            instance_id: uuid::Uuid::new_v4().to_string(),
            adapters: loaded.adapters.clone(),
            grants: None,
            uploads: None,
        }));
        let policy = Arc::new(crate::auth::HandshakePolicy::new(
            &args.extension_id,
            secret,
        ));
        tokio::spawn(crate::ws::run(
            args.connection.port,
            hub.clone(),
            policy,
            None,
            false,
        ));
        let wait = Duration::from_millis(args.wait_ms);
        if !hub.wait_for_browser(wait).await {
            anyhow::bail!(
                "no browser connected within {} ms: is Chrome running with the Tabwire extension \
                 (`tabwire doctor` says what is wrong)?",
                args.wait_ms
            );
        }
        let mut rows = Vec::new();
        for (adapter, url) in &targets {
            rows.extend(test_one(&hub, adapter, url).await);
        }
        Ok(rows)
    });
    let rows = rows?;
    runtime.shutdown_timeout(Duration::from_millis(100));
    print!("{}", render(&rows));
    Ok(rows.iter().all(|row| row.failure.is_none()))
}

/// Opens `url` in a new tab, runs `adapter`'s read-only tools there, closes the tab.
async fn test_one(hub: &Hub, adapter: &Adapter, url: &str) -> Vec<Row> {
    let row = |tool: &str, failure: Option<WireError>| Row {
        adapter: adapter.name.clone(),
        tool: tool.to_owned(),
        failure,
    };
    let since = hub.now();
    let tab = match hub.open_tab(url, None, Some(TOOLS_WAIT)).await {
        Ok(opened) => opened.tab,
        Err(error) => return vec![row("-", Some(error))],
    };
    let rows = match run_read_only(hub, adapter, tab, since).await {
        Ok(runs) if runs.is_empty() => vec![row(
            "-",
            Some(WireError::new(
                ErrorCode::NoSuchTool,
                "no read-only tool without arguments to run",
            )),
        )],
        Ok(runs) => runs
            .into_iter()
            .map(|run| row(&run.tool, run.outcome.err()))
            .collect(),
        Err(error) => vec![row("-", Some(error))],
    };
    let close = BrowserOp::Tab {
        tab,
        action: TabAction::Close,
    };
    if let Err(e) = hub.browser(close).await {
        tracing::debug!(%tab, "could not close the tested tab: {e}");
    }
    rows
}

/// The table: one line per tool, `pass` or `FAIL` with its step and locator, then the errors.
fn render(rows: &[Row]) -> String {
    let width =
        |f: fn(&Row) -> usize, title: &str| rows.iter().map(f).max().unwrap_or(0).max(title.len());
    let adapter_w = width(|r| r.adapter.len(), "ADAPTER");
    let tool_w = width(|r| r.tool.len(), "TOOL");
    let mut out = format!(
        "{:adapter_w$}  {:tool_w$}  RESULT  STEP / LOCATOR\n",
        "ADAPTER", "TOOL"
    );
    for row in rows {
        let (result, place) = match &row.failure {
            None => ("pass", String::new()),
            Some(error) => (
                "FAIL",
                match StepFailure::of(error) {
                    Some(failure) => format!("{}  {}", failure.step, failure.locator),
                    None => error.code.to_string(),
                },
            ),
        };
        out.push_str(&format!(
            "{:adapter_w$}  {:tool_w$}  {result:6}  {place}\n",
            row.adapter, row.tool
        ));
    }
    let failed: Vec<&Row> = rows.iter().filter(|r| r.failure.is_some()).collect();
    for row in &failed {
        if let Some(error) = &row.failure {
            out.push_str(&format!("\n{} {}: {error}\n", row.adapter, row.tool));
        }
    }
    out.push_str(&format!(
        "\n{} tool(s) passed, {} failed\n",
        rows.len() - failed.len(),
        failed.len()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_names_the_failing_step_and_locator() {
        let rows = [
            Row {
                adapter: "notes".into(),
                tool: "notes_list".into(),
                failure: None,
            },
            Row {
                adapter: "notes_css".into(),
                tool: "notes_css_list".into(),
                failure: Some(WireError::new(
                    ErrorCode::ElementNotFound,
                    format!(
                        "steps[0] (extract): {}",
                        bridge::step_failure::no_element("#notes li.note")
                    ),
                )),
            },
        ];
        let table = render(&rows);
        // The whole table as a person reads it: padded columns, then each failure in full.
        assert_eq!(
            table,
            "ADAPTER    TOOL            RESULT  STEP / LOCATOR\n\
             notes      notes_list      pass    \n\
             notes_css  notes_css_list  FAIL    steps[0] (extract)  #notes li.note\n\
             \n\
             notes_css notes_css_list: ELEMENT_NOT_FOUND: steps[0] (extract): \
             no element matches `#notes li.note`\n\
             \n\
             1 tool(s) passed, 1 failed\n"
        );
    }
}

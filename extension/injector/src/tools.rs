//! The tools a page offers and how each one runs: the adapters the worker sent (their steps, run by
//! [`crate::steps`]), the code adapters (a bundled JS handler), and the tools the page registered
//! itself through WebMCP (relayed to the page). [`Catalog`] holds them, announces them (adapter
//! tools by name: the server describes them; the page's own in full) and finds a call's tool;
//! `call` checks the arguments and runs the tool on its back-end, through `Backends`, which
//! the browser glue implements (and tests fake).

use std::cell::Cell;

use bridge::adapter::{Adapter, ToolDef};
use bridge::protocol::OfferedTool;
use bridge::template::Vars;
use bridge::webmcp::PageTool;
use bridge::{ErrorCode, WireError};
use serde_json::Value;

use crate::steps::Outcome;

/// The adapters serving this page and the tools it registered itself.
#[derive(Debug, Default, Clone)]
pub struct Catalog {
    /// Declarative adapters: their tools run their steps.
    pub adapters: Vec<Adapter>,
    /// Code adapters: their tools run the bundle's handler.
    pub code: Vec<Adapter>,
    /// The page's own tools (WebMCP), sanitized.
    pub page_tools: Vec<PageTool>,
}

/// A tool of this page, as a call finds it: the back-end it runs on.
#[derive(Debug, Clone, Copy)]
pub enum Tool<'a> {
    Steps(&'a ToolDef),
    Code { adapter: &'a str, tool: &'a ToolDef },
    Page(&'a PageTool),
}

impl Tool<'_> {
    fn input_schema(&self) -> &Value {
        match self {
            Tool::Steps(tool) | Tool::Code { tool, .. } => &tool.input_schema,
            Tool::Page(tool) => &tool.spec.input_schema,
        }
    }

    fn read_only(&self) -> bool {
        match self {
            Tool::Steps(tool) | Tool::Code { tool, .. } => tool.annotations.read_only,
            Tool::Page(tool) => tool.spec.annotations.read_only,
        }
    }
}

impl Catalog {
    /// The tools as announced to the worker: adapter and code tools by name, the page's own
    /// described in full.
    pub fn offered(&self) -> Vec<OfferedTool> {
        self.adapters
            .iter()
            .chain(&self.code)
            .flat_map(Adapter::tool_names)
            .map(OfferedTool::Adapter)
            .chain(
                self.page_tools
                    .iter()
                    .map(|t| OfferedTool::Described(t.spec.clone())),
            )
            .collect()
    }

    /// The tool a call names, or NO_SUCH_TOOL (the page's tools changed since the server chose
    /// this tab, e.g. after an in-place navigation).
    pub fn find(&self, public_name: &str) -> Result<Tool<'_>, WireError> {
        let adapters = self.adapters.iter().map(|a| (a, false));
        let code = self.code.iter().map(|a| (a, true));
        let found = adapters.chain(code).find_map(|(adapter, is_code)| {
            let tool = adapter.tool_named(public_name)?;
            Some(if is_code {
                Tool::Code {
                    adapter: &adapter.name,
                    tool,
                }
            } else {
                Tool::Steps(tool)
            })
        });
        let page = || {
            self.page_tools
                .iter()
                .find(|t| t.spec.name == public_name)
                .map(Tool::Page)
        };
        found.or_else(page).ok_or_else(|| {
            let offered: Vec<String> = self.offered().iter().map(|t| t.name().to_owned()).collect();
            WireError::new(
                ErrorCode::NoSuchTool,
                format!(
                    "this page offers no tool {public_name:?} (any more; it offers: {})",
                    if offered.is_empty() {
                        "none".to_owned()
                    } else {
                        offered.join(", ")
                    }
                ),
            )
        })
    }
}

/// Decodes the adapters the worker sent (it read only their names and patterns), the code
/// adapters as the server validated them; returns the declarative and the code adapters, and why
/// each undecodable one was left out.
pub fn unpack(adapters: Vec<Value>, code: Vec<Value>) -> (Vec<Adapter>, Vec<Adapter>, Vec<String>) {
    let mut problems = Vec::new();
    let mut decode_all = |adapters: Vec<Value>, what: &str| -> Vec<Adapter> {
        adapters
            .into_iter()
            .filter_map(|json| {
                let name = json.get("name").map(Value::to_string).unwrap_or_default();
                decode(json)
                    .map_err(|e| problems.push(format!("{what} {name}: {e}")))
                    .ok()
            })
            .collect()
    };
    let declarative = decode_all(adapters, "adapter");
    let code = decode_all(code, "code adapter");
    (declarative, code, problems)
}

/// One decoder for both kinds of adapters (a code adapter's steps are a placeholder).
fn decode(json: Value) -> Result<Adapter, serde_json::Error> {
    serde_json::from_value(json)
}

/// The call's arguments as template variables, after [`bridge::args::checked`] (the same check the
/// server made).
pub fn check_args(public_name: &str, schema: &Value, args: Value) -> Result<Vars, WireError> {
    bridge::args::checked(schema, args).map_err(|e| e.for_tool(public_name))
}

/// A new call's arguments, or where a call that navigated here goes on.
pub enum Start {
    Call(Value),
    Continue { resume_at: usize, vars: Vars },
}

/// A run of an adapter tool's steps, as [`Backends::steps`] is given it.
pub(crate) struct StepsRun<'a> {
    pub tool: &'a ToolDef,
    /// The checked arguments, or the variables of a call that navigated here.
    pub args: Vars,
    /// The top-level step to start from.
    pub resume_at: usize,
    pub timeout_ms: u64,
    /// Set when the call is cancelled.
    pub cancelled: &'a Cell<bool>,
}

/// What runs a tool, on each back-end: the browser in the page, a fake in tests.
pub(crate) trait Backends {
    /// Runs a tool's steps.
    async fn steps(&self, run: StepsRun<'_>) -> Result<Outcome, WireError>;
    /// Runs the bundled handler of code adapter `adapter`'s tool `tool`.
    async fn code(
        &self,
        adapter: &str,
        tool: &ToolDef,
        args: Vars,
        timeout_ms: u64,
    ) -> Result<Value, WireError>;
    /// Relays the call `id` to the page's own tool.
    async fn page(
        &self,
        id: &str,
        tool: &PageTool,
        args: Vars,
        timeout_ms: u64,
    ) -> Result<Value, WireError>;
    /// The call may have changed the page: push its state.
    fn state_may_have_changed(&self);
}

/// Runs call `id` of the tool named `name`: finds it, checks a new call's arguments, runs it on
/// its back-end, and after a tool not annotated `read_only` has the state pushed (a failed call
/// may have changed the page halfway too; one that navigates pushes it from the next page).
pub(crate) async fn call<B: Backends>(
    catalog: &Catalog,
    backends: &B,
    id: &str,
    name: &str,
    start: Start,
    timeout_ms: u64,
    cancelled: &Cell<bool>,
) -> Result<Outcome, WireError> {
    let tool = catalog.find(name)?;
    let (args, resume_at, continuing) = match start {
        Start::Call(args) => (check_args(name, tool.input_schema(), args)?, 0, false),
        Start::Continue { resume_at, vars } => (vars, resume_at, true),
    };
    let result = match tool {
        Tool::Steps(tool) => {
            let run = StepsRun {
                tool,
                args,
                resume_at,
                timeout_ms,
                cancelled,
            };
            backends.steps(run).await
        }
        // Only steps navigate, so only they continue in the next page.
        Tool::Code { .. } | Tool::Page(_) if continuing => Err(WireError::new(
            ErrorCode::Internal,
            format!("{name} cannot continue after a navigation: only adapter steps navigate"),
        )),
        Tool::Code { adapter, tool } => backends
            .code(adapter, tool, args, timeout_ms)
            .await
            .map(Outcome::Finished),
        Tool::Page(tool) => backends
            .page(id, tool, args, timeout_ms)
            .await
            .map(Outcome::Finished),
    };
    if !tool.read_only()
        && !matches!(
            result,
            Ok(Outcome::Navigate { .. } | Outcome::Landing { .. })
        )
    {
        backends.state_may_have_changed();
    }
    result
}

#[cfg(test)]
mod tests;

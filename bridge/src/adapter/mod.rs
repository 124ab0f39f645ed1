//! The declarative adapter format: a site's tools as data (match patterns, tools with input
//! schemas and annotations, and handlers written as DOM steps the injector executes), and its
//! validation, which reports every problem with the place it sits (path, line, column).
//!
//! - `step`: the steps, with either-or choices as enums;
//! - `kinds`: the table of step kinds, the one list every other part follows;
//! - `decode`: reading steps as files write them;
//! - `validate`: the rules beyond the shape (variables, names, patterns, schemas);
//! - `locate`: paths and the line and column of a problem in the file's text.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::names::public_tool_name;
use crate::pattern::MatchPattern;

mod decode;
mod kinds;
mod locate;
mod step;
mod validate;

pub use kinds::{STEP_KINDS, StepKind};
pub use locate::{JsonPath, PathSegment, Problem, locate};
pub use step::{
    Condition, FetchBody, Field, Loop, OptionChoice, Read, Step, TextMatch, WaitUntil,
    assigned_names,
};

/// One site's tool set.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Adapter {
    /// Where editors find the JSON Schema of this format (`adapters/schema/adapter.schema.json`).
    #[serde(rename = "$schema", default, skip_serializing)]
    pub schema: Option<String>,
    /// `[a-z][a-z0-9_]*`; the prefix of every tool's public name.
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Chrome match patterns of the pages this adapter serves.
    #[serde(rename = "match")]
    pub matches: Vec<String>,
    /// A DOM predicate: when set, the adapter serves a page its URL patterns match only while the
    /// page has an element matching this CSS selector (e.g. `.todoapp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_selector: Option<String>,
    pub tools: Vec<ToolDef>,
    /// A page of the site (matched by `match`) where `tabwire adapters test --all` runs the
    /// read-only tools, as a health check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_url: Option<String>,
    /// Reads the page's state; run after every tool not annotated `read_only` (its result is
    /// pushed as `state_update`) and when the server asks for fresh state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<StateExtractor>,
}

/// An adapter's state extractor: steps like a tool's (without arguments). The state is the
/// value of the final `return` step.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StateExtractor {
    #[serde(default)]
    pub description: String,
    pub steps: Vec<Step>,
}

impl StateExtractor {
    /// The extractor as a read-only tool, so the step runner executes it like any other.
    pub fn as_tool(&self) -> ToolDef {
        ToolDef {
            name: "state".to_owned(),
            description: self.description.clone(),
            input_schema: empty_object_schema(),
            output_schema: None,
            annotations: ToolAnnotations {
                read_only: true,
                destructive: false,
                idempotent: true,
                untrusted_content: false,
            },
            steps: self.steps.clone(),
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    /// A JSON Schema for the arguments (`{"type": "object", ...}`).
    #[serde(default = "empty_object_schema")]
    pub input_schema: Value,
    /// A JSON Schema (`{"type": "object", ...}`) for the call's `structuredContent`: the page's
    /// result when it is an object, else `{"result": <value>}`. MCP clients validate against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    #[serde(default)]
    pub annotations: ToolAnnotations,
    pub steps: Vec<Step>,
}

/// Hints for MCP clients (`readOnlyHint`, `destructiveHint`, `idempotentHint`), and whether the
/// tool's results carry text a third party wrote (a mail's body, a page's own tool's answer): the
/// server marks such results and tools so the model reads them as content, never as instructions.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(deny_unknown_fields)]
pub struct ToolAnnotations {
    #[serde(default)]
    pub read_only: bool,
    #[serde(default)]
    pub destructive: bool,
    #[serde(default)]
    pub idempotent: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub untrusted_content: bool,
}

fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object", "properties": {}})
}

/// Parses and validates an adapter file's text. On failure, every problem found, each located:
/// the steps that do not decode (all of them, not only the first), else whatever else serde
/// refused, else every rule [`Adapter::validate`] finds broken.
pub fn parse_adapter(text: &str) -> Result<Adapter, Vec<Problem>> {
    let adapter: Adapter = serde_json::from_str(text).map_err(|e| {
        let steps = serde_json::from_str(text)
            .map(|document| decode::step_problems(&document))
            .unwrap_or_default();
        if steps.is_empty() {
            vec![Problem {
                path: JsonPath::default(),
                line: Some(e.line()),
                column: Some(e.column()),
                message: e
                    .to_string()
                    .split(" at line ")
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
            }]
        } else {
            located(text, steps)
        }
    })?;
    let problems = adapter.validate();
    if problems.is_empty() {
        Ok(adapter)
    } else {
        Err(located(text, problems))
    }
}

fn located(text: &str, mut problems: Vec<Problem>) -> Vec<Problem> {
    for problem in &mut problems {
        if let Some((line, column)) = locate(text, &problem.path) {
            problem.line = Some(line);
            problem.column = Some(column);
        }
    }
    problems
}

impl Adapter {
    /// The match patterns, parsed (invalid ones are skipped: validation reports them).
    pub fn patterns(&self) -> Vec<MatchPattern> {
        self.matches
            .iter()
            .filter_map(|p| MatchPattern::parse(p).ok())
            .collect()
    }

    pub fn matches_url(&self, url: &str) -> bool {
        self.patterns().iter().any(|p| p.matches(url))
    }

    /// The tool whose public name (`<adapter>_<tool>`) is `public_name`.
    pub fn tool_named(&self, public_name: &str) -> Option<&ToolDef> {
        let tool = public_name
            .strip_prefix(self.name.as_str())?
            .strip_prefix('_')?;
        self.tools.iter().find(|t| t.name == tool)
    }

    /// The public names of the tools, in order.
    pub fn tool_names(&self) -> impl Iterator<Item = String> + '_ {
        self.tools
            .iter()
            .map(|tool| public_tool_name(&self.name, &tool.name))
    }
}

impl ToolDef {
    /// The argument names the input schema declares.
    pub fn argument_names(&self) -> BTreeSet<String> {
        self.input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|props| props.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The arguments whose files the tool's `upload` steps put on the page (the server reads
    /// those files before the call starts), in the order the steps name them, without repeats.
    pub fn upload_arguments(&self) -> Vec<&str> {
        fn walk<'a>(steps: impl Iterator<Item = &'a Step>, out: &mut Vec<&'a str>) {
            for step in steps {
                if let Step::Upload { files, .. } = step
                    && let Some(name) = crate::template::sole_variable(files)
                    && !out.contains(&name)
                {
                    out.push(name);
                }
                walk(step.children(), out);
            }
        }
        let mut out = Vec::new();
        walk(self.steps.iter(), &mut out);
        out
    }
}

#[cfg(test)]
mod tests;

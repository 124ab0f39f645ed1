//! A recording made in the popup: the steps a person's input became in the page
//! ([`RecordedStep`], each with the most robust locator the page found), how they add up while
//! the person acts ([`Recording::push`]: typing into one field is one fill), and the adapter
//! tool they become on Stop ([`tool_document`]): it opens the page the recording started on,
//! then does the steps again, each typed value (and each option chosen in a select) a parameter
//! named from its field's label. A password field's value is never recorded: its step carries [`Typed::Secret`], which
//! becomes a required parameter with nothing recorded for it. Pure: the page records, the worker
//! keeps the recording across page loads, the server drafts and saves.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::names::{self, MAX_ADAPTER_NAME, MAX_TOOL_NAME};

/// Most steps one recording keeps: past it, Stop and save (or start again).
pub const MAX_RECORDED_STEPS: usize = 200;

/// Most options of a select its parameter lists as its `enum`: a longer list (countries, years)
/// would cost the model's context more than it helps; the parameter is then any string, and
/// the page names the options there are when a value is not one.
pub const MAX_RECORDED_OPTIONS: usize = 30;

/// What a person typed into a field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Typed {
    Text(String),
    /// A password field: its value stays in the page.
    Secret,
}

/// One step of a person's input, as the page recorded it. `target` is a locator's text
/// ([`crate::locator::Locator`]'s `Display`: `label=Title`, `role=button[name="Add"]`, or CSS).
/// Written externally tagged (`{"click": {"target": …}}`): serde's internally tagged form
/// buffers each message, which would cost the service worker's wasm tens of KB.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordedStep {
    Click {
        target: String,
    },
    /// Typing into a field; `label` is what a person reads for it (its label, placeholder or
    /// name), which names the parameter.
    Fill {
        target: String,
        label: String,
        value: Typed,
    },
    /// An option chosen in a `<select>`, by its value. `label` names the parameter it becomes,
    /// as a fill's does; `options` are the values the select offered (the parameter's `enum`).
    Select {
        target: String,
        #[serde(default)]
        label: String,
        value: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        options: Vec<String>,
    },
    /// A checkbox or radio button checked (`true`) or unchecked.
    Check {
        target: String,
        checked: bool,
    },
    /// A key or chord (`Enter`, `Control+s`, bridge::keys' names), on the focused element.
    Press {
        target: String,
        key: String,
    },
}

impl RecordedStep {
    fn target(&self) -> &str {
        match self {
            RecordedStep::Click { target }
            | RecordedStep::Fill { target, .. }
            | RecordedStep::Select { target, .. }
            | RecordedStep::Check { target, .. }
            | RecordedStep::Press { target, .. } => target,
        }
    }

    /// One line for a person (the popup's list): what was done, never a password.
    pub fn describe(&self) -> String {
        match self {
            RecordedStep::Click { target } => format!("click {target}"),
            RecordedStep::Fill {
                target,
                value: Typed::Text(text),
                ..
            } => format!("fill {target} with {text:?}"),
            RecordedStep::Fill {
                target,
                value: Typed::Secret,
                ..
            } => format!("fill {target} with a password (not recorded: a parameter)"),
            RecordedStep::Select { target, value, .. } => format!("select {value:?} in {target}"),
            RecordedStep::Check {
                target,
                checked: true,
            } => format!("check {target}"),
            RecordedStep::Check {
                target,
                checked: false,
            } => format!("uncheck {target}"),
            RecordedStep::Press { target, key } => format!("press {key} in {target}"),
        }
    }
}

/// The steps recorded so far in one tab.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recording {
    pub steps: Vec<RecordedStep>,
}

impl Recording {
    /// Adds what the page recorded. A field's steps say what it ends up holding: typing arrives
    /// as one fill per `input` event, each with the field's whole value, so a fill, a select or a
    /// check of the target the last step set replaces that step; and a click into a field just
    /// before its first fill is dropped (a fill focuses it). `false` when the recording is full
    /// ([`MAX_RECORDED_STEPS`]) and the step was left out.
    pub fn push(&mut self, step: RecordedStep) -> bool {
        let replaces = match (self.steps.last(), &step) {
            (
                Some(
                    RecordedStep::Fill { target: last, .. } | RecordedStep::Click { target: last },
                ),
                RecordedStep::Fill { target, .. },
            )
            | (
                Some(RecordedStep::Select { target: last, .. }),
                RecordedStep::Select { target, .. },
            )
            | (
                Some(RecordedStep::Check { target: last, .. }),
                RecordedStep::Check { target, .. },
            ) => last == target,
            _ => false,
        };
        if replaces {
            self.steps.pop();
        }
        if self.steps.len() >= MAX_RECORDED_STEPS {
            return false;
        }
        self.steps.push(step);
        true
    }
}

/// Why a recording cannot become a tool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DraftError {
    #[error("nothing was recorded: press Record, do the task in the page, then Stop")]
    Empty,
    #[error(
        "{0:?} is not a tool name: use lower-case letters, digits and _ (at most {MAX_TOOL_NAME}), starting with a letter"
    )]
    BadName(String),
    #[error("{0:?} is not a website's origin (http or https)")]
    BadOrigin(String),
    #[error("this site's adapter already has a tool named {0:?}: choose another name")]
    ToolExists(String),
    #[error("this site's adapter file is not an adapter document (no \"tools\" list): {0}")]
    NotAnAdapter(String),
}

/// The tool a recording becomes: `name` and `description` as the person gave them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolDraft {
    pub name: String,
    #[serde(default)]
    pub description: String,
}

/// The adapter tool document (`name`, `description`, `input_schema`, `steps`) that opens
/// `start_url` (where the recording started; its fragment dropped, so the page loads anew) and
/// does what `steps` did, with each typed value and each option chosen in a select a required
/// string parameter named from its field's label (sanitized, made unique with `_2`, `_3`…); a
/// select's parameter lists its options as its `enum` (up to [`MAX_RECORDED_OPTIONS`]).
pub fn tool_document(
    draft: &ToolDraft,
    start_url: &str,
    steps: &[RecordedStep],
) -> Result<Value, DraftError> {
    if !names::is_identifier(&draft.name, MAX_TOOL_NAME) {
        return Err(DraftError::BadName(draft.name.clone()));
    }
    if steps.is_empty() {
        return Err(DraftError::Empty);
    }
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut out = Vec::with_capacity(steps.len() + 1);
    // Braces would read as a template's: written as the URL's own escapes.
    let start = start_url
        .split('#')
        .next()
        .unwrap_or_default()
        .replace('{', "%7B")
        .replace('}', "%7D");
    out.push(json!({"step": "navigate", "url": start}));
    for step in steps {
        let selector = step.target();
        out.push(match step {
            RecordedStep::Click { .. } => json!({"step": "click", "selector": selector}),
            RecordedStep::Fill { label, value, .. } => {
                let description = match value {
                    Typed::Text(text) => format!("{label} (recorded: {text:?})"),
                    Typed::Secret => format!("{label} (a password: never recorded)"),
                };
                let schema = json!({"type": "string", "description": description});
                let name = add_parameter(&mut properties, &mut required, label, schema);
                json!({"step": "fill", "selector": selector, "value": format!("{{{{{name}}}}}")})
            }
            RecordedStep::Select {
                label,
                value,
                options,
                ..
            } => {
                let description = format!("{label} (recorded: {value:?})");
                let mut schema = json!({"type": "string", "description": description});
                if options.len() <= MAX_RECORDED_OPTIONS && options.contains(value) {
                    schema["enum"] = json!(options);
                }
                let name = add_parameter(&mut properties, &mut required, label, schema);
                json!({"step": "select", "selector": selector, "value": format!("{{{{{name}}}}}")})
            }
            RecordedStep::Check { checked, .. } => {
                json!({"step": if *checked { "check" } else { "uncheck" }, "selector": selector})
            }
            RecordedStep::Press { key, .. } => {
                json!({"step": "press", "selector": selector, "key": key})
            }
        });
    }
    let description = if draft.description.trim().is_empty() {
        format!("Recorded in the page: {} steps.", steps.len())
    } else {
        draft.description.trim().to_owned()
    };
    Ok(json!({
        "name": draft.name,
        "description": description,
        "input_schema": {"type": "object", "properties": properties, "required": required},
        "steps": out,
    }))
}

/// A new adapter document for `origin` (`https://host[:port]`) holding one recorded tool.
pub fn adapter_document(origin: &str, tool: Value) -> Result<Value, DraftError> {
    let name = adapter_name(origin).ok_or_else(|| DraftError::BadOrigin(origin.to_owned()))?;
    let site =
        crate::Origin::parse(origin).map_err(|_| DraftError::BadOrigin(origin.to_owned()))?;
    Ok(json!({
        "name": name,
        "description": format!("Tools recorded in the page on {origin}"),
        // Its origin's port named: without one Chrome would run it on every port of the host.
        "match": [crate::pattern::MatchPattern::for_origin(&site)],
        "tools": [tool],
    }))
}

/// Adds the recorded `tool` to `adapter`, the site's adapter document saved before; its other
/// tools stay as they are.
pub fn add_tool(adapter: &mut Value, tool: Value) -> Result<(), DraftError> {
    let name = tool["name"].as_str().unwrap_or_default().to_owned();
    let tools = adapter
        .get_mut("tools")
        .and_then(Value::as_array_mut)
        .ok_or_else(|| DraftError::NotAnAdapter(name.clone()))?;
    if tools.iter().any(|t| t["name"] == name.as_str()) {
        return Err(DraftError::ToolExists(name));
    }
    tools.push(tool);
    Ok(())
}

/// The parameters a recorded tool document takes, in the order its fields were filled.
pub fn parameters(tool: &Value) -> Vec<String> {
    tool["input_schema"]["required"]
        .as_array()
        .map(|names| {
            names
                .iter()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The name a recorded adapter for `origin` gets: its host (and port), sanitized, `site_` in
/// front when it would not start with a letter (`http://127.0.0.1:8080` → `site_127_0_0_1_8080`).
pub fn adapter_name(origin: &str) -> Option<String> {
    let host = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"))?;
    if host.is_empty() || host.contains(['/', '?', '#', '@']) {
        return None;
    }
    let host = host.strip_prefix("www.").unwrap_or(host);
    let spaced = host.replace(['.', ':', '-', '[', ']'], "_");
    let lead = if spaced.starts_with(|c: char| c.is_ascii_alphabetic()) {
        ""
    } else {
        "site_"
    };
    let name = names::sanitize(&format!("{lead}{spaced}"), MAX_ADAPTER_NAME)?;
    names::is_identifier(&name, MAX_ADAPTER_NAME).then_some(name)
}

/// Adds a required parameter named from `label` with `schema`; answers its name.
fn add_parameter(
    properties: &mut Map<String, Value>,
    required: &mut Vec<Value>,
    label: &str,
    schema: Value,
) -> String {
    let name = unique_parameter(label, properties);
    properties.insert(name.clone(), schema);
    required.push(Value::String(name.clone()));
    name
}

/// A parameter name from a field's label, not yet in `taken`.
fn unique_parameter(label: &str, taken: &Map<String, Value>) -> String {
    let base = names::sanitize(label, 40).unwrap_or_else(|| "value".to_owned());
    if !taken.contains_key(&base) {
        return base;
    }
    (2..)
        .map(|n| format!("{base}_{n}"))
        .find(|name| !taken.contains_key(name))
        .expect("some suffix is free")
}

#[cfg(test)]
mod tests;

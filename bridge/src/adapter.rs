//! The declarative adapter format: a site's tools as data (match patterns, tools with input
//! schemas and annotations, and handlers written as DOM steps the injector executes), and its
//! validation, which reports every problem with the place it sits (path, line, column).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::names::{MAX_ADAPTER_NAME, MAX_TOOL_NAME, is_identifier, public_tool_name};
use crate::pattern::MatchPattern;
use crate::template;

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

/// Hints for MCP clients (`readOnlyHint`, `destructiveHint`, `idempotentHint`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(deny_unknown_fields)]
pub struct ToolAnnotations {
    #[serde(default)]
    pub read_only: bool,
    #[serde(default)]
    pub destructive: bool,
    #[serde(default)]
    pub idempotent: bool,
}

fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object", "properties": {}})
}

/// One step of a tool's handler. Strings may hold `{{name}}` templates (see [`template`]).
///
/// Steps that act on an element take it from `selector`, searched inside the current scope (the
/// element a `within`/`for_each` picked; the document at the top), or act on the scope element
/// itself when `selector` is absent. They find it at once and fail with `ELEMENT_NOT_FOUND` when it is
/// not there: waiting is explicit (`wait`, or `within` with `timeout_ms`), so a tool never
/// stalls silently on a selector that a page change broke. ADAPTERS.md is the reference.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum Step {
    /// Wait until an element matching `selector` is visible / attached / gone.
    Wait {
        selector: String,
        #[serde(default)]
        until: WaitUntil,
        /// Defaults to the rest of the call's time.
        #[serde(default)]
        timeout_ms: Option<u64>,
    },
    /// A person's click: the full press sequence at the element's visible centre (see ADAPTERS.md),
    /// after checking that it is attached, enabled and not covered.
    Click {
        #[serde(default)]
        selector: Option<String>,
    },
    /// A double click (two presses, then `dblclick`), e.g. to start editing an item.
    Dblclick {
        #[serde(default)]
        selector: Option<String>,
    },
    /// The pointer and mouse events of moving the pointer onto the element (CSS `:hover` does not
    /// apply).
    Hover {
        #[serde(default)]
        selector: Option<String>,
    },
    /// Scroll the element into the middle of the view (lazy lists load what becomes visible).
    ScrollIntoView {
        #[serde(default)]
        selector: Option<String>,
    },
    /// Set the text of an input, textarea or contenteditable (or the one inside the element) as
    /// typing would, firing `beforeinput` and `input` (and nothing that commits it: `press` Enter or
    /// `blur` does). Rich editors get it through the browser's editing commands (ADAPTERS.md).
    Fill { selector: String, value: String },
    /// Empty an input, textarea or contenteditable as a person does (select all, delete), firing
    /// `beforeinput`/`input` with `deleteContentBackward`.
    Clear { selector: String },
    /// Leave the field (`selector`, or the focused element): `change` if its value changed since
    /// `fill` focused it, then `blur`/`focusout`.
    Blur {
        #[serde(default)]
        selector: Option<String>,
    },
    /// Press a key or a chord (`Enter`, `Shift+Enter`, `Mod+s`: see [`crate::keys`]) on `selector`
    /// (or the focused element), with the events a real key press fires.
    Press {
        #[serde(default)]
        selector: Option<String>,
        key: String,
    },
    /// Choose the `<option>` of a `<select>` whose value (or, with `label`, whose text) matches,
    /// firing `input` and `change`. Exactly one of `value` and `label`.
    Select {
        selector: String,
        #[serde(default)]
        value: Option<String>,
        #[serde(default)]
        label: Option<String>,
    },
    /// Make a checkbox checked (clicking it only when it is not), and fail if it did not take.
    Check {
        #[serde(default)]
        selector: Option<String>,
    },
    /// Make a checkbox unchecked (clicking it only when it is checked).
    Uncheck {
        #[serde(default)]
        selector: Option<String>,
    },
    /// Read one thing from one element (absent `selector`: the scope element) into `into`.
    Read {
        #[serde(default)]
        selector: Option<String>,
        #[serde(default)]
        read: Read,
        into: String,
        /// When set, a missing element reads as `null` instead of failing.
        #[serde(default)]
        optional: bool,
    },
    /// Read a list of records, one per element matching `selector`, into `into`.
    Extract {
        selector: String,
        fields: BTreeMap<String, Field>,
        into: String,
    },
    /// Run `steps` scoped to the first element matching `selector` whose text (or the text of its
    /// `text_selector` descendant), trimmed, equals `text_equals` (or contains `text_contains`;
    /// exactly one of the two). `read` compares something else than the text, e.g.
    /// `attr:data-id`. With `timeout_ms`, waits up to that long for such an element.
    Within {
        selector: String,
        #[serde(default)]
        text_selector: Option<String>,
        #[serde(default)]
        read: Read,
        #[serde(default)]
        text_equals: Option<String>,
        #[serde(default)]
        text_contains: Option<String>,
        #[serde(default)]
        timeout_ms: Option<u64>,
        steps: Vec<Step>,
    },
    /// Run `steps` once per element matching `selector`, scoped to it; or, with `items` (one
    /// variable, `"{{tags}}"`) and `as` instead of `selector`, once per element of that array,
    /// bound to the variable `as` inside `steps` (`null` runs them zero times). With `into`: a
    /// list with one object per element holding the variables its steps read (and the item).
    ForEach {
        #[serde(default)]
        selector: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        items: Option<String>,
        #[serde(default, rename = "as", skip_serializing_if = "Option::is_none")]
        item_var: Option<String>,
        steps: Vec<Step>,
        #[serde(default)]
        into: Option<String>,
    },
    /// Run `then` when an element matches `selector` now (or: when the variable `var` is set and
    /// neither `null`, `false` nor empty), else `otherwise`. Exactly one of `selector` and `var`.
    If {
        #[serde(default)]
        selector: Option<String>,
        #[serde(default)]
        var: Option<String>,
        #[serde(default)]
        then: Vec<Step>,
        #[serde(default, rename = "else")]
        otherwise: Vec<Step>,
    },
    /// Run `steps` inside the same-origin `<iframe>` matching `selector` (editors often live in one).
    Frame { selector: String, steps: Vec<Step> },
    /// Load `url` (relative to the page; arguments in it are percent-encoded) and continue with
    /// the next step in the new page once its runtime is ready. Only a top-level step.
    Navigate { url: String },
    /// End the call with this value (a JSON template).
    Return { value: Value },
    /// GET `url`, a path on the page's own origin (arguments in it are percent-encoded), with the
    /// page's cookies, and store the response (JSON, or with `response: text` the text) in `into`.
    /// With `fields` (name → JSON pointer): a list of records, one per item of the array at the
    /// pointer `records` (default: the whole body), as `extract` makes them from elements.
    Fetch {
        url: String,
        into: String,
        #[serde(default)]
        response: ResponseKind,
        /// Defaults to the rest of the call's time.
        #[serde(default)]
        timeout_ms: Option<u64>,
        #[serde(default)]
        records: Option<String>,
        #[serde(default)]
        fields: Option<BTreeMap<String, String>>,
    },
}

/// How a `fetch` step reads the response body.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ResponseKind {
    /// Parsed as JSON (anything else fails the step).
    #[default]
    Json,
    /// The body as a string.
    Text,
}

/// Every field any step has, flat: deserializing one plain struct and building the variant by
/// hand avoids serde's buffering of internally tagged enums, which more than doubled the step
/// parser's share of the injector's wasm.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    step: StepKind,
    selector: Option<String>,
    until: Option<WaitUntil>,
    timeout_ms: Option<u64>,
    /// `Some(Null)` for an explicit `null` (a `return` of null), `None` when absent.
    #[serde(default, deserialize_with = "present")]
    value: Option<Value>,
    key: Option<String>,
    label: Option<String>,
    read: Option<Read>,
    into: Option<String>,
    optional: Option<bool>,
    /// Objects (`extract`: selector and read) or strings (`fetch`: JSON pointers). As values:
    /// telling the two apart in the parser itself would instantiate serde_json's
    /// `deserialize_any` once more per input type (tens of KB of wasm).
    fields: Option<BTreeMap<String, Value>>,
    text_selector: Option<String>,
    text_equals: Option<String>,
    text_contains: Option<String>,
    steps: Option<Vec<Step>>,
    items: Option<String>,
    #[serde(rename = "as")]
    item_var: Option<String>,
    then: Option<Vec<Step>>,
    #[serde(rename = "else")]
    otherwise: Option<Vec<Step>>,
    var: Option<String>,
    url: Option<String>,
    response: Option<ResponseKind>,
    records: Option<String>,
}

/// The `step` field: an enum, so an unknown kind is reported where it is written.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum StepKind {
    Wait,
    Click,
    Dblclick,
    Hover,
    ScrollIntoView,
    Fill,
    Clear,
    Blur,
    Press,
    Select,
    Check,
    Uncheck,
    Read,
    Extract,
    Within,
    ForEach,
    If,
    Frame,
    Navigate,
    Return,
    Fetch,
}

fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

impl RawStep {
    /// The fields present, by name.
    fn present(&self) -> Vec<&'static str> {
        [
            ("selector", self.selector.is_some()),
            ("until", self.until.is_some()),
            ("timeout_ms", self.timeout_ms.is_some()),
            (
                "value",
                self.value
                    .as_ref()
                    .is_some_and(|v| !v.is_null() || self.step == StepKind::Return),
            ),
            ("key", self.key.is_some()),
            ("label", self.label.is_some()),
            ("read", self.read.is_some()),
            ("into", self.into.is_some()),
            ("optional", self.optional.is_some()),
            ("fields", self.fields.is_some()),
            ("text_selector", self.text_selector.is_some()),
            ("text_equals", self.text_equals.is_some()),
            ("text_contains", self.text_contains.is_some()),
            ("steps", self.steps.is_some()),
            ("items", self.items.is_some()),
            ("as", self.item_var.is_some()),
            ("then", self.then.is_some()),
            ("else", self.otherwise.is_some()),
            ("var", self.var.is_some()),
            ("url", self.url.is_some()),
            ("response", self.response.is_some()),
            ("records", self.records.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
        .collect()
    }

    fn into_step(self) -> Result<Step, String> {
        // STEP_KINDS lists the kinds in StepKind's order.
        let kind = STEP_KINDS[self.step as usize].to_owned();
        let allowed: &[&str] = match kind.as_str() {
            "wait" => &["selector", "until", "timeout_ms"],
            "click" | "dblclick" | "hover" | "scroll_into_view" | "check" | "uncheck" | "blur" => {
                &["selector"]
            }
            "fill" => &["selector", "value"],
            "clear" => &["selector"],
            "press" => &["selector", "key"],
            "select" => &["selector", "value", "label"],
            "read" => &["selector", "read", "into", "optional"],
            "extract" => &["selector", "fields", "into"],
            "within" => &[
                "selector",
                "text_selector",
                "read",
                "text_equals",
                "text_contains",
                "timeout_ms",
                "steps",
            ],
            "for_each" => &["selector", "items", "as", "steps", "into"],
            "if" => &["selector", "var", "then", "else"],
            "frame" => &["selector", "steps"],
            "navigate" => &["url"],
            "return" => &["value"],
            "fetch" => &["url", "into", "response", "timeout_ms", "records", "fields"],
            other => {
                return Err(format!(
                    "unknown step {other:?}, expected one of {}",
                    STEP_KINDS.join(", ")
                ));
            }
        };
        if let Some(extra) = self.present().into_iter().find(|f| !allowed.contains(f)) {
            return Err(format!(
                "unknown field `{extra}` in a {kind:?} step, expected one of {}",
                allowed.join(", ")
            ));
        }
        let missing = |field: &str| format!("missing field `{field}` in a {kind:?} step");
        let text = |value: Option<Value>, field: &str| match value {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(format!("`{field}` of a {kind:?} step must be a string")),
        };
        let selector = self.selector;
        let required = |v: Option<String>, field: &str| v.ok_or_else(|| missing(field));
        Ok(match kind.as_str() {
            "wait" => Step::Wait {
                selector: required(selector, "selector")?,
                until: self.until.unwrap_or_default(),
                timeout_ms: self.timeout_ms,
            },
            "click" => Step::Click { selector },
            "dblclick" => Step::Dblclick { selector },
            "hover" => Step::Hover { selector },
            "scroll_into_view" => Step::ScrollIntoView { selector },
            "check" => Step::Check { selector },
            "uncheck" => Step::Uncheck { selector },
            "blur" => Step::Blur { selector },
            "clear" => Step::Clear {
                selector: required(selector, "selector")?,
            },
            "fill" => Step::Fill {
                selector: required(selector, "selector")?,
                value: text(self.value, "value")?.ok_or_else(|| missing("value"))?,
            },
            "press" => Step::Press {
                selector,
                key: required(self.key, "key")?,
            },
            "select" => Step::Select {
                selector: required(selector, "selector")?,
                value: text(self.value, "value")?,
                label: self.label,
            },
            "read" => Step::Read {
                selector,
                read: self.read.unwrap_or_default(),
                into: required(self.into, "into")?,
                optional: self.optional.unwrap_or_default(),
            },
            "extract" => Step::Extract {
                selector: required(selector, "selector")?,
                fields: self
                    .fields
                    .ok_or_else(|| missing("fields"))?
                    .into_iter()
                    .map(|(name, field)| match field {
                        Value::Object(_) => serde_json::from_value(field)
                            .map(|field| (name.clone(), field))
                            .map_err(|e| format!("field `{name}` of an \"extract\" step: {e}")),
                        _ => Err(format!(
                            "field `{name}` of an \"extract\" step must be an object such as {{\"selector\": \".name\"}} (JSON pointers are for \"fetch\")"
                        )),
                    })
                    .collect::<Result<_, _>>()?,
                into: required(self.into, "into")?,
            },
            "within" => Step::Within {
                selector: required(selector, "selector")?,
                text_selector: self.text_selector,
                read: self.read.unwrap_or_default(),
                text_equals: self.text_equals,
                text_contains: self.text_contains,
                timeout_ms: self.timeout_ms,
                steps: self.steps.ok_or_else(|| missing("steps"))?,
            },
            "for_each" => Step::ForEach {
                selector,
                items: self.items,
                item_var: self.item_var,
                steps: self.steps.ok_or_else(|| missing("steps"))?,
                into: self.into,
            },
            "if" => Step::If {
                selector,
                var: self.var,
                then: self.then.unwrap_or_default(),
                otherwise: self.otherwise.unwrap_or_default(),
            },
            "frame" => Step::Frame {
                selector: required(selector, "selector")?,
                steps: self.steps.ok_or_else(|| missing("steps"))?,
            },
            "navigate" => Step::Navigate {
                url: required(self.url, "url")?,
            },
            "fetch" => Step::Fetch {
                url: required(self.url, "url")?,
                into: required(self.into, "into")?,
                response: self.response.unwrap_or_default(),
                timeout_ms: self.timeout_ms,
                records: self.records,
                fields: match self.fields {
                    None => None,
                    Some(fields) => Some(
                        fields
                            .into_iter()
                            .map(|(name, field)| match field {
                                Value::String(pointer) => Ok((name, pointer)),
                                _ => Err(format!(
                                    "field `{name}` of a \"fetch\" step must be a JSON pointer string such as \"/subject\""
                                )),
                            })
                            .collect::<Result<_, _>>()?,
                    ),
                },
            },
            _ => Step::Return {
                value: self.value.ok_or_else(|| missing("value"))?,
            },
        })
    }
}

/// Every step kind, as written in files.
pub const STEP_KINDS: &[&str] = &[
    "wait",
    "click",
    "dblclick",
    "hover",
    "scroll_into_view",
    "fill",
    "clear",
    "blur",
    "press",
    "select",
    "check",
    "uncheck",
    "read",
    "extract",
    "within",
    "for_each",
    "if",
    "frame",
    "navigate",
    "return",
    "fetch",
];

impl<'de> Deserialize<'de> for Step {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Step, D::Error> {
        RawStep::deserialize(deserializer)?
            .into_step()
            .map_err(serde::de::Error::custom)
    }
}

impl Step {
    /// Whether the step acts on the page as a person's input does (the page may react to it), as
    /// opposed to waiting, reading or structuring the call.
    pub fn acts_on_page(&self) -> bool {
        match self {
            Step::Click { .. }
            | Step::Dblclick { .. }
            | Step::Hover { .. }
            | Step::ScrollIntoView { .. }
            | Step::Fill { .. }
            | Step::Clear { .. }
            | Step::Blur { .. }
            | Step::Press { .. }
            | Step::Select { .. }
            | Step::Check { .. }
            | Step::Uncheck { .. } => true,
            Step::Wait { .. }
            | Step::Read { .. }
            | Step::Extract { .. }
            | Step::Within { .. }
            | Step::ForEach { .. }
            | Step::If { .. }
            | Step::Frame { .. }
            | Step::Navigate { .. }
            | Step::Return { .. }
            | Step::Fetch { .. } => false,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Step::Wait { .. } => "wait",
            Step::Click { .. } => "click",
            Step::Dblclick { .. } => "dblclick",
            Step::Hover { .. } => "hover",
            Step::ScrollIntoView { .. } => "scroll_into_view",
            Step::Fill { .. } => "fill",
            Step::Clear { .. } => "clear",
            Step::Blur { .. } => "blur",
            Step::Press { .. } => "press",
            Step::Select { .. } => "select",
            Step::Check { .. } => "check",
            Step::Uncheck { .. } => "uncheck",
            Step::Read { .. } => "read",
            Step::Extract { .. } => "extract",
            Step::Within { .. } => "within",
            Step::ForEach { .. } => "for_each",
            Step::If { .. } => "if",
            Step::Frame { .. } => "frame",
            Step::Navigate { .. } => "navigate",
            Step::Return { .. } => "return",
            Step::Fetch { .. } => "fetch",
        }
    }

    /// The steps nested in this one (`within`, `for_each`, `frame`, both branches of `if`).
    pub fn children(&self) -> impl Iterator<Item = &Step> {
        let (a, b): (&[Step], &[Step]) = match self {
            Step::Within { steps, .. }
            | Step::ForEach { steps, .. }
            | Step::Frame { steps, .. } => (steps, &[]),
            Step::If {
                then, otherwise, ..
            } => (then, otherwise),
            _ => (&[], &[]),
        };
        a.iter().chain(b)
    }
}

/// The variables `steps` (and the steps nested in them) read into, in order, without repeats.
pub fn assigned_names(steps: &[Step]) -> Vec<&str> {
    fn collect<'a>(steps: &'a [Step], out: &mut Vec<&'a str>) {
        for step in steps {
            let own = match step {
                Step::Read { into, .. } | Step::Extract { into, .. } | Step::Fetch { into, .. } => {
                    Some(into.as_str())
                }
                Step::ForEach { into, .. } => into.as_deref(),
                _ => None,
            };
            for child in step.children() {
                collect(std::slice::from_ref(child), out);
            }
            if let Some(name) = own
                && !out.contains(&name)
            {
                out.push(name);
            }
        }
    }
    let mut out = Vec::new();
    collect(steps, &mut out);
    out
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum WaitUntil {
    #[default]
    Visible,
    Attached,
    Gone,
}

/// One field of an extracted record.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Field {
    /// Relative to the record's element; absent: the element itself.
    #[serde(default)]
    pub selector: Option<String>,
    #[serde(default)]
    pub read: Read,
}

/// What to read from an element. Written as a string: `text`, `value`, `exists`,
/// `attr:<name>`, `prop:<name>` or `has_class:<name>`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[serde(try_from = "String", into = "String")]
pub enum Read {
    /// The trimmed text content.
    #[default]
    Text,
    /// The trimmed text of the element's own text nodes (not of its child elements).
    OwnText,
    /// A form control's current value.
    Value,
    /// Whether the element exists (never fails).
    Exists,
    Attr(String),
    Prop(String),
    HasClass(String),
}

impl TryFrom<String> for Read {
    type Error = String;

    fn try_from(s: String) -> Result<Self, String> {
        let with_name = |name: &str, make: fn(String) -> Read| {
            if name.is_empty() {
                Err(format!("{s:?} needs a name after the colon"))
            } else {
                Ok(make(name.to_owned()))
            }
        };
        match s.split_once(':') {
            None => match s.as_str() {
                "text" => Ok(Read::Text),
                "own_text" => Ok(Read::OwnText),
                "value" => Ok(Read::Value),
                "exists" => Ok(Read::Exists),
                _ => Err(format!(
                    "unknown read {s:?}: expected text, own_text, value, exists, attr:<name>, prop:<name> or has_class:<name>"
                )),
            },
            Some(("attr", name)) => with_name(name, Read::Attr),
            Some(("prop", name)) => with_name(name, Read::Prop),
            Some(("has_class", name)) => with_name(name, Read::HasClass),
            Some(_) => Err(format!(
                "unknown read {s:?}: expected text, own_text, value, exists, attr:<name>, prop:<name> or has_class:<name>"
            )),
        }
    }
}

impl From<Read> for String {
    fn from(read: Read) -> String {
        match read {
            Read::Text => "text".into(),
            Read::OwnText => "own_text".into(),
            Read::Value => "value".into(),
            Read::Exists => "exists".into(),
            Read::Attr(n) => format!("attr:{n}"),
            Read::Prop(n) => format!("prop:{n}"),
            Read::HasClass(n) => format!("has_class:{n}"),
        }
    }
}

/// A step in a JSON document: object keys and array indices from the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSegment {
    Key(String),
    Index(usize),
}

/// Where a problem sits: `tools[1].steps[0].selector`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JsonPath(pub Vec<PathSegment>);

impl JsonPath {
    fn key(&self, key: &str) -> JsonPath {
        let mut p = self.clone();
        p.0.push(PathSegment::Key(key.to_owned()));
        p
    }

    fn index(&self, i: usize) -> JsonPath {
        let mut p = self.clone();
        p.0.push(PathSegment::Index(i));
        p
    }
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(top level)");
        }
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                PathSegment::Key(k) if i == 0 => write!(f, "{k}")?,
                PathSegment::Key(k) => write!(f, ".{k}")?,
                PathSegment::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

/// One thing wrong with an adapter file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub path: JsonPath,
    /// 1-based, when known.
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let (Some(line), Some(column)) = (self.line, self.column) {
            write!(f, "{line}:{column}: ")?;
        }
        if !self.path.0.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        f.write_str(&self.message)
    }
}

/// Parses and validates an adapter file's text. On failure, every problem found, each located.
pub fn parse_adapter(text: &str) -> Result<Adapter, Vec<Problem>> {
    let adapter: Adapter = serde_json::from_str(text).map_err(|e| {
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
    })?;
    let mut problems = adapter.validate();
    if problems.is_empty() {
        return Ok(adapter);
    }
    for problem in &mut problems {
        if let Some((line, column)) = locate(text, &problem.path) {
            problem.line = Some(line);
            problem.column = Some(column);
        }
    }
    Err(problems)
}

impl Adapter {
    /// Every semantic problem (the JSON already has the right shape).
    pub fn validate(&self) -> Vec<Problem> {
        let mut v = Validator::default();
        let root = JsonPath::default();
        if !is_identifier(&self.name, MAX_ADAPTER_NAME) {
            v.problem(
                root.key("name"),
                format!(
                    "adapter name {:?} is not valid: expected [a-z][a-z0-9_]*, at most {MAX_ADAPTER_NAME} characters",
                    self.name
                ),
            );
        }
        if let Some(why) = crate::names::reserved_adapter_name(&self.name) {
            v.problem(
                root.key("name"),
                format!("the adapter name {:?} is reserved {why}", self.name),
            );
        }
        if self.matches.is_empty() {
            v.problem(root.key("match"), "expected at least one match pattern");
        }
        for (i, pattern) in self.matches.iter().enumerate() {
            if let Err(e) = MatchPattern::parse(pattern) {
                v.problem(root.key("match").index(i), e.to_string());
            }
        }
        if self.tools.is_empty() {
            v.problem(root.key("tools"), "expected at least one tool");
        }
        if let Some(selector) = &self.match_selector
            && selector.trim().is_empty()
        {
            v.problem(
                root.key("match_selector"),
                "expected a CSS selector such as \".todoapp\"",
            );
        }
        if let Some(state) = &self.state {
            v.state(state, &root.key("state"));
        }
        let mut seen = BTreeSet::new();
        for (i, tool) in self.tools.iter().enumerate() {
            let path = root.key("tools").index(i);
            v.tool(&self.name, tool, &path);
            if !seen.insert(tool.name.as_str()) {
                v.problem(
                    path.key("name"),
                    format!("duplicate tool name {:?}", tool.name),
                );
            }
        }
        v.problems
    }

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
}

#[derive(Default)]
struct Validator {
    problems: Vec<Problem>,
    /// How deep in nested steps (`within`, `for_each`, `if`, `frame`) the step checked sits.
    depth: usize,
    /// The `input_schema.properties` of the tool checked (`null` for a state extractor).
    arguments: Value,
}

impl Validator {
    fn problem(&mut self, path: JsonPath, message: impl Into<String>) {
        self.problems.push(Problem {
            path,
            line: None,
            column: None,
            message: message.into(),
        });
    }

    fn tool(&mut self, adapter: &str, tool: &ToolDef, path: &JsonPath) {
        if !is_identifier(&tool.name, MAX_TOOL_NAME) {
            self.problem(
                path.key("name"),
                format!(
                    "tool name {:?} is not valid: expected [a-z][a-z0-9_]*",
                    tool.name
                ),
            );
        } else if public_tool_name(adapter, &tool.name).len() > MAX_TOOL_NAME {
            self.problem(
                path.key("name"),
                format!(
                    "\"{adapter}_{}\" is longer than {MAX_TOOL_NAME} characters",
                    tool.name
                ),
            );
        }
        if tool.description.trim().is_empty() {
            self.problem(
                path.key("description"),
                "expected a description for the model",
            );
        }
        let schema = &tool.input_schema;
        let schema_path = path.key("input_schema");
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            self.problem(
                schema_path.clone(),
                "expected a JSON Schema with \"type\": \"object\"",
            );
        }
        if let Some(props) = schema.get("properties")
            && !props.is_object()
        {
            self.problem(schema_path.key("properties"), "expected an object");
        }
        if let Some(output) = &tool.output_schema
            && output.get("type").and_then(Value::as_str) != Some("object")
        {
            self.problem(
                path.key("output_schema"),
                "expected a JSON Schema with \"type\": \"object\" (it describes structuredContent, \
                 where a result that is not an object is {\"result\": <value>})",
            );
        }
        if tool.steps.is_empty() {
            self.problem(path.key("steps"), "expected at least one step");
        }
        let mut known = tool.argument_names();
        self.arguments = schema.get("properties").cloned().unwrap_or_default();
        self.steps(&tool.steps, &path.key("steps"), &mut known);
    }

    fn state(&mut self, state: &StateExtractor, path: &JsonPath) {
        let steps_path = path.key("steps");
        if !matches!(state.steps.last(), Some(Step::Return { .. })) {
            self.problem(
                steps_path.clone(),
                "expected the state's steps to end with a \"return\" step (its value is the state)",
            );
        }
        self.arguments = Value::Null;
        self.steps(&state.steps, &steps_path, &mut BTreeSet::new());
    }

    fn steps(&mut self, steps: &[Step], path: &JsonPath, known: &mut BTreeSet<String>) {
        for (i, step) in steps.iter().enumerate() {
            let path = path.index(i);
            if matches!(step, Step::Return { .. }) && i + 1 != steps.len() {
                self.problem(
                    path.key("step"),
                    "\"return\" must be the last step of its list",
                );
            }
            self.step(step, &path, known);
        }
    }

    fn step(&mut self, step: &Step, path: &JsonPath, known: &mut BTreeSet<String>) {
        self.depth += 1;
        self.step_inner(step, path, known);
        self.depth -= 1;
    }

    fn step_inner(&mut self, step: &Step, path: &JsonPath, known: &mut BTreeSet<String>) {
        match step {
            Step::Wait { selector, .. } => self.selector(selector, &path.key("selector"), known),
            Step::Click { selector }
            | Step::Dblclick { selector }
            | Step::Hover { selector }
            | Step::ScrollIntoView { selector }
            | Step::Check { selector }
            | Step::Uncheck { selector }
            | Step::Blur { selector } => {
                if let Some(selector) = selector {
                    self.selector(selector, &path.key("selector"), known);
                }
            }
            Step::Fill { selector, value } => {
                self.selector(selector, &path.key("selector"), known);
                self.template(value, &path.key("value"), known);
            }
            Step::Clear { selector } => self.selector(selector, &path.key("selector"), known),
            Step::Press { selector, key } => {
                if let Some(selector) = selector {
                    self.selector(selector, &path.key("selector"), known);
                }
                if let Err(e) = crate::keys::parse_chord(key) {
                    self.problem(path.key("key"), e.to_string());
                }
            }
            Step::Select {
                selector,
                value,
                label,
            } => {
                self.selector(selector, &path.key("selector"), known);
                match (value, label) {
                    (Some(v), None) => self.template(v, &path.key("value"), known),
                    (None, Some(l)) => self.template(l, &path.key("label"), known),
                    _ => self.problem(
                        path.key("step"),
                        "\"select\" needs exactly one of \"value\" (the option's value) and \"label\" (its text)",
                    ),
                }
            }
            Step::Read { selector, into, .. } => {
                if let Some(selector) = selector {
                    self.selector(selector, &path.key("selector"), known);
                }
                self.into(into, &path.key("into"), known);
            }
            Step::Extract {
                selector,
                fields,
                into,
            } => {
                self.selector(selector, &path.key("selector"), known);
                if fields.is_empty() {
                    self.problem(path.key("fields"), "expected at least one field");
                }
                for (name, field) in fields {
                    if let Some(selector) = &field.selector {
                        self.selector(
                            selector,
                            &path.key("fields").key(name).key("selector"),
                            known,
                        );
                    }
                }
                self.into(into, &path.key("into"), known);
            }
            Step::Within {
                selector,
                text_selector,
                text_equals,
                text_contains,
                steps,
                ..
            } => {
                self.selector(selector, &path.key("selector"), known);
                if let Some(ts) = text_selector {
                    self.selector(ts, &path.key("text_selector"), known);
                }
                match (text_equals, text_contains) {
                    (Some(t), None) => self.template(t, &path.key("text_equals"), known),
                    (None, Some(t)) => self.template(t, &path.key("text_contains"), known),
                    _ => self.problem(
                        path.key("step"),
                        "\"within\" needs exactly one of \"text_equals\" and \"text_contains\"",
                    ),
                }
                self.body(steps, &path.key("steps"), known);
            }
            Step::ForEach {
                selector,
                items,
                item_var,
                steps,
                into,
            } => {
                match (selector, items) {
                    (Some(selector), None) => {
                        self.selector(selector, &path.key("selector"), known);
                        if item_var.is_some() {
                            self.problem(
                                path.key("as"),
                                "\"as\" names the item of a for_each over \"items\"; over \"selector\" the steps are scoped to each element instead",
                            );
                        }
                        self.body(steps, &path.key("steps"), known);
                    }
                    (None, Some(items)) => {
                        self.item_loop(items, item_var.as_deref(), steps, path, known)
                    }
                    _ => {
                        self.problem(
                            path.key("step"),
                            "\"for_each\" needs exactly one of \"selector\" (each matching element) and \"items\" (each element of an array, with \"as\")",
                        );
                        self.body(steps, &path.key("steps"), known);
                    }
                }
                if let Some(into) = into {
                    self.into(into, &path.key("into"), known);
                }
            }
            Step::If {
                selector,
                var,
                then,
                otherwise,
            } => {
                match (selector, var) {
                    (Some(selector), None) => self.selector(selector, &path.key("selector"), known),
                    (None, Some(var)) => self.known_names(&[var.as_str()], &path.key("var"), known),
                    _ => self.problem(
                        path.key("step"),
                        "\"if\" needs exactly one of \"selector\" (an element is present) and \"var\" (a variable is set)",
                    ),
                }
                if then.is_empty() && otherwise.is_empty() {
                    self.problem(path.key("then"), "expected steps in \"then\" or \"else\"");
                }
                self.steps(then, &path.key("then"), known);
                self.steps(otherwise, &path.key("else"), known);
            }
            Step::Frame { selector, steps } => {
                self.selector(selector, &path.key("selector"), known);
                self.body(steps, &path.key("steps"), known);
            }
            Step::Navigate { url } => {
                if self.depth > 1 {
                    self.problem(
                        path.key("step"),
                        "\"navigate\" must be a top-level step (the call continues in the new page with the next top-level step)",
                    );
                }
                // Arguments are percent-encoded into the URL, so its scheme is the template's own.
                let literal = url.split("{{").next().unwrap_or_default();
                if !crate::pattern::is_navigable(literal) {
                    self.problem(
                        path.key("url"),
                        format!(
                            "{url:?} is not a page a tool may navigate to: expected an http(s) or a relative URL"
                        ),
                    );
                }
                self.template(url, &path.key("url"), known);
            }
            Step::Return { value } => match template::value_references(value) {
                Ok(names) => self.known_names(&names, &path.key("value"), known),
                Err(e) => self.problem(path.key("value"), e.to_string()),
            },
            Step::Fetch {
                url,
                into,
                response,
                records,
                fields,
                ..
            } => self.fetch(url, into, *response, records, fields, path, known),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn fetch(
        &mut self,
        url: &str,
        into: &str,
        response: ResponseKind,
        records: &Option<String>,
        fields: &Option<BTreeMap<String, String>>,
        path: &JsonPath,
        known: &mut BTreeSet<String>,
    ) {
        match crate::fetch::check_url_template(url) {
            Ok(()) => self.template(url, &path.key("url"), known),
            Err(why) => self.problem(path.key("url"), why),
        }
        if response == ResponseKind::Text && (records.is_some() || fields.is_some()) {
            self.problem(
                path.key("response"),
                "\"records\" and \"fields\" pick values out of JSON: they need \"response\": \"json\"",
            );
        }
        if let Some(records) = records {
            if fields.is_none() {
                self.problem(
                    path.key("records"),
                    "\"records\" says where the list is for \"fields\": add \"fields\" or drop it",
                );
            }
            if let Err(why) = crate::fetch::check_pointer(records) {
                self.problem(path.key("records"), why);
            }
        }
        if let Some(fields) = fields {
            if fields.is_empty() {
                self.problem(path.key("fields"), "expected at least one field");
            }
            for (name, pointer) in fields {
                if let Err(why) = crate::fetch::check_pointer(pointer) {
                    self.problem(path.key("fields").key(name), why);
                }
            }
        }
        self.into(into, &path.key("into"), known);
    }

    fn body(&mut self, steps: &[Step], path: &JsonPath, known: &mut BTreeSet<String>) {
        if steps.is_empty() {
            self.problem(path.clone(), "expected at least one step");
        }
        self.steps(steps, path, known);
    }

    fn selector(&mut self, selector: &str, path: &JsonPath, known: &BTreeSet<String>) {
        if selector.trim().is_empty() {
            self.problem(path.clone(), "expected a CSS selector");
        }
        self.template(selector, path, known);
    }

    fn template(&mut self, text: &str, path: &JsonPath, known: &BTreeSet<String>) {
        match template::references(text) {
            Ok(names) => self.known_names(&names, path, known),
            Err(e) => self.problem(path.clone(), e.to_string()),
        }
    }

    fn known_names(&mut self, names: &[&str], path: &JsonPath, known: &BTreeSet<String>) {
        for name in names {
            if !known.contains(*name) {
                self.problem(
                    path.clone(),
                    format!(
                        "{{{{{name}}}}} is neither an argument in input_schema.properties nor read by an earlier step (known: {})",
                        if known.is_empty() {
                            "none".to_owned()
                        } else {
                            known.iter().cloned().collect::<Vec<_>>().join(", ")
                        }
                    ),
                );
            }
        }
    }

    fn into(&mut self, into: &str, path: &JsonPath, known: &mut BTreeSet<String>) {
        if !is_identifier(into, 64) {
            self.problem(
                path.clone(),
                format!("variable name {into:?} is not valid: expected [a-z][a-z0-9_]*"),
            );
        }
        known.insert(into.to_owned());
    }

    /// A `for_each` over `items`: exactly one variable holding an array (an argument must declare
    /// `"type": "array"`, so callers get INVALID_ARGS for anything else), bound item by item to
    /// `as`, which only the body knows. What the body reads stays known after the loop.
    fn item_loop(
        &mut self,
        items: &str,
        item_var: Option<&str>,
        steps: &[Step],
        path: &JsonPath,
        known: &mut BTreeSet<String>,
    ) {
        let items_path = path.key("items");
        match template::sole_variable(items) {
            Some(name) => {
                let root = name.split('.').next().unwrap_or(name);
                self.known_names(&[root], &items_path, known);
                let declared = self.arguments.get(name).map(|p| p.get("type"));
                if let Some(declared) = declared
                    && declared.and_then(Value::as_str) != Some("array")
                {
                    self.problem(
                        items_path.clone(),
                        format!(
                            "the argument {name:?} is iterated over, so input_schema.properties.{name} needs \"type\": \"array\" (it has {})",
                            declared.map_or("no type".to_owned(), Value::to_string)
                        ),
                    );
                }
            }
            None => self.problem(
                items_path.clone(),
                format!(
                    "expected exactly one variable holding an array, such as \"{{{{tags}}}}\", got {items:?}"
                ),
            ),
        }
        let mut inner = known.clone();
        match item_var {
            None => self.problem(
                items_path,
                "a for_each over \"items\" needs \"as\": the variable each item is bound to",
            ),
            Some(name) if !is_identifier(name, 64) => self.problem(
                path.key("as"),
                format!("variable name {name:?} is not valid: expected [a-z][a-z0-9_]*"),
            ),
            Some(name) if known.contains(name) => self.problem(
                path.key("as"),
                format!(
                    "{name:?} is already an argument or a variable read earlier: name the item differently"
                ),
            ),
            Some(name) => {
                inner.insert(name.to_owned());
            }
        }
        self.body(steps, &path.key("steps"), &mut inner);
        known.extend(
            inner
                .into_iter()
                .filter(|name| Some(name.as_str()) != item_var),
        );
    }
}

/// The 1-based line and column of the value at `path` in the JSON `text`, if it is there.
pub fn locate(text: &str, path: &JsonPath) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut pos = skip_ws(bytes, 0);
    for segment in &path.0 {
        pos = match segment {
            PathSegment::Key(key) => find_member(bytes, pos, key)?,
            PathSegment::Index(index) => find_element(bytes, pos, *index)?,
        };
    }
    let before = &text[..pos];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    Some((line, column))
}

fn skip_ws(b: &[u8], mut pos: usize) -> usize {
    while pos < b.len() && b[pos].is_ascii_whitespace() {
        pos += 1;
    }
    pos
}

/// The end of the JSON value starting at `pos`.
fn skip_value(b: &[u8], pos: usize) -> Option<usize> {
    match *b.get(pos)? {
        b'"' => {
            let mut i = pos + 1;
            while i < b.len() {
                match b[i] {
                    b'\\' => i += 2,
                    b'"' => return Some(i + 1),
                    _ => i += 1,
                }
            }
            None
        }
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = pos;
            while i < b.len() {
                match b[i] {
                    b'"' => {
                        i = skip_value(b, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let mut i = pos;
            while i < b.len() && !matches!(b[i], b',' | b'}' | b']') && !b[i].is_ascii_whitespace()
            {
                i += 1;
            }
            Some(i)
        }
    }
}

fn find_member(b: &[u8], pos: usize, key: &str) -> Option<usize> {
    if b.get(pos) != Some(&b'{') {
        return None;
    }
    let mut i = skip_ws(b, pos + 1);
    while b.get(i) == Some(&b'"') {
        let key_end = skip_value(b, i)?;
        let this_key: String = serde_json::from_slice(&b[i..key_end]).ok()?;
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        let value = skip_ws(b, i + 1);
        if this_key == key {
            return Some(value);
        }
        i = skip_ws(b, skip_value(b, value)?);
        if b.get(i) == Some(&b',') {
            i = skip_ws(b, i + 1);
        }
    }
    None
}

fn find_element(b: &[u8], pos: usize, index: usize) -> Option<usize> {
    if b.get(pos) != Some(&b'[') {
        return None;
    }
    let mut i = skip_ws(b, pos + 1);
    for _ in 0..index {
        i = skip_ws(b, skip_value(b, i)?);
        if b.get(i) != Some(&b',') {
            return None;
        }
        i = skip_ws(b, i + 1);
    }
    (b.get(i) != Some(&b']')).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const GOOD: &str = r##"{
  "name": "demo",
  "match": ["http://127.0.0.1/*"],
  "tools": [
    {
      "name": "add",
      "description": "Add an item",
      "input_schema": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]},
      "steps": [
        {"step": "wait", "selector": "#new"},
        {"step": "fill", "selector": "#new", "value": "{{title}}"},
        {"step": "press", "selector": "#new", "key": "Enter"},
        {"step": "within", "selector": "li", "text_selector": "label", "text_equals": "{{title}}",
         "steps": [{"step": "read", "selector": ".id", "read": "attr:data-id", "into": "id"}]},
        {"step": "extract", "selector": "li", "fields": {"title": {"selector": "label"}, "done": {"read": "has_class:completed"}}, "into": "items"},
        {"step": "return", "value": {"id": "{{id}}", "items": "{{items}}"}}
      ]
    }
  ]
}"##;

    #[test]
    fn a_good_adapter_parses() {
        let adapter = parse_adapter(GOOD).unwrap();
        assert_eq!(adapter.name, "demo");
        assert!(adapter.matches_url("http://127.0.0.1:9999/x"));
        let steps = &adapter.tools[0].steps;
        assert_eq!(steps.len(), 6);
        assert!(matches!(
            &steps[4],
            Step::Extract { fields, .. } if fields["done"].read == Read::HasClass("completed".into())
        ));
        let round_trip: Adapter =
            serde_json::from_value(serde_json::to_value(&adapter).unwrap()).unwrap();
        assert_eq!(round_trip, adapter);
    }

    #[test]
    fn shape_errors_have_line_and_column() {
        let text = GOOD.replace(r#""step": "press""#, r#""step": "smash""#);
        let problems = parse_adapter(&text).unwrap_err();
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].line, Some(12), "{}", problems[0]);
        assert!(problems[0].message.contains("smash"), "{}", problems[0]);

        let problems =
            parse_adapter(r#"{"name": "x", "match": [], "tools": [], "colour": 1}"#).unwrap_err();
        assert!(problems[0].message.contains("colour"), "{}", problems[0]);
    }

    #[test]
    fn semantic_errors_are_all_reported_with_their_place() {
        let text = GOOD
            .replace(r#""name": "demo""#, r#""name": "Demo!""#)
            .replace("http://127.0.0.1/*", "127.0.0.1")
            .replace(r#""value": "{{title}}""#, r#""value": "{{titel}}""#);
        let problems = parse_adapter(&text).unwrap_err();
        let rendered: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(problems.len(), 3, "{rendered:#?}");
        assert!(
            rendered[0].starts_with("2:11: name: adapter name \"Demo!\""),
            "{}",
            rendered[0]
        );
        assert!(
            rendered[1].starts_with("3:13: match[0]: invalid match pattern"),
            "{}",
            rendered[1]
        );
        assert!(
            rendered[2].starts_with("11:55: tools[0].steps[1].value: {{titel}} is neither"),
            "{}",
            rendered[2]
        );
        assert!(rendered[2].contains("known: title"), "{}", rendered[2]);
    }

    #[test]
    fn key_chords_are_checked_where_they_are_written() {
        let text = GOOD.replace(r#""key": "Enter""#, r#""key": "Ctrl+Entr""#);
        let problems = parse_adapter(&text).unwrap_err();
        let rendered: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(problems.len(), 1, "{rendered:#?}");
        assert!(
            rendered[0].starts_with(
                "12:54: tools[0].steps[2].key: in \"Ctrl+Entr\": unknown key \"Entr\": expected one character or a key name (Enter,"
            ),
            "{}",
            rendered[0]
        );
        for good in [
            "Shift+Enter",
            "Mod+s",
            "Control+a",
            "Meta+Enter",
            "Alt+ArrowUp",
            "Escape",
        ] {
            let text = GOOD.replace(r#""key": "Enter""#, &format!(r#""key": "{good}""#));
            assert!(parse_adapter(&text).is_ok(), "{good}");
        }
    }

    #[test]
    fn reserved_names_and_foreign_navigation_are_refused_at_load_as_at_run_time() {
        for name in ["browser", "site", "webmcp"] {
            let text = GOOD.replace(r#""name": "demo""#, &format!(r#""name": "{name}""#));
            let problems = parse_adapter(&text).unwrap_err();
            assert!(
                problems[0].message.contains("is reserved"),
                "{name}: {}",
                problems[0]
            );
        }
        let navigating = |url: &str| {
            let adapter: Adapter = serde_json::from_value(json!({
                "name": "a", "match": ["<all_urls>"],
                "tools": [{"name": "t", "description": "d", "input_schema": {"type": "object",
                    "properties": {"q": {"type": "string"}}},
                    "steps": [{"step": "navigate", "url": url}]}]
            }))
            .unwrap();
            adapter.validate()
        };
        for refused in [
            "javascript:alert(1)",
            "data:text/html,x",
            " JAVASCRIPT:x{{q}}",
        ] {
            let problems = navigating(refused);
            assert!(
                problems
                    .iter()
                    .any(|p| p.message.contains("not a page a tool may navigate to")),
                "{refused}: {problems:?}"
            );
        }
        for allowed in ["results.html?q={{q}}", "https://a.example/{{q}}", "{{q}}"] {
            assert_eq!(navigating(allowed), [], "{allowed}");
        }
    }

    #[test]
    fn variables_read_later_are_not_known_earlier() {
        let adapter: Adapter = serde_json::from_value(json!({
            "name": "a", "match": ["<all_urls>"],
            "tools": [{"name": "t", "description": "d", "steps": [
                {"step": "return", "value": "{{x}}"},
                {"step": "read", "selector": "h1", "into": "x"}
            ]}]
        }))
        .unwrap();
        let problems = adapter.validate();
        let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(problems.len(), 2, "{text:#?}");
        assert!(text.iter().any(|p| p.contains("must be the last step")));
        assert!(text.iter().any(|p| p.contains("{{x}} is neither")));
    }

    #[test]
    fn an_output_schema_must_describe_an_object() {
        let with_output = |schema: &str| {
            GOOD.replace(
                r#""input_schema":"#,
                &format!(r#""output_schema": {schema}, "input_schema":"#),
            )
        };
        let good =
            with_output(r#"{"type": "object", "properties": {"result": {"type": "array"}}}"#);
        let adapter = parse_adapter(&good).unwrap();
        assert_eq!(
            adapter.tools[0].output_schema.as_ref().unwrap()["properties"]["result"]["type"],
            "array"
        );
        let round_trip: Adapter =
            serde_json::from_value(serde_json::to_value(&adapter).unwrap()).unwrap();
        assert_eq!(round_trip, adapter);

        for bad in [r#"{"type": "array"}"#, r#""object""#, "{}"] {
            let problems = parse_adapter(&with_output(bad)).unwrap_err();
            assert_eq!(problems.len(), 1, "{bad}: {problems:?}");
            let text = problems[0].to_string();
            assert!(
                text.contains(
                    "tools[0].output_schema: expected a JSON Schema with \"type\": \"object\""
                ),
                "{text}"
            );
            assert!(problems[0].line.is_some(), "{text}");
        }
    }

    #[test]
    fn state_extractors_and_dom_predicates_are_validated() {
        let mut doc: Value = serde_json::from_str(GOOD).unwrap();
        doc["$schema"] = json!("./schema/adapter.schema.json");
        doc["match_selector"] = json!(".todoapp");
        doc["state"] = json!({"steps": [
            {"step": "extract", "selector": "li", "fields": {"t": {}}, "into": "items"},
            {"step": "return", "value": {"items": "{{items}}"}}
        ]});
        let adapter = parse_adapter(&doc.to_string()).unwrap();
        assert_eq!(adapter.match_selector.as_deref(), Some(".todoapp"));
        let state = adapter.state.as_ref().unwrap().as_tool();
        assert!(state.annotations.read_only);
        assert_eq!(state.steps.len(), 2);
        let sent = serde_json::to_value(&adapter).unwrap();
        assert!(
            sent.get("$schema").is_none(),
            "the schema hint is not sent on"
        );
        assert_eq!(sent["match_selector"], ".todoapp");

        doc["match_selector"] = json!(" ");
        doc["state"] = json!({"steps": [
            {"step": "read", "selector": "h1", "into": "h"},
            {"step": "click", "selector": "{{title}}"}
        ]});
        let text = serde_json::to_string_pretty(&doc).unwrap();
        let problems = parse_adapter(&text).unwrap_err();
        let rendered: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(problems.len(), 3, "{rendered:#?}");
        assert!(
            rendered[0].contains("match_selector: expected a CSS selector"),
            "{rendered:#?}"
        );
        assert!(
            rendered[1]
                .contains("state.steps: expected the state's steps to end with a \"return\""),
            "{rendered:#?}"
        );
        assert!(
            rendered[2].contains("state.steps[1].selector: {{title}} is neither"),
            "{rendered:#?}"
        );
        assert!(problems.iter().all(|p| p.line.is_some()), "{rendered:#?}");
    }

    #[test]
    fn new_steps_are_validated() {
        let adapter: Adapter = serde_json::from_value(json!({
            "name": "a", "match": ["<all_urls>"],
            "tools": [{"name": "t", "description": "d",
              "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
              "steps": [
                {"step": "select", "selector": "s", "value": "x", "label": "y"},
                {"step": "within", "selector": "li", "steps": [{"step": "click"}]},
                {"step": "if", "var": "nope", "then": [{"step": "hover"}]},
                {"step": "if", "selector": "a", "then": [], "else": []},
                {"step": "for_each", "selector": "li", "into": "rows", "steps": [
                    {"step": "read", "selector": "b", "into": "name"}]},
                {"step": "frame", "selector": "iframe", "steps": [{"step": "navigate", "url": "x"}]},
                {"step": "navigate", "url": "/search?q={{q}}"},
                {"step": "return", "value": {"r": "{{rows}}", "n": "{{name}}", "q": "{{q}}"}}
            ]}]
        }))
        .unwrap();
        let problems: Vec<String> = adapter.validate().iter().map(ToString::to_string).collect();
        assert_eq!(
            problems,
            [
                "tools[0].steps[0].step: \"select\" needs exactly one of \"value\" (the option's value) and \"label\" (its text)",
                "tools[0].steps[1].step: \"within\" needs exactly one of \"text_equals\" and \"text_contains\"",
                "tools[0].steps[2].var: {{nope}} is neither an argument in input_schema.properties nor read by an earlier step (known: q)",
                "tools[0].steps[3].then: expected steps in \"then\" or \"else\"",
                "tools[0].steps[5].steps[0].step: \"navigate\" must be a top-level step (the call continues in the new page with the next top-level step)",
            ]
        );
        assert_eq!(
            assigned_names(&adapter.tools[0].steps),
            ["name", "rows"],
            "variables a for_each body reads stay known after it"
        );
    }

    #[test]
    fn for_each_over_items_is_validated_with_located_errors() {
        let tool = |steps: &str| {
            format!(
                r#"{{
  "name": "a", "match": ["<all_urls>"],
  "tools": [{{"name": "t", "description": "d",
    "input_schema": {{"type": "object", "properties": {{
      "title": {{"type": "string"}},
      "tags": {{"type": "array", "items": {{"type": "string"}}}}}}}},
    "steps": [
{steps}
    ]}}]
}}"#
            )
        };
        let good = tool(
            r##"      {"step": "for_each", "items": "{{tags}}", "as": "tag", "into": "rows", "steps": [
        {"step": "fill", "selector": "#t", "value": "{{tag}}"},
        {"step": "read", "selector": "[data-tag='{{tag}}']", "read": "exists", "into": "seen"}]},
      {"step": "return", "value": {"rows": "{{rows}}", "seen": "{{seen}}"}}"##,
        );
        let adapter = parse_adapter(&good).unwrap();
        let step = &adapter.tools[0].steps[0];
        assert!(matches!(
            step,
            Step::ForEach { selector: None, items: Some(items), item_var: Some(tag), .. }
                if items == "{{tags}}" && tag == "tag"
        ));
        let sent = serde_json::to_value(step).unwrap();
        assert_eq!(sent["as"], "tag");
        assert_eq!(serde_json::from_value::<Step>(sent).unwrap(), *step);
        assert_eq!(assigned_names(&adapter.tools[0].steps), ["seen", "rows"]);

        let bad = tool(
            r##"      {"step": "for_each", "selector": "li", "items": "{{tags}}", "as": "t", "steps": [{"step": "click"}]},
      {"step": "for_each", "steps": [{"step": "click"}]},
      {"step": "for_each", "items": "{{tags}}", "steps": [{"step": "click"}]},
      {"step": "for_each", "items": "tags: {{tags}}", "as": "t", "steps": [{"step": "click"}]},
      {"step": "for_each", "items": "{{title}}", "as": "t", "steps": [{"step": "click"}]},
      {"step": "for_each", "items": "{{tags}}", "as": "title", "steps": [{"step": "click"}]},
      {"step": "for_each", "selector": "li", "as": "x", "steps": [{"step": "click"}]},
      {"step": "for_each", "items": "{{ghost}}", "as": "g", "steps": [{"step": "click"}]},
      {"step": "for_each", "items": "{{tags}}", "as": "tag", "steps": [{"step": "click", "selector": "#{{tag}}"}]},
      {"step": "return", "value": "{{tag}}"}"##,
        );
        let problems = parse_adapter(&bad).unwrap_err();
        let rendered: Vec<String> = problems.iter().map(ToString::to_string).collect();
        // Where `needle` starts on the line of `steps[n]` (the steps are one a line).
        let at = |n: usize, needle: &str| {
            let (i, line) = bad
                .lines()
                .enumerate()
                .filter(|(_, l)| l.trim_start().starts_with("{\"step\""))
                .nth(n)
                .unwrap();
            format!(
                "{}:{}: tools[0].steps[{n}]",
                i + 1,
                line.find(needle).unwrap() + 1
            )
        };
        let expected = [
            format!(
                "{}.step: \"for_each\" needs exactly one of \"selector\" (each matching element) and \"items\" (each element of an array, with \"as\")",
                at(0, "\"for_each\"")
            ),
            format!(
                "{}.step: \"for_each\" needs exactly one of",
                at(1, "\"for_each\"")
            ),
            format!(
                "{}.items: a for_each over \"items\" needs \"as\": the variable each item is bound to",
                at(2, "\"{{tags}}\"")
            ),
            format!(
                "{}.items: expected exactly one variable holding an array, such as \"{{{{tags}}}}\", got \"tags: {{{{tags}}}}\"",
                at(3, "\"tags: ")
            ),
            format!(
                "{}.items: the argument \"title\" is iterated over, so input_schema.properties.title needs \"type\": \"array\" (it has \"string\")",
                at(4, "\"{{title}}\"")
            ),
            format!(
                "{}.as: \"title\" is already an argument or a variable read earlier: name the item differently",
                at(5, "\"title\"")
            ),
            format!(
                "{}.as: \"as\" names the item of a for_each over \"items\"",
                at(6, "\"x\"")
            ),
            format!(
                "{}.items: {{{{ghost}}}} is neither an argument",
                at(7, "\"{{ghost}}\"")
            ),
            format!(
                "{}.value: {{{{tag}}}} is neither an argument in input_schema.properties nor read by an earlier step (known: tags, title)",
                at(9, "\"{{tag}}\"")
            ),
        ];
        assert_eq!(problems.len(), expected.len(), "{rendered:#?}");
        for (got, want) in rendered.iter().zip(&expected) {
            assert!(got.starts_with(want.as_str()), "{got}\n  expected: {want}");
        }
    }

    #[test]
    fn steps_of_every_kind_parse_and_round_trip_and_bad_shapes_say_why() {
        let mut all = Vec::new();
        for kind in STEP_KINDS {
            let step = match *kind {
                "wait" => {
                    json!({"step": "wait", "selector": "a", "until": "gone", "timeout_ms": 5})
                }
                "fill" => json!({"step": "fill", "selector": "a", "value": "v"}),
                "clear" => json!({"step": "clear", "selector": "a"}),
                "press" => json!({"step": "press", "key": "Enter"}),
                "select" => json!({"step": "select", "selector": "a", "label": "L"}),
                "read" => {
                    json!({"step": "read", "into": "x", "read": "attr:href", "optional": true})
                }
                "extract" => {
                    json!({"step": "extract", "selector": "li", "into": "x", "fields": {"t": {}}})
                }
                "within" => {
                    json!({"step": "within", "selector": "li", "text_contains": "t", "read": "own_text",
                                   "timeout_ms": 9, "steps": [{"step": "click"}]})
                }
                "for_each" => {
                    json!({"step": "for_each", "selector": "li", "into": "r", "steps": [{"step": "hover"}]})
                }
                "if" => {
                    json!({"step": "if", "var": "v", "then": [{"step": "blur"}], "else": [{"step": "check"}]})
                }
                "frame" => {
                    json!({"step": "frame", "selector": "iframe", "steps": [{"step": "uncheck"}]})
                }
                "navigate" => json!({"step": "navigate", "url": "/x"}),
                "return" => json!({"step": "return", "value": null}),
                "fetch" => {
                    json!({"step": "fetch", "url": "/x", "into": "x", "timeout_ms": 5,
                           "records": "/items", "fields": {"a": "/a"}})
                }
                other => json!({"step": other, "selector": "b"}),
            };
            let parsed: Step = serde_json::from_value(step).unwrap();
            assert_eq!(parsed.kind(), *kind);
            let again: Step =
                serde_json::from_value(serde_json::to_value(&parsed).unwrap()).unwrap();
            assert_eq!(again, parsed);
            all.push(parsed);
        }
        assert_eq!(all.len(), STEP_KINDS.len());
        let error = |v: Value| serde_json::from_value::<Step>(v).unwrap_err().to_string();
        assert!(
            error(json!({"step": "click", "key": "x"}))
                .contains("unknown field `key` in a \"click\" step")
        );
        assert!(error(json!({"step": "fill", "selector": "a"})).contains("missing field `value`"));
        assert!(
            error(json!({"step": "fill", "selector": "a", "value": 1}))
                .contains("must be a string")
        );
        assert!(error(json!({"step": "fly"})).contains("unknown variant `fly`"));
        assert!(error(json!({"step": "click", "colour": 1})).contains("colour"));
    }

    #[test]
    fn fetch_steps_are_validated_with_their_place() {
        let with_fetch = |step: &str| {
            GOOD.replace(
                r##"{"step": "wait", "selector": "#new"},"##,
                &format!("{step},"),
            )
        };
        let good = with_fetch(
            r#"{"step": "fetch", "url": "/api/items?title={{title}}", "into": "found",
               "fields": {"id": "/id", "from": "/from/0/address"}}"#,
        );
        let adapter = parse_adapter(&good).unwrap();
        assert!(matches!(
            &adapter.tools[0].steps[0],
            Step::Fetch { fields: Some(f), response: ResponseKind::Json, records: None, .. }
                if f["from"] == "/from/0/address"
        ));
        assert_eq!(assigned_names(&adapter.tools[0].steps)[0], "found");
        let text = with_fetch(
            r#"{"step": "fetch", "url": "/robots.txt", "response": "text", "into": "t"}"#,
        );
        parse_adapter(&text).unwrap();

        for (step, expected) in [
            (
                r#"{"step": "fetch", "url": "https://evil.example/steal", "into": "x"}"#,
                "10:34: tools[0].steps[0].url: the URL \"https://evil.example/steal\" must be a path on the page's own origin",
            ),
            (
                r#"{"step": "fetch", "url": "//evil.example/x", "into": "x"}"#,
                "10:34: tools[0].steps[0].url: the URL \"//evil.example/x\" must not start with \"//\"",
            ),
            (
                r#"{"step": "fetch", "url": "{{title}}", "into": "x"}"#,
                "tools[0].steps[0].url: the URL \"{{title}}\" must be a path",
            ),
            (
                r#"{"step": "fetch", "url": "/a/{{nope}}", "into": "x"}"#,
                "tools[0].steps[0].url: {{nope}} is neither",
            ),
            (
                r#"{"step": "fetch", "url": "/a", "into": "x", "fields": {"id": "id"}}"#,
                "tools[0].steps[0].fields.id: \"id\" is not a JSON pointer",
            ),
            (
                r#"{"step": "fetch", "url": "/a", "into": "x", "records": "/items"}"#,
                "tools[0].steps[0].records: \"records\" says where the list is for \"fields\"",
            ),
            (
                r#"{"step": "fetch", "url": "/a", "into": "x", "response": "text", "fields": {"a": "/a"}}"#,
                "tools[0].steps[0].response: \"records\" and \"fields\" pick values out of JSON",
            ),
            (
                r#"{"step": "fetch", "url": "/a", "into": "x", "fields": {}}"#,
                "tools[0].steps[0].fields: expected at least one field",
            ),
        ] {
            let problems = parse_adapter(&with_fetch(step)).unwrap_err();
            let rendered: Vec<String> = problems.iter().map(ToString::to_string).collect();
            assert_eq!(problems.len(), 1, "{step}: {rendered:#?}");
            assert!(rendered[0].contains(expected), "{step}: {rendered:#?}");
            assert!(problems[0].line.is_some(), "{step}: {rendered:#?}");
        }

        let error = |v: Value| serde_json::from_value::<Step>(v).unwrap_err().to_string();
        assert!(error(json!({"step": "fetch", "into": "x"})).contains("missing field `url`"));
        assert!(
            error(json!({"step": "fetch", "url": "/a", "into": "x", "selector": "a"}))
                .contains("unknown field `selector` in a \"fetch\" step")
        );
        assert!(
            error(json!({"step": "fetch", "url": "/a", "into": "x", "fields": {"a": {"selector": "b"}}}))
                .contains("must be a JSON pointer string")
        );
        assert!(
            error(json!({"step": "extract", "selector": "li", "into": "x", "fields": {"a": "/a"}}))
                .contains("must be an object")
        );
        assert!(
            error(json!({"step": "fetch", "url": "/a", "into": "x", "response": "xml"}))
                .contains("unknown variant `xml`")
        );
    }

    #[test]
    fn read_kinds_parse_and_print() {
        for s in [
            "text",
            "own_text",
            "value",
            "exists",
            "attr:href",
            "prop:checked",
            "has_class:done",
        ] {
            let read = Read::try_from(s.to_owned()).unwrap();
            assert_eq!(String::from(read), s);
        }
        assert!(
            Read::try_from("attr:".to_owned())
                .unwrap_err()
                .contains("needs a name")
        );
        assert!(
            Read::try_from("html".to_owned())
                .unwrap_err()
                .contains("expected text")
        );
    }

    #[test]
    fn locate_finds_nested_values() {
        let text = "{\n  \"a\": [1, {\"b\": \"x,]}\"}, {\"c\": true}]\n}";
        let path = JsonPath(vec![
            PathSegment::Key("a".into()),
            PathSegment::Index(2),
            PathSegment::Key("c".into()),
        ]);
        assert_eq!(locate(text, &path), Some((2, 33)));
        assert_eq!(
            locate(text, &JsonPath(vec![PathSegment::Key("zz".into())])),
            None
        );
    }
}

#[cfg(test)]
mod shipped_adapters {
    /// The adapters shipped in `adapters/` must always validate.
    #[test]
    fn shipped_adapters_validate() {
        for (file, text) in [
            ("todomvc.json", include_str!("../../adapters/todomvc.json")),
            (
                "tiddlywiki.json",
                include_str!("../../adapters/tiddlywiki.json"),
            ),
            ("maildev.json", include_str!("../../adapters/maildev.json")),
        ] {
            if let Err(problems) = super::parse_adapter(text) {
                panic!("{file}: {problems:#?}");
            }
        }
    }
}

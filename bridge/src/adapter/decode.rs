//! Reading steps as files write them. A step parses into one flat struct holding every field any
//! step has ([`RawStep`]; serde's internally tagged enums would buffer each step and cost the wasm
//! modules about 100 KB), which the kind table ([`StepKind`]) then checks (which fields the kind
//! takes and needs) before the step is built, either-or choices included.
//!
//! When a file fails to parse, [`step_problems`] decodes its steps one by one, so that every bad
//! step is reported with its path (and so its line), not only the first one serde met.

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::locate::{JsonPath, Problem};
use super::step::{
    Condition, FetchBody, Field, Loop, OptionChoice, Read, ResponseKind, Step, TextMatch, WaitUntil,
};
use super::{STEP_KINDS, StepKind};

/// Every field any step has, flat.
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

fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// The `step` field: an unknown kind is reported where it is written, with the known ones.
impl<'de> Deserialize<'de> for StepKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<StepKind, D::Error> {
        let name = String::deserialize(deserializer)?;
        StepKind::from_name(&name).ok_or_else(|| D::Error::unknown_variant(&name, STEP_KINDS))
    }
}

/// Why a flat step is not a valid step of its kind, and at which of its fields (`None`: the
/// step as a whole).
#[derive(Debug)]
struct StepError {
    field: Option<&'static str>,
    message: String,
}

impl StepError {
    fn at(field: &'static str, message: impl Into<String>) -> StepError {
        StepError {
            field: Some(field),
            message: message.into(),
        }
    }
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

    fn into_step(self) -> Result<Step, StepError> {
        let kind = self.step;
        let present = self.present();
        if let Some(extra) = present.iter().find(|f| !kind.fields().any(|k| k == **f)) {
            let known: Vec<&str> = kind.fields().collect();
            return Err(StepError::at(
                extra,
                format!(
                    "unknown field `{extra}` in a {:?} step, expected {}",
                    kind.name(),
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        format!("one of {}", known.join(", "))
                    }
                ),
            ));
        }
        if let Some(missing) = kind.required().iter().find(|f| !present.contains(f)) {
            return Err(StepError {
                field: None,
                message: format!("missing field `{missing}` in a {:?} step", kind.name()),
            });
        }
        // The table above made sure required fields are there: `need` only turns the Option
        // into the value (and would report the field should the two ever disagree).
        let need = |value: Option<String>, field: &'static str| {
            value.ok_or_else(|| {
                StepError::at(
                    field,
                    format!("missing field `{field}` in a {:?} step", kind.name()),
                )
            })
        };
        let text = |value: Option<Value>| match value {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(StepError::at(
                "value",
                format!("`value` of a {:?} step must be a string", kind.name()),
            )),
        };
        let steps = |steps: Option<Vec<Step>>| steps.unwrap_or_default();
        let selector = self.selector;
        Ok(match kind {
            StepKind::Wait => Step::Wait {
                selector: need(selector, "selector")?,
                until: self.until.unwrap_or_default(),
                timeout_ms: self.timeout_ms,
            },
            StepKind::Click => Step::Click { selector },
            StepKind::Dblclick => Step::Dblclick { selector },
            StepKind::Hover => Step::Hover { selector },
            StepKind::ScrollIntoView => Step::ScrollIntoView { selector },
            StepKind::Check => Step::Check { selector },
            StepKind::Uncheck => Step::Uncheck { selector },
            StepKind::Blur => Step::Blur { selector },
            StepKind::Fill => Step::Fill {
                selector: need(selector, "selector")?,
                value: need(text(self.value)?, "value")?,
            },
            StepKind::Clear => Step::Clear {
                selector: need(selector, "selector")?,
            },
            StepKind::Press => Step::Press {
                selector,
                key: need(self.key, "key")?,
            },
            StepKind::Select => Step::Select {
                selector: need(selector, "selector")?,
                option: match (text(self.value)?, self.label) {
                    (Some(value), None) => OptionChoice::Value(value),
                    (None, Some(label)) => OptionChoice::Label(label),
                    _ => {
                        return Err(StepError::at(
                            "step",
                            "\"select\" needs exactly one of \"value\" (the option's value) and \"label\" (its text)",
                        ));
                    }
                },
            },
            StepKind::Read => Step::Read {
                selector,
                read: self.read.unwrap_or_default(),
                into: need(self.into, "into")?,
                optional: self.optional.unwrap_or_default(),
            },
            StepKind::Extract => Step::Extract {
                selector: need(selector, "selector")?,
                fields: extract_fields(self.fields.unwrap_or_default())?,
                into: need(self.into, "into")?,
            },
            StepKind::Within => Step::Within {
                selector: need(selector, "selector")?,
                text_selector: self.text_selector,
                read: self.read.unwrap_or_default(),
                text: match (self.text_equals, self.text_contains) {
                    (Some(text), None) => TextMatch::Equals(text),
                    (None, Some(text)) => TextMatch::Contains(text),
                    _ => {
                        return Err(StepError::at(
                            "step",
                            "\"within\" needs exactly one of \"text_equals\" and \"text_contains\"",
                        ));
                    }
                },
                timeout_ms: self.timeout_ms,
                steps: steps(self.steps),
            },
            StepKind::ForEach => Step::ForEach {
                over: match (selector, self.items, self.item_var) {
                    (Some(selector), None, None) => Loop::Elements { selector },
                    (None, Some(items), Some(item_var)) => Loop::Items { items, item_var },
                    (Some(_), None, Some(_)) => {
                        return Err(StepError::at(
                            "as",
                            "\"as\" names the item of a for_each over \"items\"; over \"selector\" the steps are scoped to each element instead",
                        ));
                    }
                    (None, Some(_), None) => {
                        return Err(StepError::at(
                            "items",
                            "a for_each over \"items\" needs \"as\": the variable each item is bound to",
                        ));
                    }
                    (Some(_), Some(_), _) | (None, None, _) => {
                        return Err(StepError::at(
                            "step",
                            "\"for_each\" needs exactly one of \"selector\" (each matching element) and \"items\" (each element of an array, with \"as\")",
                        ));
                    }
                },
                steps: steps(self.steps),
                into: self.into,
            },
            StepKind::If => Step::If {
                condition: match (selector, self.var) {
                    (Some(selector), None) => Condition::Element(selector),
                    (None, Some(var)) => Condition::Var(var),
                    _ => {
                        return Err(StepError::at(
                            "step",
                            "\"if\" needs exactly one of \"selector\" (an element is present) and \"var\" (a variable is set)",
                        ));
                    }
                },
                then: steps(self.then),
                otherwise: steps(self.otherwise),
            },
            StepKind::Frame => Step::Frame {
                selector: need(selector, "selector")?,
                steps: steps(self.steps),
            },
            StepKind::Navigate => Step::Navigate {
                url: need(self.url, "url")?,
            },
            StepKind::Return => Step::Return {
                value: self.value.unwrap_or_default(),
            },
            StepKind::Fetch => Step::Fetch {
                url: need(self.url, "url")?,
                into: need(self.into, "into")?,
                body: fetch_body(self.response.unwrap_or_default(), self.records, self.fields)?,
                timeout_ms: self.timeout_ms,
            },
        })
    }
}

fn extract_fields(fields: BTreeMap<String, Value>) -> Result<BTreeMap<String, Field>, StepError> {
    fields
        .into_iter()
        .map(|(name, field)| match field {
            Value::Object(_) => serde_json::from_value(field)
                .map(|field| (name.clone(), field))
                .map_err(|e| {
                    StepError::at(
                        "fields",
                        format!("field `{name}` of an \"extract\" step: {e}"),
                    )
                }),
            _ => Err(StepError::at(
                "fields",
                format!(
                    "field `{name}` of an \"extract\" step must be an object such as {{\"selector\": \".name\"}} (JSON pointers are for \"fetch\")"
                ),
            )),
        })
        .collect()
}

fn fetch_body(
    response: ResponseKind,
    records: Option<String>,
    fields: Option<BTreeMap<String, Value>>,
) -> Result<FetchBody, StepError> {
    let fields = match fields {
        None => None,
        Some(fields) => Some(
            fields
                .into_iter()
                .map(|(name, field)| match field {
                    Value::String(pointer) => Ok((name, pointer)),
                    _ => Err(StepError::at(
                        "fields",
                        format!(
                            "field `{name}` of a \"fetch\" step must be a JSON pointer string such as \"/subject\""
                        ),
                    )),
                })
                .collect::<Result<BTreeMap<_, _>, _>>()?,
        ),
    };
    match (response, records, fields) {
        (ResponseKind::Text, None, None) => Ok(FetchBody::Text),
        (ResponseKind::Text, ..) => Err(StepError::at(
            "response",
            "\"records\" and \"fields\" pick values out of JSON: they need \"response\": \"json\"",
        )),
        (ResponseKind::Json, None, None) => Ok(FetchBody::Json),
        (ResponseKind::Json, Some(_), None) => Err(StepError::at(
            "records",
            "\"records\" says where the list is for \"fields\": add \"fields\" or drop it",
        )),
        (ResponseKind::Json, records, Some(fields)) => Ok(FetchBody::Records { records, fields }),
    }
}

impl<'de> Deserialize<'de> for Step {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Step, D::Error> {
        RawStep::deserialize(deserializer)?
            .into_step()
            .map_err(|e| D::Error::custom(e.message))
    }
}

/// Every problem in the steps of `document` (an adapter file that failed to parse), each at its
/// path: a step is decoded with its nested steps left out, which are decoded on their own.
pub(super) fn step_problems(document: &Value) -> Vec<Problem> {
    let mut problems = Vec::new();
    let tools = JsonPath::default().key("tools");
    for (i, tool) in document
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if let Some(steps) = tool.get("steps") {
            list_problems(steps, &tools.index(i).key("steps"), &mut problems);
        }
    }
    if let Some(steps) = document.get("state").and_then(|state| state.get("steps")) {
        list_problems(
            steps,
            &JsonPath::default().key("state").key("steps"),
            &mut problems,
        );
    }
    problems
}

const NESTED: [&str; 3] = ["steps", "then", "else"];

fn list_problems(steps: &Value, path: &JsonPath, out: &mut Vec<Problem>) {
    for (i, step) in steps.as_array().into_iter().flatten().enumerate() {
        let path = path.index(i);
        let Some(object) = step.as_object() else {
            // serde's own message, e.g. "invalid type: string "click", expected struct RawStep".
            if let Err(e) = serde_json::from_value::<Step>(step.clone()) {
                out.push(Problem::at(path, e.to_string()));
            }
            continue;
        };
        let mut shallow = Map::new();
        let mut nested = Vec::new();
        for (key, value) in object {
            if NESTED.contains(&key.as_str()) && value.is_array() {
                nested.push((key, value));
                shallow.insert(key.clone(), Value::Array(Vec::new()));
            } else {
                shallow.insert(key.clone(), value.clone());
            }
        }
        match RawStep::deserialize(Value::Object(shallow)) {
            Err(e) => out.push(Problem::at(path.clone(), e.to_string())),
            Ok(raw) => {
                if let Err(e) = raw.into_step() {
                    let at = match e.field {
                        Some(field) => path.key(field),
                        None => path.clone(),
                    };
                    out.push(Problem::at(at, e.message));
                }
            }
        }
        for (key, steps) in nested {
            list_problems(steps, &path.key(key), out);
        }
    }
}

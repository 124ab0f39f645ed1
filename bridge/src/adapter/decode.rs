//! Reading steps as files write them (`{"step": "select", "selector": "#size", "label": "L"}`). A
//! step is read from its JSON object: the kind table ([`StepKind`]) says which fields the kind
//! takes and needs, so a field of another kind or a missing one is refused before anything else,
//! then each field is taken with its type, and either-or choices become their enum. Reading the
//! object by hand instead of through serde's derive (an internally tagged enum buffers each step;
//! a flat struct of every field lists them all again) keeps the step parser small in the wasm
//! modules.
//!
//! When a file fails to parse, [`step_problems`] reads its steps one by one, so that every bad
//! step is reported with its path (and so its line), not only the first one serde met.

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::locate::{JsonPath, Problem};
use super::step::{
    Condition, FetchBody, Field, Loop, OptionChoice, Read, Step, TextMatch, WaitUntil,
};
use super::{STEP_KINDS, StepKind};

/// Why a step's JSON is not a valid step, and at which of its fields (`None`: the step as a
/// whole).
#[derive(Debug)]
struct StepError {
    field: Option<String>,
    message: String,
}

impl StepError {
    fn at(field: &str, message: impl Into<String>) -> StepError {
        StepError {
            field: Some(field.to_owned()),
            message: message.into(),
        }
    }

    fn whole(message: impl Into<String>) -> StepError {
        StepError {
            field: None,
            message: message.into(),
        }
    }
}

/// A step's fields, taken one by one with their type.
struct Fields {
    kind: StepKind,
    map: Map<String, Value>,
}

impl Fields {
    fn wrong(&self, field: &str, expected: &str, got: &Value) -> StepError {
        StepError::at(
            field,
            format!(
                "`{field}` of a {:?} step must be {expected}, got {got}",
                self.kind.name()
            ),
        )
    }

    fn missing(&self, field: &str) -> StepError {
        StepError::whole(format!(
            "missing field `{field}` in a {:?} step",
            self.kind.name()
        ))
    }

    /// An optional field; `null` counts as absent.
    fn take(&mut self, field: &str) -> Option<Value> {
        self.map.remove(field).filter(|v| !v.is_null())
    }

    fn text(&mut self, field: &str) -> Result<Option<String>, StepError> {
        match self.take(field) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(self.wrong(field, "a string", &other)),
        }
    }

    fn need_text(&mut self, field: &str) -> Result<String, StepError> {
        self.text(field)?.ok_or_else(|| self.missing(field))
    }

    fn millis(&mut self, field: &str) -> Result<Option<u64>, StepError> {
        match self.take(field) {
            None => Ok(None),
            Some(value) => match value.as_u64() {
                Some(ms) => Ok(Some(ms)),
                None => Err(self.wrong(field, "a whole number of milliseconds", &value)),
            },
        }
    }

    /// Which occurrence of a text (from 1).
    fn occurrence(&mut self, field: &str) -> Result<Option<u64>, StepError> {
        match self.take(field) {
            None => Ok(None),
            Some(value) => match value.as_u64().filter(|n| *n >= 1) {
                Some(n) => Ok(Some(n)),
                None => Err(self.wrong(field, "a whole number from 1", &value)),
            },
        }
    }

    fn flag(&mut self, field: &str) -> Result<bool, StepError> {
        match self.take(field) {
            None => Ok(false),
            Some(Value::Bool(flag)) => Ok(flag),
            Some(other) => Err(self.wrong(field, "true or false", &other)),
        }
    }

    /// One of `names` (the first when absent), as its index.
    fn choice(&mut self, field: &str, names: &[&str]) -> Result<usize, StepError> {
        let Some(value) = self.take(field) else {
            return Ok(0);
        };
        value
            .as_str()
            .and_then(|name| names.iter().position(|n| *n == name))
            .ok_or_else(|| self.wrong(field, &format!("one of {}", names.join(", ")), &value))
    }

    fn read(&mut self) -> Result<Read, StepError> {
        match self.text("read")? {
            None => Ok(Read::default()),
            Some(text) => Read::try_from(text).map_err(|why| StepError::at("read", why)),
        }
    }

    /// A list of nested steps (absent: none).
    fn steps(&mut self, field: &str) -> Result<Vec<Step>, StepError> {
        match self.take(field) {
            None => Ok(Vec::new()),
            Some(Value::Array(steps)) => steps
                .into_iter()
                .map(|step| from_json(step).map_err(|e| StepError::at(field, e.message)))
                .collect(),
            Some(other) => Err(self.wrong(field, "a list of steps", &other)),
        }
    }

    /// `fields`: name → what `each` makes of its value.
    fn named<T>(
        &mut self,
        each: impl Fn(&str, Value) -> Result<T, String>,
    ) -> Result<Option<BTreeMap<String, T>>, StepError> {
        match self.take("fields") {
            None => Ok(None),
            Some(Value::Object(fields)) => fields
                .into_iter()
                .map(|(name, value)| {
                    let made = each(&name, value).map_err(|why| StepError::at("fields", why))?;
                    Ok((name, made))
                })
                .collect::<Result<_, _>>()
                .map(Some),
            Some(other) => Err(self.wrong("fields", "an object", &other)),
        }
    }
}

/// Reads one step from its JSON.
fn from_json(value: Value) -> Result<Step, StepError> {
    let Value::Object(mut map) = value else {
        return Err(StepError::whole(format!(
            "a step must be an object such as {{\"step\": \"click\"}}, got {value}"
        )));
    };
    let kind = match map.remove("step") {
        Some(Value::String(name)) => StepKind::from_name(&name).ok_or_else(|| {
            let known: Vec<String> = STEP_KINDS.iter().map(|k| format!("`{k}`")).collect();
            StepError::at(
                "step",
                format!(
                    "unknown variant `{name}`, expected one of {}",
                    known.join(", ")
                ),
            )
        })?,
        Some(other) => {
            return Err(StepError::at(
                "step",
                format!("`step` must be the name of a step kind, got {other}"),
            ));
        }
        None => return Err(StepError::whole("missing field `step`")),
    };
    if let Some(extra) = map.keys().find(|f| !kind.fields().any(|k| k == f.as_str())) {
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
    // `value` may be an explicit null only in `return` (its result), so it is checked apart.
    let present = |f: &str| map.get(f).is_some_and(|v| !v.is_null() || f == "value");
    if let Some(missing) = kind.required().iter().find(|f| !present(f)) {
        return Err(StepError::whole(format!(
            "missing field `{missing}` in a {:?} step",
            kind.name()
        )));
    }
    let mut f = Fields { kind, map };
    Ok(match kind {
        StepKind::Wait => Step::Wait {
            selector: f.need_text("selector")?,
            until: [WaitUntil::Visible, WaitUntil::Attached, WaitUntil::Gone]
                [f.choice("until", &["visible", "attached", "gone"])?],
            timeout_ms: f.millis("timeout_ms")?,
        },
        StepKind::Click => Step::Click {
            selector: f.text("selector")?,
            navigates: f.flag("navigates")?,
        },
        StepKind::Dblclick => Step::Dblclick {
            selector: f.text("selector")?,
        },
        StepKind::Hover => Step::Hover {
            selector: f.text("selector")?,
        },
        StepKind::ScrollIntoView => Step::ScrollIntoView {
            selector: f.text("selector")?,
        },
        StepKind::Check => Step::Check {
            selector: f.text("selector")?,
        },
        StepKind::Uncheck => Step::Uncheck {
            selector: f.text("selector")?,
        },
        StepKind::Blur => Step::Blur {
            selector: f.text("selector")?,
        },
        StepKind::Fill => Step::Fill {
            selector: f.need_text("selector")?,
            value: f.need_text("value")?,
        },
        StepKind::Clear => Step::Clear {
            selector: f.need_text("selector")?,
        },
        StepKind::Type => Step::Type {
            selector: f.need_text("selector")?,
            value: f.need_text("value")?,
            at: f.text("at")?,
            nth: f.occurrence("nth")?,
        },
        StepKind::Caret => Step::Caret {
            selector: f.need_text("selector")?,
            at: f.need_text("at")?,
            nth: f.occurrence("nth")?,
        },
        StepKind::Drag => Step::Drag {
            selector: f.need_text("selector")?,
            to: f.need_text("to")?,
        },
        StepKind::SelectText => Step::SelectText {
            selector: f.need_text("selector")?,
            value: f.text("value")?,
            nth: f.occurrence("nth")?,
        },
        StepKind::Press => Step::Press {
            selector: f.text("selector")?,
            key: f.need_text("key")?,
            navigates: f.flag("navigates")?,
        },
        StepKind::Select => Step::Select {
            selector: f.need_text("selector")?,
            option: match (f.text("value")?, f.text("label")?) {
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
            selector: f.text("selector")?,
            read: f.read()?,
            into: f.need_text("into")?,
            optional: f.flag("optional")?,
        },
        StepKind::Extract => Step::Extract {
            selector: f.need_text("selector")?,
            fields: f
                .named(|name, field| match field {
                    Value::Object(_) => serde_json::from_value::<Field>(field)
                        .map_err(|e| format!("field `{name}` of an \"extract\" step: {e}")),
                    _ => Err(format!(
                        "field `{name}` of an \"extract\" step must be an object such as {{\"selector\": \".name\"}} (JSON pointers are for \"fetch\")"
                    )),
                })?
                .unwrap_or_default(),
            into: f.need_text("into")?,
        },
        StepKind::Within => Step::Within {
            selector: f.need_text("selector")?,
            text_selector: f.text("text_selector")?,
            read: f.read()?,
            text: match (f.text("text_equals")?, f.text("text_contains")?) {
                (Some(text), None) => TextMatch::Equals(text),
                (None, Some(text)) => TextMatch::Contains(text),
                _ => {
                    return Err(StepError::at(
                        "step",
                        "\"within\" needs exactly one of \"text_equals\" and \"text_contains\"",
                    ));
                }
            },
            timeout_ms: f.millis("timeout_ms")?,
            steps: f.steps("steps")?,
        },
        StepKind::ForEach => Step::ForEach {
            over: match (f.text("selector")?, f.text("items")?, f.text("as")?) {
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
            steps: f.steps("steps")?,
            into: f.text("into")?,
        },
        StepKind::If => Step::If {
            condition: match (f.text("selector")?, f.text("var")?) {
                (Some(selector), None) => Condition::Element(selector),
                (None, Some(var)) => Condition::Var(var),
                _ => {
                    return Err(StepError::at(
                        "step",
                        "\"if\" needs exactly one of \"selector\" (an element is present) and \"var\" (a variable is set)",
                    ));
                }
            },
            then: f.steps("then")?,
            otherwise: f.steps("else")?,
        },
        StepKind::Frame => Step::Frame {
            selector: f.need_text("selector")?,
            steps: f.steps("steps")?,
        },
        StepKind::Navigate => Step::Navigate {
            url: f.need_text("url")?,
        },
        StepKind::Return => Step::Return {
            value: f.map.remove("value").unwrap_or_default(),
        },
        StepKind::Upload => Step::Upload {
            selector: f.need_text("selector")?,
            files: f.need_text("files")?,
        },
        StepKind::Fail => Step::Fail {
            message: f.need_text("message")?,
        },
        StepKind::Dialog => {
            let answer = f.need_text("answer")?;
            let text = f.text("text")?;
            Step::Dialog {
                answer: crate::dialog::DialogAnswer::parse(&answer, text)
                    .map_err(|why| StepError::at("answer", why))?,
            }
        }
        StepKind::Fetch => Step::Fetch {
            url: f.need_text("url")?,
            into: f.need_text("into")?,
            timeout_ms: f.millis("timeout_ms")?,
            body: fetch_body(&mut f)?,
        },
    })
}

/// How a `fetch` step reads its response: `response` (`json`, `text`) with `records` and `fields`,
/// which pick values out of JSON.
fn fetch_body(f: &mut Fields) -> Result<FetchBody, StepError> {
    let text = f.choice("response", &["json", "text"])? == 1;
    let records = f.text("records")?;
    let fields = f.named(|name, pointer| match pointer {
        Value::String(pointer) => Ok(pointer),
        _ => Err(format!(
            "field `{name}` of a \"fetch\" step must be a JSON pointer string such as \"/subject\""
        )),
    })?;
    match (text, records, fields) {
        (true, None, None) => Ok(FetchBody::Text),
        (true, ..) => Err(StepError::at(
            "response",
            "\"records\" and \"fields\" pick values out of JSON: they need \"response\": \"json\"",
        )),
        (false, None, None) => Ok(FetchBody::Json),
        (false, Some(_), None) => Err(StepError::at(
            "records",
            "\"records\" says where the list is for \"fields\": add \"fields\" or drop it",
        )),
        (false, records, Some(fields)) => Ok(FetchBody::Records { records, fields }),
    }
}

impl<'de> Deserialize<'de> for Step {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Step, D::Error> {
        from_json(Value::deserialize(deserializer)?).map_err(|e| D::Error::custom(e.message))
    }
}

/// Every problem in the steps of `document` (an adapter file that failed to parse), each at its
/// path: a step is read with its nested steps left out, which are read on their own.
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
        let mut shallow = step.clone();
        let mut nested = Vec::new();
        if let (Value::Object(original), Value::Object(copy)) = (step, &mut shallow) {
            for key in NESTED {
                if let Some(children @ Value::Array(_)) = original.get(key) {
                    nested.push((key, children));
                    copy.insert(key.to_owned(), Value::Array(Vec::new()));
                }
            }
        }
        if let Err(e) = from_json(shallow) {
            let at = match e.field {
                Some(field) => path.key(&field),
                None => path.clone(),
            };
            out.push(Problem::at(at, e.message));
        }
        for (key, children) in nested {
            list_problems(children, &path.key(key), out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn error(step: Value) -> (Option<String>, String) {
        let e = from_json(step).unwrap_err();
        (e.field, e.message)
    }

    #[test]
    fn each_field_is_taken_with_its_type_and_named_when_wrong() {
        assert_eq!(
            error(json!({"step": "wait", "selector": "a", "timeout_ms": "5"})),
            (
                Some("timeout_ms".into()),
                "`timeout_ms` of a \"wait\" step must be a whole number of milliseconds, got \"5\""
                    .into()
            )
        );
        assert_eq!(
            error(json!({"step": "wait", "selector": "a", "until": "soon"})).1,
            "`until` of a \"wait\" step must be one of visible, attached, gone, got \"soon\""
        );
        assert_eq!(
            error(json!({"step": "read", "into": "x", "optional": 1})).1,
            "`optional` of a \"read\" step must be true or false, got 1"
        );
        assert_eq!(
            error(json!({"step": "frame", "selector": "f", "steps": {}})).1,
            "`steps` of a \"frame\" step must be a list of steps, got {}"
        );
        assert_eq!(
            error(json!({"step": "frame", "selector": "f", "steps": [{"step": "fly"}]})).0,
            Some("steps".into()),
            "a nested step's problem is reported under the list that holds it"
        );
        assert_eq!(
            error(json!("click")).1,
            "a step must be an object such as {\"step\": \"click\"}, got \"click\""
        );
        assert_eq!(error(json!({"selector": "a"})).1, "missing field `step`");
        assert_eq!(
            error(json!({"step": 3})).1,
            "`step` must be the name of a step kind, got 3"
        );
        assert_eq!(
            error(json!({"step": "blur", "key": "x"})),
            (
                Some("key".into()),
                "unknown field `key` in a \"blur\" step, expected one of selector".into()
            )
        );
        assert_eq!(
            error(json!({"step": "return"})).1,
            "missing field `value` in a \"return\" step"
        );
        assert!(matches!(
            from_json(json!({"step": "return", "value": null})),
            Ok(Step::Return { value: Value::Null })
        ));
        // An optional field given as null is absent.
        assert!(matches!(
            from_json(json!({"step": "click", "selector": null})),
            Ok(Step::Click {
                selector: None,
                navigates: false
            })
        ));
    }
}

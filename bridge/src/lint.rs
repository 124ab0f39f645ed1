//! Advice on valid adapters: a tool that changes the page but answers before the page shows the
//! change (or its absence) may report an effect that never happened. `tabwire adapters check`
//! prints these as warnings; they never stop an adapter from loading (ADAPTERS.md, "Answer what
//! happened").

use crate::adapter::{Adapter, JsonPath, Step, StepKind};

/// A likely mistake in a valid adapter, located like a [`crate::adapter::Problem`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub path: JsonPath,
    pub message: String,
}

/// The tools that may change the page (neither `read_only` nor `idempotent`) whose last action is
/// followed by no wait and no read.
pub fn unconfirmed_effects(adapter: &Adapter) -> Vec<Warning> {
    adapter
        .tools
        .iter()
        .enumerate()
        .filter(|(_, tool)| !tool.annotations.read_only && !tool.annotations.idempotent)
        .filter_map(|(index, tool)| {
            let steps = JsonPath::default().key("tools").index(index).key("steps");
            let (path, kind) = last_action(&tool.steps, &steps)?;
            Some(Warning {
                path,
                message: format!(
                    "`{}` may change the page, but nothing after its last action ({kind}) waits for \
                     the change or reads it back, so it can answer before the page shows the effect, \
                     or report one that never happened; end with a `within` (with `timeout_ms`) or \
                     `wait` that finds the result and a `read` of it, or mark the tool `idempotent` \
                     if repeating it is harmless",
                    tool.name
                ),
            })
        })
        .collect()
}

/// Where `steps` (at `at`) ends with an action: its path and kind. A trailing `return` does not
/// count; `if` ends with an action when either branch does.
fn last_action(steps: &[Step], at: &JsonPath) -> Option<(JsonPath, StepKind)> {
    let (index, step) = steps
        .iter()
        .enumerate()
        .rev()
        .find(|(_, step)| !matches!(step, Step::Return { .. }))?;
    let here = at.index(index);
    match step {
        Step::Within { steps, .. } | Step::ForEach { steps, .. } | Step::Frame { steps, .. } => {
            last_action(steps, &here.key("steps"))
        }
        Step::If {
            then, otherwise, ..
        } => last_action(then, &here.key("then"))
            .or_else(|| last_action(otherwise, &here.key("else"))),
        // Moving the pointer or the view changes nothing a caller is told about.
        Step::Hover { .. } | Step::ScrollIntoView { .. } => None,
        step => step.acts_on_page().then(|| (here, step.kind())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::parse_adapter;
    use serde_json::json;

    fn adapter(tools: serde_json::Value) -> Adapter {
        let doc = json!({"name": "shop", "match": ["https://shop.example/*"], "tools": tools});
        parse_adapter(&doc.to_string()).expect("a valid adapter")
    }

    fn tool(steps: serde_json::Value, annotations: serde_json::Value) -> serde_json::Value {
        json!({"name": "buy", "description": "d", "annotations": annotations, "steps": steps})
    }

    #[test]
    fn a_changing_tool_that_ends_with_an_action_is_warned_about_at_that_step() {
        let warnings = unconfirmed_effects(&adapter(json!([tool(
            json!([
                {"step": "wait", "selector": "form"},
                {"step": "within", "selector": "li", "text_equals": "x", "steps": [
                    {"step": "read", "selector": "b", "into": "before"},
                    {"step": "click", "selector": "button"}
                ]},
                {"step": "return", "value": {"ok": true}}
            ]),
            json!({})
        )])));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(warnings[0].path.to_string(), "tools[0].steps[1].steps[1]");
        assert!(warnings[0].message.contains("`buy`") && warnings[0].message.contains("(click)"));
    }

    #[test]
    fn a_read_after_the_action_or_a_harmless_tool_is_not_warned_about() {
        let confirmed = json!([
            {"step": "click", "selector": "button"},
            {"step": "within", "selector": "li", "text_equals": "x", "timeout_ms": 2000,
             "steps": [{"step": "read", "into": "item"}]},
            {"step": "return", "value": "{{item}}"}
        ]);
        let unconfirmed = json!([{"step": "press", "selector": "input", "key": "Enter"}]);
        let tools = json!([
            tool(confirmed, json!({})),
            tool(unconfirmed.clone(), json!({"idempotent": true})),
            tool(unconfirmed, json!({"read_only": true})),
        ]);
        let mut tools = tools.as_array().unwrap().clone();
        for (i, t) in tools.iter_mut().enumerate() {
            t["name"] = json!(format!("t{i}"));
        }
        assert_eq!(unconfirmed_effects(&adapter(json!(tools))), vec![]);
    }

    #[test]
    fn either_branch_of_an_if_ending_with_an_action_is_warned_about() {
        let warnings = unconfirmed_effects(&adapter(json!([tool(
            json!([{"step": "if", "selector": ".banner",
                    "then": [{"step": "read", "selector": "h1", "into": "h"}],
                    "else": [{"step": "check", "selector": "#agree"}]}]),
            json!({"destructive": true})
        )])));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(warnings[0].path.to_string(), "tools[0].steps[0].else[0]");
    }

    #[test]
    fn the_shipped_adapters_confirm_their_effects() {
        for text in [
            include_str!("../../adapters/todomvc.json"),
            include_str!("../../adapters/tiddlywiki.json"),
            include_str!("../../adapters/maildev.json"),
        ] {
            let adapter = parse_adapter(text).expect("a shipped adapter is valid");
            assert_eq!(unconfirmed_effects(&adapter), vec![], "{}", adapter.name);
        }
    }
}

//! The page's state for `state_update` / `request_state`: every adapter on the page that declares
//! a `state` extractor runs it, and the state is `{<adapter>: <its value>}`. Also which adapters
//! apply to the page at all (their `match_selector` DOM predicate).

use std::cell::Cell;

use bridge::adapter::Adapter;
use bridge::{ErrorCode, WireError};
use serde_json::{Map, Value};

use crate::page::PageDom;
use crate::steps::{Outcome, run_tool};

/// How long the extractors may take together.
pub const STATE_TIMEOUT_MS: u64 = 5_000;

/// Whether any of `adapters` declares a state extractor.
pub fn has_extractor(adapters: &[Adapter]) -> bool {
    adapters.iter().any(|a| a.state.is_some())
}

/// Runs every extractor; the first failure fails the whole state (naming its adapter).
pub async fn extract<D: PageDom>(
    dom: &D,
    adapters: &[Adapter],
    cancelled: &Cell<bool>,
) -> Result<Value, WireError> {
    if !has_extractor(adapters) {
        return Err(WireError::new(
            ErrorCode::AdapterError,
            "no adapter on this page declares a state extractor",
        ));
    }
    let deadline = dom.now_ms() + STATE_TIMEOUT_MS as f64;
    let mut state = Map::new();
    for adapter in adapters {
        let Some(extractor) = &adapter.state else {
            continue;
        };
        let left = (deadline - dom.now_ms()).max(1.0) as u64;
        let in_adapter = |e: WireError| {
            WireError::new(
                e.code,
                format!("state of adapter {}: {}", adapter.name, e.message),
            )
        };
        let value = match run_tool(
            dom,
            &extractor.as_tool(),
            Default::default(),
            0,
            left,
            cancelled,
        )
        .await
        .map_err(in_adapter)?
        {
            Outcome::Finished(value) => value,
            Outcome::Navigate { .. } | Outcome::Landing { .. } => {
                return Err(in_adapter(WireError::new(
                    ErrorCode::AdapterError,
                    "a state extractor may not navigate",
                )));
            }
        };
        state.insert(adapter.name.clone(), value);
    }
    Ok(Value::Object(state))
}

/// The adapters that apply to the page now: those without a DOM predicate, and those whose
/// `match_selector` matches an element. The flag says whether some predicate is still unmet
/// (the page may render that element later, so it is worth checking again).
pub fn applicable(
    adapters: &[Adapter],
    has_element: impl Fn(&str) -> bool,
) -> (Vec<Adapter>, bool) {
    let mut pending = false;
    let applying = adapters
        .iter()
        .filter(|a| match &a.match_selector {
            None => true,
            Some(selector) => {
                let present = has_element(selector);
                pending |= !present;
                present
            }
        })
        .cloned()
        .collect();
    (applying, pending)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake_dom::{FakeDom, FakeNode, block_on};
    use serde_json::json;

    fn adapter(value: Value) -> Adapter {
        serde_json::from_value(value).unwrap()
    }

    fn counter(name: &str, state: Option<Value>, match_selector: Option<&str>) -> Adapter {
        let mut doc = json!({
            "name": name, "match": ["<all_urls>"],
            "tools": [{"name": "t", "description": "d", "steps": [{"step": "return", "value": 1}]}]
        });
        if let Some(state) = state {
            doc["state"] = state;
        }
        if let Some(selector) = match_selector {
            doc["match_selector"] = json!(selector);
        }
        adapter(doc)
    }

    fn page() -> FakeDom {
        let dom = FakeDom::default();
        dom.add(FakeNode::default());
        for title in ["a", "b"] {
            dom.add(FakeNode {
                selectors: vec!["li"],
                text: title.into(),
                visible: true,
                ..Default::default()
            });
        }
        dom
    }

    #[test]
    fn the_state_holds_each_extractors_value_by_adapter() {
        let items = json!({"steps": [
            {"step": "extract", "selector": "li", "fields": {"title": {}}, "into": "items"},
            {"step": "return", "value": {"items": "{{items}}"}}
        ]});
        let adapters = [
            counter("list", Some(items), None),
            counter("plain", None, None),
        ];
        let state = block_on(extract(&page(), &adapters, &Cell::new(false))).unwrap();
        assert_eq!(
            state,
            json!({"list": {"items": [{"title": "a"}, {"title": "b"}]}})
        );
    }

    #[test]
    fn a_failing_extractor_names_its_adapter_and_none_at_all_is_an_error() {
        let missing = json!({"steps": [
            {"step": "read", "selector": "#nope", "into": "x"},
            {"step": "return", "value": "{{x}}"}
        ]});
        let adapters = [counter("list", Some(missing), None)];
        let err = block_on(extract(&page(), &adapters, &Cell::new(false))).unwrap_err();
        assert_eq!(err.code, ErrorCode::ElementNotFound, "{err}");
        assert!(err.message.starts_with("state of adapter list: "), "{err}");

        let none = [counter("plain", None, None)];
        let err = block_on(extract(&page(), &none, &Cell::new(false))).unwrap_err();
        assert_eq!(err.code, ErrorCode::AdapterError);
    }

    #[test]
    fn dom_predicates_filter_adapters_and_report_pending_ones() {
        let adapters = [
            counter("always", None, None),
            counter("app", None, Some(".todoapp")),
            counter("other", None, Some(".other")),
        ];
        let (applying, pending) = applicable(&adapters, |s| s == ".todoapp");
        let names: Vec<_> = applying.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["always", "app"]);
        assert!(pending);
        let (applying, pending) = applicable(&adapters[..2], |s| s == ".todoapp");
        assert_eq!(applying.len(), 2);
        assert!(!pending);
    }
}

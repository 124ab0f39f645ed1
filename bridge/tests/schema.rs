//! The JSON Schema for adapter files (`adapters/schema/adapter.schema.json`) must follow the Rust
//! model: the same step kinds and the same top-level fields. (That the schema accepts every shipped
//! adapter and rejects broken ones is checked with a real validator in tests/e2e/test_adapter_check.py.)

use std::collections::BTreeSet;

use serde_json::Value;

fn schema() -> Value {
    serde_json::from_str(include_str!("../../adapters/schema/adapter.schema.json"))
        .expect("the schema is JSON")
}

/// The names serde lists in an "unknown variant/field `x`, expected one of `a`, `b`" error.
fn expected_names(error: &str) -> BTreeSet<String> {
    let list = error
        .split("expected one of ")
        .nth(1)
        .or_else(|| error.split("expected ").nth(1))
        .unwrap_or_else(|| panic!("no list of names in {error:?}"));
    list.split(" at line")
        .next()
        .unwrap()
        .split(", ")
        .map(|n| n.trim().trim_matches('`').to_owned())
        .filter(|n| !n.is_empty())
        .collect()
}

#[test]
fn the_schema_knows_exactly_the_step_kinds_of_the_model() {
    let error = serde_json::from_str::<bridge::adapter::Step>(r#"{"step": "no_such_step"}"#)
        .unwrap_err()
        .to_string();
    let model = expected_names(&error);
    let schema = schema();
    let listed: BTreeSet<String> = schema["definitions"]["step"]["properties"]["step"]["enum"]
        .as_array()
        .expect("definitions.step.properties.step.enum")
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        listed, model,
        "adapters/schema/adapter.schema.json lists other step kinds than bridge::adapter::Step: add or remove them (with an if/then for each kind's fields)"
    );
    let with_fields: BTreeSet<String> = schema["definitions"]["step"]["allOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|rule| {
            rule["if"]["properties"]["step"]["const"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        with_fields, model,
        "every step kind needs its if/then field rule"
    );
}

#[test]
fn the_schema_knows_exactly_the_top_level_fields_of_the_model() {
    let error = serde_json::from_str::<bridge::adapter::Adapter>(r#"{"no_such_field": 1}"#)
        .unwrap_err()
        .to_string();
    let model = expected_names(&error);
    let listed: BTreeSet<String> = schema()["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(listed, model);
}

#[test]
fn the_schema_knows_exactly_the_tool_fields_of_the_model() {
    let error = serde_json::from_str::<bridge::adapter::ToolDef>(r#"{"no_such_field": 1}"#)
        .unwrap_err()
        .to_string();
    let model = expected_names(&error);
    let listed: BTreeSet<String> = schema()["definitions"]["tool"]["properties"]
        .as_object()
        .expect("definitions.tool.properties")
        .keys()
        .cloned()
        .collect();
    assert_eq!(listed, model);
}

//! The JSON Schema for adapter files (`adapters/schema/adapter.schema.json`) must follow the Rust
//! model: the same step kinds, each with the fields the kind table gives it, and the same top-level
//! and tool fields. (That the schema accepts every shipped
//! adapter and rejects broken ones is checked with a real validator in tests/e2e/test_adapter_check.py.)

use std::collections::{BTreeMap, BTreeSet};

use bridge::adapter::StepKind;

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

/// The step kinds and each kind's fields, as the table in `bridge::adapter::StepKind` has them.
#[test]
fn the_schema_knows_exactly_the_step_kinds_of_the_model_and_their_fields() {
    let schema = schema();
    let model: BTreeSet<String> = StepKind::ALL.iter().map(|k| k.name().to_owned()).collect();
    let listed: BTreeSet<String> = schema["definitions"]["step"]["properties"]["step"]["enum"]
        .as_array()
        .expect("definitions.step.properties.step.enum")
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        listed, model,
        "adapters/schema/adapter.schema.json lists other step kinds than bridge::adapter::StepKind: add or remove them (with an if/then for each kind's fields)"
    );
    let rules: BTreeMap<String, Value> = schema["definitions"]["step"]["allOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|rule| {
            let kind = rule["if"]["properties"]["step"]["const"].as_str().unwrap();
            (kind.to_owned(), rule["then"].clone())
        })
        .collect();
    assert_eq!(
        rules.keys().cloned().collect::<BTreeSet<_>>(),
        model,
        "every step kind needs its if/then field rule"
    );
    let names = |value: &Value| -> BTreeSet<String> {
        match value {
            Value::Object(map) => map.keys().cloned().collect(),
            Value::Array(items) => items
                .iter()
                .map(|v| v.as_str().unwrap().to_owned())
                .collect(),
            _ => BTreeSet::new(),
        }
    };
    for kind in StepKind::ALL {
        let rule = &rules[kind.name()];
        let mut fields: BTreeSet<String> = kind.fields().map(str::to_owned).collect();
        fields.insert("step".to_owned());
        assert_eq!(
            names(&rule["properties"]),
            fields,
            "the fields of a {kind} step"
        );
        let required: BTreeSet<String> = kind.required().iter().map(|f| (*f).to_owned()).collect();
        assert_eq!(
            names(&rule["required"]),
            required,
            "the required fields of a {kind} step"
        );
        assert_eq!(
            rule["additionalProperties"], false,
            "a {kind} step takes no other field"
        );
    }
}

/// The fields the model refuses an unknown field of `T` with: the ones it knows.
fn model_fields<T: serde::de::DeserializeOwned>() -> BTreeSet<String> {
    let Err(error) = serde_json::from_str::<T>(r#"{"no_such_field": 1}"#) else {
        panic!("an unknown field is refused");
    };
    expected_names(&error.to_string())
}

/// The property names of the schema's object at `pointer`.
fn schema_fields(pointer: &str) -> BTreeSet<String> {
    let schema = schema();
    let properties = schema.pointer(pointer).and_then(Value::as_object);
    properties.expect(pointer).keys().cloned().collect()
}

#[test]
fn the_schema_knows_exactly_the_top_level_fields_of_the_model() {
    let model = model_fields::<bridge::adapter::Adapter>();
    assert_eq!(schema_fields("/properties"), model);
}

#[test]
fn the_schema_knows_exactly_the_tool_fields_of_the_model() {
    let model = model_fields::<bridge::adapter::ToolDef>();
    assert_eq!(schema_fields("/definitions/tool/properties"), model);
}

/// The read kinds the schema's pattern allows are the ones the model names when it refuses one.
#[test]
fn the_schema_knows_exactly_the_read_kinds_of_the_model() {
    let schema = schema();
    let pattern = schema["definitions"]["read"]["pattern"]
        .as_str()
        .expect("definitions.read.pattern");
    let listed: BTreeSet<String> = pattern
        .trim_start_matches("^(")
        .trim_end_matches(")$")
        .split('|')
        .map(|kind| {
            kind.replace(":.+", ":<name>")
                .replace(":-?[0-9]+", ":<segment>")
        })
        .collect();
    let refusal = bridge::adapter::Read::try_from("bogus".to_owned()).unwrap_err();
    let model: BTreeSet<String> = refusal
        .split("expected ")
        .nth(1)
        .expect("the refusal lists the kinds")
        .split([',', ' '])
        .filter(|kind| !kind.is_empty() && *kind != "or")
        .map(str::to_owned)
        .collect();
    assert_eq!(listed, model);
    for kind in &model {
        let example = kind.replace("<name>", "x").replace("<segment>", "-1");
        assert!(
            bridge::adapter::Read::try_from(example.clone()).is_ok(),
            "{example}"
        );
    }
}

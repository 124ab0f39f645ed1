//! The one check of a call's arguments against its tool's input schema, made by the server before
//! a call leaves it and by the page before any step runs (so both give the same answer, in the
//! same words). It covers the top level of the schema, what a caller gets wrong in practice:
//!
//! - the arguments are an object (absent or `null`: no arguments);
//! - every `required` property is there and not `null`;
//! - `null` for an optional property means "not given" (the runtime reads a missing argument as
//!   `null` too);
//! - a property's `type` (a name, or a list of names: a union) fits, `integer` being any number
//!   without a fraction;
//! - a property's `enum` lists the value;
//! - an array's items fit the `type` (or union) of its `items` schema;
//! - with `additionalProperties: false`, no other property.
//!
//! Deeper structure (nested objects, formats, bounds) is the tool's own to check.

use std::fmt;

use serde_json::{Map, Value};

use crate::{ErrorCode, WireError};

/// Why arguments do not fit a schema, naming the argument and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentError(String);

impl fmt::Display for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl ArgumentError {
    /// The `INVALID_ARGS` failure of a call of `tool`.
    pub fn for_tool(&self, tool: &str) -> WireError {
        WireError::new(ErrorCode::InvalidArgs, format!("{tool}: {self}"))
    }
}

/// `args` checked against `schema`, as the object the tool receives.
pub fn checked(schema: &Value, args: Value) -> Result<Map<String, Value>, ArgumentError> {
    let args = match args {
        Value::Null => Map::new(),
        Value::Object(args) => args,
        other => {
            return Err(ArgumentError(format!(
                "the arguments must be a JSON object, got {other}"
            )));
        }
    };
    check(schema, &args).map(|()| args)
}

/// Checks the arguments `args` against `schema`.
pub fn check(schema: &Value, args: &Map<String, Value>) -> Result<(), ArgumentError> {
    let fail = |message: String| Err(ArgumentError(message));
    for name in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if args.get(name).is_none_or(Value::is_null) {
            return fail(format!("missing required argument {name:?}"));
        }
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    for (name, value) in args {
        let Some(property) = properties.and_then(|p| p.get(name)) else {
            if closed {
                let known: Vec<&str> = properties
                    .into_iter()
                    .flat_map(|p| p.keys())
                    .map(String::as_str)
                    .collect();
                return fail(format!(
                    "unknown argument {name:?} (the tool takes {})",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ));
            }
            continue;
        };
        if value.is_null() {
            continue;
        }
        if let Some(expected) = property.get("type")
            && !fits(value, expected)
        {
            return fail(format!(
                "argument {name:?} must be of type {}, got {value}",
                type_names(expected)
            ));
        }
        if let Some(allowed) = property.get("enum").and_then(Value::as_array)
            && !allowed.contains(value)
        {
            let listed: Vec<String> = allowed.iter().map(Value::to_string).collect();
            return fail(format!(
                "argument {name:?} must be one of {}, got {value}",
                listed.join(", ")
            ));
        }
        if let (Value::Array(items), Some(expected)) = (
            value,
            property.get("items").and_then(|items| items.get("type")),
        ) && let Some((i, item)) = items
            .iter()
            .enumerate()
            .find(|(_, item)| !fits(item, expected))
        {
            return fail(format!(
                "argument {name:?} must hold items of type {}, got {item} at index {i}",
                type_names(expected)
            ));
        }
    }
    Ok(())
}

/// Whether `value` is of the schema type `expected`: one name or a list (a union). A type this
/// check does not know accepts anything.
fn fits(value: &Value, expected: &Value) -> bool {
    match expected {
        Value::String(name) => is_of_type(value, name),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .any(|name| is_of_type(value, name)),
        _ => true,
    }
}

fn is_of_type(value: &Value, name: &str) -> bool {
    match name {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value
            .as_f64()
            .is_some_and(|n| n.fract() == 0.0 && n.is_finite()),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}

/// `string`, or `integer or null` for a union.
fn type_names(expected: &Value) -> String {
    match expected {
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        Value::String(name) => name.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "required": ["title"], "properties": {
            "title": {"type": "string"},
            "n": {"type": "integer"},
            "maybe": {"type": ["integer", "null"]},
            "either": {"type": ["string", "boolean"]},
            "ratio": {"type": "number"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "mixed": {"type": "array", "items": {"type": ["string", "integer"]}},
            "any": {"type": "array"},
            "filter": {"type": "string", "enum": ["All", "Active"]},
            "odd": {"type": "uuid"}
        }})
    }

    fn error(args: Value) -> String {
        checked(&schema(), args).unwrap_err().to_string()
    }

    #[test]
    fn good_arguments_come_back_as_the_object() {
        let args = json!({"title": "x", "n": 2, "maybe": 3, "either": true, "ratio": 0.5,
                          "tags": ["a", "b c"], "mixed": ["a", 1], "any": [1, "x", null],
                          "filter": "Active", "odd": {"anything": 1}, "extra": [1]});
        assert_eq!(
            Value::Object(checked(&schema(), args.clone()).unwrap()),
            args
        );
    }

    /// The inputs on which the server and the page used to disagree (issue 9).
    #[test]
    fn an_explicit_null_is_an_optional_argument_not_given() {
        // `{"n": null}` for an integer property: not given, so accepted (the page did, the
        // server refused).
        assert!(checked(&schema(), json!({"title": "x", "n": null})).is_ok());
        // A required argument given as null is missing.
        assert_eq!(
            error(json!({"title": null})),
            "missing required argument \"title\""
        );
    }

    /// Each argument object of `cases` is refused with exactly its message.
    fn assert_refused(cases: &[(Value, &str)]) {
        for (args, message) in cases {
            assert_eq!(error(args.clone()), *message, "{args}");
        }
    }

    #[test]
    fn unions_are_checked() {
        // Type unions: only the server checked them.
        assert!(checked(&schema(), json!({"title": "x", "either": "s"})).is_ok());
        assert_refused(&[
            (
                json!({"title": "x", "either": 1}),
                "argument \"either\" must be of type string or boolean, got 1",
            ),
            (
                json!({"title": "x", "maybe": "3"}),
                "argument \"maybe\" must be of type integer or null, got \"3\"",
            ),
        ]);
    }

    #[test]
    fn array_items_are_checked_against_their_type() {
        // Array item types: only the page checked them.
        assert_refused(&[
            (
                json!({"title": "x", "tags": ["a", 2]}),
                "argument \"tags\" must hold items of type string, got 2 at index 1",
            ),
            (
                json!({"title": "x", "mixed": ["a", 1.5]}),
                "argument \"mixed\" must hold items of type string or integer, got 1.5 at index 1",
            ),
            (
                json!({"title": "x", "tags": "a"}),
                "argument \"tags\" must be of type array, got \"a\"",
            ),
        ]);
    }

    #[test]
    fn the_other_rules_name_the_argument_and_what_was_expected() {
        assert_refused(&[
            (json!({}), "missing required argument \"title\""),
            (
                json!({"title": 5}),
                "argument \"title\" must be of type string, got 5",
            ),
            (json!([1]), "the arguments must be a JSON object, got [1]"),
            (
                json!({"title": "x", "n": 1.5}),
                "argument \"n\" must be of type integer, got 1.5",
            ),
            (
                json!({"title": "x", "filter": "Done"}),
                "argument \"filter\" must be one of \"All\", \"Active\", got \"Done\"",
            ),
        ]);
        // An integer may be written with a zero fraction (JSON Schema counts 2.0 as an integer).
        assert!(checked(&schema(), json!({"title": "x", "n": 2.0})).is_ok());
        // No arguments at all, for a tool that needs none.
        assert!(
            checked(&json!({"type": "object"}), Value::Null)
                .unwrap()
                .is_empty()
        );
        let closed = json!({"type": "object", "additionalProperties": false,
                            "properties": {"a": {}, "b": {}}});
        assert_eq!(
            checked(&closed, json!({"c": 1})).unwrap_err().to_string(),
            "unknown argument \"c\" (the tool takes a, b)"
        );
        assert_eq!(
            checked(&json!({"additionalProperties": false}), json!({"c": 1}))
                .unwrap_err()
                .to_string(),
            "unknown argument \"c\" (the tool takes none)"
        );
    }

    #[test]
    fn a_tool_failure_says_which_tool() {
        let e = checked(&schema(), json!({}))
            .unwrap_err()
            .for_tool("notes_add");
        assert_eq!(e.code, ErrorCode::InvalidArgs);
        assert_eq!(e.message, "notes_add: missing required argument \"title\"");
    }
}

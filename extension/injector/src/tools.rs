//! The tools a page offers: built from the adapters the worker sent, found by public name, and
//! the checks a call's arguments pass before any step runs.

use bridge::adapter::{Adapter, ToolDef};
use bridge::names::public_tool_name;
use bridge::protocol::ToolSpec;
use bridge::template::Vars;
use bridge::{ErrorCode, WireError};
use serde_json::Value;

#[derive(Debug, Default, Clone)]
pub struct Catalog {
    adapters: Vec<Adapter>,
}

impl Catalog {
    pub fn new(adapters: Vec<Adapter>) -> Catalog {
        Catalog { adapters }
    }

    pub fn adapters(&self) -> &[Adapter] {
        &self.adapters
    }

    /// Every tool, as announced to the worker.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.adapters
            .iter()
            .flat_map(|a| {
                a.tools.iter().map(move |t| ToolSpec {
                    name: public_tool_name(&a.name, &t.name),
                    adapter: a.name.clone(),
                    description: t.description.clone(),
                    input_schema: t.input_schema.clone(),
                    output_schema: t.output_schema.clone(),
                    annotations: t.annotations,
                })
            })
            .collect()
    }

    pub fn find(&self, public_name: &str) -> Result<&ToolDef, WireError> {
        self.find_with_adapter(public_name).map(|(_, t)| t)
    }

    /// The tool and the name of the adapter it belongs to.
    pub fn find_with_adapter(&self, public_name: &str) -> Result<(&str, &ToolDef), WireError> {
        self.adapters
            .iter()
            .flat_map(|a| a.tools.iter().map(move |t| (a, t)))
            .find(|(a, t)| {
                public_name.len() == a.name.len() + 1 + t.name.len()
                    && public_name.starts_with(a.name.as_str())
                    && public_name.ends_with(t.name.as_str())
                    && public_name.as_bytes()[a.name.len()] == b'_'
            })
            .map(|(a, t)| (a.name.as_str(), t))
            .ok_or_else(|| {
                let offered: Vec<String> = self.specs().into_iter().map(|s| s.name).collect();
                WireError::new(
                    ErrorCode::NoSuchTool,
                    format!(
                        "this page offers no tool {public_name:?} (it offers: {})",
                        if offered.is_empty() {
                            "none".to_owned()
                        } else {
                            offered.join(", ")
                        }
                    ),
                )
            })
    }
}

/// The call's arguments as template variables, after checking them against the tool's schema:
/// an object, every required property present, declared properties of the declared JSON type.
pub fn check_args(tool: &ToolDef, args: Value) -> Result<Vars, WireError> {
    let invalid = |message: String| WireError::new(ErrorCode::InvalidArgs, message);
    let args = match args {
        Value::Null => Vars::new(),
        Value::Object(map) => map,
        other => {
            return Err(invalid(format!(
                "arguments must be a JSON object, got {other}"
            )));
        }
    };
    let schema = &tool.input_schema;
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if args.get(name).is_none_or(Value::is_null) {
                return Err(invalid(format!(
                    "missing required argument {name:?} for {}",
                    tool.name
                )));
            }
        }
    }
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, value) in &args {
            let Some(property) = properties.get(name) else {
                continue;
            };
            let Some(expected) = property.get("type").and_then(Value::as_str) else {
                continue;
            };
            if !has_type(value, expected) && !value.is_null() {
                return Err(invalid(format!(
                    "argument {name:?} must be of type {expected}, got {value}"
                )));
            }
            // An array's items, when the schema gives their type (a for_each over them would
            // otherwise type whatever they are).
            let item_type = property
                .get("items")
                .and_then(|items| items.get("type"))
                .and_then(Value::as_str);
            if let (Value::Array(items), Some(item_type)) = (value, item_type)
                && let Some((i, item)) = items
                    .iter()
                    .enumerate()
                    .find(|(_, item)| !has_type(item, item_type))
            {
                return Err(invalid(format!(
                    "argument {name:?} must hold items of type {item_type}, got {item} at index {i}"
                )));
            }
        }
    }
    Ok(args)
}

/// Whether `value` is of the JSON Schema type `expected` (an unknown type accepts anything).
fn has_type(value: &Value, expected: &str) -> bool {
    match expected {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn catalog() -> Catalog {
        let adapter =
            bridge::adapter::parse_adapter(include_str!("../../../adapters/todomvc.json")).unwrap();
        Catalog::new(vec![adapter])
    }

    #[test]
    fn specs_and_lookup() {
        let catalog = catalog();
        let names: Vec<String> = catalog.specs().into_iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            [
                "todomvc_add_todo",
                "todomvc_list_todos",
                "todomvc_toggle_todo",
                "todomvc_clear_completed",
                "todomvc_set_filter",
                "todomvc_edit_todo",
                "todomvc_delete_todo"
            ]
        );
        assert_eq!(catalog.find("todomvc_add_todo").unwrap().name, "add_todo");
        let err = catalog.find("todomvc_fly").unwrap_err();
        assert_eq!(err.code, ErrorCode::NoSuchTool);
        assert!(err.message.contains("todomvc_list_todos"), "{err}");
        assert!(catalog.find("todomvcxadd_todo").is_err());
    }

    #[test]
    fn arguments_are_checked() {
        let catalog = catalog();
        let add = catalog.find("todomvc_add_todo").unwrap();
        let err = check_args(add, json!({})).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgs);
        assert!(err.message.contains("\"title\""), "{err}");
        assert!(
            check_args(add, json!({"title": 5}))
                .unwrap_err()
                .message
                .contains("string")
        );
        assert!(check_args(add, json!([1])).is_err());
        assert_eq!(
            check_args(add, json!({"title": "x"})).unwrap()["title"],
            "x"
        );
        let list = catalog.find("todomvc_list_todos").unwrap();
        assert!(check_args(list, Value::Null).unwrap().is_empty());
    }

    #[test]
    fn array_items_are_checked_against_their_declared_type() {
        let tool: ToolDef = serde_json::from_value(json!({
            "name": "t", "description": "d", "steps": [{"step": "click"}],
            "input_schema": {"type": "object", "properties": {
                "tags": {"type": "array", "items": {"type": "string"}},
                "any": {"type": "array"}
            }}
        }))
        .unwrap();
        let args = check_args(&tool, json!({"tags": ["a", "b c"], "any": [1, "x"]})).unwrap();
        assert_eq!(args["tags"], json!(["a", "b c"]));
        let err = check_args(&tool, json!({"tags": ["a", 2]})).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgs);
        assert_eq!(
            err.message,
            "argument \"tags\" must hold items of type string, got 2 at index 1"
        );
        let err = check_args(&tool, json!({"tags": "a"})).unwrap_err();
        assert_eq!(
            err.message,
            "argument \"tags\" must be of type array, got \"a\""
        );
    }
}

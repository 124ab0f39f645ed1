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

/// The call's arguments as template variables, after [`bridge::args::checked`] (the same check the
/// server made).
pub fn check_args(public_name: &str, schema: &Value, args: Value) -> Result<Vars, WireError> {
    bridge::args::checked(schema, args).map_err(|e| e.for_tool(public_name))
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
    fn arguments_are_checked_as_the_server_checks_them() {
        let catalog = catalog();
        let add = catalog.find("todomvc_add_todo").unwrap();
        let err = check_args("todomvc_add_todo", &add.input_schema, json!({})).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgs);
        assert_eq!(
            err.message,
            "todomvc_add_todo: missing required argument \"title\""
        );
        let args = check_args("todomvc_add_todo", &add.input_schema, json!({"title": "x"}));
        assert_eq!(args.unwrap()["title"], "x");
        let list = catalog.find("todomvc_list_todos").unwrap();
        assert!(
            check_args("todomvc_list_todos", &list.input_schema, Value::Null)
                .unwrap()
                .is_empty()
        );
    }
}

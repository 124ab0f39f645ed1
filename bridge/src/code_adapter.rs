//! Code adapters: JS files under `adapters/code/` bundled into the extension at build time, for
//! logic steps cannot express. A file calls `tabwire.register({name, match, tools})` where each
//! tool has a `handler(args)` returning JSON; the bundle keeps the handlers and hands the rest,
//! as a JSON declaration, to the Rust side, which validates it like an adapter file and stays in
//! charge of registration, routing, timeouts and errors.
//!
//! A code tool's `steps` hold one placeholder `return` (the adapter model needs steps); the
//! runtime runs the tool's handler instead.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::adapter::{Adapter, JsonPath, Problem, Step, ToolAnnotations, ToolDef};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Declaration {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(rename = "match")]
    matches: Vec<String>,
    #[serde(default)]
    match_selector: Option<String>,
    tools: Vec<ToolDeclaration>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolDeclaration {
    name: String,
    description: String,
    #[serde(default)]
    input_schema: Option<Value>,
    #[serde(default)]
    annotations: ToolAnnotations,
}

/// The adapter a code adapter's declaration (its JSON, as the bundle has it) describes, validated
/// like an adapter file (what the server does with the declarations `hello` brings). A shape
/// error is not located: the bundler wrote the declaration on one line.
pub fn parse(declaration: Value) -> Result<Adapter, Vec<Problem>> {
    let d: Declaration = serde_json::from_value(declaration)
        .map_err(|e| vec![Problem::at(JsonPath::default(), e.to_string())])?;
    let adapter = Adapter {
        schema: None,
        name: d.name,
        description: d.description,
        matches: d.matches,
        match_selector: d.match_selector,
        test_url: None,
        tools: d
            .tools
            .into_iter()
            .map(|t| ToolDef {
                name: t.name,
                description: t.description,
                input_schema: t
                    .input_schema
                    .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
                output_schema: None,
                annotations: t.annotations,
                steps: vec![Step::Return {
                    value: json!({"code_adapter": "the handler runs instead"}),
                }],
            })
            .collect(),
        state: None,
    };
    let problems = adapter.validate();
    if problems.is_empty() {
        Ok(adapter)
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn declarations_become_validated_adapters() {
        let adapter = parse(
            json!({"name": "calc", "match": ["http://127.0.0.1/*"], "tools": [
            {"name": "sum", "description": "Add.", "annotations": {"read_only": true},
             "input_schema": {"type": "object", "properties": {"a": {"type": "number"}}}}]}),
        )
        .unwrap();
        assert_eq!(adapter.tools[0].name, "sum");
        assert!(adapter.tools[0].annotations.read_only);
        assert!(adapter.matches_url("http://127.0.0.1:1/x"));

        let problems = parse(
            json!({"name": "Calc", "match": ["nope"], "tools": [{"name": "sum", "description": ""}]}),
        )
        .unwrap_err();
        assert_eq!(problems.len(), 3, "{problems:?}");
        let problems =
            parse(json!({"name": "calc", "match": [], "tools": [], "handler": 1})).unwrap_err();
        assert!(problems[0].message.contains("handler"), "{problems:?}");
    }
}

//! Tools a page registers itself through the W3C WebMCP API (`document.modelContext.registerTool`,
//! formerly `navigator.modelContext`): turning the page's untrusted declarations into tool specs.
//!
//! They are exposed as `webmcp_<sanitized name>` under the reserved adapter name `webmcp`, which no
//! adapter file may take, so a page tool can never shadow an adapter's tool or a meta-tool (those
//! start with `browser_` or `site_`). Names are sanitized, and counts and sizes capped, both in
//! the page's runtime and again in the service worker, which does not trust the runtime's copy.

use serde_json::{Map, Value};

use crate::adapter::ToolAnnotations;
use crate::names::{MAX_TOOL_NAME, public_tool_name, sanitize};
use crate::protocol::ToolSpec;

/// The adapter name of page-registered tools (reserved: adapter files may not use it).
pub const ADAPTER: &str = "webmcp";
/// Most page tools kept per page.
pub const MAX_TOOLS: usize = 32;
/// Longest description kept, in bytes (longer ones are cut).
pub const MAX_DESCRIPTION: usize = 1024;
/// Largest input schema kept, in bytes of JSON (a bigger one makes the tool be dropped).
pub const MAX_SCHEMA_BYTES: usize = 16 * 1024;
/// Largest declaration message the runtime reads from the page, in bytes.
pub const MAX_DECLARATION_BYTES: usize = 256 * 1024;

/// One page tool: its public spec and the page's own name (what a call passes back to the page).
#[derive(Debug, Clone, PartialEq)]
pub struct PageTool {
    pub spec: ToolSpec,
    pub page_name: String,
}

/// The tools in the page's declaration (a JSON array of `{name, description, inputSchema,
/// annotations}`), sanitized; unusable entries and duplicates after sanitizing are dropped.
pub fn page_tools(declaration: &Value) -> Vec<PageTool> {
    let mut tools: Vec<PageTool> = Vec::new();
    for raw in declaration.as_array().into_iter().flatten() {
        if tools.len() == MAX_TOOLS {
            break;
        }
        let Some(page_name) = raw.get("name").and_then(Value::as_str) else {
            continue;
        };
        let Some(spec) = spec_for(page_name, raw) else {
            continue;
        };
        if tools.iter().all(|t| t.spec.name != spec.name) {
            tools.push(PageTool {
                spec,
                page_name: page_name.chars().take(256).collect(),
            });
        }
    }
    tools
}

/// The sanitized spec of one declared tool, or `None` when nothing safe is left of it.
fn spec_for(page_name: &str, raw: &Value) -> Option<ToolSpec> {
    let budget = MAX_TOOL_NAME - ADAPTER.len() - 1;
    let name = sanitize(page_name, budget)?;
    let description = raw
        .get("description")
        .and_then(Value::as_str)
        .map(|d| truncate(d.trim(), MAX_DESCRIPTION))
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| format!("The page's own tool {name:?}."));
    let input_schema = match raw.get("inputSchema") {
        None | Some(Value::Null) => serde_json::json!({"type": "object", "properties": {}}),
        Some(schema @ Value::Object(map))
            if map.get("type").and_then(Value::as_str) == Some("object") =>
        {
            if serde_json::to_string(schema).ok()?.len() > MAX_SCHEMA_BYTES {
                return None;
            }
            schema.clone()
        }
        Some(_) => return None,
    };
    let hints = raw.get("annotations").and_then(Value::as_object);
    let hint = |key: &str| {
        hints
            .and_then(|h| h.get(key))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    };
    Some(ToolSpec {
        name: public_tool_name(ADAPTER, &name),
        adapter: ADAPTER.to_owned(),
        description,
        input_schema,
        output_schema: None,
        annotations: ToolAnnotations {
            read_only: hint("readOnlyHint"),
            destructive: hint("destructiveHint"),
            idempotent: hint("idempotentHint"),
        },
    })
}

/// Re-checks a spec that claims to be a page tool (the worker does not trust the runtime's copy):
/// the same sanitizing and caps, from the spec's own fields.
pub fn recheck(spec: &ToolSpec) -> Option<ToolSpec> {
    let bare = spec.name.strip_prefix(ADAPTER)?.strip_prefix('_')?;
    let mut raw = Map::new();
    raw.insert("description".into(), spec.description.clone().into());
    raw.insert("inputSchema".into(), spec.input_schema.clone());
    let checked = spec_for(bare, &Value::Object(raw))?;
    (checked.name == spec.name && spec.adapter == ADAPTER).then_some(ToolSpec {
        annotations: spec.annotations,
        ..checked
    })
}

fn truncate(text: &str, max: usize) -> String {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn page_declarations_become_prefixed_sanitized_tools() {
        let tools = page_tools(&json!([
            {"name": "Search Products!", "description": "  Find products. ",
             "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
             "annotations": {"readOnlyHint": true}},
            {"name": "add-to-cart"},
            {"name": "search products"},
            {"name": "日本"},
            {"name": "bad_schema", "inputSchema": {"type": "string"}},
            {"description": "no name"},
            "not an object"
        ]));
        let names: Vec<_> = tools.iter().map(|t| t.spec.name.as_str()).collect();
        assert_eq!(names, ["webmcp_search_products", "webmcp_add_to_cart"]);
        assert_eq!(tools[0].page_name, "Search Products!");
        assert_eq!(tools[0].spec.description, "Find products.");
        assert!(tools[0].spec.annotations.read_only);
        assert_eq!(tools[1].spec.input_schema["type"], "object");
        assert!(tools[1].spec.description.contains("add_to_cart"));
        assert!(page_tools(&json!({"name": "x"})).is_empty());
    }

    #[test]
    fn sizes_and_counts_are_capped() {
        let many: Vec<Value> = (0..100).map(|i| json!({"name": format!("t{i}")})).collect();
        assert_eq!(page_tools(&Value::Array(many)).len(), MAX_TOOLS);
        let long = "é".repeat(MAX_DESCRIPTION);
        let tools = page_tools(&json!([
            {"name": &"n".repeat(500), "description": long},
            {"name": "huge", "inputSchema": {"type": "object", "description": "x".repeat(MAX_SCHEMA_BYTES)}}
        ]));
        assert_eq!(tools.len(), 1);
        assert!(tools[0].spec.name.len() <= MAX_TOOL_NAME);
        assert!(tools[0].spec.description.len() <= MAX_DESCRIPTION);
    }

    #[test]
    fn recheck_accepts_honest_specs_and_refuses_forged_ones() {
        let tool = page_tools(&json!([{"name": "hello"}])).remove(0);
        assert_eq!(recheck(&tool.spec), Some(tool.spec.clone()));
        let forged = ToolSpec {
            name: "todomvc_add_todo".into(),
            ..tool.spec.clone()
        };
        assert_eq!(recheck(&forged), None);
        let shouting = ToolSpec {
            name: "webmcp_Hello".into(),
            ..tool.spec.clone()
        };
        assert_eq!(recheck(&shouting), None);
        let other_adapter = ToolSpec {
            adapter: "todomvc".into(),
            ..tool.spec
        };
        assert_eq!(recheck(&other_adapter), None);
    }
}

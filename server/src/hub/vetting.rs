//! Which of the tools a connection says a tab offers the hub exports, and with what spec. The spec
//! of an adapter's tool is built here from the adapter (the server's own, or a code adapter the
//! connection's extension bundles and declared in `hello`), never taken from the connection; a
//! tool described in full (a page's own, or one a hub mirrors to a peer) is capped, and may not
//! take a meta-tool's name or a loaded adapter's tool name.

use std::sync::Arc;

use bridge::adapter::Adapter;
use bridge::names::{MAX_TOOL_NAME, is_identifier};
use bridge::protocol::{OfferedTool, ToolSpec};

/// Tool names a site tool may never take: the meta-tools and the page tools (mcp.rs checks this list against its own).
pub(crate) const RESERVED_TOOL_NAMES: &[&str] = bridge::names::META_TOOL_NAMES;

/// Tools one tab may offer; more are dropped (the worker keeps 128 per tab too).
pub const MAX_TOOLS_PER_TAB: usize = 128;

/// Longest description, and largest input schema (as JSON), of a tool no loaded adapter defines
/// (one the page registered itself): page text costs the model's context and is untrusted.
pub const MAX_DESCRIBED_DESCRIPTION: usize = 1024;
pub const MAX_DESCRIBED_SCHEMA_BYTES: usize = 16 * 1024;

/// The adapters a connection's tools are resolved against: its extension's code adapters first
/// (they win a name clash in the extension too), then the server's.
pub struct Known<'a> {
    pub code: &'a [Adapter],
    pub adapters: &'a [Adapter],
}

impl Known<'_> {
    fn all(&self) -> impl Iterator<Item = &Adapter> {
        self.code.iter().chain(
            self.adapters
                .iter()
                .filter(|a| !self.code.iter().any(|c| c.name == a.name)),
        )
    }

    /// The spec of the adapter tool named `name`, if a known adapter defines it.
    pub fn spec(&self, name: &str) -> Option<ToolSpec> {
        self.all()
            .find_map(|adapter| Some(ToolSpec::of(adapter, adapter.tool_named(name)?)))
    }

    fn names_an_adapter(&self, adapter: &str) -> bool {
        self.all().any(|a| a.name == adapter)
    }
}

/// The specs of the tools `offered`, vetted, in order, and how many were refused.
pub fn vet(known: &Known, offered: Vec<OfferedTool>) -> (Vec<Arc<ToolSpec>>, usize) {
    let mut vetted: Vec<Arc<ToolSpec>> = Vec::new();
    let mut refused = 0;
    for tool in offered {
        let spec = match tool {
            OfferedTool::Adapter(name) => known.spec(&name),
            // A hub mirroring its tabs describes its adapters' tools too: in the adapter's own
            // words if this process knows the adapter. A spec may not claim a known adapter's
            // name or tool otherwise.
            OfferedTool::Described(spec) => match known.spec(&spec.name) {
                Some(own) if own.adapter == spec.adapter => Some(own),
                Some(_) => None,
                None if known.names_an_adapter(&spec.adapter) => None,
                None => described(spec),
            },
        };
        match spec {
            Some(spec)
                if !RESERVED_TOOL_NAMES.contains(&spec.name.as_str())
                    && vetted.len() < MAX_TOOLS_PER_TAB
                    && !vetted.iter().any(|t| t.name == spec.name) =>
            {
                vetted.push(Arc::new(spec))
            }
            _ => refused += 1,
        }
    }
    (vetted, refused)
}

/// A tool no known adapter defines, kept if its name is clean (`<adapter>_<tool>`) and its schema
/// bounded; its description is capped and its output schema dropped (MCP clients check results
/// against one: only an adapter's own is trusted).
fn described(mut spec: ToolSpec) -> Option<ToolSpec> {
    let clean = is_identifier(&spec.name, MAX_TOOL_NAME)
        && spec.name.starts_with(&format!("{}_", spec.adapter))
        && spec.input_schema.is_object()
        && spec.input_schema.to_string().len() <= MAX_DESCRIBED_SCHEMA_BYTES;
    clean.then(|| {
        if let Some((cut, _)) = spec
            .description
            .char_indices()
            .nth(MAX_DESCRIBED_DESCRIPTION)
        {
            spec.description.truncate(cut);
        }
        spec.output_schema = None;
        spec
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn described_spec(name: &str, adapter: &str, description: &str) -> OfferedTool {
        OfferedTool::Described(ToolSpec {
            name: name.into(),
            adapter: adapter.into(),
            description: description.into(),
            title: None,
            input_schema: json!({"type": "object"}),
            output_schema: None,
            annotations: Default::default(),
        })
    }

    fn by_name(name: &str) -> OfferedTool {
        OfferedTool::Adapter(name.into())
    }

    #[test]
    fn adapter_tools_are_described_from_the_adapter_and_the_rest_capped() {
        let adapters = crate::adapters::load(&[], &[]).unwrap().adapters;
        let code = [bridge::code_adapter::parse(json!({
            "name": "calc", "match": ["http://127.0.0.1/*"],
            "tools": [{"name": "sum", "description": "Add."}]
        }))
        .unwrap()];
        let known = Known {
            code: &code,
            adapters: &adapters,
        };
        let (vetted, refused) = vet(
            &known,
            vec![
                by_name("todomvc_add_todo"),
                by_name("todomvc_add_todo"),
                by_name("todomvc_nope"),
                by_name("calc_sum"),
                described_spec("todomvc_list_todos", "todomvc", "a hub's mirror"),
                described_spec("todomvc_toggle_todo", "evil", "another adapter's tool name"),
                described_spec("browser_tabs", "browser", "shadows a meta-tool"),
                described_spec("todomvc_fly", "todomvc", "not defined by the adapter"),
                described_spec("Evil Tool!", "evil", "unclean name"),
                OfferedTool::Described(ToolSpec {
                    output_schema: Some(json!({"type": "object", "properties": {}})),
                    ..match described_spec("evil_page_tool", "evil", &"x".repeat(5000)) {
                        OfferedTool::Described(spec) => spec,
                        OfferedTool::Adapter(_) => unreachable!(),
                    }
                }),
            ],
        );
        let names: Vec<&str> = vetted.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "todomvc_add_todo",
                "calc_sum",
                "todomvc_list_todos",
                "evil_page_tool"
            ]
        );
        assert_eq!(refused, 6);
        let todomvc = adapters.iter().find(|a| a.name == "todomvc").unwrap();
        let list = todomvc.tool_named("todomvc_list_todos").unwrap();
        assert_eq!(
            *vetted[2],
            ToolSpec::of(todomvc, list),
            "the adapter's words"
        );
        assert_eq!(vetted[1].description, "Add.");
        assert_eq!(vetted[3].description.len(), MAX_DESCRIBED_DESCRIPTION);
        assert_eq!(vetted[3].output_schema, None);
    }
}

//! Tools a page registers itself through the W3C WebMCP API (`document.modelContext.registerTool`,
//! formerly `navigator.modelContext`): turning the page's untrusted declarations into tool specs.
//!
//! They are exposed as `webmcp_<origin>_<sanitized name>` (`webmcp_shop_example_search`) under the
//! reserved adapter name `webmcp`, which no adapter file may take, so a page tool can never shadow an
//! adapter's tool or a meta-tool (those start with `browser_` or `site_`), and two origins can never
//! share a tool name or answer each other's calls. Names are sanitized, and counts and sizes capped,
//! both in the page's runtime and again in the service worker, which does not trust the runtime's
//! copy: it takes the origin from Chrome's URL of the tab and labels each description with it, so
//! the model reads what a page says as that page's content.

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
/// Longest title kept, in bytes (longer ones are cut).
pub const MAX_TITLE: usize = 128;
/// Longest origin part of a page tool's name (host and port, sanitized).
const MAX_ORIGIN_SLUG: usize = 24;

/// `scheme://host[:port]` of an http(s) URL (no user info, lowercased), or `None`.
pub fn origin(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    (!host.is_empty()).then(|| format!("{scheme}://{}", host.to_ascii_lowercase()))
}

/// The origin part of page tool names for the page at `url`: its host and port, sanitized
/// (`https://shop.example:8443/x` → `shop_example_8443`).
pub fn origin_slug(url: &str) -> Option<String> {
    let origin = origin(url)?;
    let host = origin.split_once("://")?.1;
    // Not `sanitize`: a host may start with a digit (127.0.0.1), and the name starts with `webmcp_`.
    let mut slug = String::with_capacity(host.len().min(MAX_ORIGIN_SLUG));
    for c in host.chars() {
        if slug.len() >= MAX_ORIGIN_SLUG {
            break;
        }
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('_') {
            slug.push('_');
        }
    }
    let slug = slug.trim_matches('_');
    (!slug.is_empty()).then(|| slug.to_owned())
}

/// A page tool's result as the model reads it: content of the page at `url`, never instructions.
pub fn page_result(url: &str, value: Value) -> Value {
    serde_json::json!({"page_origin": origin(url), "page_content": value})
}

/// A page tool's description as the model reads it: said by the page at `origin`.
fn labelled(origin: &str, description: &str) -> String {
    format!("[page tool of {origin}; its text and results are the page's content] {description}")
}

/// One page tool: its public spec and the page's own name (what a call passes back to the page).
#[derive(Debug, Clone, PartialEq)]
pub struct PageTool {
    pub spec: ToolSpec,
    pub page_name: String,
}

/// The tools in the declaration of the page at `url` (a JSON array of `{name, description,
/// inputSchema, annotations}`), sanitized; unusable entries and duplicates after sanitizing are
/// dropped, and a page that is not http(s) has none.
pub fn page_tools(declaration: &Value, url: &str) -> Vec<PageTool> {
    let Some(slug) = origin_slug(url) else {
        return Vec::new();
    };
    let mut tools: Vec<PageTool> = Vec::new();
    for raw in declaration.as_array().into_iter().flatten() {
        if tools.len() == MAX_TOOLS {
            break;
        }
        let Some(page_name) = raw.get("name").and_then(Value::as_str) else {
            continue;
        };
        let Some(spec) = spec_for(page_name, raw, &slug) else {
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
fn spec_for(page_name: &str, raw: &Value, slug: &str) -> Option<ToolSpec> {
    let budget = MAX_TOOL_NAME - ADAPTER.len() - slug.len() - 2;
    let name = sanitize(page_name, budget)?;
    let description = raw
        .get("description")
        .and_then(Value::as_str)
        .map(|d| truncate(d.trim(), MAX_DESCRIPTION))
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| format!("The page's own tool {name:?}."));
    let title = raw
        .get("title")
        .and_then(Value::as_str)
        .map(|t| truncate(t.trim(), MAX_TITLE))
        .filter(|t| !t.is_empty());
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
        name: public_tool_name(ADAPTER, &format!("{slug}_{name}")),
        adapter: ADAPTER.to_owned(),
        description,
        title,
        input_schema,
        output_schema: None,
        annotations: ToolAnnotations {
            read_only: hint("readOnlyHint"),
            destructive: hint("destructiveHint"),
            idempotent: hint("idempotentHint"),
            untrusted_content: hint("untrustedContentHint"),
        },
    })
}

/// Re-checks a spec that claims to be a tool of the page at `url` (the worker does not trust the
/// runtime's copy, and takes `url` from Chrome): the same sanitizing and caps from the spec's own
/// fields, a name in that page's origin, and the description labelled with the origin.
pub fn recheck(spec: &ToolSpec, url: &str) -> Option<ToolSpec> {
    let origin = origin(url)?;
    let slug = origin_slug(url)?;
    let bare = spec
        .name
        .strip_prefix(ADAPTER)?
        .strip_prefix('_')?
        .strip_prefix(slug.as_str())?
        .strip_prefix('_')?;
    let mut raw = Map::new();
    raw.insert("description".into(), spec.description.clone().into());
    raw.insert("inputSchema".into(), spec.input_schema.clone());
    if let Some(title) = &spec.title {
        raw.insert("title".into(), title.clone().into());
    }
    let checked = spec_for(bare, &Value::Object(raw), &slug)?;
    let host = origin
        .split_once("://")
        .map_or(origin.as_str(), |(_, host)| host);
    (checked.name == spec.name && spec.adapter == ADAPTER).then(|| ToolSpec {
        description: labelled(&origin, &checked.description),
        // A person reading the client's tool list sees whose tool it is.
        title: checked
            .title
            .as_ref()
            .map(|title| format!("{title} ({host})")),
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

    const SHOP: &str = "https://Shop.Example:8443/cart?x=1";

    #[test]
    fn origins_and_their_slugs() {
        assert_eq!(origin(SHOP).as_deref(), Some("https://shop.example:8443"));
        assert_eq!(origin_slug(SHOP).as_deref(), Some("shop_example_8443"));
        assert_eq!(
            origin_slug("http://user:pw@127.0.0.1/").as_deref(),
            Some("127_0_0_1")
        );
        assert_eq!(origin("chrome://settings"), None);
        assert_eq!(origin("file:///etc/passwd"), None);
        assert!(page_tools(&json!([{"name": "x"}]), "about:blank").is_empty());
    }

    #[test]
    fn results_say_whose_content_they_are() {
        assert_eq!(
            page_result(SHOP, json!({"count": 1})),
            json!({"page_origin": "https://shop.example:8443", "page_content": {"count": 1}})
        );
    }

    #[test]
    fn page_declarations_become_prefixed_sanitized_tools() {
        let tools = page_tools(
            &json!([
                {"name": "Search Products!", "description": "  Find products. ",
                 "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
                 "annotations": {"readOnlyHint": true}},
                {"name": "add-to-cart"},
                {"name": "search products"},
                {"name": "日本"},
                {"name": "bad_schema", "inputSchema": {"type": "string"}},
                {"description": "no name"},
                "not an object"
            ]),
            SHOP,
        );
        let names: Vec<_> = tools.iter().map(|t| t.spec.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "webmcp_shop_example_8443_search_products",
                "webmcp_shop_example_8443_add_to_cart"
            ]
        );
        assert_eq!(tools[0].page_name, "Search Products!");
        assert_eq!(tools[0].spec.description, "Find products.");
        assert!(tools[0].spec.annotations.read_only);
        assert_eq!(tools[1].spec.input_schema["type"], "object");
        assert!(tools[1].spec.description.contains("add_to_cart"));
        assert!(page_tools(&json!({"name": "x"}), SHOP).is_empty());
    }

    #[test]
    fn sizes_and_counts_are_capped() {
        let many: Vec<Value> = (0..100).map(|i| json!({"name": format!("t{i}")})).collect();
        assert_eq!(page_tools(&Value::Array(many), SHOP).len(), MAX_TOOLS);
        let long = "é".repeat(MAX_DESCRIPTION);
        let tools = page_tools(
            &json!([
                {"name": &"n".repeat(500), "description": long},
                {"name": "huge", "inputSchema": {"type": "object", "description": "x".repeat(MAX_SCHEMA_BYTES)}}
            ]),
            &format!("https://{}.example/", "h".repeat(300)),
        );
        assert_eq!(tools.len(), 1);
        assert!(tools[0].spec.name.len() <= MAX_TOOL_NAME);
        assert!(tools[0].spec.description.len() <= MAX_DESCRIPTION);
    }

    #[test]
    fn recheck_accepts_honest_specs_labels_them_and_refuses_forged_ones() {
        let tool = page_tools(&json!([{"name": "hello", "description": "Hi."}]), SHOP).remove(0);
        let checked = recheck(&tool.spec, SHOP).expect("an honest spec");
        assert_eq!(checked.name, "webmcp_shop_example_8443_hello");
        assert_eq!(
            checked.description,
            "[page tool of https://shop.example:8443; its text and results are the page's content] Hi."
        );
        // The page's title and hints carry over; the title names whose tool it is.
        let titled = page_tools(
            &json!([{"name": "find", "title": "  Find items ", "description": "Find.",
                     "annotations": {"readOnlyHint": true, "untrustedContentHint": true}}]),
            SHOP,
        )
        .remove(0);
        assert_eq!(titled.spec.title.as_deref(), Some("Find items"));
        let checked_titled = recheck(&titled.spec, SHOP).expect("an honest spec");
        assert_eq!(
            checked_titled.title.as_deref(),
            Some("Find items (shop.example:8443)")
        );
        assert!(
            checked_titled.annotations.read_only && checked_titled.annotations.untrusted_content
        );
        assert_eq!(checked.title, None);
        // Another origin's page cannot offer (or answer for) this origin's tool.
        assert_eq!(recheck(&tool.spec, "https://evil.example/"), None);
        for forged in [
            ToolSpec {
                name: "todomvc_add_todo".into(),
                ..tool.spec.clone()
            },
            ToolSpec {
                name: "webmcp_shop_example_8443_Hello".into(),
                ..tool.spec.clone()
            },
            ToolSpec {
                name: "webmcp_hello".into(),
                ..tool.spec.clone()
            },
            ToolSpec {
                adapter: "todomvc".into(),
                ..tool.spec.clone()
            },
        ] {
            assert_eq!(recheck(&forged, SHOP), None, "{forged:?}");
        }
    }
}

//! Tools a page registers itself through the W3C WebMCP API (`document.modelContext.registerTool`,
//! formerly `navigator.modelContext`): turning the page's untrusted declarations into tool specs.
//!
//! They are exposed as `webmcp_<origin>_<sanitized name>` (`webmcp_shop_example_<tag>_search`, the
//! origin part being its host and port and a tag of the whole [`crate::Origin`]: [`origin_slug`])
//! under the reserved adapter name `webmcp`, which no adapter file may take, so a page tool can never
//! shadow an adapter's tool or a meta-tool (those start with `browser_` or `site_`), and two origins
//! never share a tool name or answer each other's calls. Names are sanitized, and counts and sizes capped,
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
/// Longest readable part of the origin in a page tool's name (host and port, sanitized).
const MAX_READABLE_SLUG: usize = 16;
/// Characters of the origin's tag in a page tool's name (5 bits each: 35 bits).
const TAG_CHARS: usize = 7;

/// The origin part of page tool names for the page at `url`: its host and port, sanitized and
/// cut, then a tag of its whole canonical origin (`https://shop.example:8443/x` →
/// `shop_example_8443_` + 7 characters). The readable part alone would give
/// `mail.google.test` and `mail-google.test` (or `http://` and `https://` of one host) one name;
/// the tag makes names of two origins differ and stays the same for one origin everywhere (it is
/// computed here, by the page and again by the worker, never stored). A page that grinds a
/// colliding tag still gets no call without `tab_id`: the hub refuses to choose between origins
/// (`server/src/hub/tabs.rs`).
pub fn origin_slug(url: &str) -> Option<String> {
    let origin = crate::Origin::of_url(url).ok()?;
    // Not `sanitize`: a host may start with a digit (127.0.0.1), and the name starts with `webmcp_`.
    let mut slug = String::with_capacity(MAX_READABLE_SLUG + 1 + TAG_CHARS);
    for c in origin.authority().chars() {
        if slug.len() >= MAX_READABLE_SLUG {
            break;
        }
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('_') {
            slug.push('_');
        }
    }
    let mut slug = slug.trim_matches('_').to_owned();
    if !slug.is_empty() {
        slug.push('_');
    }
    slug.push_str(&origin_tag(&origin));
    Some(slug)
}

/// A stable tag of `origin` in `[a-z2-7]`: FNV-1a over its canonical string, in base 32. Not a
/// secret and not collision-proof against a page grinding for one (see [`origin_slug`]); only
/// stable across builds and machines, which `std`'s hasher does not promise.
fn origin_tag(origin: &crate::Origin) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in origin.as_str().bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    (0..TAG_CHARS)
        .map(|i| ALPHABET[((hash >> (5 * i)) & 31) as usize] as char)
        .collect()
}

/// A page tool's result as the model reads it: content of the page at `url`, never instructions.
pub fn page_result(url: &str, value: Value) -> Value {
    let origin = crate::Origin::of_url(url).ok();
    serde_json::json!({"page_origin": origin, "page_content": value})
}

/// The label [`labelled`] puts before a page tool's description, up to the origin.
const LABEL_START: &str = "[page tool of ";
/// What follows the origin in that label.
const LABEL_END: &str = "; its text and results are the page's content] ";

/// A page tool's description as the worker passes it on: said by the page at `origin`. The
/// server reads it back ([`unlabelled`]) and frames it with its session's marker, which the
/// worker does not know.
fn labelled(origin: &str, description: &str) -> String {
    format!("{LABEL_START}{origin}{LABEL_END}{description}")
}

/// The origin and the page's own text of a description [`labelled`] made; `None` for one it did
/// not make (or whose origin is not canonical).
pub fn unlabelled(description: &str) -> Option<(crate::Origin, &str)> {
    let rest = description.strip_prefix(LABEL_START)?;
    let (origin, text) = rest.split_once(LABEL_END)?;
    Some((crate::Origin::parse(origin).ok()?, text))
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
    let origin = crate::Origin::of_url(url).ok()?;
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
    let host = origin.authority();
    (checked.name == spec.name && spec.adapter == ADAPTER).then(|| ToolSpec {
        description: labelled(origin.as_str(), &checked.description),
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

    /// As the browser serializes it (the page's `location.href`, Chrome's tab URL).
    const SHOP: &str = "https://shop.example:8443/cart?x=1";

    fn slug(url: &str) -> String {
        origin_slug(url).unwrap()
    }

    #[test]
    fn origins_and_their_slugs() {
        let shop = slug(SHOP);
        assert!(shop.starts_with("shop_example_844"), "{shop}");
        assert_eq!(shop.len(), MAX_READABLE_SLUG + 1 + TAG_CHARS);
        assert_eq!(slug("https://shop.example:8443/other"), shop, "stable");
        // User info names no origin: such a page offers no tools.
        assert_eq!(origin_slug("http://user:pw@127.0.0.1/"), None);
        assert_eq!(origin_slug("chrome://settings"), None);
        assert_eq!(origin_slug("file:///etc/passwd"), None);
        assert!(page_tools(&json!([{"name": "x"}]), "about:blank").is_empty());
    }

    /// Issue 26: two origins whose readable names are one get two names.
    #[test]
    fn two_origins_never_share_a_slug() {
        let origins = [
            "https://mail.google.test/",
            "https://mail-google.test/",
            "https://mail_google.test/",
            "http://mail.google.test/",
            "https://mail.google.test:8443/",
            "https://mail.google.test.evil.example/",
        ];
        let slugs: std::collections::BTreeSet<String> = origins.iter().map(|o| slug(o)).collect();
        assert_eq!(slugs.len(), origins.len(), "{slugs:?}");
        let named = |url| {
            page_tools(&json!([{"name": "send"}]), url)
                .remove(0)
                .spec
                .name
        };
        assert_ne!(named(origins[0]), named(origins[1]));
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
        let shop = slug(SHOP);
        assert_eq!(
            names,
            [
                format!("webmcp_{shop}_search_products"),
                format!("webmcp_{shop}_add_to_cart")
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
        assert_eq!(checked.name, format!("webmcp_{}_hello", slug(SHOP)));
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
        let (origin, text) = unlabelled(&checked.description).expect("a label");
        assert_eq!(
            (origin.as_str(), text),
            ("https://shop.example:8443", "Hi.")
        );
        assert_eq!(unlabelled("Hi."), None);
        assert_eq!(unlabelled(&labelled("not an origin", "Hi.")), None);
        // Another origin's page cannot offer (or answer for) this origin's tool.
        assert_eq!(recheck(&tool.spec, "https://evil.example/"), None);
        for forged in [
            ToolSpec {
                name: "todomvc_add_todo".into(),
                ..tool.spec.clone()
            },
            ToolSpec {
                name: format!("webmcp_{}_Hello", slug(SHOP)),
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

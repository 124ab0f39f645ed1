//! Tool and adapter names: what is valid, and how untrusted names are made safe.

/// Longest public tool name (`<adapter>_<tool>`); MCP clients truncate or reject longer ones.
pub const MAX_TOOL_NAME: usize = 64;

/// Longest adapter name.
pub const MAX_ADAPTER_NAME: usize = 32;

/// The tools every client sees (the meta-tools, the browser's own tools and the page tools); no
/// site tool may take their names.
pub const META_TOOL_NAMES: &[&str] = &[
    "browser_tabs",
    "browser_open",
    "site_call",
    "site_state",
    "site_save",
    "browser_tab",
    "page_screenshot",
    "browser_downloads",
    "browser_handoff",
    crate::page_ops::SNAPSHOT,
    crate::page_ops::ACT,
    crate::page_ops::READ,
    crate::page_ops::FIND,
    crate::page_ops::WAIT,
];

/// Why an adapter may not be named `name` (`None`: it may): `webmcp` names the tools pages
/// register themselves, and the meta-tools' prefixes (`browser`, `site`, `page`) would make its
/// tools shadow them or look like them.
pub fn reserved_adapter_name(name: &str) -> Option<&'static str> {
    if name == crate::webmcp::ADAPTER {
        return Some("for tools pages register themselves");
    }
    META_TOOL_NAMES
        .iter()
        .any(|meta| meta.split('_').next() == Some(name))
        .then_some("for Tabwire's own tools (browser_*, site_*, page_*)")
}

/// Whether `name` is a valid identifier: `[a-z0-9_]`, starting with a letter, at most `max` bytes.
pub fn is_identifier(name: &str, max: usize) -> bool {
    !name.is_empty()
        && name.len() <= max
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// Turns an untrusted name (a page's own tool name, say) into `[a-z0-9_]`, at most `max` bytes:
/// ASCII letters are lowercased, every other run of characters becomes one `_`. Returns `None`
/// when nothing usable is left.
pub fn sanitize(name: &str, max: usize) -> Option<String> {
    let mut out = String::with_capacity(name.len().min(max));
    for c in name.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
        if out.len() >= max {
            break;
        }
    }
    let trimmed = out.trim_matches('_');
    let trimmed = trimmed.trim_start_matches(|c: char| c.is_ascii_digit() || c == '_');
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
}

/// The public name of an adapter's tool.
pub fn public_tool_name(adapter: &str, tool: &str) -> String {
    format!("{adapter}_{tool}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        assert!(is_identifier("todomvc", 32));
        assert!(is_identifier("add_todo2", 32));
        assert!(!is_identifier("", 32));
        assert!(!is_identifier("2fast", 32));
        assert!(!is_identifier("Add", 32));
        assert!(!is_identifier("a-b", 32));
        assert!(!is_identifier(&"a".repeat(33), 32));
    }

    #[test]
    fn sanitizing_untrusted_names() {
        assert_eq!(
            sanitize("Search Tiddlers!", 64).as_deref(),
            Some("search_tiddlers")
        );
        assert_eq!(sanitize("__x__", 64).as_deref(), Some("x"));
        assert_eq!(sanitize("9lives", 64).as_deref(), Some("lives"));
        assert_eq!(sanitize("日本", 64), None);
        assert_eq!(sanitize(&"ab".repeat(100), 10).unwrap().len(), 10);
        assert_eq!(sanitize("a<script>b", 64).as_deref(), Some("a_script_b"));
    }
}

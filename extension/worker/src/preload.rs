//! Which pages get Tabwire's runtime as they load, before any call asks for it (issue 32): the
//! pages of every origin where the user allowed page tools (all of them under
//! `--allow-all-origins`), besides the pages an adapter matches. Loading and instantiating the
//! runtime's wasm is the cost the first page tool call on a fresh page used to pay; the dynamic
//! content script (`extension/content.js`, registered at `document_start`) pays it as the page
//! loads instead: once it has loaded, or while it parses when Tabwire set the load off
//! (`core/hurry.rs`). Pure: the glue registers the patterns this gives.

use bridge::grants::{GrantList, Need};
use bridge::pattern::MatchPattern;

/// The match patterns for the origins whose pages get the runtime as they load: each origin
/// that allows page tools, or every web page when every origin does. Sorted, no duplicates.
pub fn preload_patterns(grants: &GrantList, all_origins: bool) -> Vec<String> {
    if all_origins {
        return vec!["http://*/*".to_owned(), "https://*/*".to_owned()];
    }
    let mut patterns: Vec<String> = grants
        .iter()
        .filter(|(_, grant)| grant.allows(Need::PageTools))
        .map(|(origin, _)| MatchPattern::for_origin(origin))
        .collect();
    patterns.sort();
    patterns.dedup();
    patterns
}

/// Whether `patterns` (from [`preload_patterns`]) cover `url`.
pub fn covers(patterns: &[String], url: &str) -> bool {
    patterns
        .iter()
        .filter_map(|p| MatchPattern::parse(p).ok())
        .any(|p| p.matches(url))
}

/// The patterns the one dynamic content script covers: the adapters' and the preloaded origins'.
pub fn script_patterns(adapters: Vec<String>, preload: &[String]) -> Vec<String> {
    let mut patterns = adapters;
    patterns.extend(preload.iter().cloned());
    patterns.sort();
    patterns.dedup();
    patterns
}

#[cfg(test)]
mod tests {
    use super::*;
    use bridge::grants::Grant;

    fn grant(page_tools: bool) -> Grant {
        Grant {
            page_tools,
            ..Grant::default()
        }
    }

    #[test]
    fn each_origin_allowing_page_tools_becomes_its_own_pattern() {
        // Keys are `Origin`s: a list cannot hold anything else (issue 26).
        let origin = |text| bridge::Origin::parse(text).unwrap();
        let mut grants = GrantList::new();
        grants.insert(origin("http://127.0.0.1:8080"), grant(true));
        grants.insert(origin("https://a.example"), grant(true));
        grants.insert(origin("http://127.0.0.1:9090"), grant(false));
        assert_eq!(
            preload_patterns(&grants, false),
            ["http://127.0.0.1:8080/*", "https://a.example:443/*"]
        );
    }

    #[test]
    fn every_web_page_when_every_origin_is_allowed() {
        assert_eq!(
            preload_patterns(&GrantList::new(), true),
            ["http://*/*", "https://*/*"]
        );
        assert!(preload_patterns(&GrantList::new(), false).is_empty());
    }

    #[test]
    fn a_page_is_covered_by_its_origins_pattern_only() {
        let all = preload_patterns(&GrantList::new(), true);
        assert!(covers(&all, "http://127.0.0.1:9000/a"));
        let one = ["http://127.0.0.1:8080/*".to_owned()];
        assert!(covers(&one, "http://127.0.0.1:8080/page?q=1"));
        assert!(!covers(&one, "http://127.0.0.1:9090/page"));
        assert!(!covers(&[], "http://127.0.0.1:8080/"));
    }

    #[test]
    fn the_script_covers_adapters_and_preloaded_origins_once() {
        let adapters = vec![
            "http://127.0.0.1:8080/*".to_owned(),
            "*://x.test/*".to_owned(),
        ];
        let preload = ["http://127.0.0.1:8080/*".to_owned()];
        assert_eq!(
            script_patterns(adapters, &preload),
            ["*://x.test/*", "http://127.0.0.1:8080/*"]
        );
    }
}

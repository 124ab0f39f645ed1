//! The adapters the worker routes, packed ([`PackedAdapter`]): the server's (from `welcome` and
//! `adapters_updated`) and the code adapters bundled into the extension, which win a name clash.
//! The worker reads only their names, match patterns and tool names: which pages they serve, and
//! which tools a page may announce. It validates none of them (the server validates both kinds,
//! and the page decodes what it runs).

use bridge::packed::PackedAdapter;
use bridge::page::ToPage;

#[derive(Debug, Default, Clone)]
pub struct AdapterSet {
    server: Vec<PackedAdapter>,
    code: Vec<PackedAdapter>,
}

impl AdapterSet {
    /// The server's adapters, replacing the previous ones.
    pub fn set_server(&mut self, adapters: Vec<PackedAdapter>) {
        self.server = adapters;
    }

    /// The bundled code adapters, from their declarations (JSON, as the bundle has them); returns
    /// why each unreadable one was skipped.
    pub fn set_code(&mut self, declarations: &[String]) -> Vec<String> {
        let mut problems = Vec::new();
        self.code.clear();
        for declaration in declarations {
            let packed = serde_json::from_str(declaration)
                .map_err(|e| e.to_string())
                .and_then(PackedAdapter::from_json);
            match packed {
                Ok(adapter) => self.code.push(adapter),
                Err(why) => problems.push(why),
            }
        }
        problems
    }

    /// The bundled code adapters (what `hello` tells the server).
    pub fn code(&self) -> &[PackedAdapter] {
        &self.code
    }

    /// The server's adapters a code adapter of the same name does not replace.
    fn served(&self) -> impl Iterator<Item = &PackedAdapter> {
        self.server
            .iter()
            .filter(|a| !self.code.iter().any(|c| c.name == a.name))
    }

    /// Every adapter in use.
    pub fn all(&self) -> impl Iterator<Item = &PackedAdapter> {
        self.served().chain(&self.code)
    }

    /// The union of the match patterns (what the content script is registered for), sorted.
    pub fn match_patterns(&self) -> Vec<String> {
        let mut patterns: Vec<String> = self.all().flat_map(|a| a.matches.clone()).collect();
        patterns.sort();
        patterns.dedup();
        patterns
    }

    pub fn any_matches(&self, url: &str) -> bool {
        self.all().any(|a| a.matches_url(url))
    }

    /// The adapters serving `url`.
    pub fn for_url(&self, url: &str) -> Vec<&PackedAdapter> {
        self.all().filter(|a| a.matches_url(url)).collect()
    }

    /// The `adapters` message for a page at `url`.
    pub fn message_for(&self, url: &str) -> String {
        let pick = |adapters: &mut dyn Iterator<Item = &PackedAdapter>| {
            adapters
                .filter(|a| a.matches_url(url))
                .cloned()
                .collect::<Vec<_>>()
        };
        let message = ToPage::Adapters {
            adapters: pick(&mut self.served()),
            code_adapters: pick(&mut self.code.iter()),
        };
        serde_json::to_string(&message).expect("page messages serialize")
    }

    /// The server's adapters as JSON, for `chrome.storage.session` (a restarted worker answers
    /// pages with them before the server is back).
    pub fn server_json(&self) -> String {
        serde_json::to_string(&self.server).expect("adapters serialize")
    }

    /// Restores what [`AdapterSet::server_json`] wrote; unreadable JSON restores nothing.
    pub fn restore_server(&mut self, json: &str) {
        // Through a `Value`, like every message: the wasm then holds one decoder of adapters.
        if let Ok(adapters) = serde_json::from_str(json).and_then(serde_json::from_value) {
            self.server = adapters;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn packed(name: &str, pattern: &str, tools: &[&str]) -> PackedAdapter {
        let tools: Vec<Value> = tools.iter().map(|t| json!({"name": t})).collect();
        PackedAdapter::from_json(json!({"name": name, "match": [pattern], "tools": tools})).unwrap()
    }

    #[test]
    fn code_adapters_win_a_name_clash_and_pages_get_what_matches() {
        let mut set = AdapterSet::default();
        set.set_server(vec![
            packed("todomvc", "http://127.0.0.1/*", &["add_todo"]),
            packed("calc", "http://127.0.0.1/*", &["old"]),
            packed("elsewhere", "https://example.com/*", &["x"]),
        ]);
        let problems = set.set_code(&[
            json!({"name": "calc", "match": ["http://127.0.0.1/*"], "tools": [{"name": "sum"}]})
                .to_string(),
            r#"{"match": []}"#.into(),
            "not json".into(),
        ]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        let names: Vec<&str> = set.all().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["todomvc", "elsewhere", "calc"]);
        assert_eq!(
            set.match_patterns(),
            ["http://127.0.0.1/*", "https://example.com/*"]
        );
        let page: Value = serde_json::from_str(&set.message_for("http://127.0.0.1:8000/")).unwrap();
        assert_eq!(page["adapters"].as_array().unwrap().len(), 1);
        assert_eq!(page["adapters"][0]["name"], "todomvc");
        assert_eq!(page["code_adapters"][0]["tools"][0]["name"], "sum");
        assert!(set.any_matches("https://example.com/a"));
        assert!(!set.any_matches("https://private.example/"));
    }

    #[test]
    fn the_servers_adapters_survive_a_restart() {
        let mut set = AdapterSet::default();
        set.set_server(vec![packed("todomvc", "http://127.0.0.1/*", &["add_todo"])]);
        let mut restored = AdapterSet::default();
        restored.restore_server(&set.server_json());
        assert_eq!(restored.server, set.server);
        restored.restore_server("garbage");
        assert_eq!(
            restored.server, set.server,
            "unreadable JSON changes nothing"
        );
    }
}

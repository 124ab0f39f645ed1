//! The adapters the worker routes, packed ([`PackedAdapter`]): the server's (from `welcome` and
//! `adapters_updated`) and the code adapters bundled into the extension, which win a name clash.
//! The worker reads only their names, match patterns and tool names: which pages they serve, and
//! which tools a page may announce. It validates none of them: it tells the server the code
//! adapters' declarations in `hello`, and gives pages the ones the server validated (sent back in
//! `welcome` as adapters), so the page decodes one model.

use bridge::packed::PackedAdapter;
use bridge::page::ToPage;

#[derive(Debug, Default, Clone, PartialEq)]
pub struct AdapterSet {
    server: Vec<PackedAdapter>,
    /// The bundled code adapters as declared (JSON, as the bundle has them).
    declared: Vec<PackedAdapter>,
    /// Those the server validated, as adapters (from `welcome`).
    code: Vec<PackedAdapter>,
}

/// What is kept for a restarted worker (`chrome.storage.session`): what the server sent.
#[derive(serde::Serialize, serde::Deserialize)]
struct Stored {
    server: Vec<PackedAdapter>,
    code: Vec<PackedAdapter>,
}

impl AdapterSet {
    /// The server's adapters, replacing the previous ones.
    pub fn set_server(&mut self, adapters: Vec<PackedAdapter>) {
        self.server = adapters;
    }

    /// The code adapters the server validated (of those `hello` declared).
    pub fn set_validated_code(&mut self, adapters: Vec<PackedAdapter>) {
        self.code = adapters;
    }

    /// The bundled code adapters, from their declarations (JSON, as the bundle has them); returns
    /// why each unreadable one was skipped.
    pub fn set_declared_code(&mut self, declarations: &[String]) -> Vec<String> {
        let mut problems = Vec::new();
        self.declared.clear();
        for declaration in declarations {
            let packed = serde_json::from_str(declaration)
                .map_err(|e| e.to_string())
                .and_then(PackedAdapter::from_json);
            match packed {
                Ok(adapter) => self.declared.push(adapter),
                Err(why) => problems.push(why),
            }
        }
        problems
    }

    /// The bundled code adapters as declared (what `hello` tells the server).
    pub fn declared_code(&self) -> &[PackedAdapter] {
        &self.declared
    }

    /// The server's adapters a code adapter of the same name does not replace.
    fn served(&self) -> impl Iterator<Item = &PackedAdapter> {
        self.server.iter().filter(|a| {
            !self
                .declared
                .iter()
                .chain(&self.code)
                .any(|c| c.name == a.name)
        })
    }

    /// Every adapter in use.
    pub fn all(&self) -> impl Iterator<Item = &PackedAdapter> {
        self.served().chain(&self.code)
    }

    /// The union of the match patterns (what the content script is registered for), sorted: the
    /// declared code adapters' too, so their pages have the runtime before the server answers.
    pub fn match_patterns(&self) -> Vec<String> {
        let mut patterns: Vec<String> = self
            .served()
            .chain(&self.declared)
            .chain(&self.code)
            .flat_map(|a| a.matches.clone())
            .collect();
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
                .map(|a| a.json().clone())
                .collect::<Vec<_>>()
        };
        let message = ToPage::Adapters {
            adapters: pick(&mut self.served()),
            code_adapters: pick(&mut self.code.iter()),
        };
        serde_json::to_string(&message).expect("page messages serialize")
    }

    /// What the server sent, as JSON, for `chrome.storage.session` (a restarted worker answers
    /// pages with it before the server is back).
    pub fn to_json(&self) -> String {
        let stored = Stored {
            server: self.server.clone(),
            code: self.code.clone(),
        };
        serde_json::to_string(&stored).expect("adapters serialize")
    }

    /// Restores what [`AdapterSet::to_json`] wrote; unreadable JSON restores nothing.
    pub fn restore(&mut self, json: &str) {
        // Through a `Value`, like every message: the wasm then holds one decoder of adapters.
        let stored = serde_json::from_str(json).and_then(serde_json::from_value::<Stored>);
        if let Ok(stored) = stored {
            self.server = stored.server;
            self.code = stored.code;
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
    fn code_adapters_win_a_name_clash_and_pages_get_the_validated_ones_that_match() {
        let mut set = AdapterSet::default();
        set.set_server(vec![
            packed("todomvc", "http://127.0.0.1/*", &["add_todo"]),
            packed("calc", "http://127.0.0.1/*", &["old"]),
            packed("elsewhere", "https://example.com/*", &["x"]),
        ]);
        let problems = set.set_declared_code(&[
            json!({"name": "calc", "match": ["http://127.0.0.1/*"], "tools": [{"name": "sum"}]})
                .to_string(),
            json!({"name": "notes", "match": ["http://notes.example/*"], "tools": []}).to_string(),
            r#"{"match": []}"#.into(),
            "not json".into(),
        ]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        // Before the server validated them, the code adapters' pages get the runtime only.
        assert_eq!(
            set.match_patterns(),
            [
                "http://127.0.0.1/*",
                "http://notes.example/*",
                "https://example.com/*"
            ]
        );
        let names: Vec<&str> = set.all().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["todomvc", "elsewhere"]);
        set.set_validated_code(vec![packed("calc", "http://127.0.0.1/*", &["sum"])]);
        let names: Vec<&str> = set.all().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["todomvc", "elsewhere", "calc"]);
        let page: Value = serde_json::from_str(&set.message_for("http://127.0.0.1:8000/")).unwrap();
        assert_eq!(page["adapters"].as_array().unwrap().len(), 1);
        assert_eq!(page["adapters"][0]["name"], "todomvc");
        assert_eq!(page["code_adapters"][0]["tools"][0]["name"], "sum");
        assert!(set.any_matches("https://example.com/a"));
        assert!(!set.any_matches("https://private.example/"));
    }

    #[test]
    fn what_the_server_sent_survives_a_restart() {
        let mut set = AdapterSet::default();
        set.set_server(vec![packed("todomvc", "http://127.0.0.1/*", &["add_todo"])]);
        set.set_validated_code(vec![packed("calc", "http://127.0.0.1/*", &["sum"])]);
        let mut restored = AdapterSet::default();
        restored.restore(&set.to_json());
        assert_eq!(restored, set);
        restored.restore("garbage");
        assert_eq!(restored, set, "unreadable JSON changes nothing");
    }
}

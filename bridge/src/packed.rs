//! Adapters as they travel server → service worker → page: the adapter's JSON, with the few facts
//! the worker needs read out of it (its name, match patterns and tool names). The worker routes
//! adapters by URL and checks the tools pages announce, but never runs a step, so it never decodes
//! one: decoding whole adapters only to forward them cost its wasm the whole step model. The page,
//! which runs them, decodes the JSON ([`PackedAdapter::json`]) into an [`Adapter`] (or a code
//! adapter's declaration into one, [`crate::code_adapter`]).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::adapter::Adapter;
use crate::names::public_tool_name;
use crate::pattern::MatchPattern;

/// An adapter (or a code adapter's declaration) as JSON, with its name, match patterns and tool
/// names. It is written as the JSON itself.
#[derive(Debug, Clone, PartialEq)]
pub struct PackedAdapter {
    pub name: String,
    /// Chrome match patterns, as written (an invalid one matches nothing).
    pub matches: Vec<String>,
    /// The tools' own names (not prefixed with the adapter's).
    pub tools: Vec<String>,
    json: Value,
}

impl PackedAdapter {
    /// Packs an adapter the server loaded.
    pub fn pack(adapter: &Adapter) -> PackedAdapter {
        PackedAdapter {
            name: adapter.name.clone(),
            matches: adapter.matches.clone(),
            tools: adapter.tools.iter().map(|t| t.name.clone()).collect(),
            json: serde_json::to_value(adapter).expect("adapters serialize"),
        }
    }

    /// Reads the facts out of an adapter's JSON; the rest is left as it is.
    pub fn from_json(json: Value) -> Result<PackedAdapter, String> {
        let text = |value: &Value, what: &str| {
            value
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("{what} is not a string"))
        };
        let list = |key: &str| match json.get(key) {
            Some(Value::Array(items)) => Ok(items.as_slice()),
            _ => Err(format!("an adapter needs a {key:?} list")),
        };
        let name = text(
            json.get("name").ok_or("an adapter needs a \"name\"")?,
            "\"name\"",
        )?;
        let matches = list("match")?
            .iter()
            .map(|p| text(p, "a match pattern"))
            .collect::<Result<_, _>>()?;
        let tools = list("tools")?
            .iter()
            .map(|t| text(t.get("name").unwrap_or(&Value::Null), "a tool's \"name\""))
            .collect::<Result<_, _>>()?;
        Ok(PackedAdapter {
            name,
            matches,
            tools,
            json,
        })
    }

    pub fn json(&self) -> &Value {
        &self.json
    }

    pub fn into_json(self) -> Value {
        self.json
    }

    pub fn matches_url(&self, url: &str) -> bool {
        self.matches
            .iter()
            .filter_map(|p| MatchPattern::parse(p).ok())
            .any(|p| p.matches(url))
    }

    /// Whether one of its tools has the public name `public_name` (`<adapter>_<tool>`).
    pub fn offers(&self, public_name: &str) -> bool {
        public_name
            .strip_prefix(self.name.as_str())
            .and_then(|rest| rest.strip_prefix('_'))
            .is_some_and(|tool| self.tools.iter().any(|t| t == tool))
    }

    /// The public names of its tools.
    pub fn tool_names(&self) -> impl Iterator<Item = String> + '_ {
        self.tools.iter().map(|t| public_tool_name(&self.name, t))
    }
}

impl Serialize for PackedAdapter {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.json.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for PackedAdapter {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        PackedAdapter::from_json(Value::deserialize(deserializer)?)
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_adapter_packs_and_unpacks_without_its_steps_being_read() {
        let adapter = crate::adapter::parse_adapter(include_str!("../../adapters/todomvc.json"))
            .expect("the shipped adapter");
        let packed = PackedAdapter::pack(&adapter);
        assert_eq!(packed.name, "todomvc");
        assert!(packed.offers("todomvc_add_todo"));
        assert!(!packed.offers("todomvc_fly") && !packed.offers("todomvcadd_todo"));
        assert!(packed.matches_url("http://todomvc.com/examples/vanillajs/"));
        assert!(!packed.matches_url("http://todomvc.com/other/"));
        let text = serde_json::to_string(&packed).unwrap();
        let again: PackedAdapter = serde_json::from_str(&text).unwrap();
        assert_eq!(again, packed);
        let unpacked: Adapter = serde_json::from_value(again.into_json()).unwrap();
        assert_eq!(unpacked, adapter);

        // Steps are the page's business: the worker forwards even ones it could not run.
        let odd = json!({"name": "a", "match": ["<all_urls>"],
                         "tools": [{"name": "t", "steps": [{"step": "teleport"}]}]});
        let packed: PackedAdapter = serde_json::from_value(odd.clone()).unwrap();
        assert_eq!(packed.tool_names().collect::<Vec<_>>(), ["a_t"]);
        assert_eq!(packed.json(), &odd);
    }

    #[test]
    fn what_the_worker_reads_must_be_there() {
        for (bad, why) in [
            (json!({"match": [], "tools": []}), "needs a \"name\""),
            (
                json!({"name": 1, "match": [], "tools": []}),
                "\"name\" is not a string",
            ),
            (json!({"name": "a", "tools": []}), "needs a \"match\" list"),
            (
                json!({"name": "a", "match": [1], "tools": []}),
                "match pattern is not",
            ),
            (
                json!({"name": "a", "match": [], "tools": [{}]}),
                "a tool's \"name\"",
            ),
        ] {
            let error = serde_json::from_value::<PackedAdapter>(bad).unwrap_err();
            assert!(error.to_string().contains(why), "{error}");
        }
    }
}

//! Keeps ADAPTERS.md honest: every JSON example in it parses and validates (whole adapters with
//! `parse_adapter`, single steps inside a tool that declares the variables they use), and every
//! step kind of the language has at least one example.

use std::collections::BTreeSet;

use bridge::adapter::{Step, StepKind, parse_adapter};
use bridge::template;
use serde_json::{Value, json};

const DOC: &str = include_str!("../../ADAPTERS.md");

/// The ```json blocks of the document, with the line each starts on.
fn json_blocks() -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in DOC.lines().enumerate() {
        match (&mut current, line.trim_end()) {
            (None, "```json") => current = Some((i + 2, String::new())),
            (Some(_), "```") => blocks.push(current.take().expect("inside a block")),
            (Some((_, text)), _) => {
                text.push_str(line);
                text.push('\n');
            }
            (None, _) => {}
        }
    }
    assert!(
        current.is_none(),
        "ADAPTERS.md has an unclosed ```json block"
    );
    blocks
}

/// Every `{{name}}` in a step, as the arguments of the tool the step is checked in.
fn referenced_names(step: &Value) -> BTreeSet<String> {
    template::value_references(step)
        .expect("templates in ADAPTERS.md are well formed")
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// What the `for_each` steps over `items` in an example bind (`as`: not arguments) and iterate
/// over (arguments declared as arrays).
#[derive(Default)]
struct ItemLoops {
    bound: BTreeSet<String>,
    arrays: BTreeSet<String>,
}

fn item_loops(value: &Value) -> ItemLoops {
    fn walk(value: &Value, out: &mut ItemLoops) {
        match value {
            Value::Object(map) => {
                if let Some(name) = map.get("as").and_then(Value::as_str) {
                    out.bound.insert(name.to_owned());
                }
                if let Some(name) = map
                    .get("items")
                    .and_then(Value::as_str)
                    .and_then(template::sole_variable)
                {
                    out.arrays.insert(name.to_owned());
                }
                map.values().for_each(|v| walk(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = ItemLoops::default();
    walk(value, &mut out);
    out
}

fn kinds(steps: &[Step], out: &mut BTreeSet<StepKind>) {
    for step in steps {
        out.insert(step.kind());
        let children: Vec<Step> = step.children().cloned().collect();
        kinds(&children, out);
    }
}

#[test]
fn every_example_validates_and_every_step_has_one() {
    let blocks = json_blocks();
    assert!(
        blocks.len() >= 20,
        "expected the tutorial and one example per step"
    );
    let mut seen = BTreeSet::new();
    let mut adapters = 0;
    for (line, text) in &blocks {
        let value: Value = serde_json::from_str(text)
            .unwrap_or_else(|e| panic!("ADAPTERS.md:{line}: not JSON: {e}"));
        if value.get("tools").is_some() {
            let adapter = parse_adapter(text)
                .unwrap_or_else(|problems| panic!("ADAPTERS.md:{line}: {problems:#?}"));
            for tool in &adapter.tools {
                kinds(&tool.steps, &mut seen);
            }
            adapters += 1;
            continue;
        }
        assert!(
            value.get("step").is_some(),
            "ADAPTERS.md:{line}: a JSON example is an adapter or a step"
        );
        let loops = item_loops(&value);
        let properties: serde_json::Map<String, Value> = referenced_names(&value)
            .into_iter()
            .filter(|name| !loops.bound.contains(name))
            .map(|name| {
                let schema = if loops.arrays.contains(&name) {
                    json!({"type": "array"})
                } else {
                    json!({})
                };
                (name, schema)
            })
            .collect();
        let adapter = json!({
            "name": "example", "match": ["<all_urls>"],
            "tools": [{"name": "t", "description": "d", "steps": [value],
                       "input_schema": {"type": "object", "properties": properties}}]
        });
        let text = serde_json::to_string_pretty(&adapter).expect("serializes");
        let adapter = parse_adapter(&text)
            .unwrap_or_else(|problems| panic!("ADAPTERS.md:{line}: {problems:#?}"));
        kinds(&adapter.tools[0].steps, &mut seen);
    }
    assert_eq!(
        adapters, 4,
        "the tutorials' adapters (a reading list, a server-rendered form), the locators' (notes) \
         and a recorded one"
    );

    let missing: Vec<&str> = StepKind::ALL
        .iter()
        .filter(|k| !seen.contains(*k))
        .map(|k| k.name())
        .collect();
    assert!(
        missing.is_empty(),
        "ADAPTERS.md has no example of {missing:?}"
    );
    for kind in StepKind::ALL {
        let quoted = format!("`{kind}`");
        assert!(
            DOC.lines()
                .any(|l| l.starts_with("#### ") && l.contains(&quoted)),
            "ADAPTERS.md has no reference section for `{kind}`"
        );
    }
}

#[test]
fn the_example_extractor_sees_blocks_and_their_lines() {
    let blocks = json_blocks();
    let (line, text) = &blocks[0];
    assert_eq!(DOC.lines().nth(line - 2), Some("```json"));
    assert!(text.contains("\"reading_list\""), "{text}");
}

//! The adapter format's tests: parsing, decoding errors, validation and their places.

use super::*;
use serde_json::json;

const GOOD: &str = r##"{
  "name": "demo",
  "match": ["http://127.0.0.1/*"],
  "tools": [
    {
      "name": "add",
      "description": "Add an item",
      "input_schema": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]},
      "steps": [
        {"step": "wait", "selector": "#new"},
        {"step": "fill", "selector": "#new", "value": "{{title}}"},
        {"step": "press", "selector": "#new", "key": "Enter"},
        {"step": "within", "selector": "li", "text_selector": "label", "text_equals": "{{title}}",
         "steps": [{"step": "read", "selector": ".id", "read": "attr:data-id", "into": "id"}]},
        {"step": "extract", "selector": "li", "fields": {"title": {"selector": "label"}, "done": {"read": "has_class:completed"}}, "into": "items"},
        {"step": "return", "value": {"id": "{{id}}", "items": "{{items}}"}}
      ]
    }
  ]
}"##;

#[test]
fn a_good_adapter_parses() {
    let adapter = parse_adapter(GOOD).unwrap();
    assert_eq!(adapter.name, "demo");
    assert!(adapter.matches_url("http://127.0.0.1:9999/x"));
    let steps = &adapter.tools[0].steps;
    assert_eq!(steps.len(), 6);
    assert!(matches!(
        &steps[4],
        Step::Extract { fields, .. } if fields["done"].read == Read::HasClass("completed".into())
    ));
    let round_trip: Adapter =
        serde_json::from_value(serde_json::to_value(&adapter).unwrap()).unwrap();
    assert_eq!(round_trip, adapter);
}

#[test]
fn shape_errors_have_line_and_column() {
    let text = GOOD.replace(r#""step": "press""#, r#""step": "smash""#);
    let problems = parse_adapter(&text).unwrap_err();
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].line, Some(12), "{}", problems[0]);
    assert!(problems[0].message.contains("smash"), "{}", problems[0]);

    let problems =
        parse_adapter(r#"{"name": "x", "match": [], "tools": [], "colour": 1}"#).unwrap_err();
    assert!(problems[0].message.contains("colour"), "{}", problems[0]);
}

#[test]
fn semantic_errors_are_all_reported_with_their_place() {
    let text = GOOD
        .replace(r#""name": "demo""#, r#""name": "Demo!""#)
        .replace("http://127.0.0.1/*", "127.0.0.1")
        .replace(r#""value": "{{title}}""#, r#""value": "{{titel}}""#);
    let problems = parse_adapter(&text).unwrap_err();
    let rendered: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(problems.len(), 3, "{rendered:#?}");
    assert!(
        rendered[0].starts_with("2:11: name: adapter name \"Demo!\""),
        "{}",
        rendered[0]
    );
    assert!(
        rendered[1].starts_with("3:13: match[0]: invalid match pattern"),
        "{}",
        rendered[1]
    );
    assert!(
        rendered[2].starts_with("11:55: tools[0].steps[1].value: {{titel}} is neither"),
        "{}",
        rendered[2]
    );
    assert!(rendered[2].contains("known: title"), "{}", rendered[2]);
}

#[test]
fn locators_are_checked_where_they_are_written() {
    let with = |selector: &str| {
        let step = format!(r#"{{"step": "wait", "selector": {}}}"#, json!(selector));
        GOOD.replace(r##"{"step": "wait", "selector": "#new"}"##, &step)
    };
    for good in [
        r#"role=button[name="Save"]"#,
        r#"label="{{title}}""#,
        r#"role=listitem[name="{{title}}"]"#,
        "text=Sign in",
        "testid=new",
        "placeholder=What needs to be done?",
    ] {
        assert!(parse_adapter(&with(good)).is_ok(), "{good}");
    }
    for (bad, says) in [
        (
            "role=buton",
            "10:38: tools[0].steps[0].selector: role=buton: \"buton\" is not a WAI-ARIA role",
        ),
        (
            "label={{title}}",
            "10:38: tools[0].steps[0].selector: in a locator, write a {{variable}} inside double quotes",
        ),
        (
            "text=",
            "10:38: tools[0].steps[0].selector: text= needs something after it",
        ),
    ] {
        let problems = parse_adapter(&with(bad)).unwrap_err();
        let rendered: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(problems.len(), 1, "{rendered:#?}");
        assert!(rendered[0].starts_with(says), "{bad}: {}", rendered[0]);
    }
}

#[test]
fn key_chords_are_checked_where_they_are_written() {
    let text = GOOD.replace(r#""key": "Enter""#, r#""key": "Ctrl+Entr""#);
    let problems = parse_adapter(&text).unwrap_err();
    let rendered: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(problems.len(), 1, "{rendered:#?}");
    assert!(
        rendered[0].starts_with(
            "12:54: tools[0].steps[2].key: in \"Ctrl+Entr\": unknown key \"Entr\": expected one character or a key name (Enter,"
        ),
        "{}",
        rendered[0]
    );
    for good in [
        "Shift+Enter",
        "Mod+s",
        "Control+a",
        "Meta+Enter",
        "Alt+ArrowUp",
        "Escape",
    ] {
        let text = GOOD.replace(r#""key": "Enter""#, &format!(r#""key": "{good}""#));
        assert!(parse_adapter(&text).is_ok(), "{good}");
    }
}

#[test]
fn reserved_names_and_foreign_navigation_are_refused_at_load_as_at_run_time() {
    for name in ["browser", "site", "page", "webmcp"] {
        let text = GOOD.replace(r#""name": "demo""#, &format!(r#""name": "{name}""#));
        let problems = parse_adapter(&text).unwrap_err();
        assert!(
            problems[0].message.contains("is reserved"),
            "{name}: {}",
            problems[0]
        );
    }
    let navigating = |url: &str| {
        let adapter: Adapter = serde_json::from_value(json!({
            "name": "a", "match": ["<all_urls>"],
            "tools": [{"name": "t", "description": "d", "input_schema": {"type": "object",
                "properties": {"q": {"type": "string"}}},
                "steps": [{"step": "navigate", "url": url}]}]
        }))
        .unwrap();
        adapter.validate()
    };
    for refused in [
        "javascript:alert(1)",
        "data:text/html,x",
        " JAVASCRIPT:x{{q}}",
    ] {
        let problems = navigating(refused);
        assert!(
            problems
                .iter()
                .any(|p| p.message.contains("not a page a tool may navigate to")),
            "{refused}: {problems:?}"
        );
    }
    for allowed in ["results.html?q={{q}}", "https://a.example/{{q}}", "{{q}}"] {
        assert_eq!(navigating(allowed), [], "{allowed}");
    }
}

#[test]
fn variables_read_later_are_not_known_earlier() {
    let adapter: Adapter = serde_json::from_value(json!({
        "name": "a", "match": ["<all_urls>"],
        "tools": [{"name": "t", "description": "d", "steps": [
            {"step": "return", "value": "{{x}}"},
            {"step": "read", "selector": "h1", "into": "x"}
        ]}]
    }))
    .unwrap();
    let problems = adapter.validate();
    let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(problems.len(), 2, "{text:#?}");
    assert!(text.iter().any(|p| p.contains("must be the last step")));
    assert!(text.iter().any(|p| p.contains("{{x}} is neither")));
}

#[test]
fn an_output_schema_must_describe_an_object() {
    let with_output = |schema: &str| {
        GOOD.replace(
            r#""input_schema":"#,
            &format!(r#""output_schema": {schema}, "input_schema":"#),
        )
    };
    let good = with_output(r#"{"type": "object", "properties": {"result": {"type": "array"}}}"#);
    let adapter = parse_adapter(&good).unwrap();
    assert_eq!(
        adapter.tools[0].output_schema.as_ref().unwrap()["properties"]["result"]["type"],
        "array"
    );
    let round_trip: Adapter =
        serde_json::from_value(serde_json::to_value(&adapter).unwrap()).unwrap();
    assert_eq!(round_trip, adapter);

    for bad in [r#"{"type": "array"}"#, r#""object""#, "{}"] {
        let problems = parse_adapter(&with_output(bad)).unwrap_err();
        assert_eq!(problems.len(), 1, "{bad}: {problems:?}");
        let text = problems[0].to_string();
        assert!(
            text.contains(
                "tools[0].output_schema: expected a JSON Schema with \"type\": \"object\""
            ),
            "{text}"
        );
        assert!(problems[0].line.is_some(), "{text}");
    }
}

#[test]
fn state_extractors_and_dom_predicates_are_validated() {
    let mut doc: Value = serde_json::from_str(GOOD).unwrap();
    doc["$schema"] = json!("./schema/adapter.schema.json");
    doc["match_selector"] = json!(".todoapp");
    doc["state"] = json!({"steps": [
        {"step": "extract", "selector": "li", "fields": {"t": {}}, "into": "items"},
        {"step": "return", "value": {"items": "{{items}}"}}
    ]});
    let adapter = parse_adapter(&doc.to_string()).unwrap();
    assert_eq!(adapter.match_selector.as_deref(), Some(".todoapp"));
    let state = adapter.state.as_ref().unwrap().as_tool();
    assert!(state.annotations.read_only);
    assert_eq!(state.steps.len(), 2);
    let sent = serde_json::to_value(&adapter).unwrap();
    assert!(
        sent.get("$schema").is_none(),
        "the schema hint is not sent on"
    );
    assert_eq!(sent["match_selector"], ".todoapp");

    doc["match_selector"] = json!(" ");
    doc["state"] = json!({"steps": [
        {"step": "read", "selector": "h1", "into": "h"},
        {"step": "click", "selector": "{{title}}"}
    ]});
    let text = serde_json::to_string_pretty(&doc).unwrap();
    let problems = parse_adapter(&text).unwrap_err();
    let rendered: Vec<String> = problems.iter().map(ToString::to_string).collect();
    let expected = [
        "match_selector: expected a CSS selector",
        "state.steps: expected the state's steps to end with a \"return\"",
        "state.steps[1].selector: {{title}} is neither",
    ];
    assert_eq!(problems.len(), expected.len(), "{rendered:#?}");
    for (got, want) in rendered.iter().zip(expected) {
        assert!(got.contains(want), "{rendered:#?}");
    }
    assert!(problems.iter().all(|p| p.line.is_some()), "{rendered:#?}");
}

#[test]
fn new_steps_are_validated() {
    let adapter: Adapter = serde_json::from_value(json!({
        "name": "a", "match": ["<all_urls>"],
        "tools": [{"name": "t", "description": "d",
          "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
          "steps": [
            {"step": "if", "var": "nope", "then": [{"step": "hover"}]},
            {"step": "if", "selector": "a", "then": [], "else": []},
            {"step": "for_each", "selector": "li", "into": "rows", "steps": [
                {"step": "read", "selector": "b", "into": "name"}]},
            {"step": "frame", "selector": "iframe", "steps": [{"step": "navigate", "url": "x"}]},
            {"step": "navigate", "url": "/search?q={{q}}"},
            {"step": "return", "value": {"r": "{{rows}}", "n": "{{name}}", "q": "{{q}}"}}
        ]}]
    }))
    .unwrap();
    let problems: Vec<String> = adapter.validate().iter().map(ToString::to_string).collect();
    assert_eq!(
        problems,
        [
            "tools[0].steps[0].var: {{nope}} is neither an argument in input_schema.properties nor read by an earlier step (known: q)",
            "tools[0].steps[1].then: expected steps in \"then\" or \"else\"",
            "tools[0].steps[3].steps[0].step: \"navigate\" must be a top-level step (the call continues in the new page with the next top-level step)",
        ]
    );
    assert_eq!(
        assigned_names(&adapter.tools[0].steps),
        ["name", "rows"],
        "variables a for_each body reads stay known after it"
    );
}

/// Either-or fields are decoded into one choice: both or neither is refused where it is
/// written, for every bad step of the file at once.
#[test]
fn either_or_fields_take_exactly_one() {
    let text = GOOD.replace(
        r##"{"step": "wait", "selector": "#new"},"##,
        r##"{"step": "select", "selector": "s", "value": "x", "label": "y"},
        {"step": "within", "selector": "li", "steps": [{"step": "if", "then": [{"step": "click"}]}]},
        {"step": "select", "selector": "s", "label": "{{title}}"},"##,
    );
    let rendered: Vec<String> = parse_adapter(&text)
        .unwrap_err()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        rendered,
        [
            "10:18: tools[0].steps[0].step: \"select\" needs exactly one of \"value\" (the option's value) and \"label\" (its text)",
            "11:18: tools[0].steps[1].step: \"within\" needs exactly one of \"text_equals\" and \"text_contains\"",
            "11:65: tools[0].steps[1].steps[0].step: \"if\" needs exactly one of \"selector\" (an element is present) and \"var\" (a variable is set)",
        ]
    );
    let fixed = text
        .replace(r#", "label": "y""#, "")
        .replace(
            r#""selector": "li", "steps""#,
            r#""selector": "li", "text_contains": "a", "steps""#,
        )
        .replace(
            r#"{"step": "if", "then""#,
            r#"{"step": "if", "var": "title", "then""#,
        );
    let adapter = parse_adapter(&fixed).unwrap();
    let steps = &adapter.tools[0].steps;
    assert!(matches!(&steps[0], Step::Select { option: OptionChoice::Value(v), .. } if v == "x"));
    assert!(
        matches!(&steps[1], Step::Within { text: TextMatch::Contains(t), steps, .. }
            if t == "a" && matches!(&steps[0], Step::If { condition: Condition::Var(v), .. } if v == "title"))
    );
    assert!(
        matches!(&steps[2], Step::Select { option: OptionChoice::Label(l), .. } if l == "{{title}}")
    );
}

#[test]
fn for_each_over_items_is_validated_with_located_errors() {
    let tool = |steps: &str| {
        format!(
            r#"{{
  "name": "a", "match": ["<all_urls>"],
  "tools": [{{"name": "t", "description": "d",
"input_schema": {{"type": "object", "properties": {{
  "title": {{"type": "string"}},
  "tags": {{"type": "array", "items": {{"type": "string"}}}}}}}},
"steps": [
{steps}
]}}]
}}"#
        )
    };
    let good = tool(
        r##"      {"step": "for_each", "items": "{{tags}}", "as": "tag", "into": "rows", "steps": [
    {"step": "fill", "selector": "#t", "value": "{{tag}}"},
    {"step": "read", "selector": "[data-tag='{{tag}}']", "read": "exists", "into": "seen"}]},
  {"step": "return", "value": {"rows": "{{rows}}", "seen": "{{seen}}"}}"##,
    );
    let adapter = parse_adapter(&good).unwrap();
    let step = &adapter.tools[0].steps[0];
    assert!(matches!(
        step,
        Step::ForEach { over: Loop::Items { items, item_var }, .. }
            if items == "{{tags}}" && item_var == "tag"
    ));
    let sent = serde_json::to_value(step).unwrap();
    assert_eq!(sent["as"], "tag");
    assert_eq!(serde_json::from_value::<Step>(sent).unwrap(), *step);
    assert_eq!(assigned_names(&adapter.tools[0].steps), ["seen", "rows"]);

    // Where `needle` starts on the line of `steps[n]` of `text` (the steps are one a line).
    let at = |text: &str, n: usize, needle: &str| {
        let (i, line) = text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.trim_start().starts_with("{\"step\""))
            .nth(n)
            .unwrap();
        format!(
            "{}:{}: tools[0].steps[{n}]",
            i + 1,
            line.find(needle).unwrap() + 1
        )
    };
    let check = |text: &str, expected: &[String]| {
        let problems = parse_adapter(text).unwrap_err();
        let rendered: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(problems.len(), expected.len(), "{rendered:#?}");
        for (got, want) in rendered.iter().zip(expected) {
            assert!(got.starts_with(want.as_str()), "{got}\n  expected: {want}");
        }
    };

    // What a loop goes over is decided when the step is read: each bad one is reported.
    let shapes = tool(
        r##"      {"step": "for_each", "selector": "li", "items": "{{tags}}", "as": "t", "steps": [{"step": "click"}]},
      {"step": "for_each", "steps": [{"step": "click"}]},
      {"step": "for_each", "items": "{{tags}}", "steps": [{"step": "click"}]},
      {"step": "for_each", "selector": "li", "as": "x", "steps": [{"step": "click"}]},
      {"step": "return", "value": "{{tag}}"}"##,
    );
    check(
        &shapes,
        &[
            format!(
                "{}.step: \"for_each\" needs exactly one of \"selector\" (each matching element) and \"items\" (each element of an array, with \"as\")",
                at(&shapes, 0, "\"for_each\"")
            ),
            format!(
                "{}.step: \"for_each\" needs exactly one of",
                at(&shapes, 1, "\"for_each\"")
            ),
            format!(
                "{}.items: a for_each over \"items\" needs \"as\": the variable each item is bound to",
                at(&shapes, 2, "\"{{tags}}\"")
            ),
            format!(
                "{}.as: \"as\" names the item of a for_each over \"items\"",
                at(&shapes, 3, "\"x\"")
            ),
        ],
    );

    // Once every step reads, the rules about variables: all broken ones at once.
    let rules = tool(
        r##"      {"step": "for_each", "items": "tags: {{tags}}", "as": "t", "steps": [{"step": "click"}]},
      {"step": "for_each", "items": "{{title}}", "as": "t", "steps": [{"step": "click"}]},
      {"step": "for_each", "items": "{{tags}}", "as": "title", "steps": [{"step": "click"}]},
      {"step": "for_each", "items": "{{ghost}}", "as": "g", "steps": [{"step": "click"}]},
      {"step": "for_each", "items": "{{tags}}", "as": "tag", "steps": [{"step": "click", "selector": "#{{tag}}"}]},
      {"step": "return", "value": "{{tag}}"}"##,
    );
    check(
        &rules,
        &[
            format!(
                "{}.items: expected exactly one variable holding an array, such as \"{{{{tags}}}}\", got \"tags: {{{{tags}}}}\"",
                at(&rules, 0, "\"tags: ")
            ),
            format!(
                "{}.items: the argument \"title\" is iterated over, so input_schema.properties.title needs \"type\": \"array\" (it has \"string\")",
                at(&rules, 1, "\"{{title}}\"")
            ),
            format!(
                "{}.as: \"title\" is already an argument or a variable read earlier: name the item differently",
                at(&rules, 2, "\"title\"")
            ),
            format!(
                "{}.items: {{{{ghost}}}} is neither an argument",
                at(&rules, 3, "\"{{ghost}}\"")
            ),
            format!(
                "{}.value: {{{{tag}}}} is neither an argument in input_schema.properties nor read by an earlier step (known: tags, title)",
                at(&rules, 5, "\"{{tag}}\"")
            ),
        ],
    );
}

#[test]
fn steps_of_every_kind_parse_and_round_trip_and_bad_shapes_say_why() {
    let mut all = Vec::new();
    for kind in StepKind::ALL {
        let step = match kind.name() {
            "wait" => {
                json!({"step": "wait", "selector": "a", "until": "gone", "timeout_ms": 5})
            }
            "fill" => json!({"step": "fill", "selector": "a", "value": "v"}),
            "clear" => json!({"step": "clear", "selector": "a"}),
            "type" => json!({"step": "type", "selector": "a", "value": "v", "at": "end", "nth": 2}),
            "caret" => json!({"step": "caret", "selector": "a", "at": "{{after}}"}),
            "select_text" => {
                json!({"step": "select_text", "selector": "a", "value": "w", "nth": 1})
            }
            "drag" => json!({"step": "drag", "selector": "a", "to": "b"}),
            "press" => json!({"step": "press", "key": "Enter"}),
            "select" => json!({"step": "select", "selector": "a", "label": "L"}),
            "read" => {
                json!({"step": "read", "into": "x", "read": "attr:href", "optional": true})
            }
            "extract" => {
                json!({"step": "extract", "selector": "li", "into": "x", "fields": {"t": {}}})
            }
            "within" => {
                json!({"step": "within", "selector": "li", "text_contains": "t", "read": "own_text",
                               "timeout_ms": 9, "steps": [{"step": "click"}]})
            }
            "for_each" => {
                json!({"step": "for_each", "selector": "li", "into": "r", "steps": [{"step": "hover"}]})
            }
            "if" => {
                json!({"step": "if", "var": "v", "then": [{"step": "blur"}], "else": [{"step": "check"}]})
            }
            "frame" => {
                json!({"step": "frame", "selector": "iframe", "steps": [{"step": "uncheck"}]})
            }
            "navigate" => json!({"step": "navigate", "url": "/x"}),
            "return" => json!({"step": "return", "value": null}),
            "fail" => json!({"step": "fail", "message": "refused: {{why}}"}),
            "dialog" => json!({"step": "dialog", "answer": "accept", "text": "{{name}}"}),
            "upload" => json!({"step": "upload", "selector": "input", "files": "{{files}}"}),
            "fetch" => {
                json!({"step": "fetch", "url": "/x", "into": "x", "timeout_ms": 5,
                       "records": "/items", "fields": {"a": "/a"}})
            }
            other => json!({"step": other, "selector": "b"}),
        };
        let parsed: Step = serde_json::from_value(step.clone()).unwrap();
        assert_eq!(parsed.kind(), *kind);
        // Written back flat, with only fields its kind takes.
        let written = serde_json::to_value(&parsed).unwrap();
        for field in written.as_object().unwrap().keys() {
            assert!(
                field == "step" || kind.fields().any(|f| f == field),
                "{kind} written with `{field}`"
            );
        }
        let again: Step = serde_json::from_value(serde_json::to_value(&parsed).unwrap()).unwrap();
        assert_eq!(again, parsed);
        all.push(parsed);
    }
    assert_eq!(all.len(), STEP_KINDS.len());
    let error = |v: Value| serde_json::from_value::<Step>(v).unwrap_err().to_string();
    assert!(
        error(json!({"step": "click", "key": "x"}))
            .contains("unknown field `key` in a \"click\" step")
    );
    assert!(error(json!({"step": "fill", "selector": "a"})).contains("missing field `value`"));
    assert!(
        error(json!({"step": "fill", "selector": "a", "value": 1})).contains("must be a string")
    );
    assert!(error(json!({"step": "fly"})).contains("unknown variant `fly`"));
    assert!(
        error(json!({"step": "dialog", "answer": "dismiss", "text": "x"}))
            .contains("not with \"dismiss\"")
    );
    assert!(error(json!({"step": "dialog", "answer": "ok"})).contains("not a dialog answer"));
    assert!(error(json!({"step": "click", "colour": 1})).contains("colour"));
}

#[test]
fn upload_steps_take_their_files_from_one_argument_only() {
    let with_upload = |properties: &str, step: &str| {
        GOOD.replace(
            r#""properties": {"title": {"type": "string"}}"#,
            &format!(r#""properties": {{"title": {{"type": "string"}}, {properties}}}"#),
        )
        .replace(
            r##"{"step": "wait", "selector": "#new"},"##,
            &format!("{step},"),
        )
    };
    let nested = r#"{"step": "if", "var": "title", "then": [{"step": "upload", "selector": "input[type=file]", "files": "{{attachments}}"}]}"#;
    let good = with_upload(
        r#""cv": {"type": "string"}, "attachments": {"type": "array", "items": {"type": "string"}}"#,
        &format!(
            r#"{{"step": "upload", "selector": "label=CV", "files": "{{{{cv}}}}"}}, {nested}"#
        ),
    );
    let adapter = parse_adapter(&good).unwrap();
    assert_eq!(adapter.tools[0].upload_arguments(), ["cv", "attachments"]);
    assert!(
        parse_adapter(GOOD).unwrap().tools[0]
            .upload_arguments()
            .is_empty()
    );
    for (properties, files, expected) in [
        (
            r#""cv": {"type": "string"}"#,
            "{{id}}",
            "must be an argument",
        ),
        (
            r#""cv": {"type": "string"}"#,
            "cv.pdf",
            "expected exactly one argument",
        ),
        (
            r#""cv": {"type": "string"}"#,
            "{{cv}} and more",
            "expected exactly one argument",
        ),
        (
            r#""cv": {"type": "integer"}"#,
            "{{cv}}",
            "needs \"type\": \"string\" or \"array\"",
        ),
    ] {
        let text = with_upload(
            properties,
            &format!(
                r#"{{"step": "read", "selector": "a", "into": "id"}}, {{"step": "upload", "selector": "input", "files": "{files}"}}"#
            ),
        );
        let problems = parse_adapter(&text).unwrap_err();
        assert!(
            problems.iter().any(|p| p.to_string().contains(expected)),
            "{files}: {problems:?}"
        );
    }
}

#[test]
fn fetch_steps_are_validated_with_their_place() {
    let with_fetch = |step: &str| {
        GOOD.replace(
            r##"{"step": "wait", "selector": "#new"},"##,
            &format!("{step},"),
        )
    };
    let good = with_fetch(
        r#"{"step": "fetch", "url": "/api/items?title={{title}}", "into": "found",
           "fields": {"id": "/id", "from": "/from/0/address"}}"#,
    );
    let adapter = parse_adapter(&good).unwrap();
    assert!(matches!(
        &adapter.tools[0].steps[0],
        Step::Fetch { body: FetchBody::Records { fields: f, records: None }, .. }
            if f["from"] == "/from/0/address"
    ));
    assert_eq!(assigned_names(&adapter.tools[0].steps)[0], "found");
    let text =
        with_fetch(r#"{"step": "fetch", "url": "/robots.txt", "response": "text", "into": "t"}"#);
    parse_adapter(&text).unwrap();

    for (step, expected) in [
        (
            r#"{"step": "fetch", "url": "https://evil.example/steal", "into": "x"}"#,
            "10:34: tools[0].steps[0].url: the URL \"https://evil.example/steal\" must be a path on the page's own origin",
        ),
        (
            r#"{"step": "fetch", "url": "//evil.example/x", "into": "x"}"#,
            "10:34: tools[0].steps[0].url: the URL \"//evil.example/x\" must not start with \"//\"",
        ),
        (
            r#"{"step": "fetch", "url": "{{title}}", "into": "x"}"#,
            "tools[0].steps[0].url: the URL \"{{title}}\" must be a path",
        ),
        (
            r#"{"step": "fetch", "url": "/a/{{nope}}", "into": "x"}"#,
            "tools[0].steps[0].url: {{nope}} is neither",
        ),
        (
            r#"{"step": "fetch", "url": "/a", "into": "x", "fields": {"id": "id"}}"#,
            "tools[0].steps[0].fields.id: \"id\" is not a JSON pointer",
        ),
        (
            r#"{"step": "fetch", "url": "/a", "into": "x", "records": "/items"}"#,
            "tools[0].steps[0].records: \"records\" says where the list is for \"fields\"",
        ),
        (
            r#"{"step": "fetch", "url": "/a", "into": "x", "response": "text", "fields": {"a": "/a"}}"#,
            "tools[0].steps[0].response: \"records\" and \"fields\" pick values out of JSON",
        ),
        (
            r#"{"step": "fetch", "url": "/a", "into": "x", "fields": {}}"#,
            "tools[0].steps[0].fields: expected at least one field",
        ),
    ] {
        let problems = parse_adapter(&with_fetch(step)).unwrap_err();
        let rendered: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(problems.len(), 1, "{step}: {rendered:#?}");
        assert!(rendered[0].contains(expected), "{step}: {rendered:#?}");
        assert!(problems[0].line.is_some(), "{step}: {rendered:#?}");
    }

    let error = |v: Value| serde_json::from_value::<Step>(v).unwrap_err().to_string();
    assert!(error(json!({"step": "fetch", "into": "x"})).contains("missing field `url`"));
    assert!(
        error(json!({"step": "fetch", "url": "/a", "into": "x", "selector": "a"}))
            .contains("unknown field `selector` in a \"fetch\" step")
    );
    assert!(
        error(
            json!({"step": "fetch", "url": "/a", "into": "x", "fields": {"a": {"selector": "b"}}})
        )
        .contains("must be a JSON pointer string")
    );
    assert!(
        error(json!({"step": "extract", "selector": "li", "into": "x", "fields": {"a": "/a"}}))
            .contains("must be an object")
    );
    assert!(
        error(json!({"step": "fetch", "url": "/a", "into": "x", "response": "xml"}))
            .contains("`response` of a \"fetch\" step must be one of json, text, got \"xml\"")
    );
}

#[test]
fn read_kinds_parse_and_print() {
    for s in [
        "text",
        "own_text",
        "value",
        "exists",
        "count",
        "attr:href",
        "prop:checked",
        "has_class:done",
    ] {
        let read = Read::try_from(s.to_owned()).unwrap();
        assert_eq!(String::from(read), s);
    }
    assert!(
        Read::try_from("attr:".to_owned())
            .unwrap_err()
            .contains("needs a name")
    );
    assert!(
        Read::try_from("html".to_owned())
            .unwrap_err()
            .contains("expected text")
    );
}

#[test]
fn a_count_needs_something_to_count() {
    let adapter = |steps: Value| {
        json!({"name": "a", "match": ["https://a.example/*"],
               "tools": [{"name": "t", "description": "T.", "steps": steps}]})
        .to_string()
    };
    let counted = adapter(json!([
        {"step": "read", "selector": "li", "read": "count", "into": "n"},
        {"step": "extract", "selector": "ul", "into": "lists",
         "fields": {"items": {"selector": "li", "read": "count"}}},
        {"step": "return", "value": {"n": "{{n}}", "lists": "{{lists}}"}}
    ]));
    assert!(parse_adapter(&counted).is_ok());
    let problems = parse_adapter(&adapter(json!([
        {"step": "read", "read": "count", "into": "n"},
        {"step": "extract", "selector": "ul", "into": "lists", "fields": {"items": {"read": "count"}}},
        {"step": "return", "value": {"n": "{{n}}", "lists": "{{lists}}"}}
    ])))
    .unwrap_err();
    let said: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(
        said[0].contains("tools[0].steps[0].read")
            && said[0].contains("`count` needs a `selector`"),
        "{said:?}"
    );
    assert!(said[1].contains("fields.items.read"), "{said:?}");
}

/// The adapters shipped in `adapters/` must always validate.
#[test]
fn shipped_adapters_validate() {
    for (file, text) in [
        (
            "todomvc.json",
            include_str!("../../../adapters/todomvc.json"),
        ),
        (
            "tiddlywiki.json",
            include_str!("../../../adapters/tiddlywiki.json"),
        ),
        (
            "maildev.json",
            include_str!("../../../adapters/maildev.json"),
        ),
    ] {
        if let Err(problems) = parse_adapter(text) {
            panic!("{file}: {problems:#?}");
        }
    }
}

/// A step that loads a new page continues the call at the next top-level step, and the page's
/// address is read by a `read` step alone.
#[test]
fn navigating_steps_are_top_level_and_the_url_is_read_by_a_read_step() {
    let adapter: Adapter = serde_json::from_value(json!({
        "name": "t", "match": ["http://127.0.0.1/*"],
        "tools": [{"name": "create", "description": "d", "steps": [
            {"step": "click", "selector": "#save", "navigates": true},
            {"step": "press", "selector": "#q", "key": "Enter", "navigates": true},
            {"step": "read", "read": "url:-1", "into": "id"},
            {"step": "read", "read": "url", "into": "where"},
            {"step": "if", "selector": "a", "then": [
                {"step": "click", "selector": "a", "navigates": true}]},
            {"step": "read", "selector": "h1", "read": "url", "into": "bad"},
            {"step": "extract", "selector": "li", "into": "rows",
             "fields": {"u": {"read": "url"}}},
            {"step": "return", "value": {"id": "{{id}}", "where": "{{where}}"}}
        ]}]
    }))
    .unwrap();
    let problems: Vec<String> = adapter.validate().iter().map(ToString::to_string).collect();
    assert_eq!(
        problems,
        [
            "tools[0].steps[4].then[0].navigates: a \"click\" that navigates must be a top-level step (the call continues in the new page with the next top-level step)",
            "tools[0].steps[5].read: \"url\" reads the page's address: it takes no selector",
            "tools[0].steps[6].fields.u.read: an extract field reads an element; read the page's address with a \"read\" step",
        ]
    );
    let bad: Result<Step, _> =
        serde_json::from_value(json!({"step": "read", "read": "url:last", "into": "x"}));
    assert!(
        bad.unwrap_err()
            .to_string()
            .contains("a path segment's index"),
        "a segment is a number"
    );
    let bad: Result<Step, _> = serde_json::from_value(json!({"step": "click", "navigates": "yes"}));
    assert!(
        bad.unwrap_err().to_string().contains("true or false"),
        "navigates is a boolean"
    );
}

//! The recording's rules: typing coalesces, passwords stay out, drafts are valid adapters.

use super::*;
use crate::adapter::parse_adapter;

const START: &str = "https://books.example/list";

fn fill(target: &str, label: &str, text: &str) -> RecordedStep {
    RecordedStep::Fill {
        target: target.into(),
        label: label.into(),
        value: Typed::Text(text.into()),
    }
}

fn click(target: &str) -> RecordedStep {
    RecordedStep::Click {
        target: target.into(),
    }
}

fn draft(name: &str) -> ToolDraft {
    ToolDraft {
        name: name.into(),
        description: "Sign in and add a book.".into(),
    }
}

#[test]
fn typing_into_one_field_is_one_fill_and_the_click_into_it_goes() {
    let mut recording = Recording::default();
    for step in [
        click("label=Title"),
        fill("label=Title", "Title", "D"),
        fill("label=Title", "Title", "Du"),
        fill("label=Title", "Title", "Dune"),
        click("role=button[name=\"Add\"]"),
        // Another field, then back to the first: two more fills, not merged across.
        fill("label=Author", "Author", "Herbert"),
        fill("label=Title", "Title", "Dune 2"),
    ] {
        assert!(recording.push(step));
    }
    assert_eq!(
        recording.steps,
        [
            fill("label=Title", "Title", "Dune"),
            click("role=button[name=\"Add\"]"),
            fill("label=Author", "Author", "Herbert"),
            fill("label=Title", "Title", "Dune 2"),
        ]
    );
    // Arrow keys through a select, a checkbox clicked twice: what they end up as.
    let mut choices = Recording::default();
    for value in ["reading", "done"] {
        choices.push(select("#shelf", "Shelf", value));
    }
    for checked in [true, false] {
        choices.push(RecordedStep::Check {
            target: "label=Gift".into(),
            checked,
        });
    }
    assert_eq!(
        choices.steps,
        [
            select("#shelf", "Shelf", "done"),
            RecordedStep::Check {
                target: "label=Gift".into(),
                checked: false
            }
        ]
    );
    // A click on another element than the field stays.
    let mut other = Recording::default();
    other.push(click("text=Books"));
    other.push(fill("label=Title", "Title", "x"));
    assert_eq!(other.steps.len(), 2);
}

#[test]
fn a_recording_stops_growing_at_its_cap() {
    let mut recording = Recording::default();
    for n in 0..MAX_RECORDED_STEPS {
        assert!(recording.push(click(&format!("#b{n}"))));
    }
    assert!(!recording.push(click("#one-more")));
    assert_eq!(recording.steps.len(), MAX_RECORDED_STEPS);
}

#[test]
fn typed_values_become_parameters_named_from_labels_and_the_draft_is_a_valid_adapter() {
    let steps = [
        fill(
            "placeholder=\"What needs to be done?\"",
            "What needs to be done?",
            "milk",
        ),
        RecordedStep::Press {
            target: "placeholder=\"What needs to be done?\"".into(),
            key: "Enter".into(),
        },
        fill("#second", "What needs to be done?", "eggs"),
        fill("label=Password", "Password", "ignored"),
        RecordedStep::Fill {
            target: "#pw".into(),
            label: "".into(),
            value: Typed::Secret,
        },
        select("label=Shelf", "Shelf", "done"),
        RecordedStep::Check {
            target: "label=Favourite".into(),
            checked: true,
        },
        RecordedStep::Check {
            target: "label=Gift".into(),
            checked: false,
        },
        click("role=button[name=\"Add\"]"),
    ];
    let tool = tool_document(
        &draft("add_things"),
        "http://127.0.0.1:8123/books?x={y}#top",
        &steps,
    )
    .unwrap();
    let schema = &tool["input_schema"];
    // In the order the fields were filled; every one required (a password too, with no value).
    assert_eq!(
        schema["required"],
        json!([
            "what_needs_to_be_done",
            "what_needs_to_be_done_2",
            "password",
            "value",
            "shelf"
        ])
    );
    assert_eq!(schema["properties"].as_object().unwrap().len(), 5);
    // A select's option is a parameter too, offering the options the select had.
    assert_eq!(
        schema["properties"]["shelf"],
        json!({"type": "string", "description": "Shelf (recorded: \"done\")",
               "enum": ["to-read", "reading", "done"]})
    );
    // The page the recording started on first, loaded anew, its braces no template's.
    assert_eq!(
        tool["steps"][0],
        json!({"step": "navigate", "url": "http://127.0.0.1:8123/books?x=%7By%7D"})
    );
    assert_eq!(tool["steps"][1]["value"], "{{what_needs_to_be_done}}");
    assert_eq!(
        tool["steps"][6],
        json!({"step": "select", "selector": "label=Shelf", "value": "{{shelf}}"})
    );
    assert_eq!(tool["steps"][7]["step"], "check");
    assert_eq!(tool["steps"][8]["step"], "uncheck");
    let secret = schema["properties"]["value"]["description"]
        .as_str()
        .unwrap();
    assert!(secret.contains("never recorded"), "{secret}");

    let adapter = adapter_document("http://127.0.0.1:8123", tool).unwrap();
    assert_eq!(adapter["name"], "site_127_0_0_1_8123");
    assert_eq!(adapter["match"], json!(["http://127.0.0.1:8123/*"]));
    let parsed = parse_adapter(&adapter.to_string()).unwrap_or_else(|p| panic!("{p:?}"));
    assert_eq!(parsed.tools[0].name, "add_things");
    assert_eq!(parsed.tools[0].description, "Sign in and add a book.");
}

#[test]
fn a_password_never_reaches_the_draft() {
    let steps = [RecordedStep::Fill {
        target: "label=Password".into(),
        label: "Password".into(),
        value: Typed::Secret,
    }];
    let text = serde_json::to_string(&steps).unwrap();
    assert_eq!(
        text,
        r#"[{"fill":{"target":"label=Password","label":"Password","value":"secret"}}]"#
    );
    let tool = tool_document(&draft("sign_in"), START, &steps).unwrap();
    assert_eq!(tool["steps"][1]["value"], "{{password}}");
    assert!(steps[0].describe().contains("not recorded"));
}

#[test]
fn bad_drafts_say_what_is_wrong() {
    let steps = [click("#go")];
    for bad in [
        "",
        "Add Todo",
        "1st",
        "add-todo",
        &"x".repeat(MAX_TOOL_NAME + 1),
    ] {
        assert_eq!(
            tool_document(&draft(bad), START, &steps),
            Err(DraftError::BadName(bad.into()))
        );
    }
    assert_eq!(
        tool_document(&draft("go"), START, &[]),
        Err(DraftError::Empty)
    );
    let empty = ToolDraft {
        name: "go".into(),
        description: " ".into(),
    };
    let tool = tool_document(&empty, START, &steps).unwrap();
    assert_eq!(tool["description"], "Recorded in the page: 1 steps.");
    for bad in [
        "file:///etc",
        "chrome://settings",
        "https://",
        "https://a.example/path",
    ] {
        assert_eq!(
            adapter_document(bad, json!({})),
            Err(DraftError::BadOrigin(bad.into()))
        );
    }
}

#[test]
fn adapter_names_come_from_the_host() {
    assert_eq!(
        adapter_name("https://www.example.com").as_deref(),
        Some("example_com")
    );
    assert_eq!(
        adapter_name("http://localhost:3000").as_deref(),
        Some("localhost_3000")
    );
    assert_eq!(
        adapter_name("http://[::1]:8080").as_deref(),
        Some("site_1_8080")
    );
    let long = adapter_name("https://a-very-long-subdomain.of-an-even-longer.example.org").unwrap();
    assert!(long.len() <= MAX_ADAPTER_NAME, "{long}");
}

#[test]
fn a_tool_is_added_to_the_sites_adapter_unless_its_name_is_there() {
    let first = tool_document(
        &draft("add_book"),
        START,
        &[fill("label=Title", "Title", "Dune")],
    )
    .unwrap();
    assert_eq!(parameters(&first), ["title"]);
    let mut adapter = adapter_document("https://books.example", first).unwrap();
    let second = tool_document(&draft("open_book"), START, &[click("text=Dune")]).unwrap();
    assert_eq!(parameters(&second), Vec::<String>::new());
    add_tool(&mut adapter, second.clone()).unwrap();
    assert_eq!(adapter["tools"].as_array().unwrap().len(), 2);
    assert_eq!(
        add_tool(&mut adapter, second),
        Err(DraftError::ToolExists("open_book".into()))
    );
    let again = DraftError::ToolExists("open_book".into()).to_string();
    assert!(again.contains("choose another name"), "{again}");
    let parsed = parse_adapter(&adapter.to_string()).unwrap_or_else(|p| panic!("{p:?}"));
    assert_eq!(parsed.name, "books_example");
    assert_eq!(parsed.tools.len(), 2);
    let mut not_one = json!({"name": "x"});
    assert_eq!(
        add_tool(&mut not_one, json!({"name": "t"})),
        Err(DraftError::NotAnAdapter("t".into()))
    );
}

fn select(target: &str, label: &str, value: &str) -> RecordedStep {
    RecordedStep::Select {
        target: target.into(),
        label: label.into(),
        value: value.into(),
        options: ["to-read", "reading", "done"].map(String::from).to_vec(),
    }
}

#[test]
fn a_select_with_many_options_or_a_value_it_did_not_offer_takes_any_string() {
    let many: Vec<String> = (0..=MAX_RECORDED_OPTIONS).map(|n| n.to_string()).collect();
    let cases = [(many, "3"), (vec!["a".to_owned()], "b"), (Vec::new(), "x")];
    for (options, value) in cases {
        let step = RecordedStep::Select {
            target: "#year".into(),
            label: "Year".into(),
            value: value.into(),
            options,
        };
        let tool = tool_document(&draft("pick"), "http://127.0.0.1:1/", &[step]).unwrap();
        let year = &tool["input_schema"]["properties"]["year"];
        assert_eq!(year["type"], "string");
        assert!(year.get("enum").is_none(), "{year}");
    }
}

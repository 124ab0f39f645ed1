//! The step interpreter's tests, on the fake DOM.

use super::*;
use crate::dom::Dom;
use crate::fake_dom::{FakeDom, FakeNode, block_on};
use crate::tools::check_args;
use serde_json::json;

/// A call that must finish in this page.
pub(super) async fn run_value<D: crate::page::PageDom>(
    dom: &D,
    tool: &ToolDef,
    args: Vars,
    timeout_ms: u64,
    cancelled: &Cell<bool>,
) -> Result<Value, WireError> {
    match run_tool(dom, tool, args, 0, timeout_ms, cancelled).await? {
        Outcome::Finished(value) => Ok(value),
        other => panic!("the call did not finish: {other:?}"),
    }
}

/// Runs `steps` with no arguments in `dom`: a call that must fail; its error.
pub(super) fn fails(dom: &FakeDom, steps: Value, timeout_ms: u64) -> WireError {
    run_adhoc(dom, steps, json!({}), timeout_ms).unwrap_err()
}

/// Checks that a call failed with `code`, saying exactly `message`.
pub(super) fn assert_refused(err: &WireError, code: ErrorCode, message: &str) {
    assert_eq!((err.code, err.message.as_str()), (code, message));
}

/// Checks that a call failed with `code`, its message containing `part`.
pub(super) fn assert_refused_containing(err: &WireError, code: ErrorCode, part: &str) {
    assert_eq!(err.code, code, "{err}");
    assert!(err.message.contains(part), "{err}");
}

/// Checks that a call failed with `code`, its message starting with `start` (the rest is someone
/// else's words: a parser's, the browser's).
pub(super) fn assert_refused_starting(err: &WireError, code: ErrorCode, start: &str) {
    assert_eq!(err.code, code, "{err}");
    assert!(err.message.starts_with(start), "{err}");
}

#[test]
fn navigate_never_loads_another_scheme_than_http_s() {
    // Arguments are percent-encoded, but an adapter can still spell a scheme around one.
    let tool: ToolDef = tool_with(
        json!({"x": {"type": "string"}}),
        json!([{"step": "navigate", "url": "{{x}}script:alert(1)"}]),
    );
    let args = json!({"x": "java"}).as_object().cloned().unwrap();
    let failed = block_on(run_tool(
        &todomvc(&[]),
        &tool,
        args,
        0,
        1000,
        &Cell::new(false),
    ))
    .unwrap_err();
    assert_refused_containing(
        &failed,
        ErrorCode::AdapterError,
        "not a page a tool may navigate to",
    );
}

#[test]
fn navigate_hands_over_the_rest_of_the_call() {
    let tool: ToolDef = tool_with(
        json!({"q": {"type": "string"}}),
        json!([
            {"step": "read", "selector": "label", "into": "before"},
            {"step": "navigate", "url": "results.html?q={{q}}"},
            {"step": "read", "selector": "label", "into": "after"},
            {"step": "return", "value": ["{{q}}", "{{before}}", "{{after}}"]}
        ]),
    );
    let dom = todomvc(&[("a", false)]);
    let args = json!({"q": "x y&z"}).as_object().cloned().unwrap();
    let outcome = block_on(run_tool(&dom, &tool, args, 0, 1000, &Cell::new(false))).unwrap();
    let Outcome::Navigate {
        url,
        resume_at,
        vars,
        timeout_ms,
        step,
    } = outcome
    else {
        panic!("{outcome:?}")
    };
    assert_eq!(url.as_deref(), Some("results.html?q=x%20y%26z"));
    assert_eq!(step, "steps[1] (navigate)");
    assert_eq!((resume_at, timeout_ms), (2, 1000));
    assert_eq!(vars["before"], "a");

    // The next page: its DOM, the variables so far, from the step after `navigate`.
    let next = todomvc(&[("b", false)]);
    let outcome = block_on(run_tool(
        &next,
        &tool,
        vars,
        resume_at,
        1000,
        &Cell::new(false),
    ));
    assert_eq!(
        outcome.unwrap(),
        Outcome::Finished(json!(["x y&z", "a", "b"]))
    );
    // Errors after the navigation keep the step's real index.
    let empty = todomvc(&[]);
    let vars = json!({"q": "", "before": "a"})
        .as_object()
        .cloned()
        .unwrap();
    let err = block_on(run_tool(&empty, &tool, vars, 2, 1000, &Cell::new(false))).unwrap_err();
    assert_eq!(err.message, "steps[2] (read): no element matches `label`");
}

const INPUT: &str = "#new-todo, .new-todo";
const LIST: &str = "#todo-list, .todo-list";
const ITEMS: &str = "#todo-list > li, .todo-list > li";

/// TodoMVC's markup: the root, the input (1), the list (2), and one item per title.
fn todomvc(items: &[(&str, bool)]) -> FakeDom {
    let dom = FakeDom::default();
    dom.add(FakeNode::default());
    dom.add(FakeNode {
        selectors: vec![INPUT],
        value: Some(String::new()),
        visible: true,
        text_input: true,
        ..Default::default()
    });
    let list = dom.add(FakeNode {
        selectors: vec![LIST],
        visible: true,
        ..Default::default()
    });
    for (title, done) in items {
        let li = dom.add(FakeNode {
            parent: Some(list),
            selectors: vec![ITEMS],
            classes: if *done { vec!["completed"] } else { vec![] },
            visible: true,
            ..Default::default()
        });
        dom.add(FakeNode {
            parent: Some(li),
            selectors: vec![".toggle"],
            visible: true,
            ..Default::default()
        });
        dom.add(FakeNode {
            parent: Some(li),
            selectors: vec!["label"],
            text: format!("  {title} "),
            visible: true,
            ..Default::default()
        });
    }
    dom
}

/// The `click` events, with their targets.
fn clicks(dom: &FakeDom) -> Vec<String> {
    dom.events
        .borrow()
        .iter()
        .filter(|e| e.starts_with("click "))
        .cloned()
        .collect()
}

/// A tool taking arguments of these `properties`, running `steps`.
pub(super) fn tool_with(properties: Value, steps: Value) -> ToolDef {
    serde_json::from_value(json!({
        "name": "t", "description": "d", "steps": steps,
        "input_schema": {"type": "object", "properties": properties}
    }))
    .unwrap()
}

pub(super) fn adhoc(steps: Value) -> ToolDef {
    serde_json::from_value(json!({"name": "t", "description": "d", "steps": steps})).unwrap()
}

pub(super) fn run_adhoc(
    dom: &FakeDom,
    steps: Value,
    args: Value,
    timeout_ms: u64,
) -> Result<Value, WireError> {
    let tool = adhoc(steps);
    block_on(run_value(
        dom,
        &tool,
        args.as_object().cloned().unwrap_or_default(),
        timeout_ms,
        &Cell::new(false),
    ))
}

#[test]
fn add_todo_types_and_commits_like_a_user() {
    let dom = todomvc(&[]);
    let add_todo = json!([
        {"step": "wait", "selector": INPUT},
        {"step": "fill", "selector": INPUT, "value": "{{title}}"},
        {"step": "press", "selector": INPUT, "key": "Enter"},
        {"step": "return", "value": {"added": "{{title}}"}}
    ]);
    let result = run_adhoc(&dom, add_todo, json!({"title": "Buy milk"}), 1000).unwrap();
    assert_eq!(result, json!({"added": "Buy milk"}));
    assert_eq!(dom.nodes.borrow()[1].value.as_deref(), Some("Buy milk"));
    assert_eq!(
        *dom.events.borrow(),
        [
            "focus 1",
            "beforeinput 1 insertText Buy milk",
            "input 1 insertText Buy milk",
            "keydown 1 Enter 13 Enter",
            "keypress 1 Enter 13 Enter",
            "change 1",
            "implicit submission 1",
            "keyup 1 Enter 13 Enter"
        ]
    );
    // The page ran its queued work after the fill (a framework's model update) and the press.
    assert_eq!(dom.checkpoints.get(), 2);
}

#[test]
fn enter_commits_only_changed_values_and_respects_cancelled_keydown() {
    let dom = todomvc(&[]);
    let steps = json!([
        {"step": "fill", "selector": INPUT, "value": ""},
        {"step": "press", "selector": INPUT, "key": "Enter"}
    ]);
    run_adhoc(&dom, steps, json!({}), 1000).unwrap();
    assert!(!dom.events.borrow().iter().any(|e| e.starts_with("change")));

    let dom = todomvc(&[]);
    dom.cancel.borrow_mut().push("keydown");
    run_adhoc(
        &dom,
        json!([{"step": "fill", "selector": INPUT, "value": "x"}, {"step": "press", "key": "Enter"}]),
        json!({}),
        1000,
    )
    .unwrap();
    let events = dom.events.borrow();
    assert!(
        !events
            .iter()
            .any(|e| e.starts_with("change") || e.starts_with("keypress")),
        "{events:?}"
    );
    assert!(
        events.contains(&"keyup 1 Enter 13 Enter".to_owned()),
        "press without selector hits the focused input"
    );
}

fn list_todos(dom: &FakeDom) -> Value {
    let steps = json!([
        {"step": "extract", "selector": ITEMS, "into": "todos",
         "fields": {"title": {"selector": "label"}, "completed": {"read": "has_class:completed"}}},
        {"step": "return", "value": "{{todos}}"}
    ]);
    run_adhoc(dom, steps, json!({}), 1000).unwrap()
}

fn toggle_todo(dom: &FakeDom, title: &str) -> Result<Value, WireError> {
    let steps = json!([
        {"step": "wait", "selector": INPUT, "until": "attached"},
        {"step": "within", "selector": ITEMS, "text_selector": "label", "text_equals": "{{title}}",
         "steps": [
           {"step": "click", "selector": ".toggle"},
           {"step": "read", "read": "has_class:completed", "into": "completed"}
         ]},
        {"step": "return", "value": {"title": "{{title}}", "completed": "{{completed}}"}}
    ]);
    run_adhoc(dom, steps, json!({"title": title}), 1000)
}

#[test]
fn list_todos_extracts_records() {
    let dom = todomvc(&[("a", false), ("b", true)]);
    let result = list_todos(&dom);
    assert_eq!(
        result,
        json!([{"title": "a", "completed": false}, {"title": "b", "completed": true}])
    );
    // A missing field element reads as null (and has_class as false).
    dom.nodes.borrow_mut()[5].attached = false; // the first item's label
    let result = list_todos(&dom);
    assert_eq!(result[0], json!({"title": null, "completed": false}));
}

#[test]
fn toggle_picks_the_item_by_its_label() {
    let dom = todomvc(&[("a", false), ("b", false)]);
    let result = toggle_todo(&dom, "b").unwrap();
    assert_eq!(result, json!({"title": "b", "completed": true}));
    assert!(dom.has_class(&6, "completed"));
    assert!(!dom.has_class(&3, "completed"));

    let err = toggle_todo(&dom, "zzz").unwrap_err();
    assert_refused(
        &err,
        ErrorCode::ElementNotFound,
        &format!(
            "steps[1] (within): no `{ITEMS}` whose `label` text equals \"zzz\" (2 candidates)"
        ),
    );
}

#[test]
fn errors_name_the_step_path_and_selector() {
    let dom = todomvc(&[("a", false)]);
    let steps = json!([
        {"step": "within", "selector": ITEMS, "text_equals": "a", "text_selector": "label",
         "steps": [{"step": "click", "selector": ".nope"}]}
    ]);
    let err = fails(&dom, steps, 1000);
    assert_refused(
        &err,
        ErrorCode::ElementNotFound,
        "steps[0].steps[0] (click): no element matches `.nope`",
    );

    let err = fails(&dom, json!([{"step": "click", "selector": "a!!"}]), 1000);
    assert_refused_starting(
        &err,
        ErrorCode::AdapterError,
        "steps[0] (click): invalid selector `a!!`",
    );

    let err = fails(
        &dom,
        json!([{"step": "return", "value": "{{ghost}}"}]),
        1000,
    );
    assert_refused_containing(&err, ErrorCode::AdapterError, "ghost");

    let err = fails(
        &dom,
        json!([{"step": "fill", "selector": LIST, "value": "x"}]),
        1000,
    );
    assert_refused_containing(&err, ErrorCode::AdapterError, "not an input");
}

#[test]
fn reads_of_every_kind() {
    let dom = todomvc(&[("a", true)]);
    let steps = json!([
        {"step": "read", "selector": "label", "into": "text"},
        {"step": "read", "selector": INPUT, "read": "value", "into": "value"},
        {"step": "read", "selector": ".missing", "read": "exists", "into": "exists"},
        {"step": "read", "selector": ".missing", "optional": true, "into": "optional"},
        {"step": "read", "selector": ITEMS, "read": "attr:id", "into": "attr"},
        {"step": "read", "selector": ITEMS, "read": "attr:nope", "into": "no_attr"},
        {"step": "read", "selector": ITEMS, "read": "prop:checked", "into": "prop"},
        {"step": "within", "selector": ITEMS, "text_selector": "label", "text_equals": "a",
         "steps": [{"step": "read", "read": "has_class:completed", "into": "scoped"}]},
        {"step": "read", "selector": ITEMS, "read": "count", "into": "count"},
        {"step": "read", "selector": ".missing", "read": "count", "into": "none"},
        {"step": "return", "value": {"all": ["{{text}}", "{{value}}", "{{exists}}", "{{optional}}", "{{attr}}",
                                             "{{no_attr}}", "{{prop}}", "{{scoped}}", "{{count}}", "{{none}}"]}}
    ]);
    let result = run_adhoc(&dom, steps, json!({}), 1000).unwrap();
    assert_eq!(
        result,
        json!({"all": ["a", "", false, null, "n3", null, true, true, 1, 0]})
    );
    let two = todomvc(&[("a", true), ("b", false)]);
    let counted = run_adhoc(
        &two,
        json!([{"step": "read", "selector": ITEMS, "read": "count", "into": "n"},
               {"step": "return", "value": {"n": "{{n}}"}}]),
        json!({}),
        1000,
    )
    .unwrap();
    assert_eq!(counted, json!({"n": 2}));

    let err = fails(
        &dom,
        json!([{"step": "read", "selector": ".missing", "into": "x"}]),
        1000,
    );
    assert_eq!(err.code, ErrorCode::ElementNotFound);
    assert_eq!(
        run_adhoc(
            &dom,
            json!([{"step": "click", "selector": "label"}]),
            json!({}),
            1000
        )
        .unwrap(),
        Value::Null
    );
}

#[test]
fn waits_poll_until_the_dom_changes_or_time_runs_out() {
    let dom = todomvc(&[]);
    dom.nodes.borrow_mut()[1].visible = false;
    *dom.on_settle.borrow_mut() = Some(Box::new(|dom: &FakeDom| {
        if dom.now.get() >= 200.0 {
            dom.nodes.borrow_mut()[1].visible = true;
        }
    }));
    run_adhoc(
        &dom,
        json!([{"step": "wait", "selector": INPUT}]),
        json!({}),
        1000,
    )
    .unwrap();
    assert!((200.0..260.0).contains(&dom.now.get()), "{}", dom.now.get());

    let dom = todomvc(&[]);
    let err = fails(
        &dom,
        json!([{"step": "wait", "selector": INPUT, "until": "gone", "timeout_ms": 300}]),
        5000,
    );
    assert_refused(
        &err,
        ErrorCode::Timeout,
        &format!("steps[0] (wait): `{INPUT}` was still not gone after 300 ms"),
    );

    // The call's own deadline bounds a wait without timeout_ms.
    let dom = todomvc(&[]);
    let err = fails(
        &dom,
        json!([{"step": "wait", "selector": ".later", "until": "attached"}]),
        120,
    );
    assert_eq!(err.code, ErrorCode::Timeout);
    assert_eq!(dom.now.get(), 120.0);
}

#[test]
fn cancellation_stops_the_call() {
    let dom = todomvc(&[]);
    let tool = adhoc(json!([{"step": "wait", "selector": ".never", "until": "attached"}]));
    let cancelled = Cell::new(false);
    *dom.on_settle.borrow_mut() = Some(Box::new(|_: &FakeDom| {}));
    let err = block_on(async {
        cancelled.set(true);
        run_value(&dom, &tool, Vars::new(), 5000, &cancelled).await
    })
    .unwrap_err();
    assert_refused_starting(&err, ErrorCode::Cancelled, "steps[0] (wait)");
}
/// A form: a select (1), a checkbox (2), an iframe (3) whose root (4) holds a textarea (5),
/// and a field (6) with own text.
fn form() -> FakeDom {
    let dom = FakeDom::default();
    dom.add(FakeNode::default());
    dom.add(FakeNode {
        selectors: vec!["select"],
        options: vec![("r", "Red"), ("g", "Green")],
        value: Some("r".into()),
        ..Default::default()
    });
    dom.add(FakeNode {
        selectors: vec!["#agree"],
        checked: Some(false),
        ..Default::default()
    });
    dom.add(FakeNode {
        selectors: vec!["iframe"],
        frame_root: Some(4),
        ..Default::default()
    });
    dom.add(FakeNode::default());
    dom.add(FakeNode {
        parent: Some(4),
        selectors: vec!["textarea"],
        value: Some(String::new()),
        ..Default::default()
    });
    dom.add(FakeNode {
        selectors: vec![".title"],
        text: "Invoice 42 To: bob".into(),
        own_text: Some(" Invoice 42 ".into()),
        ..Default::default()
    });
    dom
}

#[test]
fn select_picks_by_value_or_label() {
    let dom = form();
    run_adhoc(
        &dom,
        json!([{"step": "select", "selector": "select", "label": "{{colour}}"}]),
        json!({"colour": "Green"}),
        1000,
    )
    .unwrap();
    assert_eq!(dom.nodes.borrow()[1].selected, Some(1));
    assert_eq!(*dom.events.borrow(), ["input 1", "change 1"]);
    run_adhoc(
        &dom,
        json!([{"step": "select", "selector": "select", "value": "r"}]),
        json!({}),
        1000,
    )
    .unwrap();
    assert_eq!(dom.nodes.borrow()[1].selected, Some(0));
    let err = fails(
        &dom,
        json!([{"step": "select", "selector": "select", "value": "blue"}]),
        1000,
    );
    assert_refused(
        &err,
        ErrorCode::ElementNotFound,
        "steps[0] (select): no option with value \"blue\" (there are: r, g)",
    );
    let err = fails(
        &dom,
        json!([{"step": "select", "selector": "#agree", "value": "x"}]),
        1000,
    );
    assert!(err.message.contains("not a <select>"), "{err}");
}

#[test]
fn check_and_uncheck_click_only_when_needed() {
    let dom = form();
    let check = json!([{"step": "check", "selector": "#agree"}]);
    run_adhoc(&dom, check.clone(), json!({}), 1000).unwrap();
    run_adhoc(&dom, check, json!({}), 1000).unwrap();
    assert_eq!(dom.nodes.borrow()[2].checked, Some(true));
    assert_eq!(clicks(&dom), ["click 2"], "the second check clicks nothing");
    run_adhoc(
        &dom,
        json!([{"step": "uncheck", "selector": "#agree"}]),
        json!({}),
        1000,
    )
    .unwrap();
    assert_eq!(dom.nodes.borrow()[2].checked, Some(false));
    // Something a click does not check.
    let err = fails(&dom, json!([{"step": "check", "selector": ".title"}]), 1000);
    assert_refused(
        &err,
        ErrorCode::NoEffect,
        "steps[0] (check): `.title` is still unchecked after a click (is it a checkbox the page lets change?)",
    );
}

#[test]
fn pointer_steps_fire_their_events_on_the_scope_or_selector() {
    let dom = todomvc(&[("a", false)]);
    let steps = json!([
        {"step": "within", "selector": ITEMS, "text_selector": "label", "text_equals": "a", "steps": [
            {"step": "hover"},
            {"step": "dblclick", "selector": "label"},
            {"step": "scroll_into_view", "selector": ".toggle"},
            {"step": "click"}
        ]}
    ]);
    run_adhoc(&dom, steps, json!({}), 1000).unwrap();
    let targets: Vec<String> = dom
        .events
        .borrow()
        .iter()
        .filter(|e| {
            ["pointerover ", "dblclick ", "scroll ", "click "]
                .iter()
                .any(|kind| e.starts_with(kind))
        })
        .cloned()
        .collect();
    assert_eq!(
        targets,
        [
            "pointerover 3",
            "pointerover 5",
            "click 5",
            "click 5",
            "dblclick 5",
            "scroll 4",
            "pointerover 3",
            "click 3"
        ]
    );
}

#[test]
fn actions_a_page_could_not_take_fail_with_typed_errors_naming_the_element() {
    let dom = todomvc(&[("a", false)]);
    // The toggle (4) is covered by the input (1) at its centre.
    dom.nodes.borrow_mut()[4].centre = Some((20.0, 30.0));
    dom.nodes.borrow_mut()[4].covered_by = Some(1);
    let err = fails(
        &dom,
        json!([{"step": "click", "selector": ".toggle"}]),
        1000,
    );
    assert_eq!(err.code, ErrorCode::NotActionable);
    assert_eq!(
        dom.now.get(),
        1000.0,
        "a covered element is waited for, 1 s at most"
    );
    assert_eq!(
        err.message,
        "steps[0] (click): `.toggle` is covered by <div id=\"n1\">, which is at its centre (20, 30): a person's click would land there"
    );
    // A fill the page does not keep is found out after the page settled.
    let dom = todomvc(&[]);
    dom.rejects_values.set(true);
    let err = fails(
        &dom,
        json!([{"step": "fill", "selector": INPUT, "value": "x"}, {"step": "press", "key": "Enter"}]),
        1000,
    );
    assert_refused(
        &err,
        ErrorCode::NoEffect,
        &format!(
            "steps[0] (fill): `{INPUT}` holds \"\" after the edit, not \"x\": the edit did not stick"
        ),
    );
    assert_eq!(dom.checkpoints.get(), 1, "checked after the page settled");
    assert!(!dom.events.borrow().iter().any(|e| e.starts_with("keydown")));
    // A bad chord (only possible in an adapter the validator never saw) is the adapter's.
    let err = fails(&dom, json!([{"step": "press", "key": "Hyper+x"}]), 1000);
    assert_refused_starting(&err, ErrorCode::AdapterError, "steps[0] (press): \"Hyper\"");
}

#[test]
fn blur_commits_a_changed_value_once() {
    let dom = todomvc(&[]);
    let steps = json!([
        {"step": "fill", "selector": INPUT, "value": "x"},
        {"step": "blur", "selector": INPUT},
        {"step": "blur"}
    ]);
    run_adhoc(&dom, steps, json!({}), 1000).unwrap();
    assert_eq!(
        *dom.events.borrow(),
        [
            "focus 1",
            "beforeinput 1 insertText x",
            "input 1 insertText x",
            "change 1",
            "blur 1"
        ],
        "the second blur has no focused element"
    );
}

#[test]
fn for_each_runs_per_match_and_collects_what_it_read() {
    let dom = todomvc(&[("a", true), ("b", false)]);
    let steps = json!([
        {"step": "for_each", "selector": ITEMS, "into": "rows", "steps": [
            {"step": "read", "selector": "label", "into": "title"},
            {"step": "if", "selector": ".toggle", "then": [
                {"step": "read", "read": "has_class:completed", "into": "done"}
            ]}
        ]},
        {"step": "return", "value": "{{rows}}"}
    ]);
    let rows = run_adhoc(&dom, steps, json!({}), 1000).unwrap();
    assert_eq!(
        rows,
        json!([{"title": "a", "done": true}, {"title": "b", "done": false}])
    );

    // No match: an empty list, and the body's variables are defined (null).
    let dom = todomvc(&[]);
    let steps = json!([
        {"step": "for_each", "selector": ITEMS, "into": "rows", "steps": [
            {"step": "read", "selector": "label", "into": "title"}
        ]},
        {"step": "return", "value": {"rows": "{{rows}}", "last": "{{title}}"}}
    ]);
    let out = run_adhoc(&dom, steps, json!({}), 1000).unwrap();
    assert_eq!(out, json!({"rows": [], "last": null}));

    // A failure names the step and which match it was on.
    let dom = todomvc(&[("a", false), ("b", false)]);
    dom.nodes.borrow_mut()[8].attached = false; // the second item's label
    let err = fails(
        &dom,
        json!([{"step": "for_each", "selector": ITEMS, "steps": [
            {"step": "read", "selector": "label", "into": "t"}
        ]}]),
        1000,
    );
    assert_eq!(
        err.message,
        "steps[0].steps[0] (read): no element matches `label` (in match 2 of 2)"
    );
}

/// A tool with an optional `tags` argument (an array of strings) and these steps.
fn tagging_tool(steps: Value) -> ToolDef {
    tool_with(
        json!({
            "tags": {"type": "array", "items": {"type": "string"}}}),
        steps,
    )
}

fn run_with(dom: &FakeDom, tool: &ToolDef, args: Value) -> Result<Value, WireError> {
    let args = check_args(&tool.name, &tool.input_schema, args)?;
    block_on(run_value(dom, tool, args, 1000, &Cell::new(false)))
}

#[test]
fn for_each_over_items_binds_each_item_and_escapes_it_in_selectors() {
    let dom = todomvc(&[]);
    // Only the CSS-escaped form of "two words" matches: a raw value would be another selector.
    let marked = dom.add(FakeNode {
        selectors: vec![r"[data-tag='two\ words']"],
        ..Default::default()
    });
    let tool = tagging_tool(json!([
        {"step": "for_each", "items": "{{tags}}", "as": "tag", "into": "added", "steps": [
            {"step": "fill", "selector": INPUT, "value": "{{tag}}"},
            {"step": "press", "selector": INPUT, "key": "Enter"},
            {"step": "read", "selector": "[data-tag='{{tag}}']", "read": "exists", "into": "marked"}
        ]},
        {"step": "return", "value": {"added": "{{added}}", "last": "{{marked}}"}}
    ]));
    let out = run_with(&dom, &tool, json!({"tags": ["one", "two words"]})).unwrap();
    assert_eq!(
        out,
        json!({
            "added": [{"tag": "one", "marked": false}, {"tag": "two words", "marked": true}],
            "last": true
        })
    );
    let inputs: Vec<String> = dom
        .events
        .borrow()
        .iter()
        .filter(|e| e.starts_with("input") || e.starts_with("change"))
        .cloned()
        .collect();
    assert_eq!(
        inputs,
        [
            "input 1 insertText one",
            "change 1",
            "input 1 insertText two words",
            "change 1"
        ]
    );
    assert_eq!(marked, 3);

    // An empty array and a left-out optional argument run the body zero times; what the
    // body reads is defined (null) after the loop.
    for args in [json!({"tags": []}), json!({})] {
        let dom = todomvc(&[]);
        let out = run_with(&dom, &tool, args.clone()).unwrap();
        assert_eq!(out, json!({"added": [], "last": null}), "{args}");
        assert!(dom.events.borrow().is_empty(), "{args}");
    }
}

#[test]
fn for_each_over_items_runs_in_the_enclosing_scope_and_reaches_into_objects() {
    let dom = todomvc(&[("a", false), ("b", false), ("c", false)]);
    // Toggle the items named in a list of records, each found by its label inside the list.
    let steps = json!([
        {"step": "read", "selector": LIST, "read": "exists", "into": "has_list"},
        {"step": "within", "selector": LIST, "text_contains": "", "steps": [
            {"step": "for_each", "items": "{{todos}}", "as": "todo", "steps": [
                {"step": "within", "selector": ITEMS, "text_selector": "label",
                 "text_equals": "{{todo.title}}", "steps": [{"step": "click", "selector": ".toggle"}]}
            ]}
        ]}
    ]);
    let tool: ToolDef = tool_with(json!({"todos": {"type": "array"}}), steps);
    run_with(
        &dom,
        &tool,
        json!({"todos": [{"title": "c"}, {"title": "a"}]}),
    )
    .unwrap();
    assert_eq!(clicks(&dom), ["click 10", "click 4"]);
}

#[test]
fn for_each_over_items_names_the_item_a_step_failed_on_and_rejects_non_arrays() {
    let dom = todomvc(&[("a", false)]);
    let tool = tagging_tool(json!([
        {"step": "for_each", "items": "{{tags}}", "as": "tag", "steps": [
            {"step": "within", "selector": ITEMS, "text_selector": "label",
             "text_equals": "{{tag}}", "steps": [{"step": "click"}]}
        ]}
    ]));
    let err = run_with(&dom, &tool, json!({"tags": ["a", "zzz"]})).unwrap_err();
    assert_refused(
        &err,
        ErrorCode::ElementNotFound,
        &format!(
            "steps[0].steps[0] (within): no `{ITEMS}` whose `label` text equals \"zzz\" (1 candidates) (in item 2 of 2)"
        ),
    );
    // A caller's non-array never reaches the steps: INVALID_ARGS names the argument.
    let err = run_with(&dom, &tool, json!({"tags": "a"})).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgs);
    // A variable the adapter read that is not an array is the adapter's error, named.
    let err = fails(
        &dom,
        json!([
            {"step": "read", "selector": "label", "into": "title"},
            {"step": "for_each", "items": "{{title}}", "as": "x", "steps": [{"step": "click"}]}
        ]),
        1000,
    );
    assert_refused(
        &err,
        ErrorCode::AdapterError,
        "steps[1] (for_each): `items` {{title}} is a string, expected an array",
    );
    // A loop over neither a selector nor items cannot even be built: the decoder refuses it.
    let neither = json!({"step": "for_each", "steps": [{"step": "click"}]});
    assert!(serde_json::from_value::<Step>(neither).is_err());
}

#[test]
fn if_branches_on_presence_or_on_a_variable() {
    let dom = todomvc(&[]);
    let steps = json!([
        {"step": "if", "selector": ".missing",
         "then": [{"step": "read", "selector": INPUT, "read": "exists", "into": "yes"}],
         "else": [{"step": "read", "selector": LIST, "read": "exists", "into": "no"}]},
        {"step": "if", "var": "tag", "then": [{"step": "click", "selector": ".nope"}]},
        {"step": "if", "var": "flag", "then": [{"step": "return", "value": "flagged"}]},
        {"step": "return", "value": {"yes": "{{yes}}", "no": "{{no}}"}}
    ]);
    let tool: ToolDef = tool_with(
        json!({"tag": {"type": "string"}, "flag": {"type": "boolean"}}),
        steps,
    );
    let run = |args: Value| {
        block_on(run_value(
            &dom,
            &tool,
            args.as_object().cloned().unwrap(),
            1000,
            &Cell::new(false),
        ))
    };
    // An optional argument left out is null: `if` skips, templates render nothing.
    assert_eq!(run(json!({})).unwrap(), json!({"yes": null, "no": true}));
    assert_eq!(run(json!({"flag": true})).unwrap(), json!("flagged"));
    let err = run(json!({"tag": "x"})).unwrap_err();
    assert_eq!(
        err.message,
        "steps[1].then[0] (click): no element matches `.nope`"
    );
}

#[test]
fn frame_scopes_steps_to_the_iframe_document() {
    let dom = form();
    run_adhoc(
        &dom,
        json!([{"step": "frame", "selector": "iframe", "steps": [
            {"step": "fill", "selector": "textarea", "value": "body"}
        ]}]),
        json!({}),
        1000,
    )
    .unwrap();
    assert_eq!(dom.nodes.borrow()[5].value.as_deref(), Some("body"));
    let err = fails(
        &dom,
        json!([{"step": "frame", "selector": "select", "steps": [{"step": "click"}]}]),
        1000,
    );
    assert!(err.message.contains("same-origin <iframe>"), "{err}");
}

#[test]
fn within_matches_contained_text_other_reads_and_waits() {
    let dom = form();
    let out = run_adhoc(
        &dom,
        json!([
            {"step": "read", "selector": ".title", "read": "own_text", "into": "subject"},
            {"step": "within", "selector": ".title", "text_contains": "To: bob",
             "steps": [{"step": "read", "into": "whole"}]},
            {"step": "within", "selector": ".title", "read": "own_text", "text_equals": "Invoice 42",
             "steps": [{"step": "read", "read": "exists", "into": "found"}]},
            {"step": "return", "value": ["{{subject}}", "{{whole}}", "{{found}}"]}
        ]),
        json!({}),
        1000,
    )
    .unwrap();
    assert_eq!(out, json!(["Invoice 42", "Invoice 42 To: bob", true]));

    // With timeout_ms, within waits for the element to appear.
    let dom = todomvc(&[("a", false)]);
    *dom.on_settle.borrow_mut() = Some(Box::new(|dom: &FakeDom| {
        if dom.now.get() >= 100.0 {
            dom.nodes.borrow_mut()[5].text = "b".into();
        }
    }));
    let steps = json!([{"step": "within", "selector": ITEMS, "text_selector": "label",
        "text_equals": "b", "timeout_ms": 500, "steps": [{"step": "read", "into": "x"}]}]);
    run_adhoc(&dom, steps.clone(), json!({}), 1000).unwrap();
    assert!((100.0..160.0).contains(&dom.now.get()), "{}", dom.now.get());
    let dom = todomvc(&[("a", false)]);
    let err = fails(&dom, steps, 1000);
    assert_refused(
        &err,
        ErrorCode::ElementNotFound,
        &format!(
            "steps[0] (within): no `{ITEMS}` whose `label` text equals \"b\" (1 candidates) after 500 ms"
        ),
    );
}

#[test]
fn a_dialog_step_tells_the_page_how_to_answer_with_its_text_rendered() {
    let tool: ToolDef = tool_with(
        json!({"name": {"type": "string"}}),
        json!([
            {"step": "dialog", "answer": "accept", "text": "{{name}}"},
            {"step": "dialog", "answer": "dismiss"},
            {"step": "return", "value": "done"}
        ]),
    );
    let dom = todomvc(&[]);
    let args = json!({"name": "Zoë \"Z\""}).as_object().cloned().unwrap();
    let value = block_on(run_value(&dom, &tool, args, 1000, &Cell::new(false))).unwrap();
    assert_eq!(value, json!("done"));
    let plans: Vec<String> = dom
        .events
        .borrow()
        .iter()
        .filter(|e| e.starts_with("dialog "))
        .cloned()
        .collect();
    assert_eq!(
        plans,
        [
            r#"dialog {"answer":"accept","text":"Zoë \"Z\""}"#,
            r#"dialog {"answer":"dismiss"}"#
        ]
    );
}

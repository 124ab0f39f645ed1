//! The catalog and the call path on fake back-ends: which back-end a call runs on, what it is
//! given, and when the state is pushed.

use std::cell::RefCell;

use serde_json::json;

use super::*;
use crate::fake_dom::block_on;

/// Records what ran, answering with canned values.
#[derive(Default)]
struct FakeBackends {
    ran: RefCell<Vec<String>>,
    state_pushes: Cell<usize>,
    navigate: bool,
}

impl Backends for FakeBackends {
    async fn steps(&self, run: StepsRun<'_>) -> Result<Outcome, WireError> {
        let StepsRun {
            args,
            resume_at,
            timeout_ms,
            ..
        } = run;
        self.ran.borrow_mut().push(format!(
            "steps {} from {resume_at} with {} in {timeout_ms}",
            run.tool.name,
            Value::Object(args.clone())
        ));
        Ok(if self.navigate {
            Outcome::Navigate {
                url: Some("/next".into()),
                step: "steps[0] (navigate)".into(),
                resume_at: 1,
                vars: args,
                timeout_ms,
            }
        } else {
            Outcome::Finished(json!("steps ran"))
        })
    }

    async fn code(
        &self,
        adapter: &str,
        tool: &ToolDef,
        args: Vars,
        _timeout_ms: u64,
    ) -> Result<Value, WireError> {
        self.ran.borrow_mut().push(format!(
            "code {adapter}.{} with {}",
            tool.name,
            Value::Object(args)
        ));
        Ok(json!("code ran"))
    }

    async fn page(
        &self,
        id: &str,
        tool: &PageTool,
        args: Vars,
        _timeout_ms: u64,
    ) -> Result<Value, WireError> {
        self.ran.borrow_mut().push(format!(
            "page {} ({id}) with {}",
            tool.page_name,
            Value::Object(args)
        ));
        Ok(json!("page ran"))
    }

    fn state_may_have_changed(&self) {
        self.state_pushes.set(self.state_pushes.get() + 1);
    }
}

fn catalog() -> Catalog {
    let todomvc =
        bridge::adapter::parse_adapter(include_str!("../../../../adapters/todomvc.json")).unwrap();
    // A code adapter's declaration, as the server validated it and sent it back in `welcome`.
    let calc = bridge::code_adapter::parse(json!({"name": "calc", "match": ["<all_urls>"],
        "tools": [{"name": "sum", "description": "Add.", "annotations": {"read_only": true},
                   "input_schema": {"type": "object", "properties": {"a": {"type": "number"}},
                                    "required": ["a"]}}]}))
    .unwrap();
    let (adapters, code, problems) = unpack(
        vec![serde_json::to_value(&todomvc).unwrap()],
        vec![serde_json::to_value(&calc).unwrap()],
    );
    assert!(problems.is_empty(), "{problems:?}");
    let page_tools = bridge::webmcp::page_tools(
        &json!([{"name": "Greet", "description": "Say hi.",
                 "inputSchema": {"type": "object", "properties": {"who": {"type": "string"}}}}]),
        "http://127.0.0.1:8000/",
    );
    Catalog {
        adapters,
        code,
        page_tools,
    }
}

/// The public name of the page's own tool `greet` (its origin's readable part and tag).
fn greet() -> String {
    let slug = bridge::webmcp::origin_slug("http://127.0.0.1:8000/").unwrap();
    format!("webmcp_{slug}_greet")
}

fn run(
    catalog: &Catalog,
    backends: &FakeBackends,
    name: &str,
    start: Start,
) -> Result<Outcome, WireError> {
    block_on(call(
        catalog,
        backends,
        "c1",
        name,
        start,
        900,
        &Cell::new(false),
    ))
}

#[test]
fn adapter_tools_are_announced_by_name_and_the_pages_own_in_full() {
    let offered = catalog().offered();
    let names: Vec<&str> = offered.iter().map(OfferedTool::name).collect();
    let greet = greet();
    assert_eq!(
        names,
        [
            "todomvc_add_todo",
            "todomvc_list_todos",
            "todomvc_toggle_todo",
            "todomvc_clear_completed",
            "todomvc_set_filter",
            "todomvc_edit_todo",
            "todomvc_delete_todo",
            "calc_sum",
            greet.as_str(),
        ]
    );
    assert!(matches!(&offered[0], OfferedTool::Adapter(_)));
    assert!(matches!(&offered[8], OfferedTool::Described(spec) if spec.description == "Say hi."));
}

#[test]
fn each_tool_runs_on_its_own_back_end_with_checked_arguments() {
    let catalog = catalog();
    let backends = FakeBackends::default();
    let out = run(
        &catalog,
        &backends,
        "todomvc_add_todo",
        Start::Call(json!({"title": "x"})),
    );
    assert_eq!(out, Ok(Outcome::Finished(json!("steps ran"))));
    let out = run(
        &catalog,
        &backends,
        "calc_sum",
        Start::Call(json!({"a": 2})),
    );
    assert_eq!(out, Ok(Outcome::Finished(json!("code ran"))));
    let out = run(
        &catalog,
        &backends,
        &greet(),
        Start::Call(json!({"who": "Ann"})),
    );
    assert_eq!(out, Ok(Outcome::Finished(json!("page ran"))));
    assert_eq!(
        *backends.ran.borrow(),
        [
            r#"steps add_todo from 0 with {"title":"x"} in 900"#,
            r#"code calc.sum with {"a":2}"#,
            r#"page Greet (c1) with {"who":"Ann"}"#,
        ]
    );
    // add_todo and the page's tool may change the page; calc_sum is read_only.
    assert_eq!(backends.state_pushes.get(), 2);
}

#[test]
fn bad_arguments_and_unknown_tools_run_nothing() {
    let catalog = catalog();
    let backends = FakeBackends::default();
    let err = run(
        &catalog,
        &backends,
        "calc_sum",
        Start::Call(json!({"a": "2"})),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgs);
    assert_eq!(
        err.message,
        "calc_sum: argument \"a\" must be of type number, got \"2\""
    );
    let err = run(&catalog, &backends, "todomvc_fly", Start::Call(json!({}))).unwrap_err();
    assert_eq!(err.code, ErrorCode::NoSuchTool);
    assert!(err.message.contains("todomvc_list_todos"), "{err}");
    assert!(backends.ran.borrow().is_empty());
    assert_eq!(backends.state_pushes.get(), 0);
}

#[test]
fn only_steps_continue_after_a_navigation_and_the_next_page_pushes_the_state() {
    let catalog = catalog();
    let backends = FakeBackends {
        navigate: true,
        ..FakeBackends::default()
    };
    let out = run(
        &catalog,
        &backends,
        "todomvc_add_todo",
        Start::Call(json!({"title": "x"})),
    );
    assert!(matches!(out, Ok(Outcome::Navigate { .. })));
    assert_eq!(backends.state_pushes.get(), 0, "the next page pushes it");
    let vars = json!({"title": "x"}).as_object().cloned().unwrap();
    let resumed = Start::Continue { resume_at: 2, vars };
    run(&catalog, &backends, "todomvc_add_todo", resumed).unwrap();
    assert_eq!(
        backends.ran.borrow()[1],
        r#"steps add_todo from 2 with {"title":"x"} in 900"#,
        "a continued call's variables are not checked again"
    );
    let resumed = Start::Continue {
        resume_at: 1,
        vars: Vars::new(),
    };
    let err = run(&catalog, &backends, "calc_sum", resumed).unwrap_err();
    assert_eq!(err.code, ErrorCode::Internal);
}

#[test]
fn undecodable_adapters_are_left_out_with_the_reason() {
    let steps_of_another_kind = json!({"name": "odd", "match": ["<all_urls>"],
        "tools": [{"name": "t", "description": "d", "steps": [{"step": "teleport"}]}]});
    let bad_code = json!({"name": "bad", "match": ["<all_urls>"], "tools": [{"name": "t"}]});
    let (adapters, code, problems) = unpack(vec![steps_of_another_kind], vec![bad_code]);
    assert!(adapters.is_empty() && code.is_empty());
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems[0].starts_with("adapter \"odd\": unknown variant `teleport`"),
        "{problems:?}"
    );
    assert!(
        problems[1].starts_with("code adapter \"bad\": missing field `description`"),
        "{problems:?}"
    );
}

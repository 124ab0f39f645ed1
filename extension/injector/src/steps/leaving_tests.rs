//! Steps that set another page loading (a submit button, a link): the call goes on in the next
//! page, or answers once it has landed; and reading the page's address.

use super::tests::adhoc;
use super::*;
use crate::dom::Dom;
use crate::fake_dom::{FakeDom, FakeNode, block_on};
use serde_json::json;

/// A form: a summary field (1) and a submit button (2) that leaves for `/ticket/7`.
fn form(submits: bool) -> FakeDom {
    let dom = FakeDom::default();
    dom.add(FakeNode::default());
    dom.add(FakeNode {
        selectors: vec!["#summary"],
        value: Some(String::new()),
        visible: true,
        text_input: true,
        ..Default::default()
    });
    dom.add(FakeNode {
        selectors: vec!["#create"],
        visible: true,
        centre: Some((10.0, 10.0)),
        ..Default::default()
    });
    *dom.url.borrow_mut() = "http://127.0.0.1:8000/newticket".into();
    *dom.navigates_on_click.borrow_mut() =
        Some(("#create", "http://127.0.0.1:8000/ticket/7".into(), submits));
    dom
}

fn run(dom: &FakeDom, steps: Value) -> Result<Outcome, WireError> {
    let tool = adhoc(steps);
    block_on(run_tool(
        dom,
        &tool,
        Vars::new(),
        0,
        5000,
        &Cell::new(false),
    ))
}

#[test]
fn a_click_that_leaves_with_steps_left_continues_in_the_next_page() {
    for (declared, submits) in [(true, false), (false, false), (false, true), (true, true)] {
        let dom = form(submits);
        let outcome = run(
            &dom,
            json!([
                {"step": "fill", "selector": "#summary", "value": "Hi"},
                {"step": "click", "selector": "#create", "navigates": declared},
                {"step": "read", "read": "url:-1", "into": "id"},
                {"step": "return", "value": {"id": "{{id}}"}}
            ]),
        )
        .unwrap();
        let Outcome::Navigate {
            url,
            resume_at,
            step,
            ..
        } = outcome
        else {
            panic!("declared {declared}, submits {submits}: {outcome:?}")
        };
        assert_eq!(url, None, "the page is on its way already");
        assert_eq!((resume_at, step.as_str()), (2, "steps[1] (click)"));
    }
}

#[test]
fn a_call_ending_on_a_click_that_leaves_lands_with_its_return_value() {
    let dom = form(true);
    let outcome = run(
        &dom,
        json!([
            {"step": "fill", "selector": "#summary", "value": "Hi"},
            {"step": "click", "selector": "#create"},
            {"step": "return", "value": {"saved": "{{summary}}"}}
        ]),
    );
    // `summary` was never read: the return's own error, said to come after the submission.
    let err = outcome.unwrap_err();
    assert_eq!(err.effect, bridge::protocol::Effect::Maybe, "{err}");

    let dom = form(true);
    let outcome = run(
        &dom,
        json!([
            {"step": "read", "selector": "#summary", "read": "value", "into": "before"},
            {"step": "click", "selector": "#create"},
            {"step": "return", "value": {"saved": true, "before": "{{before}}"}}
        ]),
    )
    .unwrap();
    assert_eq!(
        outcome,
        Outcome::Landing {
            value: json!({"saved": true, "before": ""}),
            step: "steps[1] (click)".into(),
            url: "http://127.0.0.1:8000/ticket/7".into(),
            timeout_ms: outcome_time(&outcome),
        }
    );
}

fn outcome_time(outcome: &Outcome) -> u64 {
    match outcome {
        Outcome::Landing { timeout_ms, .. } | Outcome::Navigate { timeout_ms, .. } => *timeout_ms,
        Outcome::Finished(_) => 0,
    }
}

#[test]
fn a_click_that_stays_costs_no_wait_and_a_declared_one_that_stays_says_so() {
    let dom = form(false);
    *dom.navigates_on_click.borrow_mut() = None;
    let outcome = run(&dom, json!([{"step": "click", "selector": "#create"}])).unwrap();
    assert_eq!(outcome, Outcome::Finished(Value::Null));
    assert_eq!(dom.now_ms(), 0.0, "no navigation, no wait");

    let err = run(
        &dom,
        json!([{"step": "click", "selector": "#create", "navigates": true}]),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::Timeout);
    assert_eq!(err.effect, bridge::protocol::Effect::Maybe);
    assert!(
        err.message
            .starts_with("steps[0] (click): is declared to lead to a new page, but none started"),
        "{err}"
    );
    assert!(dom.now_ms() >= 5000.0, "waited until the deadline");
}

#[test]
fn a_read_step_reads_the_pages_address_and_its_path_segments() {
    let dom = form(false);
    *dom.url.borrow_mut() = "http://127.0.0.1:8000/ticket/7?x=1#comment:2".into();
    let outcome = run(
        &dom,
        json!([
            {"step": "read", "read": "url", "into": "href"},
            {"step": "read", "read": "url:0", "into": "first"},
            {"step": "read", "read": "url:-1", "into": "last"},
            {"step": "read", "read": "url:5", "into": "none"},
            {"step": "return", "value": ["{{href}}", "{{first}}", "{{last}}", "{{none}}"]}
        ]),
    )
    .unwrap();
    assert_eq!(
        outcome,
        Outcome::Finished(json!([
            "http://127.0.0.1:8000/ticket/7?x=1#comment:2",
            "ticket",
            "7",
            null
        ]))
    );
    assert_eq!(url_part("http://h/My%20Page/x", Some(0)), json!("My Page"));
    assert_eq!(url_part("http://h", Some(-1)), Value::Null);
}

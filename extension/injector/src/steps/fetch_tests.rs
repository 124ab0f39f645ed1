//! The `fetch` step's tests: a fake network on the fake DOM.

use super::tests::{adhoc, assert_refused, assert_refused_starting, fails, run_adhoc, run_value};
use super::*;
use crate::fake_dom::{FakeDom, FakeNode, block_on};
use serde_json::json;

/// A page on a fake server for `fetch`: `(path, status, content type, body)`; other paths hang.
fn serving(routes: Vec<(&'static str, u16, &'static str, String)>) -> FakeDom {
    use crate::dom::HttpResponse;
    let dom = FakeDom::default();
    dom.add(FakeNode::default());
    *dom.on_fetch.borrow_mut() = Some(Box::new(move |path: &str| {
        let (_, status, content_type, body) = routes.iter().find(|r| r.0 == path)?;
        Some(Ok(HttpResponse {
            status: *status,
            status_text: if *status == 200 { "OK" } else { "Not Found" }.into(),
            content_type: (*content_type).into(),
            body: body.clone().into_bytes(),
        }))
    }));
    dom
}

fn fetches(dom: &FakeDom) -> Vec<String> {
    dom.events
        .borrow()
        .iter()
        .filter_map(|e| e.strip_prefix("fetch ").map(str::to_owned))
        .collect()
}

#[test]
fn fetch_reads_json_and_projects_records() {
    let inbox = json!([
        {"id": "a1", "subject": "Hi", "from": [{"address": "al@x.org", "name": "Al"}], "read": false},
        {"id": "b2", "subject": "Yo", "from": [{"address": "bo@x.org"}], "read": true}
    ]);
    let dom = serving(vec![
        ("/email", 200, "application/json", inbox.to_string()),
        (
            "/wrapped",
            200,
            "application/json",
            json!({"items": inbox}).to_string(),
        ),
        ("/robots.txt", 200, "text/plain", "User-agent: *".into()),
    ]);
    let out = run_adhoc(
        &dom,
        json!([
            {"step": "fetch", "url": "/email", "into": "all"},
            {"step": "fetch", "url": "/email", "into": "messages",
             "fields": {"id": "/id", "from": "/from/0/address", "from_name": "/from/0/name", "read": "/read"}},
            {"step": "fetch", "url": "/wrapped", "records": "/items", "into": "wrapped",
             "fields": {"subject": "/subject"}},
            {"step": "fetch", "url": "/robots.txt", "response": "text", "into": "robots"},
            {"step": "return", "value": {"all": "{{all}}", "messages": "{{messages}}",
                                         "wrapped": "{{wrapped}}", "robots": "{{robots}}"}}
        ]),
        json!({}),
        1000,
    )
    .unwrap();
    assert_eq!(out["all"], inbox);
    assert_eq!(
        out["messages"],
        json!([
            {"id": "a1", "from": "al@x.org", "from_name": "Al", "read": false},
            {"id": "b2", "from": "bo@x.org", "from_name": null, "read": true}
        ])
    );
    assert_eq!(
        out["wrapped"],
        json!([{"subject": "Hi"}, {"subject": "Yo"}])
    );
    assert_eq!(out["robots"], "User-agent: *");
    assert_eq!(
        fetches(&dom),
        [
            "/email application/json",
            "/email application/json",
            "/wrapped application/json",
            "/robots.txt text/plain, */*;q=0.5"
        ]
    );
}

#[test]
fn fetch_arguments_stay_inside_their_segment_or_query_value() {
    let dom = serving(vec![]);
    let steps =
        json!([{"step": "fetch", "url": "/notes/{{id}}?q={{q}}", "into": "x", "timeout_ms": 10}]);
    for (id, q, path) in [
        ("../admin", "a&b=c", "/notes/..%2Fadmin?q=a%26b%3Dc"),
        ("a?b=c", "#frag", "/notes/a%3Fb%3Dc?q=%23frag"),
        ("x#frag", "%2F", "/notes/x%23frag?q=%252F"),
        ("%2F..%2F", "..", "/notes/%252F..%252F?q=.."),
        ("//evil.example", "/", "/notes/%2F%2Fevil.example?q=%2F"),
        ("%2e%2e", "", "/notes/%252e%252e?q="),
    ] {
        dom.events.borrow_mut().clear();
        let err = run_adhoc(&dom, steps.clone(), json!({"id": id, "q": q}), 1000).unwrap_err();
        assert_eq!(err.code, ErrorCode::Timeout, "{id}: {err}");
        assert_eq!(fetches(&dom), [format!("{path} application/json")], "{id}");
    }
    // A whole `.` or `..` segment would climb out, even percent-encoded: refused, not sent.
    for id in ["..", "."] {
        dom.events.borrow_mut().clear();
        let err = run_adhoc(&dom, steps.clone(), json!({"id": id, "q": ""}), 1000).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgs, "{id}: {err}");
        assert!(
            err.message.starts_with("steps[0] (fetch): GET \"/notes/"),
            "{err}"
        );
        assert!(err.message.contains("segment"), "{err}");
        assert!(fetches(&dom).is_empty(), "{id}");
    }
}

#[test]
fn fetch_failures_name_the_step_and_the_request() {
    let dom = serving(vec![
        ("/missing", 404, "text/plain", "  no such thing\n".into()),
        ("/page", 200, "text/html", "<!doctype html><p>hi".into()),
        ("/object", 200, "application/json", r#"{"a": 1}"#.into()),
        (
            "/big",
            200,
            "application/json",
            "1".repeat(MAX_RESPONSE_BYTES + 1),
        ),
    ]);
    let run = |step: Value, timeout_ms: u64| fails(&dom, json!([step]), timeout_ms);
    let err = run(
        json!({"step": "fetch", "url": "/missing", "into": "x"}),
        1000,
    );
    assert_refused(
        &err,
        ErrorCode::AdapterError,
        "steps[0] (fetch): GET /missing answered HTTP 404 Not Found: no such thing",
    );
    let err = run(json!({"step": "fetch", "url": "/page", "into": "x"}), 1000);
    assert_refused_starting(
        &err,
        ErrorCode::AdapterError,
        "steps[0] (fetch): GET /page answered no JSON (text/html): ",
    );
    let err = run(
        json!({"step": "fetch", "url": "/object", "into": "x", "fields": {"a": "/a"}}),
        1000,
    );
    assert_refused_starting(
        &err,
        ErrorCode::AdapterError,
        "steps[0] (fetch): GET /object: the response's value at \"\" is not an array",
    );
    let err = run(json!({"step": "fetch", "url": "/big", "into": "x"}), 1000);
    assert_refused(
        &err,
        ErrorCode::TooLarge,
        "steps[0] (fetch): GET /big: the response is larger than 4 MiB",
    );

    // A server that never answers: the step's own timeout, else the call's deadline.
    let err = run(
        json!({"step": "fetch", "url": "/slow", "into": "x", "timeout_ms": 300}),
        5000,
    );
    assert_refused(
        &err,
        ErrorCode::Timeout,
        "steps[0] (fetch): GET /slow did not answer within 300 ms",
    );
    let before = dom.now.get();
    let err = run(json!({"step": "fetch", "url": "/slow", "into": "x"}), 120);
    assert_eq!(err.code, ErrorCode::Timeout);
    assert_eq!(dom.now.get() - before, 120.0);

    // A network failure (the fake's default without a server).
    *dom.on_fetch.borrow_mut() = None;
    let err = run(json!({"step": "fetch", "url": "/x", "into": "x"}), 1000);
    assert_refused(
        &err,
        ErrorCode::AdapterError,
        "steps[0] (fetch): GET /x failed: Failed to fetch",
    );
}

#[test]
fn cancellation_stops_a_pending_fetch() {
    let dom = serving(vec![]);
    let cancelled = std::rc::Rc::new(Cell::new(false));
    let flag = cancelled.clone();
    // The call is cancelled while the request is out (after 100 ms).
    *dom.on_settle.borrow_mut() = Some(Box::new(move |dom: &FakeDom| {
        if dom.now.get() >= 100.0 {
            flag.set(true);
        }
    }));
    let tool = adhoc(json!([{"step": "fetch", "url": "/slow", "into": "x"}]));
    let err = block_on(run_value(&dom, &tool, Vars::new(), 5000, &cancelled)).unwrap_err();
    assert_refused(
        &err,
        ErrorCode::Cancelled,
        "steps[0] (fetch): the call was cancelled while waiting for GET /slow",
    );
    assert_eq!(dom.now.get(), 100.0);
}

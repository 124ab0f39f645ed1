//! The registry on its own, synchronously: frames are read straight from the outboxes.

use bridge::ErrorCode;
use serde_json::json;
use tokio::sync::mpsc;

use super::*;
use crate::hub::pending::{OpenedTab, Waiter};

fn registry() -> Registry {
    let adapters = crate::adapters::load(&[], &[]).unwrap().adapters;
    Registry::new(17373, "test".into(), adapters)
}

/// A connection and what it was sent.
fn connect(r: &mut Registry) -> (ConnId, mpsc::UnboundedReceiver<String>) {
    let (outbox, frames) = mpsc::unbounded_channel();
    let (conn, changes) = r.connect(outbox, false);
    assert!(changes.tabs);
    (conn, frames)
}

fn sent(frames: &mut mpsc::UnboundedReceiver<String>) -> Vec<ToExtension> {
    let mut out = Vec::new();
    while let Ok(frame) = frames.try_recv() {
        out.push(ToExtension::decode(&frame).unwrap());
    }
    out
}

fn tab(id: TabId, url: &str, tools: &[&str]) -> TabTools {
    TabTools {
        tab: id,
        url: url.into(),
        title: String::new(),
        tools: tools
            .iter()
            .map(|t| OfferedTool::Adapter((*t).into()))
            .collect(),
        runtime: None,
    }
}

const TODOMVC: &str = "http://todomvc.com/examples/vanillajs/";

#[test]
fn a_connection_is_welcomed_with_the_adapters_and_its_tabs_export_their_tools() {
    let mut r = registry();
    let (conn, mut frames) = connect(&mut r);
    assert_eq!(
        r.check_connected(),
        Ok(()),
        "connected, though it has not said hello yet"
    );
    let _ = r.hello(conn, PROTOCOL_VERSION, BrowserInfo::default(), vec![]);
    let [ToExtension::Welcome { adapters, .. }] = &sent(&mut frames)[..] else {
        panic!("expected welcome")
    };
    assert!(adapters.iter().any(|a| a.name == "todomvc"));

    let changes = r.snapshot(
        conn,
        vec![tab(1, TODOMVC, &["todomvc_add_todo", "todomvc_fly"])],
    );
    assert!(changes.tools && changes.tabs);
    let names: Vec<String> = r.exported_tools().iter().map(|t| t.name.clone()).collect();
    assert_eq!(
        names,
        ["todomvc_add_todo"],
        "a tool the adapter does not define is refused"
    );
    assert!(r.browser_ready());
    // The same tools again change nothing for MCP clients.
    let changes = r.update_tab(conn, tab(1, TODOMVC, &["todomvc_add_todo"]));
    assert!(!changes.tools && changes.tabs);
}

#[test]
fn one_place_decides_whether_a_site_tool_exists() {
    let mut r = registry();
    let (conn, _frames) = connect(&mut r);
    let _ = r.snapshot(conn, vec![tab(1, TODOMVC, &["todomvc_add_todo"])]);
    assert_eq!(r.tool("todomvc_add_todo").unwrap().name, "todomvc_add_todo");
    // Defined by a loaded adapter, offered by no tab: it exists (the call waits or says where).
    assert_eq!(r.tool("todomvc_list_todos").unwrap().adapter, "todomvc");
    assert_eq!(
        r.select("todomvc_list_todos", None).unwrap_err().code,
        ErrorCode::NoSuchTool
    );
    assert_eq!(
        r.tool("todomvc_fly").unwrap_err(),
        text::no_such_tool("todomvc_fly")
    );
}

#[test]
fn an_extension_of_another_protocol_gets_an_error_and_calls_say_why() {
    let mut r = registry();
    let (conn, mut frames) = connect(&mut r);
    let _ = r.hello(conn, 1, BrowserInfo::default(), vec![]);
    let [ToExtension::Error { error, .. }] = &sent(&mut frames)[..] else {
        panic!("expected an error")
    };
    assert_eq!(*error, text::incompatible(1, PROTOCOL_VERSION));
    assert_eq!(
        r.check_connected(),
        Err(text::incompatible(1, PROTOCOL_VERSION))
    );
    let (_, _frames) = connect(&mut r);
    assert_eq!(
        r.check_connected(),
        Ok(()),
        "another connection may still work"
    );
}

#[test]
fn code_adapters_from_hello_are_validated_and_their_tools_described_by_the_server() {
    let mut r = registry();
    let (conn, mut frames) = connect(&mut r);
    let declared = |json: serde_json::Value| PackedAdapter::from_json(json).unwrap();
    let _ = r.hello(
        conn,
        PROTOCOL_VERSION,
        BrowserInfo::default(),
        vec![
            declared(json!({"name": "calc", "match": ["http://127.0.0.1/*"],
                            "tools": [{"name": "sum", "description": "Add."}]})),
            declared(json!({"name": "Bad", "match": ["x"], "tools": [{"name": "t"}]})),
        ],
    );
    assert_eq!(r.code_adapters().len(), 2, "as declared, for peers");
    let [ToExtension::Welcome { code_adapters, .. }] = &sent(&mut frames)[..] else {
        panic!("expected welcome")
    };
    let names: Vec<&str> = code_adapters.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["calc"], "only the valid ones, as adapters");
    assert!(code_adapters[0].json()["tools"][0]["steps"].is_array());
    let _ = r.snapshot(
        conn,
        vec![tab(4, "http://127.0.0.1:8000/", &["calc_sum", "Bad_t"])],
    );
    let exported = r.exported_tools();
    assert_eq!(exported.len(), 1);
    assert_eq!(exported[0].description, "Add.");
}

#[test]
fn a_closed_tab_fails_its_requests_and_keeps_its_last_state() {
    let mut r = registry();
    let (conn, mut frames) = connect(&mut r);
    let _ = r.snapshot(conn, vec![tab(1, TODOMVC, &["todomvc_add_todo"])]);
    let now = Instant::now();
    let _ = r.store_state(conn, 1, json!({"n": 1}), 5, StateSource::Push, now);
    let mut call = r
        .start(conn, Some(1), Waiter::Call, |id| ToExtension::Cancel { id })
        .unwrap();
    assert_eq!(sent(&mut frames).len(), 1);
    let changes = r.close_tab(conn, 1);
    assert_eq!(changes.states, [1]);
    assert!(changes.tools);
    assert_eq!(
        call.answer.try_recv().unwrap(),
        Err(text::tab_closed_during_call(1))
    );
    assert!(r.cached_state(1).unwrap().tab_closed);
    assert_eq!(
        r.state_connection(1).unwrap_err().code,
        ErrorCode::TabClosed
    );
    assert_eq!(
        r.select("todomvc_add_todo", Some(1)).unwrap_err().code,
        ErrorCode::TabClosed
    );
}

#[test]
fn a_dropped_connection_fails_its_requests_and_its_tabs_are_expected_back_for_a_while() {
    let mut r = registry();
    let (conn, _frames) = connect(&mut r);
    let _ = r.snapshot(conn, vec![tab(2, TODOMVC, &["todomvc_add_todo"])]);
    let mut open = r
        .start(conn, None, Waiter::OpenTab, |id| ToExtension::Cancel { id })
        .unwrap();
    let now = Instant::now();
    let changes = r.disconnect(conn, now);
    assert!(changes.tools);
    assert_eq!(
        open.answer.try_recv().unwrap(),
        Err(text::disconnected_during_call())
    );
    assert!(r.tabs().is_empty());
    let until = r.reannounce_deadline("todomvc_add_todo", Some(2), now);
    assert_eq!(until, Some(now + REANNOUNCE_GRACE));
    assert_eq!(
        r.reannounce_deadline("todomvc_add_todo", Some(3), now),
        None
    );
    assert_eq!(
        r.reannounce_deadline("todomvc_add_todo", None, now + REANNOUNCE_GRACE),
        None,
        "not after the grace"
    );
    assert_eq!(
        r.check_connected().unwrap_err().code,
        ErrorCode::NotConnected
    );
}

#[test]
fn answers_are_typed_and_belong_to_their_connection() {
    let mut r = registry();
    let (conn, _frames) = connect(&mut r);
    let (other, _other_frames) = connect(&mut r);
    let mut open = r
        .start(conn, None, Waiter::OpenTab, |id| ToExtension::Cancel { id })
        .unwrap();
    let id = open.id.clone();
    let opened = OpenedTab {
        tab: 3,
        loaded: None,
    };
    r.resolve(other, &id, Answer::OpenTab(Ok(opened)));
    assert!(
        open.answer.try_recv().is_err(),
        "not the other connection's to answer"
    );
    r.resolve(conn, &id, Answer::OpenTab(Ok(opened)));
    assert_eq!(open.answer.try_recv().unwrap(), Ok(opened));
    assert_eq!(r.pending_requests(), 0);
}

#[test]
fn navigating_keeps_the_tools_of_adapters_that_serve_the_new_url() {
    let mut r = registry();
    let (conn, _frames) = connect(&mut r);
    let _ = r.snapshot(conn, vec![tab(1, TODOMVC, &["todomvc_add_todo"])]);
    let _ = r.store_state(conn, 1, json!(1), 1, StateSource::Push, Instant::now());
    let changes = r.navigate_tab(conn, 1, "http://todomvc.com/examples/react/".into());
    assert!(!changes.tools);
    assert_eq!(changes.states, [1], "the state described the page before");
    let changes = r.navigate_tab(conn, 1, "https://example.com/".into());
    assert!(changes.tools);
    assert!(r.exported_tools().is_empty());
}

#[test]
fn live_reload_pushes_the_adapters_to_every_connection() {
    let mut r = registry();
    let (_, mut first) = connect(&mut r);
    let (_, mut second) = connect(&mut r);
    let mut renamed = r.adapters()[0].clone();
    renamed.name = "renamed".into();
    r.set_adapters(vec![renamed]);
    for frames in [&mut first, &mut second] {
        let [ToExtension::AdaptersUpdated { adapters }] = &sent(frames)[..] else {
            panic!("expected adapters_updated")
        };
        assert_eq!(adapters[0].name, "renamed");
    }
}

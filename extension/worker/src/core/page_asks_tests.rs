//! The core's host tests of what pages ask beyond calls: a snapshot's cross-origin frames, trusted
//! input through the debugger, dialogs left to a person, and the popup's grant changes.

use super::tests::{ME, announce, connected, frames, popup_refused, sender};
use super::*;
use crate::tabs::Sender;
use serde_json::{Value, json};

#[test]
fn a_frame_snapshot_request_goes_to_the_child_frame_showing_that_url_bounded() {
    let core = connected();
    let pay = "http://b.test/pay";
    let ask = |nth: u32, timeout_ms: u64| {
        format!(
            r#"{{"type":"frame_snapshot","src":"{pay}","nth":{nth},"index":9,"op":{{"tool":"page_snapshot","max_chars":900}},"timeout_ms":{timeout_ms}}}"#
        )
    };
    let request = core
        .frame_request(&sender(3), Some(&ask(1, 60_000)))
        .unwrap();
    assert_eq!((request.tab, request.parent), (3, 0));
    assert_eq!(request.timeout_ms, bridge::page_ops::FRAME_ANSWER_MS);
    let frame = |frame: i64, parent: i64, url: &str| FrameInfo {
        frame,
        parent,
        url: url.into(),
    };
    let frames = [
        frame(0, -1, "http://a.test/"),
        frame(4, 0, pay),
        frame(5, 4, pay), // a grandchild: not the top's child
        frame(6, 0, "http://c.test/ads"),
        frame(9, 0, pay),
    ];
    // The second child of the top frame showing that URL.
    assert_eq!(request.pick(&frames), Some(9));
    let first = core.frame_request(&sender(3), Some(&ask(0, 500))).unwrap();
    assert_eq!(first.pick(&frames), Some(4));
    let third = core.frame_request(&sender(3), Some(&ask(2, 500))).unwrap();
    assert_eq!(third.pick(&frames), None);
    // A frame that went to another page by itself shows no `src`: it is the child at `index`
    // among the asker's, in the order Chrome lists them (the document's).
    let moved = FrameRequest {
        src: "http://b.test/pay?first".into(),
        index: 1,
        ..core.frame_request(&sender(3), Some(&ask(0, 500))).unwrap()
    };
    assert_eq!(moved.pick(&frames), Some(6));
    // And where a frame is, for a screenshot of its element: its parent and that place.
    assert_eq!(FrameRequest::place(&frames, 9), Some((0, 2)));
    assert_eq!(FrameRequest::place(&frames, 5), Some((4, 0)));
    assert_eq!(FrameRequest::place(&frames, 12), None);
    // A frame asks for its own children (frames nest).
    let child = Sender {
        frame_id: Some(4),
        ..sender(3)
    };
    let nested = core.frame_request(&child, Some(&ask(0, 500))).unwrap();
    assert_eq!(nested.pick(&frames), Some(5));
    let message: Value = serde_json::from_str(&request.message(9)).unwrap();
    assert_eq!(message["type"], "page_op");
    assert_eq!(message["op"]["tool"], "page_snapshot");
    assert_eq!(
        (message["frame"].clone(), message["tab"].clone()),
        (json!(9), json!(3))
    );
    // Firefox's frame ids pass 32 bits: picked, sent and read back by the page as they are.
    let firefox = [
        frame(0, -1, "http://a.test/"),
        frame(17_179_869_185, 0, pay),
    ];
    let first = core.frame_request(&sender(3), Some(&ask(0, 500))).unwrap();
    assert_eq!(first.pick(&firefox), Some(17_179_869_185));
    let sent = first.message(17_179_869_185);
    match serde_json::from_str::<bridge::page::ToPage>(&sent) {
        Ok(bridge::page::ToPage::PageOp { call, .. }) => assert_eq!(call.frame, 17_179_869_185),
        other => panic!("{other:?}: {sent}"),
    }
    // Not ours, not from a tab, or another message: not a frame request.
    let stranger = Sender {
        extension_id: Some("other".into()),
        ..sender(3)
    };
    assert!(core.frame_request(&stranger, Some(&ask(0, 500))).is_none());
    let no_tab = Sender {
        tab: None,
        ..sender(3)
    };
    assert!(core.frame_request(&no_tab, Some(&ask(0, 500))).is_none());
    let ready = r#"{"type":"page_ready","url":"x","title":"T"}"#;
    assert!(core.frame_request(&sender(3), Some(ready)).is_none());
}

#[test]
fn a_frame_that_is_gone_makes_its_refs_stale() {
    let gone = frame_send_failure(
        3,
        7,
        "Could not establish connection. Receiving end does not exist.",
    );
    assert_eq!(gone.code, ErrorCode::StaleRef);
    assert!(gone.message.contains("frame f7"), "{gone}");
    assert!(gone.message.contains("take a new snapshot"), "{gone}");
    assert_eq!(
        frame_send_failure(3, 7, "No tab with id: 3.").code,
        ErrorCode::TabClosed
    );
    assert_eq!(
        frame_send_failure(3, 7, "A listener indicated an asynchronous response by returning true, but the message channel closed before a response was received").code,
        ErrorCode::Navigated
    );
}

#[test]
fn trusted_input_is_performed_only_for_a_trusted_call_of_that_tab_and_only_input() {
    let mut core = connected();
    announce(&mut core, 3);
    announce(&mut core, 4);
    let call = json!({"type":"call_tool","id":"t1","tab":3,"tool":"todomvc_list_todos","args":{},
                      "timeout_ms":500,"trusted_input":true});
    let actions = core.on_server_frame(&call.to_string());
    let [Action::ToTab { message, .. }] = &actions[..] else {
        panic!("{actions:?}")
    };
    // The page hears that its input is trusted, and keeps it after a navigation.
    assert_eq!(
        serde_json::from_str::<Value>(message).unwrap()["trusted_input"],
        true
    );
    let untrusted = call
        .to_string()
        .replace("t1", "s1")
        .replace("true", "false");
    core.on_server_frame(&untrusted);

    let ask = |call: &str, commands: Value| {
        json!({"type":"trusted_input","call":call,"commands":commands}).to_string()
    };
    let click = serde_json::to_value(bridge::trusted_input::click(5.0, 6.0, 1)).unwrap();
    let (reply, actions) = core.on_page_message(&sender(3), Some(&ask("t1", click.clone())));
    assert!(reply.is_none());
    assert!(
        matches!(&actions[..], [Action::TrustedInput { tab: 3, commands }] if commands.len() == 3),
        "{actions:?}"
    );
    let refused = |core: &mut Core, tab: TabId, message: String, why: &str| {
        let (reply, actions) = core.on_page_message(&sender(tab), Some(&message));
        let reply: Value = serde_json::from_str(&reply.expect("an answer")).unwrap();
        assert_eq!(reply["error"]["code"], "PROTOCOL");
        assert!(
            reply["error"]["message"].as_str().unwrap().contains(why),
            "{reply}"
        );
        assert!(
            !actions
                .iter()
                .any(|a| matches!(a, Action::TrustedInput { .. }))
        );
    };
    // Another tab, a call sent without trusted input, a method that is not input, an unknown call.
    refused(
        &mut core,
        4,
        ask("t1", click.clone()),
        "not running in tab 4",
    );
    refused(
        &mut core,
        3,
        ask("s1", click.clone()),
        "not sent with trusted input",
    );
    let evaluate = json!([{"method":"Runtime.evaluate","params":{"expression":"1"}}]);
    refused(&mut core, 3, ask("t1", evaluate), "not an input command");
    refused(&mut core, 3, ask("zz", click.clone()), "not running");

    let onward = json!({"type":"call_tool_continue","id":"t1","tool":"todomvc_list_todos",
                        "resume_at":1,"vars":{},"timeout_ms":400});
    core.on_call_reply("t1", Ok(Some(onward.to_string())));
    let actions = announce(&mut core, 3);
    let Some(Action::ToTab { message, .. }) =
        actions.iter().find(|a| matches!(a, Action::ToTab { .. }))
    else {
        panic!("{actions:?}")
    };
    assert_eq!(
        serde_json::from_str::<Value>(message).unwrap()["trusted_input"],
        true
    );
    // Answered: no more trusted input for it.
    let done = r#"{"type":"call_tool_result","id":"t1","result":7}"#;
    core.on_call_reply("t1", Ok(Some(done.into())));
    refused(&mut core, 3, ask("t1", click), "not running");
}

#[test]
fn a_dialog_waiting_for_a_person_fails_the_tabs_calls_at_once_until_answered() {
    let mut core = connected();
    announce(&mut core, 3);
    let call = |id: &str| {
        json!({"type":"call_tool","id":id,"tab":3,"tool":"todomvc_list_todos","args":{},"timeout_ms":30000})
            .to_string()
    };
    core.on_server_frame(&call("c1"));
    // The page hands a dialog to the browser while c1 runs: c1 fails now, not at its deadline.
    let shown = |open: bool| json!({"type": "dialog_shown", "open": open}).to_string();
    let (_, actions) = core.on_page_message(&sender(3), Some(&shown(true)));
    let sent = frames(&actions);
    assert_eq!(sent[0]["type"], "call_tool_error");
    assert_eq!(sent[0]["id"], "c1");
    assert_eq!(sent[0]["error"]["code"], "DIALOG_OPEN");
    // A call that comes meanwhile fails at once; another tab is not concerned.
    let sent = frames(&core.on_server_frame(&call("c2")));
    assert_eq!(sent[0]["error"]["code"], "DIALOG_OPEN");
    assert!(core.dialog_open_in(3) && !core.dialog_open_in(4));
    // Answered: calls go to the page again.
    core.on_page_message(&sender(3), Some(&shown(false)));
    assert!(frames(&core.on_server_frame(&call("c3"))).is_empty());
    // A new document has no dialog of the old one.
    core.on_page_message(&sender(3), Some(&shown(true)));
    core.on_navigation(
        3,
        NavEvent::Committed {
            url: "http://127.0.0.1/next".into(),
            document: None,
        },
    );
    assert!(!core.dialog_open_in(3));
}

#[test]
fn the_popups_grant_changes_go_out_only_while_connected_and_their_answers_come_back() {
    use bridge::grants::{GrantAction, Need};
    let change = GrantChange {
        origin: "http://127.0.0.1:8000".into(),
        action: GrantAction::Allow,
        need: Need::PageTools,
    };
    // No server: refused at once, saying so (never queued to happen later).
    let mut down = Core::new(ME);
    let refused = down
        .change_grant("popup-0".into(), change.clone(), Some(5))
        .unwrap_err();
    assert!(refused.starts_with("tabwire is not connected"), "{refused}");
    assert_eq!(down.status().queued, 0);

    let mut core = connected();
    let sent = frames(
        &core
            .change_grant("popup-1".into(), change, Some(5))
            .unwrap(),
    );
    assert_eq!(
        sent,
        [json!({"type": "change_grant", "id": "popup-1", "tab": 5,
                "change": {"origin": "http://127.0.0.1:8000", "action": "allow", "need": "page_tools"}})]
    );
    let done = json!({"type": "grant_result", "id": "popup-1", "changed": true});
    assert_eq!(
        core.on_server_frame(&done.to_string()),
        [Action::AnswerPopup {
            id: "popup-1".into(),
            answer: Ok(crate::popup::Answered::Grant { changed: true })
        }]
    );
    let failed = json!({"type": "grant_error", "id": "popup-2",
                        "error": {"code": "INTERNAL", "message": "writing grants.json: disk full"}});
    let answered = core.on_server_frame(&failed.to_string());
    assert_eq!(
        answered,
        [popup_refused("popup-2", "writing grants.json: disk full")]
    );
    // The list the server pushes is kept where the popup reads it.
    let pushed = json!({"type": "grants", "all_origins": false,
        "grants": {"http://127.0.0.1:8000": {"page_tools": true, "trusted_input": false, "since": 9}}});
    // (and the allowed origin's pages get the runtime as they load: `preload.rs`).
    let actions = core.on_server_frame(&pushed.to_string());
    let [Action::PersistGrants(stored), Action::SyncContentScripts(_)] = &actions[..] else {
        panic!("expected the grants persisted and the content script synced: {actions:?}");
    };
    let stored: Value = serde_json::from_str(stored).unwrap();
    assert_eq!(stored, pushed);
}

#[test]
fn a_page_cannot_change_a_grant() {
    let mut core = connected();
    let forged = json!({"type": "change_grant", "tab": 5,
        "change": {"origin": "http://127.0.0.1:8000", "action": "allow", "need": "page_tools"}});
    let (reply, actions) = core.on_page_message(&sender(5), Some(&forged.to_string()));
    assert_eq!(reply, None);
    assert!(frames(&actions).is_empty(), "{actions:?}");
    // Nor does the worker take it for the popup's: the page's URL is a web page's.
    assert!(!crate::popup::is_popup(
        &sender(5),
        ME,
        &format!("chrome-extension://{ME}/")
    ));
}

#[test]
fn a_cross_origin_frames_dialog_goes_to_the_top_frame_while_a_call_runs_named_with_its_origin() {
    let mut core = connected();
    announce(&mut core, 3);
    // As the relay writes it: `type` first.
    let seen = r#"{"kind":"confirm","message":"Pay?","origin":"http://lie.test","answered":"dismissed_by_default"}"#;
    let report = format!(r#"{{"type":"frame_dialog","report":{}}}"#, json!(seen));
    let in_frame = |frame: i64| Sender {
        frame_id: Some(frame),
        url: "http://pay.test:8081/widget.html?x#y".into(),
        ..sender(3)
    };
    // No call runs in the tab: nothing to tell.
    assert_eq!(core.frame_dialog(&in_frame(7), Some(&report)), None);
    core.on_server_frame(
        &json!({"type":"call_tool","id":"c1","tab":3,"tool":"todomvc_list_todos","args":{},"timeout_ms":30000})
            .to_string(),
    );
    let Some(Action::ToTab {
        tab,
        message,
        on_reply: OnReply::Nothing,
    }) = core.frame_dialog(&in_frame(7), Some(&report))
    else {
        panic!("expected a message to the tab's top frame")
    };
    let message: Value = serde_json::from_str(&message).unwrap();
    assert_eq!(tab, 3);
    assert_eq!(message["type"], "frame_dialog");
    assert_eq!(
        message["origin"], "http://pay.test:8081",
        "Chrome's, not the page's"
    );
    assert!(message["report"].as_str().unwrap().contains("Pay?"));
    // Not from a child frame, not ours, not a report: not this path.
    assert_eq!(core.frame_dialog(&in_frame(0), Some(&report)), None);
    let stranger = Sender {
        extension_id: Some("other".into()),
        ..in_frame(7)
    };
    assert_eq!(core.frame_dialog(&stranger, Some(&report)), None);
    let shown = json!({"type": "dialog_shown", "open": true}).to_string();
    assert_eq!(core.frame_dialog(&in_frame(7), Some(&shown)), None);
    let huge = format!(
        r#"{{"type":"frame_dialog","report":"{}"}}"#,
        "x".repeat(20_000)
    );
    assert_eq!(core.frame_dialog(&in_frame(7), Some(&huge)), None);
}

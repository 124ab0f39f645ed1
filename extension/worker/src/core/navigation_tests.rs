//! Page life: answers that wait for the page a call's last action set loading, calls that arrive
//! while a tab loads, and calls that go on in the next page or cannot.

use serde_json::{Value, json};

use super::super::tests::{announce, connected_with_tab_3, frames, snapshot_call};
use super::*;
use bridge::page::PageCall;

const TOOL: &str = "todomvc_list_todos";

fn call(core: &mut Core, id: &str, tab: TabId) -> Vec<Action> {
    let call =
        json!({"type":"call_tool","id":id,"tab":tab,"tool":TOOL,"args":{},"timeout_ms":5000});
    core.on_server_frame(&call.to_string())
}

fn sends_to_page(actions: &[Action], id: &str) -> bool {
    actions
        .iter()
        .any(|a| matches!(a, Action::ToTab { on_reply: OnReply::CallTool(got), .. } if got == id))
}

fn landing(id: &str) -> String {
    json!({"type":"call_tool_landing","id":id,"result":{"saved":true},"step":"steps[2] (click)",
           "url":"http://127.0.0.1/P","timeout_ms":4000})
    .to_string()
}

fn before(core: &mut Core, tab: TabId, url: &str) -> Vec<Action> {
    core.on_navigation(
        tab,
        NavEvent::Before {
            url: url.into(),
            at_ms: None,
        },
    )
}

fn committed(core: &mut Core, tab: TabId, url: &str) -> Vec<Action> {
    core.on_navigation(
        tab,
        NavEvent::Committed {
            url: url.into(),
            document: Some(format!("doc of {url}")),
        },
    )
}

/// The timer `actions` set for tab 3 after `ms` (`Announce`, `Unconfirmed` or `Look`: they name
/// the load).
fn load_timer(actions: &[Action], wanted_ms: f64) -> Timer {
    actions
        .iter()
        .find_map(|a| match a {
            Action::After { ms, timer } if *ms == wanted_ms => match timer {
                Timer::Announce { tab: 3, .. }
                | Timer::Unconfirmed { tab: 3, .. }
                | Timer::Look { tab: 3, .. } => Some(timer.clone()),
                Timer::Announce { .. }
                | Timer::Unconfirmed { .. }
                | Timer::Look { .. }
                | Timer::Landing(_)
                | Timer::Continuation(_)
                | Timer::Held(_)
                | Timer::PersistTabs => None,
            },
            _ => None,
        })
        .unwrap_or_else(|| panic!("no load timer of {wanted_ms} ms in {actions:?}"))
}

#[test]
fn a_call_ending_on_a_submit_answers_once_the_new_page_committed_and_the_next_call_waits_for_it() {
    let mut core = connected_with_tab_3();
    core.set_clock(1000.0);
    assert!(sends_to_page(&call(&mut core, "s1", 3), "s1"));
    let actions = core.on_call_reply("s1", Ok(Some(landing("s1"))));
    assert!(
        frames(&actions).is_empty(),
        "no answer before the page landed"
    );
    assert!(actions.contains(&Action::After {
        ms: 4000.0,
        timer: Timer::Landing("s1".into())
    }));
    assert!(core.is_loading(3), "the page's word counts before Chrome's");

    // A call made meanwhile waits for the page the tab is going to.
    let held = call(&mut core, "s2", 3);
    assert!(!sends_to_page(&held, "s2"), "{held:?}");
    assert!(held.contains(&Action::After {
        ms: 5000.0,
        timer: Timer::Held("s2".into())
    }));

    core.set_clock(1100.0);
    before(&mut core, 3, "http://127.0.0.1/+modify/P");
    let actions = committed(&mut core, 3, "http://127.0.0.1/P");
    assert_eq!(
        frames(&actions),
        [
            json!({"type":"call_tool_result","id":"s1","result":{"saved":true},"navigated":"http://127.0.0.1/P"})
        ]
    );
    assert!(!sends_to_page(&actions, "s2"), "its runtime is not up yet");

    // The new page's runtime announces itself: the waiting call goes to it.
    let actions = announce(&mut core, 3);
    assert!(sends_to_page(&actions, "s2"), "{actions:?}");
    assert!(!core.is_loading(3));
    // And a late timer finds nothing left to do.
    assert!(core.on_timer(Timer::Landing("s1".into())).is_empty());
    assert!(core.on_timer(Timer::Held("s2".into())).is_empty());
}

#[test]
fn a_commit_chrome_told_of_before_the_pages_answer_answers_at_once() {
    let mut core = connected_with_tab_3();
    core.set_clock(1000.0);
    call(&mut core, "s1", 3);
    core.set_clock(1010.0);
    before(&mut core, 3, "http://127.0.0.1/+modify/P");
    committed(&mut core, 3, "http://127.0.0.1/P");
    let sent = frames(&core.on_call_reply("s1", Ok(Some(landing("s1")))));
    assert_eq!(sent[0]["navigated"], "http://127.0.0.1/P");
}

#[test]
fn a_landing_that_never_comes_says_the_action_may_have_been_performed() {
    let mut core = connected_with_tab_3();
    call(&mut core, "s1", 3);
    core.on_call_reply("s1", Ok(Some(landing("s1"))));
    let sent = frames(&core.on_timer(Timer::Landing("s1".into())));
    assert_eq!(sent[0]["type"], "call_tool_error");
    assert_eq!(sent[0]["error"]["code"], "TIMEOUT");
    assert_eq!(sent[0]["error"]["effect"], "maybe");
    assert!(
        sent[0]["error"]["message"].as_str().unwrap().starts_with(
            "steps[2] (click) set off loading http://127.0.0.1/P, which did not arrive"
        ),
        "{sent:?}"
    );
    // The next call runs at once, in the page still shown (the load never answered).
    assert!(!core.is_loading(3));
    assert!(sends_to_page(&call(&mut core, "s2", 3), "s2"));
}

fn failed(core: &mut Core, tab: TabId, url: &str) -> Vec<Action> {
    core.on_navigation(
        tab,
        NavEvent::Failed {
            url: url.into(),
            error: "net::ERR_ABORTED".into(),
            document: None,
        },
    )
}

#[test]
fn a_navigation_that_fails_answers_the_call_from_the_page_as_it_is() {
    let mut core = connected_with_tab_3();
    call(&mut core, "s1", 3);
    before(&mut core, 3, "http://127.0.0.1/download");
    core.on_call_reply("s1", Ok(Some(landing("s1"))));
    let sent = frames(&failed(&mut core, 3, "http://127.0.0.1/download"));
    assert_eq!(
        sent,
        [json!({"type":"call_tool_result","id":"s1","result":{"saved":true}})]
    );
    assert!(!core.is_loading(3));
}

#[test]
fn a_load_the_page_announced_and_chrome_never_began_does_not_hold_the_tab() {
    let mut core = connected_with_tab_3();
    call(&mut core, "s1", 3);
    let actions = core.on_call_reply("s1", Ok(Some(landing("s1"))));
    let unconfirmed = load_timer(&actions, UNCONFIRMED_LOAD_MS);
    assert!(!sends_to_page(&call(&mut core, "s2", 3), "s2"));
    // Chrome never told of a navigation: the call is answered from the page as it is, and the
    // call held meanwhile goes to the page.
    let actions = core.on_timer(unconfirmed);
    assert_eq!(
        frames(&actions),
        [json!({"type":"call_tool_result","id":"s1","result":{"saved":true}})]
    );
    assert!(sends_to_page(&actions, "s2"), "{actions:?}");
    assert!(!core.is_loading(3));

    // Once Chrome began the load, the timer leaves it be.
    call(&mut core, "s3", 3);
    let unconfirmed = load_timer(
        &core.on_call_reply("s3", Ok(Some(landing("s3")))),
        UNCONFIRMED_LOAD_MS,
    );
    before(&mut core, 3, "http://127.0.0.1/P");
    assert!(frames(&core.on_timer(unconfirmed)).is_empty());
    assert!(core.is_loading(3));
}

#[test]
fn a_navigation_replaced_by_another_is_not_a_failure() {
    let mut core = connected_with_tab_3();
    committed(&mut core, 3, "http://127.0.0.1:8000/first");
    continuing(&mut core, "k1");
    // The same URL twice: Chrome aborts the first of the two once the second started.
    before(&mut core, 3, "http://127.0.0.1:8000/next");
    before(&mut core, 3, "http://127.0.0.1:8000/next");
    assert!(frames(&failed(&mut core, 3, "http://127.0.0.1:8000/next")).is_empty());
    assert!(core.is_loading(3));
    // The page shown had not finished loading when the new load began: its own loading is cut
    // short (Chrome says so with the shown document's id), which is no failure of the new load.
    let cut_short = core.on_navigation(
        3,
        NavEvent::Failed {
            url: "http://127.0.0.1:8000/next".into(),
            error: "net::ERR_ABORTED".into(),
            document: Some("doc of http://127.0.0.1:8000/first".into()),
        },
    );
    assert!(frames(&cut_short).is_empty());
    assert!(core.is_loading(3));
    committed(&mut core, 3, "http://127.0.0.1:8000/next");
    assert!(
        sends_to_page(&announce(&mut core, 3), "k1"),
        "the call went on"
    );
}

#[test]
fn requests_for_a_loading_tab_wait_for_its_page_bounded() {
    let mut core = connected_with_tab_3();
    before(&mut core, 3, "http://127.0.0.1/next");
    let state =
        core.on_server_frame(&json!({"type":"request_state","id":"r1","tab":3}).to_string());
    assert!(
        !state.iter().any(|a| matches!(a, Action::ToTab { .. })),
        "{state:?}"
    );
    let open = core.on_server_frame(
        &json!({"type":"open_tab","id":"o1","tab":3,"url":"http://127.0.0.1/x"}).to_string(),
    );
    assert!(
        !open.iter().any(|a| matches!(a, Action::OpenTab { .. })),
        "{open:?}"
    );
    let other_tab = core.on_server_frame(
        &json!({"type":"open_tab","id":"o2","url":"http://127.0.0.1/y"}).to_string(),
    );
    assert!(
        other_tab
            .iter()
            .any(|a| matches!(a, Action::OpenTab { .. })),
        "a new tab waits for nothing"
    );
    assert!(!sends_to_page(&call(&mut core, "c1", 3), "c1"));

    // The held call's time runs out: it says the tab was still loading, and did not run.
    let sent = frames(&core.on_timer(Timer::Held("c1".into())));
    assert_eq!(sent[0]["error"]["code"], "TIMEOUT");
    assert!(sent[0]["error"].get("effect").is_none(), "it never ran");
    assert!(
        sent[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("still loading http://127.0.0.1/next"),
        "{sent:?}"
    );

    // The page lands where no adapter runs: the rest goes ahead and answers for itself.
    committed(&mut core, 3, "https://example.com/");
    let _ = core.on_navigation(
        3,
        NavEvent::Completed {
            url: "https://example.com/".into(),
        },
    );
    assert!(!core.is_loading(3));
    let after = call(&mut core, "c2", 3);
    assert!(sends_to_page(&after, "c2"));
}

#[test]
fn a_held_state_request_and_open_tab_go_once_the_page_is_there() {
    let mut core = connected_with_tab_3();
    before(&mut core, 3, "http://127.0.0.1/next");
    core.on_server_frame(&json!({"type":"request_state","id":"r1","tab":3}).to_string());
    core.on_server_frame(
        &json!({"type":"open_tab","id":"o1","tab":3,"url":"http://127.0.0.1/x"}).to_string(),
    );
    committed(&mut core, 3, "http://127.0.0.1/next");
    let actions = announce(&mut core, 3);
    assert!(
        actions
            .iter()
            .any(|a| matches!(a, Action::ToTab { on_reply: OnReply::State(id), .. } if id == "r1"))
    );
    assert!(
        actions
            .iter()
            .any(|a| matches!(a, Action::OpenTab { id, .. } if id == "o1"))
    );
    // A page whose runtime never announces: the grace runs out and what waits goes.
    before(&mut core, 3, "http://127.0.0.1/broken");
    core.on_server_frame(&json!({"type":"request_state","id":"r2","tab":3}).to_string());
    committed(&mut core, 3, "http://127.0.0.1/broken");
    let completed = core.on_navigation(
        3,
        NavEvent::Completed {
            url: "http://127.0.0.1/broken".into(),
        },
    );
    let grace = load_timer(&completed, ANNOUNCE_GRACE_MS);
    let actions = core.on_timer(grace);
    assert!(
        actions
            .iter()
            .any(|a| matches!(a, Action::ToTab { on_reply: OnReply::State(id), .. } if id == "r2"))
    );
}

#[test]
fn a_call_sent_into_a_page_already_leaving_runs_in_the_next_one_and_never_says_navigated() {
    let mut core = connected_with_tab_3();
    core.set_clock(1000.0);
    assert!(sends_to_page(&call(&mut core, "c1", 3), "c1"));
    // Chrome's word comes late: the load began before the call was sent.
    core.set_clock(1020.0);
    core.on_navigation(
        3,
        NavEvent::Before {
            url: "http://127.0.0.1/P".into(),
            at_ms: Some(990.0),
        },
    );
    let actions = core.on_call_reply(
        "c1",
        Err("A listener indicated an asynchronous response by returning true, but the message channel closed before a response was received".into()),
    );
    assert!(frames(&actions).is_empty(), "{actions:?}");
    committed(&mut core, 3, "http://127.0.0.1/P");
    let actions = announce(&mut core, 3);
    assert!(sends_to_page(&actions, "c1"), "sent again to the new page");
    let done = r#"{"type":"call_tool_result","id":"c1","result":1}"#;
    assert_eq!(
        frames(&core.on_call_reply("c1", Ok(Some(done.into()))))[0]["result"],
        1
    );

    // A load the call itself set off (it began after the call was sent) fails it, saying the
    // call's action may have been performed.
    core.set_clock(2000.0);
    call(&mut core, "c2", 3);
    core.set_clock(2050.0);
    core.on_navigation(
        3,
        NavEvent::Before {
            url: "http://127.0.0.1/Q".into(),
            at_ms: Some(2040.0),
        },
    );
    let sent = frames(&core.on_call_reply("c2", Err("message channel closed".into())));
    assert_eq!(sent[0]["error"]["code"], "NAVIGATED");
    assert_eq!(sent[0]["error"]["effect"], "maybe");
}

fn continuing(core: &mut Core, id: &str) -> Vec<Action> {
    call(core, id, 3);
    let onward = json!({"type":"call_tool_continue","id":id,"tool":TOOL,"resume_at":2,
                        "vars":{},"timeout_ms":4000,"step":"steps[1] (click)","acted":true});
    core.on_call_reply(id, Ok(Some(onward.to_string())))
}

#[test]
fn a_call_goes_on_only_on_the_same_site_with_a_runtime_and_says_its_action_may_have_happened() {
    let mut core = connected_with_tab_3();

    continuing(&mut core, "k1");
    let sent = frames(&committed(&mut core, 3, "http://localhost:9000/elsewhere"));
    assert_eq!(sent[0]["error"]["code"], "NAVIGATED");
    assert_eq!(sent[0]["error"]["effect"], "maybe");
    assert_eq!(
        sent[0]["error"]["message"],
        "steps[1] (click): led to http://localhost:9000/elsewhere, another site than http://127.0.0.1:8000: the call does not go on there"
    );
    core.on_navigation(
        3,
        NavEvent::Completed {
            url: "http://localhost:9000/elsewhere".into(),
        },
    );
    announce(&mut core, 3);

    continuing(&mut core, "k2");
    before(&mut core, 3, "http://127.0.0.1:8000/plain");
    let sent = frames(&committed(&mut core, 3, "http://127.0.0.1:8000/plain"));
    assert!(sent.is_empty(), "an adapter matches: its runtime will come");
    let timeout = frames(&core.on_timer(Timer::Continuation("k2".into())));
    assert_eq!(timeout[0]["error"]["code"], "TIMEOUT");
    assert_eq!(timeout[0]["error"]["effect"], "maybe");
    announce(&mut core, 3);

    // Continued, its failure in the next page says the same.
    continuing(&mut core, "k3");
    committed(&mut core, 3, "http://127.0.0.1:8000/next");
    let actions = announce(&mut core, 3);
    assert!(sends_to_page(&actions, "k3"));
    let failed = json!({"type":"call_tool_error","id":"k3",
                        "error":{"code":"ELEMENT_NOT_FOUND","message":"steps[2] (read): no element matches `.id`"}});
    let sent = frames(&core.on_call_reply("k3", Ok(Some(failed.to_string()))));
    assert_eq!(sent[0]["error"]["effect"], "maybe");
    assert_eq!(sent[0]["error"]["code"], "ELEMENT_NOT_FOUND");
    let _: Value = sent[0].clone();
}

#[test]
fn origins() {
    assert_eq!(
        origin("http://127.0.0.1:8000/a/b?c"),
        "http://127.0.0.1:8000"
    );
    assert_eq!(origin("https://x.org/"), "https://x.org");
    assert_eq!(origin("https://x.org/?q#f"), "https://x.org");
    // The one Origin: user info names no website, so it never equals one.
    assert_eq!(
        origin("https://x.org@evil.example/"),
        "https://x.org@evil.example/"
    );
}

#[test]
fn a_page_tools_act_that_set_a_page_loading_answers_once_it_committed_and_the_next_page_op_waits() {
    let mut core = connected_with_tab_3();
    core.set_clock(1000.0);
    let op = |core: &mut Core, id: &str| {
        let call = PageCall {
            op: super::super::tests::op_of(bridge::page_ops::ACT),
            timeout_ms: 5000,
            ..snapshot_call()
        };
        core.page_op(id.into(), Some(3), call)
    };
    assert!(matches!(
        &op(&mut core, "a1")[..],
        [Action::PageOp { tab: Some(3), .. }]
    ));
    let act = json!({"type":"call_tool_landing","id":"a1","step":"page_act","url":"http://127.0.0.1/saved",
                     "result":{"text":"clicked button e3 \"Save\"\n","leaving":"http://127.0.0.1/saved"},
                     "timeout_ms":4000});
    let actions = core.on_call_reply("a1", Ok(Some(act.to_string())));
    assert!(
        frames(&actions).is_empty(),
        "no answer before the page committed"
    );

    // A snapshot asked for meanwhile is of the page the tab is going to.
    let held = op(&mut core, "a2");
    assert!(
        !held.iter().any(|a| matches!(a, Action::PageOp { .. })),
        "{held:?}"
    );

    core.set_clock(1100.0);
    before(&mut core, 3, "http://127.0.0.1/save");
    let sent = frames(&committed(&mut core, 3, "http://127.0.0.1/saved?id=7"));
    assert_eq!(sent[0]["id"], "a1");
    assert_eq!(sent[0]["navigated"], "http://127.0.0.1/saved?id=7");
    let actions = announce(&mut core, 3);
    assert!(
        actions
            .iter()
            .any(|a| matches!(a, Action::PageOp { id, tab: Some(3), .. } if id == "a2")),
        "{actions:?}"
    );

    // Held past its time, a page op did not run and says the tab was still loading.
    before(&mut core, 3, "http://127.0.0.1/slow");
    op(&mut core, "a3");
    let sent = frames(&core.on_timer(Timer::Held("a3".into())));
    assert_eq!(sent[0]["error"]["code"], "TIMEOUT");
    assert!(sent[0]["error"].get("effect").is_none(), "it never ran");
}

#[test]
fn a_call_failed_by_a_dialog_while_it_waits_for_a_page_never_runs_nor_answers_again() {
    let mut core = connected_with_tab_3();
    call(&mut core, "s1", 3);
    let unconfirmed = load_timer(
        &core.on_call_reply("s1", Ok(Some(landing("s1")))),
        UNCONFIRMED_LOAD_MS,
    );
    let held = call(&mut core, "s2", 3);
    assert!(!sends_to_page(&held, "s2"));
    let shown = r#"{"type":"dialog_shown","open":true}"#;
    let (_, actions) = core.on_page_message(&super::super::tests::sender(3), Some(shown));
    let failed: Vec<Value> = frames(&actions);
    assert_eq!(failed.len(), 2, "{failed:?}");
    assert!(
        failed.iter().all(|f| f["error"]["code"] == "DIALOG_OPEN"),
        "{failed:?}"
    );
    // The person stays: no load came, and nothing failed is sent or answered again.
    let later = core.on_timer(unconfirmed);
    assert!(frames(&later).is_empty(), "{later:?}");
    assert!(!sends_to_page(&later, "s2"), "{later:?}");
}

#[test]
fn a_calls_files_go_on_to_the_next_page_and_are_forgotten_when_it_ends() {
    let mut core = connected_with_tab_3();
    let file = json!({"name": "docs/cv.pdf", "mime": "application/pdf", "data": "JVBERg=="});
    let declared = json!({"name": "docs/cv.pdf", "mime": "application/pdf", "size": 4});
    let with_files = json!({"type":"call_tool","id":"f1","tab":3,"tool":TOOL,"args":{},
                            "timeout_ms":5000,"files":[declared]});
    let waiting = core.on_server_frame(&with_files.to_string());
    assert!(
        waiting.is_empty(),
        "the call waits for its bytes: {waiting:?}"
    );
    let chunk = json!({"type":"upload_chunk","id":"f1","file":0,"index":0,"data":"JVBERg=="});
    let actions = core.on_server_frame(&chunk.to_string());
    let to_page = |actions: &[Action]| -> Value {
        actions
            .iter()
            .find_map(|a| match a {
                Action::ToTab { message, .. } => serde_json::from_str(message).ok(),
                _ => None,
            })
            .expect("a message to the page")
    };
    assert_eq!(to_page(&actions)["files"][0], file);
    let onward = json!({"type":"call_tool_continue","id":"f1","tool":TOOL,"resume_at":2,
                        "vars":{},"timeout_ms":4000,"step":"steps[1] (navigate)","acted":false});
    core.on_call_reply("f1", Ok(Some(onward.to_string())));
    committed(&mut core, 3, "http://127.0.0.1:8000/next");
    let rest = to_page(&announce(&mut core, 3));
    assert_eq!(
        (rest["type"].as_str(), &rest["files"][0]),
        (Some("continue_tool"), &file)
    );

    let done = json!({"type":"call_tool_result","id":"f1","result":null});
    core.on_call_reply("f1", Ok(Some(done.to_string())));
    assert!(
        core.call_files.is_empty(),
        "an ended call's files are not kept"
    );
    // A call without files keeps nothing.
    call(&mut core, "f2", 3);
    assert!(core.call_files.is_empty());
}

#[test]
fn a_wrong_chunk_fails_its_call_and_a_closed_socket_frees_every_upload_in_flight() {
    let mut core = connected_with_tab_3();
    let declared = json!({"name": "a.bin", "mime": "application/octet-stream", "size": 6});
    let upload = |core: &mut Core, id: &str| {
        let frame = json!({"type":"call_tool","id":id,"tab":3,"tool":TOOL,"args":{},
                           "timeout_ms":5000,"files":[declared]});
        core.on_server_frame(&frame.to_string())
    };
    let chunk = |id: &str, data: &str| {
        json!({"type":"upload_chunk","id":id,"file":0,"index":0,"data":data}).to_string()
    };
    assert!(upload(&mut core, "u1").is_empty());
    let failed = core.on_server_frame(&chunk("u1", "AAAA"));
    let error = frames(&failed)[0].clone();
    assert_eq!(
        (error["type"].as_str(), error["id"].as_str()),
        (Some("call_tool_error"), Some("u1"))
    );
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("has 4 characters, not 8"),
        "{error}"
    );
    assert!(!sends_to_page(&failed, "u1"));

    assert!(upload(&mut core, "u2").is_empty());
    core.socket_closed(crate::link_problem::Problem::NotRunning, 0.5);
    assert!(
        core.uploads.clear().is_empty(),
        "nothing waits once the socket closed"
    );
}

/// A page loads, completes and announces; the next one commits and its runtime is still starting
/// when the first page's grace runs out: that timer is not about this page, so the call held for
/// it waits for its runtime (sent to a page with none, it would fail as NAVIGATED).
#[test]
fn an_earlier_loads_grace_does_not_release_calls_held_for_the_next_page() {
    let mut core = connected_with_tab_3();
    before(&mut core, 3, "http://127.0.0.1/a");
    committed(&mut core, 3, "http://127.0.0.1/a");
    let completed = core.on_navigation(
        3,
        NavEvent::Completed {
            url: "http://127.0.0.1/a".into(),
        },
    );
    let first_grace = load_timer(&completed, ANNOUNCE_GRACE_MS);
    announce(&mut core, 3);

    before(&mut core, 3, "http://127.0.0.1/b");
    committed(&mut core, 3, "http://127.0.0.1/b");
    let held = call(&mut core, "c1", 3);
    assert!(!sends_to_page(&held, "c1"), "{held:?}");
    let late = core.on_timer(first_grace);
    assert!(!sends_to_page(&late, "c1"), "{late:?}");
    assert!(core.is_loading(3));
    assert!(sends_to_page(&announce(&mut core, 3), "c1"));
}

#[test]
fn a_matched_page_no_runtime_announced_in_gets_one_injected_once_loaded() {
    let injects = |actions: &[Action], tab: TabId| {
        actions.iter().any(|a| {
            matches!(a, Action::ToTab { tab: t, on_reply: OnReply::InjectIfMissing, .. } if *t == tab)
        })
    };
    let mut core = connected_with_tab_3();
    let matched = "http://127.0.0.1/todos";
    // Tab 9 loads a page the adapters match, and no runtime ever says so (the content script's
    // registration was not in force yet): once loaded, it gets one.
    before(&mut core, 9, matched);
    assert!(!injects(&committed(&mut core, 9, matched), 9));
    let completed = core.on_navigation(
        9,
        NavEvent::Completed {
            url: matched.into(),
        },
    );
    assert!(injects(&completed, 9), "{completed:?}");
    // Also when the worker heard nothing of the load before it completed.
    let completed = core.on_navigation(
        11,
        NavEvent::Completed {
            url: matched.into(),
        },
    );
    assert!(injects(&completed, 11), "{completed:?}");
    // A page whose runtime announced itself is left alone, as is one no adapter matches.
    before(&mut core, 3, matched);
    committed(&mut core, 3, matched);
    announce(&mut core, 3);
    assert!(!injects(
        &core.on_navigation(
            3,
            NavEvent::Completed {
                url: matched.into()
            }
        ),
        3
    ));
    let elsewhere = "https://elsewhere.example/";
    before(&mut core, 12, elsewhere);
    committed(&mut core, 12, elsewhere);
    assert!(!injects(
        &core.on_navigation(
            12,
            NavEvent::Completed {
                url: elsewhere.into()
            }
        ),
        12
    ));
}

/// Tab 3 begins loading `url` (nothing more is heard of it yet), and call "c1" for it waits.
fn call_held_by_a_load(core: &mut Core, url: &str) -> Vec<Action> {
    before(core, 3, url);
    let held = call(core, "c1", 3);
    assert!(!sends_to_page(&held, "c1"), "{held:?}");
    held
}

/// The load `actions` ask Chrome about, if any.
fn looks_at(actions: &[Action]) -> Option<(TabId, u64)> {
    actions.iter().find_map(|a| match a {
        Action::LookAtLoad { tab, load } => Some((*tab, *load)),
        _ => None,
    })
}

#[test]
fn a_load_whose_commit_never_came_holds_calls_only_until_chrome_says_the_tab_is_loaded() {
    let mut core = connected_with_tab_3();
    // The worker heard the load begin and nothing after (its commit lost as the worker started).
    let held = call_held_by_a_load(&mut core, "http://127.0.0.1/launched");
    let look = load_timer(&held, LOOK_MS);
    // One look per wait, however many requests wait.
    let second =
        core.on_server_frame(&json!({"type":"request_state","id":"r1","tab":3}).to_string());
    assert!(
        !second.iter().any(|a| matches!(
            a,
            Action::After {
                timer: Timer::Look { .. },
                ..
            }
        )),
        "{second:?}"
    );

    // Chrome says the tab still loads: it is looked at again later, and the calls wait.
    let asked = looks_at(&core.on_timer(look)).expect("the worker asks Chrome");
    let still = core.on_load_looked(asked.0, asked.1, false);
    assert!(!sends_to_page(&still, "c1"), "{still:?}");
    let again = load_timer(&still, LOOK_MS);
    assert!(core.is_loading(3));

    // Chrome says it has loaded: what waited goes to the page shown, and the log says why.
    let asked = looks_at(&core.on_timer(again)).expect("asked again");
    let done = core.on_load_looked(asked.0, asked.1, true);
    assert!(sends_to_page(&done, "c1"), "{done:?}");
    assert!(
        done.iter()
            .any(|a| matches!(a, Action::ToTab { on_reply: OnReply::State(id), .. } if id == "r1")),
        "the held state request goes too: {done:?}"
    );
    assert!(
        done.iter()
            .any(|a| matches!(a, Action::Log(m) if m.contains("never committed"))),
        "{done:?}"
    );
    assert!(!core.is_loading(3));
}

#[test]
fn a_look_leaves_alone_a_committed_load_and_one_that_ended_meanwhile() {
    let mut core = connected_with_tab_3();
    // A committed page of an adapter waits for its runtime: a look gives it the grace its
    // completion would have, never less.
    before(&mut core, 3, "http://127.0.0.1/todos");
    committed(&mut core, 3, "http://127.0.0.1/todos");
    let held = call(&mut core, "c1", 3);
    let asked = looks_at(&core.on_timer(load_timer(&held, LOOK_MS))).expect("asked");
    let looked = core.on_load_looked(asked.0, asked.1, true);
    assert!(!sends_to_page(&looked, "c1"), "{looked:?}");
    let grace = load_timer(&looked, ANNOUNCE_GRACE_MS);
    assert!(sends_to_page(&core.on_timer(grace), "c1"));

    // A look at a load that has since ended (the runtime announced itself) does nothing, and no
    // look is asked for once nothing waits.
    before(&mut core, 3, "http://127.0.0.1/todos?2");
    committed(&mut core, 3, "http://127.0.0.1/todos?2");
    let held = call(&mut core, "c2", 3);
    let look = load_timer(&held, LOOK_MS);
    assert!(sends_to_page(&announce(&mut core, 3), "c2"));
    assert_eq!(looks_at(&core.on_timer(look)), None);
    assert!(core.on_load_looked(asked.0, asked.1, true).is_empty());
}

#[test]
fn a_navigation_to_no_page_ends_its_load_though_the_document_shown_is_unknown() {
    let mut core = connected_with_tab_3();
    // The worker (restarted, or started after the page loaded) never saw the page's commit, so
    // it does not know which document tab 3 shows; then a link to a 204 is followed.
    call_held_by_a_load(&mut core, "http://127.0.0.1/204");
    let failed = core.on_navigation(
        3,
        NavEvent::Failed {
            url: "http://127.0.0.1/204".into(),
            error: "net::ERR_ABORTED".into(),
            document: None,
        },
    );
    assert!(sends_to_page(&failed, "c1"), "the page stayed: {failed:?}");
    assert!(!core.is_loading(3));
}

#[test]
fn a_load_that_replaced_the_one_calls_first_waited_for_is_looked_at_too() {
    let mut core = connected_with_tab_3();
    let held = call_held_by_a_load(&mut core, "http://127.0.0.1/a");
    let look = load_timer(&held, LOOK_MS);
    // Another navigation replaced it (a redirect, a second click) before the look.
    before(&mut core, 3, "http://127.0.0.1/b");
    let asked = looks_at(&core.on_timer(look)).expect("the load now is looked at");
    let done = core.on_load_looked(asked.0, asked.1, true);
    assert!(sends_to_page(&done, "c1"), "{done:?}");
}

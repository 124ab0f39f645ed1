//! The core's host tests: the link and its handshake, server frames, page messages and tabs.

use super::*;
use crate::tabs::{self, Sender};
use bridge::page::FromPage;
use bridge::protocol::LoadedPage;
use bridge::protocol::OfferedTool;
use serde_json::{Value, json};

pub(super) const ME: &str = "extid";

fn adapter_json() -> Value {
    json!({
        "name": "todomvc", "match": ["http://127.0.0.1/*"],
        "tools": [{"name": "list_todos", "description": "List", "steps": [{"step": "click", "selector": "#b"}]}]
    })
}

fn welcome() -> String {
    json!({"type": "welcome", "protocol": bridge::PROTOCOL_VERSION, "server_version": "0.1.0", "instance_id": "s",
           "adapters": [adapter_json()]})
    .to_string()
}

pub(super) fn sender(tab: TabId) -> Sender {
    Sender {
        extension_id: Some(ME.into()),
        tab: Some(tab),
        frame_id: Some(0),
        url: "http://127.0.0.1:8000/examples/vanillajs/".into(),
    }
}

/// What `action` sends to a tab: the tab, the message (decoded) and what the tab's reply answers.
pub(super) fn to_tab(action: &Action) -> (TabId, Value, OnReply) {
    let Action::ToTab {
        tab,
        message,
        on_reply,
    } = action
    else {
        panic!("expected a message to a tab, got {action:?}")
    };
    (
        *tab,
        serde_json::from_str(message).unwrap(),
        on_reply.clone(),
    )
}

/// The popup's answer to its request `id` when the server refused it, saying `why`.
pub(super) fn popup_refused(id: &str, why: &str) -> Action {
    Action::AnswerPopup {
        id: id.into(),
        answer: Err(why.into()),
    }
}

pub(super) fn frames(actions: &[Action]) -> Vec<Value> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Frame(f) => Some(serde_json::from_str(f).unwrap()),
            _ => None,
        })
        .collect()
}

fn pairing() -> Pairing {
    Pairing {
        port: 17373,
        secret: "5e".repeat(32),
        path: None,
    }
}

/// The server's side of the exchange for a socket `core` opens with `pairing()`.
fn server_exchange() -> Exchange {
    Exchange {
        role: Role::Browser,
        port: 17373,
        client: Nonce([1; 32]),
        server: Nonce([2; 32]),
    }
}

/// What the glue does with [`Action::MakeProofs`] (there through `crypto.subtle`).
fn make_proofs(core: &mut Core, actions: Vec<Action>) -> Vec<Action> {
    let [
        Action::MakeProofs {
            key,
            server_message,
            client_message,
        },
    ] = &actions[..]
    else {
        return actions;
    };
    assert_eq!(key, &pairing().secret);
    // The server's nonce closes the message (whatever the listener sent).
    let server = Nonce::parse(&server_message[server_message.len() - 64..]).unwrap();
    let exchange = Exchange {
        server,
        ..server_exchange()
    };
    assert_eq!(server_message, &exchange.message(Side::Server));
    assert_eq!(client_message, &exchange.message(Side::Client));
    core.proofs_made(Ok((
        exchange.proof(key, Side::Server),
        exchange.proof(key, Side::Client),
    )))
}

/// Opens a socket and plays a server that proves itself; checks the extension's proof and
/// returns its `hello`.
fn open_and_prove(core: &mut Core) -> Value {
    core.connecting(&pairing(), server_exchange().client);
    core.socket_opened("0.1.0", "inst", BrowserInfo::default());
    assert_eq!(core.link(), LinkState::Proving);
    let exchange = server_exchange();
    let asked = core.on_server_frame(&exchange.server_proof_frame(&pairing().secret));
    assert!(
        frames(&asked).is_empty(),
        "nothing is sent before the check"
    );
    let sent = frames(&make_proofs(core, asked));
    assert_eq!(sent.len(), 2, "{sent:?}");
    exchange
        .check_client_proof_frame(&pairing().secret, &sent[0].to_string())
        .expect("the extension proves it knows the secret");
    assert_eq!(core.link(), LinkState::Handshaking);
    sent[1].clone()
}

pub(super) fn connected() -> Core {
    let mut core = Core::new(ME);
    let hello = open_and_prove(&mut core);
    assert_eq!(hello["type"], "hello");
    assert_eq!(hello["protocol"], bridge::PROTOCOL_VERSION);
    core.on_server_frame(&welcome());
    assert_eq!(core.link(), LinkState::Connected);
    core
}

#[test]
fn a_listener_that_cannot_prove_the_secret_is_told_nothing_and_obeyed_in_nothing() {
    let forged = Exchange {
        server: Nonce([3; 32]),
        ..server_exchange()
    }
    .server_proof_frame(&"0".repeat(64));
    let open_tab = r#"{"type":"open_tab","id":"o","url":"file:///etc/passwd"}"#;
    for first in [forged.as_str(), &welcome(), open_tab, "not json"] {
        let mut core = Core::new(ME);
        announce(&mut core, 5); // queued while the link is down
        core.connecting(&pairing(), server_exchange().client);
        core.socket_opened("0.1.0", "inst", BrowserInfo::default());
        let asked = core.on_server_frame(first);
        let actions = make_proofs(&mut core, asked);
        assert!(frames(&actions).is_empty(), "{first}: {actions:?}");
        assert!(
            actions.contains(&Action::Close {
                code: handshake::CLOSE_UNPROVEN,
                reason: "the listener did not prove the pairing secret".into()
            }),
            "{first}: {actions:?}"
        );
        assert!(
            !actions.iter().any(|a| matches!(
                a,
                Action::OpenTab { .. } | Action::SyncContentScripts(_) | Action::ToTab { .. }
            )),
            "{first}: {actions:?}"
        );
        // Whatever it says next is not obeyed either.
        assert!(
            core.on_server_frame(open_tab)
                .iter()
                .all(|a| !matches!(a, Action::OpenTab { .. } | Action::Frame(_)))
        );
        // The popup says why, and keeps saying it once the socket closed.
        core.socket_closed(Problem::Closed { code: 1005 }, 0.5);
        let status = core.status();
        assert!(matches!(status.problem, Some(Problem::Unproven { .. })));
        let shown = status.last_error.unwrap();
        assert!(
            shown.starts_with("something else is listening on 127.0.0.1:17373: it did not prove"),
            "{shown}"
        );
        // The next attempt that finds nobody says so instead.
        core.socket_closed(Problem::NotRunning, 0.5);
        assert_eq!(core.status().problem, Some(Problem::NotRunning));
    }
}

#[test]
fn a_listener_that_speaks_again_before_its_proof_is_checked_is_given_up_on() {
    let mut core = Core::new(ME);
    core.connecting(&pairing(), server_exchange().client);
    core.socket_opened("0.1.0", "inst", BrowserInfo::default());
    let first = server_exchange().server_proof_frame(&pairing().secret);
    assert!(matches!(
        &core.on_server_frame(&first)[..],
        [Action::MakeProofs { .. }]
    ));
    let again = core.on_server_frame(&welcome());
    assert!(again.iter().any(|a| matches!(a, Action::Close { .. })));
    // The proofs arriving afterwards change nothing.
    let late = core.proofs_made(Ok(("x".into(), "y".into())));
    assert!(frames(&late).is_empty());
    assert!(matches!(
        core.status().problem,
        Some(Problem::Unproven { .. })
    ));
}

/// The worker does not validate adapters (the validator stays out of its wasm): the server
/// refuses a bad one at load (`bridge::adapter`'s tests: reserved names, navigate's schemes),
/// and adapters are taken from a listener only once it proved it is that server.
#[test]
fn adapters_are_taken_only_from_a_listener_that_proved_the_secret() {
    let mut bad = adapter_json();
    bad["name"] = json!("browser");
    let updated =
        json!({"type": "adapters_updated", "adapters": [adapter_json(), bad]}).to_string();
    for first in [welcome(), updated.clone()] {
        let mut core = Core::new(ME);
        core.connecting(&pairing(), server_exchange().client);
        core.socket_opened("0.1.0", "inst", BrowserInfo::default());
        let actions = core.on_server_frame(&first);
        assert!(
            !actions
                .iter()
                .any(|a| matches!(a, Action::SyncContentScripts(_) | Action::PersistAdapters)),
            "{actions:?}"
        );
        core.on_server_frame(&updated);
        assert_eq!(core.adapters_json(), AdapterSet::default().to_json());
    }
    let mut core = connected();
    assert_ne!(core.adapters_json(), AdapterSet::default().to_json());
    let actions = core.on_server_frame(&updated);
    assert!(actions.contains(&Action::PersistAdapters), "{actions:?}");
}

#[test]
fn only_web_pages_are_opened_whoever_asks() {
    let mut core = connected();
    for url in [
        "file:///etc/passwd",
        "chrome://settings",
        "javascript:alert(1)",
        "data:text/html,x",
    ] {
        let frame = json!({"type": "open_tab", "id": "o", "url": url, "tab": 3}).to_string();
        let actions = core.on_server_frame(&frame);
        assert!(
            !actions.iter().any(|a| matches!(a, Action::OpenTab { .. })),
            "{url}: {actions:?}"
        );
        let sent = frames(&actions);
        assert_eq!(sent[0]["type"], "open_tab_error", "{url}");
        assert_eq!(sent[0]["error"]["code"], "INVALID_ARGS", "{url}");
    }
}

#[test]
fn a_silent_listener_is_given_up_on_after_the_proof_timeout() {
    let mut core = Core::new(ME);
    core.connecting(&pairing(), server_exchange().client);
    core.socket_opened("0.1.0", "inst", BrowserInfo::default());
    let actions = core.proof_timed_out();
    assert!(
        actions
            .iter()
            .any(|a| matches!(a, Action::Close { code, .. } if *code == handshake::CLOSE_UNPROVEN))
    );
    // Once proved, the timer has nothing to say.
    let mut core = Core::new(ME);
    open_and_prove(&mut core);
    assert!(core.proof_timed_out().is_empty());
}

pub(super) fn announce(core: &mut Core, tab: TabId) -> Vec<Action> {
    let tools = vec![OfferedTool::Adapter("todomvc_list_todos".into())];
    let msg = FromPage::ToolsUpdated {
        url: "http://page-claims-anything/".into(),
        title: "Todos".into(),
        tools,
    };
    core.on_page_message(&sender(tab), Some(&serde_json::to_string(&msg).unwrap()))
        .1
}

/// A worker connected to tabwire, its tab 3 showing a page whose runtime announced its tools.
pub(super) fn connected_with_tab_3() -> Core {
    let mut core = connected();
    announce(&mut core, 3);
    core
}

/// The server's call of `todomvc_list_todos` on tab 3, as request `id`, with a 500 ms deadline.
fn list_todos_call(id: &str) -> Value {
    json!({"type":"call_tool","id":id,"tab":3,"tool":"todomvc_list_todos","args":{},"timeout_ms":500})
}

#[test]
fn welcome_registers_scripts_snapshots_and_flushes_the_queue() {
    let mut core = Core::new(ME);
    announce(&mut core, 5); // queued: the link is down
    core.on_open_tab_reply("o1", Ok(9), None); // queued
    open_and_prove(&mut core);
    let actions = core.on_server_frame(&welcome());
    assert!(actions.contains(&Action::SyncContentScripts(vec![
        "http://127.0.0.1/*".into()
    ])));
    assert!(actions.contains(&Action::RefreshTabs));
    // The popup reads the status with the tabs: the link's coming up is written at once.
    assert!(actions.contains(&Action::PersistTabs), "{actions:?}");
    let sent = frames(&actions);
    assert_eq!(sent.len(), 2, "{sent:#?}");
    assert_eq!(sent[0]["type"], "tools_snapshot");
    assert_eq!(sent[0]["tabs"][0]["tab"], 5);
    assert_eq!(
        sent[0]["tabs"][0]["url"],
        "http://127.0.0.1:8000/examples/vanillajs/"
    );
    assert_eq!(
        sent[1],
        json!({"type": "open_tab_result", "id": "o1", "tab": 9})
    );
}

/// Page tool `tool`'s operation as the server sends it: a whole snapshot, a read, or a click.
pub(super) fn op_of(tool: &str) -> bridge::page_ops::WireOp {
    let args = match tool {
        bridge::page_ops::ACT => json!({"selector": "#go", "action": "click"}),
        _ => json!({}),
    };
    bridge::page_ops::WireOp::of(&bridge::page_ops::parse(tool, args).unwrap())
}

pub(super) fn snapshot_call() -> PageCall {
    PageCall {
        op: op_of(bridge::page_ops::SNAPSHOT),
        frame: 0,
        doc: None,
        origin: None,
        timeout_ms: 500,
        trusted_input: false,
        files: Vec::new(),
    }
}

#[test]
fn a_page_tool_call_goes_to_its_tab_once_started_and_ends_like_a_call() {
    let mut core = connected();
    let op = op_of(bridge::page_ops::SNAPSHOT);
    let call = json!({"type":"page_op","id":"p1","op":op,"timeout_ms":500});
    let actions = core.on_server_frame(&call.to_string());
    // The glue picks the tab (none given: the focused one) and injects the runtime first.
    assert_eq!(
        actions,
        vec![Action::PageOp {
            id: "p1".into(),
            tab: None,
            call: snapshot_call(),
        }]
    );
    // The focused tab found, the call comes back with it and goes there.
    let to_tab = core.page_op("p1".into(), Some(12), snapshot_call());
    assert!(
        matches!(&to_tab[..], [Action::PageOp { tab: Some(12), .. }]),
        "{to_tab:?}"
    );
    // Cancelled: the page hears it; the answer comes back as a call's.
    let cancel = core.on_server_frame(r#"{"type":"cancel","id":"p1"}"#);
    assert!(
        matches!(&cancel[..], [Action::ToTab { tab: 12, .. }]),
        "{cancel:?}"
    );
    let done = r#"{"type":"call_tool_result","id":"p1","result":{"text":"h1"}}"#;
    let sent = frames(&core.on_call_reply("p1", Ok(Some(done.into()))));
    assert_eq!(
        sent,
        vec![json!({"type":"call_tool_result","id":"p1","result":{"text":"h1"}})]
    );

    // A tab closed during a page tool's call fails it with TAB_CLOSED at once.
    core.page_op("p2".into(), Some(13), snapshot_call());
    let sent = frames(&core.on_tab_removed(13));
    assert_eq!(sent[0]["type"], "call_tool_error");
    assert_eq!(sent[0]["error"]["code"], "TAB_CLOSED");

    // No tab to send it to: the error the glue found.
    let error = WireError::new(ErrorCode::NoSuchTab, "no tab is focused");
    let sent = frames(&core.fail_call("p3", error));
    assert_eq!(sent[0]["error"]["code"], "NO_SUCH_TAB");
}

/// A page tool's call whose operation names no page tool (or names it with something else than
/// text) goes nowhere: it is answered at once with `PROTOCOL`, saying what was wrong.
#[test]
fn a_page_tool_call_that_names_no_tool_is_answered_with_what_was_wrong() {
    let mut core = connected();
    for op in [
        json!({"max_chars": 100}),
        json!({"tool": 7, "max_chars": 100}),
    ] {
        let call = json!({"type": "page_op", "id": "p1", "op": op, "timeout_ms": 500});
        let actions = core.on_server_frame(&call.to_string());
        assert!(
            !actions.iter().any(|a| matches!(a, Action::PageOp { .. })),
            "{actions:?}"
        );
        let sent = frames(&actions);
        assert_eq!(sent.len(), 1, "{sent:?}");
        assert_eq!(sent[0]["type"], "call_tool_error");
        assert_eq!(sent[0]["id"], "p1");
        assert_eq!(sent[0]["error"]["code"], "PROTOCOL");
        let message = sent[0]["error"]["message"].as_str().unwrap();
        assert_eq!(message, "its `op` names no page tool");
    }
}

#[test]
fn page_ready_gets_matching_adapters_and_tools_are_forwarded() {
    let mut core = connected();
    let ready = r#"{"type":"page_ready","url":"x","title":"T","runtime":"wasm"}"#;
    let (reply, _) = core.on_page_message(&sender(3), Some(ready));
    let reply: Value = serde_json::from_str(&reply.unwrap()).unwrap();
    assert_eq!(reply["type"], "adapters");
    assert_eq!(reply["adapters"][0]["name"], "todomvc");
    let elsewhere = Sender {
        url: "https://example.com/".into(),
        ..sender(4)
    };
    let (reply, _) = core.on_page_message(&elsewhere, Some(ready));
    assert_eq!(reply.unwrap(), r#"{"type":"adapters","adapters":[]}"#);

    let sent = frames(&announce(&mut core, 3));
    assert_eq!(sent[0]["type"], "tools_updated");
    assert_eq!(sent[0]["tab"], 3);
    // By name: the server describes its adapters' tools itself.
    assert_eq!(sent[0]["tools"], json!(["todomvc_list_todos"]));
    assert!(core.tabs_json().contains(r#""runtime":"wasm""#));
}

#[test]
fn messages_from_strangers_are_ignored() {
    let mut core = connected();
    let frame = Sender {
        frame_id: Some(2),
        ..sender(3)
    };
    let (reply, actions) = core.on_page_message(
        &frame,
        Some(r#"{"type":"page_ready","url":"x","title":"T"}"#),
    );
    assert!(reply.is_none());
    assert!(matches!(&actions[..], [Action::Log(_)]));
    let (reply, _) = core.on_page_message(&sender(3), Some("{not json"));
    assert!(reply.is_none());
}

#[test]
fn a_call_that_navigates_continues_in_the_next_page() {
    let mut core = connected_with_tab_3();
    let call = json!({"type":"call_tool","id":"n1","tab":3,"tool":"todomvc_list_todos","args":{"q":1},"timeout_ms":500});
    core.on_server_frame(&call.to_string());
    let onward = json!({"type":"call_tool_continue","id":"n1","tool":"todomvc_list_todos",
                        "resume_at":2,"vars":{"q":1,"seen":"x"},"timeout_ms":400});
    let actions = core.on_call_reply("n1", Ok(Some(onward.to_string())));
    assert_eq!(
        actions,
        [Action::After {
            ms: 400.0,
            timer: Timer::Continuation("n1".into())
        }],
        "nothing to answer yet, within the call's time"
    );

    // The new page announces its tools: the rest of the call goes to it, answered as a call.
    let actions = announce(&mut core, 3);
    let to_the_page = actions.iter().find(|a| matches!(a, Action::ToTab { .. }));
    let (tab, message, on_reply) = to_tab(to_the_page.expect("a message to the new page"));
    assert_eq!((tab, on_reply), (3, OnReply::CallTool("n1".into())));
    assert_eq!(
        message,
        json!({"type":"continue_tool","id":"n1","tool":"todomvc_list_todos","resume_at":2,
               "vars":{"q":1,"seen":"x"},"timeout_ms":400})
    );
    let done = r#"{"type":"call_tool_result","id":"n1","result":7}"#;
    let sent = frames(&core.on_call_reply("n1", Ok(Some(done.into()))));
    assert_eq!(
        sent,
        vec![json!({"type":"call_tool_result","id":"n1","result":7})]
    );

    // Closing the tab while the next page loads fails the call with TAB_CLOSED.
    core.on_server_frame(&call.to_string().replace("n1", "n2"));
    core.on_call_reply("n2", Ok(Some(onward.to_string().replace("n1", "n2"))));
    let sent = frames(&core.on_tab_removed(3));
    assert_eq!(sent[0]["type"], "call_tool_error");
    assert_eq!(sent[0]["id"], "n2");
    assert_eq!(sent[0]["error"]["code"], "TAB_CLOSED");
}

#[test]
fn a_navigation_to_a_page_without_the_tool_fails_the_call() {
    let mut core = connected_with_tab_3();
    let call = list_todos_call("n3");
    core.on_server_frame(&call.to_string());
    let onward = json!({"type":"call_tool_continue","id":"n3","tool":"todomvc_list_todos",
                        "resume_at":1,"vars":{},"timeout_ms":400});
    core.on_call_reply("n3", Ok(Some(onward.to_string())));
    let none = json!({"type":"tools_updated","url":"u","title":"Other","tools":[]});
    let (_, actions) = core.on_page_message(&sender(3), Some(&none.to_string()));
    let sent = frames(&actions);
    let error = sent
        .iter()
        .find(|f| f["type"] == "call_tool_error")
        .expect("an error");
    assert_eq!(error["id"], "n3");
    assert_eq!(error["error"]["code"], "NAVIGATED");
    assert!(!actions.iter().any(|a| matches!(a, Action::ToTab { .. })));
}

#[test]
fn calls_route_to_the_tab_and_answers_come_back() {
    let mut core = connected_with_tab_3();
    let call = list_todos_call("c1");
    let actions = core.on_server_frame(&call.to_string());
    let [action] = &actions[..] else {
        panic!("{actions:?}")
    };
    let (tab, message, on_reply) = to_tab(action);
    assert_eq!((tab, on_reply), (3, OnReply::CallTool("c1".into())));
    assert_eq!(
        message,
        json!({"type":"call_tool","id":"c1","tool":"todomvc_list_todos","args":{},"timeout_ms":500})
    );

    let answer =
        r#"{"type":"call_tool_result","id":"c1","result":[{"title":"a","completed":false}]}"#;
    let sent = frames(&core.on_call_reply("c1", Ok(Some(answer.into()))));
    assert_eq!(
        sent,
        vec![
            json!({"type":"call_tool_result","id":"c1","result":[{"title":"a","completed":false}]})
        ]
    );
    // A second answer for the same id is dropped.
    assert!(core.on_call_reply("c1", Ok(Some(answer.into()))).is_empty());
}

#[test]
fn a_result_is_passed_on_as_the_page_wrote_it_or_queued_while_the_link_is_down() {
    let mut core = connected_with_tab_3();
    let call = list_todos_call("p1");
    core.on_server_frame(&call.to_string());
    let page = r#"{"type":"call_tool_result","id":"p1","result":{"n":1.50,"s":"\u00e9"}}"#;
    assert_eq!(
        core.on_call_reply("p1", Ok(Some(page.into()))),
        [Action::Frame(page.into())],
        "the very text, not decoded and written again"
    );
    core.on_server_frame(&call.to_string().replace("p1", "p2"));
    core.socket_closed(Problem::Closed { code: 1006 }, 0.5);
    let page = page.replace("p1", "p2");
    assert!(core.on_call_reply("p2", Ok(Some(page))).is_empty());
    open_and_prove(&mut core);
    let sent = frames(&core.on_server_frame(&welcome()));
    assert_eq!(
        sent[1],
        json!({"type":"call_tool_result","id":"p2","result":{"n":1.5,"s":"é"}})
    );
}

#[test]
fn unknown_tools_and_dead_tabs_fail_clearly() {
    let mut core = connected_with_tab_3();
    // The server decides which tab offers a tool; the page answers for itself if its tools
    // changed meanwhile, so the worker passes the call on.
    let call = json!({"type":"call_tool","id":"c2","tab":3,"tool":"todomvc_nope","args":{},"timeout_ms":500});
    let actions = core.on_server_frame(&call.to_string());
    assert!(
        matches!(&actions[..], [Action::ToTab { tab: 3, on_reply: OnReply::CallTool(id), .. }] if id == "c2"),
        "{actions:?}"
    );
    let refused =
        r#"{"type":"call_tool_error","id":"c2","error":{"code":"NO_SUCH_TOOL","message":"m"}}"#;
    let sent = frames(&core.on_call_reply("c2", Ok(Some(refused.into()))));
    assert_eq!(sent[0]["error"]["code"], "NO_SUCH_TOOL");

    let call = json!({"type":"call_tool","id":"c3","tab":77,"tool":"x","args":{},"timeout_ms":500});
    core.on_server_frame(&call.to_string());
    let sent = frames(&core.on_call_reply("c3", Err("No tab with id: 77.".into())));
    assert_eq!(sent[0]["error"]["code"], "TAB_CLOSED");

    let call = json!({"type":"call_tool","id":"c4","tab":78,"tool":"x","args":{},"timeout_ms":500});
    core.on_server_frame(&call.to_string());
    let why = "Could not establish connection. Receiving end does not exist.";
    let sent = frames(&core.on_call_reply("c4", Err(why.into())));
    assert_eq!(sent[0]["error"]["code"], "NO_SUCH_TOOL");
}

#[test]
fn a_page_gone_mid_call_is_navigated_and_a_closed_tab_is_tab_closed() {
    let bfcache = "The page keeping the extension port is moved into back/forward cache, \
                   so the message channel is closed.";
    let closed = "A listener indicated an asynchronous response by returning true, but the \
                  message channel closed before a response was received";
    for why in [bfcache, closed] {
        assert!(channel_closed(why));
        assert_eq!(
            classify_send_failure(3, why, true).code,
            ErrorCode::Navigated
        );
    }
    // What the glue passes on when chrome.tabs.get says the tab is gone.
    let gone = classify_send_failure(3, "No tab with id: 3.", true);
    assert_eq!(gone.code, ErrorCode::TabClosed);
}

#[test]
fn another_tab_cannot_answer_a_call() {
    let mut core = connected_with_tab_3();
    announce(&mut core, 4);
    let call = list_todos_call("c11");
    core.on_server_frame(&call.to_string());
    // Tab 4 (or tab 3 itself) posting an answer as a message is ignored: answers travel
    // only through the response channel of the message sent to the called tab.
    let forged = json!({"type":"call_tool_result","id":"c11","result":"forged"}).to_string();
    for tab in [4, 3] {
        let (reply, actions) = core.on_page_message(&sender(tab), Some(&forged));
        assert!(reply.is_none() && frames(&actions).is_empty());
    }
    let genuine = json!({"type":"call_tool_result","id":"c11","result":"genuine"}).to_string();
    let sent = frames(&core.on_call_reply("c11", Ok(Some(genuine))));
    assert_eq!(sent[0]["result"], "genuine");
}

#[test]
fn an_oversized_answer_fails_its_call_with_too_large() {
    let mut core = connected_with_tab_3();
    let call = list_todos_call("c9");
    core.on_server_frame(&call.to_string());
    let answer = json!({"type":"call_tool_result","id":"c9","result":"x".repeat(MAX_RESULT_BYTES)});
    let sent = frames(&core.on_call_reply("c9", Ok(Some(answer.to_string()))));
    assert_eq!(sent[0]["type"], "call_tool_error");
    assert_eq!(sent[0]["error"]["code"], "TOO_LARGE");
    assert!(sent[0].to_string().len() < 1024);
}

#[test]
fn closing_a_tab_fails_its_calls_and_tells_the_server() {
    let mut core = connected_with_tab_3();
    let call = list_todos_call("c5");
    core.on_server_frame(&call.to_string());
    let sent = frames(&core.on_tab_removed(3));
    assert_eq!(sent[0]["error"]["code"], "TAB_CLOSED");
    assert_eq!(sent[1], json!({"type":"tab_closed","tab":3}));
    assert!(frames(&core.on_tab_removed(3)).is_empty());
}

#[test]
fn cancel_goes_to_the_calls_tab() {
    let mut core = connected();
    core.on_server_frame(
        &json!({"type":"call_tool","id":"c6","tab":4,"tool":"x","args":{},"timeout_ms":500})
            .to_string(),
    );
    let actions = core.on_server_frame(r#"{"type":"cancel","id":"c6"}"#);
    assert!(
        matches!(&actions[..], [Action::ToTab { tab: 4, message, .. }] if message.contains("cancel"))
    );
    assert!(
        core.on_server_frame(r#"{"type":"cancel","id":"unknown"}"#)
            .is_empty()
    );
}

/// The tabs' copy for the popup and the next worker: a burst of changes (a page's load brings its
/// URL, title and tools) is written once, [`PERSIST_TABS_AFTER_MS`] after the first; a change after
/// the write is written again. (The link's coming up is written at once:
/// `welcome_registers_scripts_snapshots_and_flushes_the_queue`.)
#[test]
fn a_burst_of_tab_changes_is_written_once_after_a_while() {
    let persists = |actions: &[Action]| {
        let timers = actions
            .iter()
            .filter(|a| {
                matches!(a, Action::After { ms, timer: Timer::PersistTabs } if *ms == PERSIST_TABS_AFTER_MS)
            })
            .count();
        let writes = actions
            .iter()
            .filter(|a| matches!(a, Action::PersistTabs))
            .count();
        (timers, writes)
    };
    let mut core = connected_with_tab_3();
    core.on_timer(Timer::PersistTabs); // the write tab 3's announcement asked for
    let url = "http://127.0.0.1:8000/other";
    assert_eq!(persists(&core.on_tab_updated(3, Some(url), None)), (1, 0));
    let retitled = core.on_tab_updated(3, None, Some("Other"));
    assert_eq!(persists(&retitled), (0, 0));
    assert_eq!(persists(&core.on_timer(Timer::PersistTabs)), (0, 1));
    assert_eq!(persists(&core.on_tab_removed(3)), (1, 0));
}

#[test]
fn navigation_events_only_for_relevant_tabs() {
    let mut core = connected_with_tab_3();
    let actions = core.on_tab_updated(3, Some("http://127.0.0.1:8000/other"), None);
    assert_eq!(
        frames(&actions)[0],
        json!({"type":"tab_navigated","tab":3,"url":"http://127.0.0.1:8000/other"})
    );
    assert!(
        actions
            .iter()
            .any(|a| matches!(a, Action::ToTab { tab: 3, .. }))
    );
    assert!(frames(&core.on_tab_updated(9, Some("https://private.example/"), None)).is_empty());
    assert!(frames(&core.on_tab_activated(9)).is_empty());
    assert_eq!(
        frames(&core.on_tab_activated(3))[0],
        json!({"type":"tab_focused","tab":3})
    );
}

#[test]
fn state_requests_go_to_the_tab_and_state_updates_to_the_server() {
    let mut core = connected_with_tab_3();
    let actions = core.on_server_frame(r#"{"type":"request_state","id":"s1","tab":3}"#);
    let [action] = &actions[..] else {
        panic!("{actions:?}")
    };
    let (tab, message, on_reply) = to_tab(action);
    assert_eq!((tab, on_reply), (3, OnReply::State("s1".into())));
    assert_eq!(message, json!({"type":"request_state","id":"s1"}));
    let answer = r#"{"type":"state_response","id":"s1","state":{"todomvc":{"n":2}}}"#;
    assert_eq!(
        frames(&core.on_state_reply("s1", 3, Ok(Some(answer.into())))),
        vec![json!({"type":"state_response","id":"s1","state":{"todomvc":{"n":2}}})]
    );
    let failed =
        r#"{"type":"state_error","id":"s2","error":{"code":"ADAPTER_ERROR","message":"m"}}"#;
    let sent = frames(&core.on_state_reply("s2", 3, Ok(Some(failed.into()))));
    assert_eq!(sent[0]["type"], "state_error");
    assert_eq!(sent[0]["error"]["code"], "ADAPTER_ERROR");
    let sent = frames(&core.on_state_reply("s3", 3, Ok(Some(answer.into()))));
    assert_eq!(
        sent[0]["error"]["code"], "INTERNAL",
        "an answer to another request"
    );
    let sent = frames(&core.on_state_reply("s4", 3, Ok(None)));
    assert_eq!(sent[0]["error"]["code"], "NO_SUCH_TAB");

    let update = r#"{"type":"state_update","state":{"todomvc":{"n":3}},"ts":42}"#;
    let (_, actions) = core.on_page_message(&sender(3), Some(update));
    assert_eq!(
        frames(&actions),
        vec![json!({"type":"state_update","tab":3,"state":{"todomvc":{"n":3}},"ts":42})]
    );
}

#[test]
fn hello_names_the_code_adapters_and_open_tab_reports_the_loaded_page() {
    let mut core = Core::new(ME);
    core.set_code_adapters(&[r#"{"name": "calc", "match": ["http://127.0.0.1/*"],
        "tools": [{"name": "sum", "description": "Add."}]}"#
        .into()]);
    let hello = open_and_prove(&mut core);
    // The declarations, for the server to validate and describe.
    assert_eq!(
        hello["code_adapters"],
        json!([{"name": "calc", "match": ["http://127.0.0.1/*"],
                "tools": [{"name": "sum", "description": "Add."}]}])
    );
    core.on_server_frame(&welcome());
    let actions = core
        .on_server_frame(r#"{"type":"open_tab","id":"o","url":"http://a/","wait_loaded_ms":800}"#);
    assert!(
        actions.contains(&Action::OpenTab {
            id: "o".into(),
            url: "http://a/".into(),
            tab: None,
            wait_loaded_ms: Some(800),
        }),
        "{actions:?}"
    );
    let sent = frames(&core.on_open_tab_reply("o", Ok(4), Some(LoadedPage { runtime: true })));
    assert_eq!(
        sent,
        [json!({"type": "open_tab_result", "id": "o", "tab": 4, "loaded": {"runtime": true}})]
    );
}

#[test]
fn code_adapters_join_the_servers_and_survive_updates() {
    let mut core = connected();
    let declaration = r#"{"name": "calc", "match": ["http://127.0.0.1/*"],
        "tools": [{"name": "sum", "description": "Add."}]}"#;
    let actions = core.set_code_adapters(&[declaration.into(), r#"{"match": []}"#.into()]);
    assert!(matches!(&actions[0], Action::Log(m) if m.contains("code adapter skipped")));
    let names =
        |core: &Core| -> Vec<String> { core.adapters.all().map(|a| a.name.clone()).collect() };
    // The server validates the declaration and sends it back as an adapter.
    let calc = json!({"name": "calc", "match": ["http://127.0.0.1/*"], "tools": [
        {"name": "sum", "description": "Add.", "steps": [{"step": "return", "value": 1}]}]});
    core.on_server_frame(
        &json!({"type": "welcome", "protocol": bridge::PROTOCOL_VERSION, "server_version": "0.1.0",
                "instance_id": "s", "adapters": [adapter_json()], "code_adapters": [calc]})
        .to_string(),
    );
    assert_eq!(names(&core), ["todomvc", "calc"]);
    core.on_server_frame(
        &json!({"type": "adapters_updated", "adapters": [adapter_json()]}).to_string(),
    );
    assert_eq!(names(&core), ["todomvc", "calc"]);
    // What the server sent is kept for a restarted worker.
    let kept: Value = serde_json::from_str(&core.adapters_json()).unwrap();
    assert_eq!(kept["code"][0]["name"], "calc");
    let url = "http://127.0.0.1:8000/x";
    let offered = vec![OfferedTool::Adapter("calc_sum".into())];
    let (accepted, refused) = tabs::accept_tools(&core.adapters, url, &offered);
    assert_eq!((accepted, refused), (offered, 0));
}

#[test]
fn a_refresh_reaches_the_tabs_adapters_match_and_the_known_ones() {
    let core = connected_with_tab_3();
    let open = [
        (3, "https://moved.example/".to_owned()),
        (5, "http://127.0.0.1:8000/new".to_owned()),
        (6, "https://private.example/".to_owned()),
    ];
    let actions = core.refresh(&open);
    let sent: Vec<(TabId, OnReply, Value)> = actions
        .into_iter()
        .map(|a| match a {
            Action::ToTab {
                tab,
                message,
                on_reply,
            } => (tab, on_reply, serde_json::from_str(&message).unwrap()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        sent.len(),
        2,
        "nothing for a tab no adapter serves: {sent:?}"
    );
    assert_eq!((sent[0].0, &sent[0].1), (3, &OnReply::Nothing));
    assert_eq!(
        sent[0].2["adapters"],
        json!([]),
        "the known tab drops its tools"
    );
    assert_eq!((sent[1].0, &sent[1].1), (5, &OnReply::InjectIfMissing));
    assert_eq!(sent[1].2["adapters"][0]["name"], "todomvc");
}

#[test]
fn protocol_chatter() {
    let mut core = connected();
    assert_eq!(
        frames(&core.on_server_frame(r#"{"type":"ping","nonce":7}"#)),
        vec![json!({"type":"pong","nonce":7})]
    );
    let sent = frames(&core.on_server_frame(r#"{"type":"teleport","id":"r1"}"#));
    assert_eq!(sent[0]["type"], "error");
    assert_eq!(sent[0]["in_reply_to"], "r1");
    assert_eq!(sent[0]["error"]["code"], "PROTOCOL");
    let sent = frames(&core.on_server_frame(r#"{"type":"request_state","id":"s1","tab":1}"#));
    assert_eq!(sent[0]["type"], "state_error");
    assert!(core.ping(1).is_some());
    core.socket_closed(Problem::Closed { code: 1001 }, 0.5);
    assert!(core.ping(2).is_none());
    assert_eq!(core.status().state, LinkState::Disconnected);
    assert_eq!(core.status().problem, Some(Problem::Closed { code: 1001 }));
}

#[test]
fn backoff_restarts_after_a_good_connection() {
    let mut core = Core::new(ME);
    assert_eq!(core.socket_closed(Problem::Refused, 0.5), 100);
    assert_eq!(core.socket_closed(Problem::Refused, 0.5), 200);
    assert!(
        core.status()
            .last_error
            .unwrap()
            .contains("refused this extension's handshake")
    );
    open_and_prove(&mut core);
    core.on_server_frame(&welcome());
    assert_eq!(core.status().problem, None, "welcome clears the problem");
    assert_eq!(core.socket_closed(Problem::Closed { code: 1006 }, 0.5), 100);
}

#[test]
fn allowed_origins_get_the_runtime_as_their_pages_load_until_revoked() {
    let mut core = connected();
    let adapters = core.match_patterns();
    let grants = |page_tools: bool| {
        json!({"type": "grants", "all_origins": false,
               "grants": {"http://127.0.0.1:8123": {"page_tools": page_tools}}})
        .to_string()
    };
    let with_origin =
        crate::preload::script_patterns(adapters.clone(), &["http://127.0.0.1:8123/*".to_owned()]);
    let allowed = core.on_server_frame(&grants(true));
    assert!(allowed.contains(&Action::SyncContentScripts(with_origin.clone())));
    // The same grants again change nothing to register.
    let again = core.on_server_frame(&grants(true));
    assert!(
        !again
            .iter()
            .any(|a| matches!(a, Action::SyncContentScripts(_)))
    );
    // A restarted worker keeps them from the frame it stored, before the server says them again.
    let mut restarted = Core::new(ME);
    restarted.restore_grants(&grants(true));
    assert!(
        restarted
            .match_patterns()
            .contains(&"http://127.0.0.1:8123/*".to_owned())
    );
    let revoked = core.on_server_frame(&grants(false));
    assert!(revoked.contains(&Action::SyncContentScripts(adapters)));
}

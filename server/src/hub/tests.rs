//! The hub with a fake extension on its connection side: routing, answers, timeouts, failures.

use super::registry::{MAX_PENDING, MAX_TABS_PER_CONNECTION, REANNOUNCE_GRACE};
use super::vetting::MAX_TOOLS_PER_TAB;
use super::*;
use bridge::protocol::{LoadedPage, RequestId};
use bridge::{ErrorCode, PROTOCOL_VERSION};
use serde_json::json;

struct FakeExtension {
    conn: ConnId,
    frames: mpsc::UnboundedReceiver<String>,
}

impl FakeExtension {
    fn connect(hub: &Hub) -> FakeExtension {
        let (outbox, frames) = mpsc::unbounded_channel();
        FakeExtension {
            conn: hub.connect(outbox),
            frames,
        }
    }

    fn say(&self, hub: &Hub, message: serde_json::Value) {
        hub.handle_frame(self.conn, &message.to_string());
    }

    /// Says `hello` at this protocol version, with the fields of `more` (an object).
    fn says_hello(&self, hub: &Hub, more: serde_json::Value) {
        let mut hello = json!({"type": "hello", "protocol": PROTOCOL_VERSION});
        hello
            .as_object_mut()
            .unwrap()
            .extend(more.as_object().unwrap().clone());
        self.say(hub, hello);
    }

    /// The next frame the hub sent to this extension.
    async fn next(&mut self) -> ToExtension {
        let frame = tokio::time::timeout(Duration::from_secs(5), self.frames.recv())
            .await
            .expect("a frame within 5 s")
            .expect("outbox open");
        ToExtension::decode(&frame).expect("the hub sends valid frames")
    }

    /// Pings the hub: the next frame it sends this extension is the pong (nothing came before it).
    async fn pings(&mut self, hub: &Hub, nonce: u64) {
        self.say(hub, json!({"type": "ping", "nonce": nonce}));
        assert_eq!(self.next().await, ToExtension::Pong { nonce });
    }

    /// The next frame, a call: its id and whether its input is to be trusted.
    async fn next_call_input(&mut self) -> (RequestId, bool) {
        match self.next().await {
            ToExtension::CallTool {
                id, trusted_input, ..
            } => (id, trusted_input),
            other => panic!("expected call_tool, got {other:?}"),
        }
    }

    async fn next_call(&mut self) -> (RequestId, TabId, String, Value) {
        match self.next().await {
            ToExtension::CallTool {
                id,
                tab,
                tool,
                args,
                ..
            } => (id, tab, tool, args),
            other => panic!("expected call_tool, got {other:?}"),
        }
    }
}

/// A tool as a page announces it: an adapter's by name, a page's own (`webmcp_`) in full.
fn tool(name: &str) -> serde_json::Value {
    if name.starts_with("webmcp_") {
        json!({"name": name, "adapter": "webmcp", "description": "d",
               "input_schema": {"type": "object"}})
    } else {
        json!(name)
    }
}

fn hub_with_timeout(call_timeout: Duration) -> Arc<Hub> {
    hub_with(call_timeout, None)
}

fn hub_with(call_timeout: Duration, grants: Option<crate::grants::Grants>) -> Arc<Hub> {
    hub_uploading(call_timeout, grants, None)
}

fn hub_uploading(
    call_timeout: Duration,
    grants: Option<crate::grants::Grants>,
    uploads: Option<crate::uploads::Uploads>,
) -> Arc<Hub> {
    let mut adapters = crate::adapters::load(&[], &[]).unwrap().adapters;
    // The tests' tabs offer todomvc_a and todomvc_b: make them tools the adapter defines.
    let todomvc = adapters.iter_mut().find(|a| a.name == "todomvc").unwrap();
    for name in ["a", "b"] {
        let mut tool = todomvc.tools[0].clone();
        tool.name = name.into();
        todomvc.tools.push(tool);
    }
    let hub = Hub::new(HubConfig {
        port: 17373,
        call_timeout,
        instance_id: "test".into(),
        adapters,
        grants,
        uploads,
    });
    hub.set_link(Link::Listening);
    Arc::new(hub)
}

fn hub() -> Arc<Hub> {
    hub_with_timeout(Duration::from_secs(30))
}

/// One extension with tabs 1 (todomvc_a) and 2 (todomvc_a, todomvc_b).
fn two_tabs(hub: &Hub) -> FakeExtension {
    let ext = FakeExtension::connect(hub);
    ext.say(
        hub,
        json!({"type": "tools_snapshot", "tabs": [
            {"tab": 1, "url": "http://todomvc.com/examples/a", "title": "A", "tools": [tool("todomvc_a")]},
            {"tab": 2, "url": "http://todomvc.com/examples/b", "title": "B",
             "tools": [tool("todomvc_a"), tool("todomvc_b")]},
        ]}),
    );
    ext
}

fn spawn_call(
    hub: &Arc<Hub>,
    tool: &str,
    tab: Option<TabId>,
) -> tokio::task::JoinHandle<Result<Value, WireError>> {
    let hub = hub.clone();
    let tool = tool.to_owned();
    tokio::spawn(async move { hub.call_tool(&tool, json!({"x": 1}), tab).await })
}

fn code(result: Result<Value, WireError>) -> ErrorCode {
    result.expect_err("expected an error").code
}

/// A page tool's upload of `files` in tab 2.
fn spawn_upload(
    hub: &Arc<Hub>,
    files: CallFiles,
) -> tokio::task::JoinHandle<Result<Value, WireError>> {
    let hub = hub.clone();
    tokio::spawn(async move {
        let args = json!({"ref": "e1", "action": "upload", "files": ["big.bin"]});
        let upload = bridge::page_ops::parse(bridge::page_ops::ACT, args).unwrap();
        let op = hub.page_op(&upload, Some(2), None, None, false, files);
        op.await
    })
}

#[tokio::test]
async fn a_calls_files_follow_it_in_chunks_read_once_and_over_the_cap_nothing_is_sent() {
    use base64::Engine;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("up")).unwrap();
    let bytes: Vec<u8> = (0..2 * bridge::upload::CHUNK_BYTES + 5)
        .map(|i| (i * 7 % 256) as u8)
        .collect();
    std::fs::write(dir.path().join("up/big.bin"), &bytes).unwrap();
    let uploads = crate::uploads::Uploads::new(dir.path().join("up"));
    let hub = hub_uploading(Duration::from_secs(30), None, Some(uploads));
    let mut ext = two_tabs(&hub);

    let op = spawn_upload(&hub, CallFiles::Named(vec!["big.bin".into()]));
    let ToExtension::PageOp {
        id,
        call: PageCall { files, .. },
        ..
    } = ext.next().await
    else {
        panic!("expected page_op")
    };
    assert_eq!(files.len(), 1);
    assert_eq!(
        (files[0].name.as_str(), files[0].size),
        ("big.bin", bytes.len() as u64)
    );
    let mut joined = String::new();
    for expected in 0..3 {
        match ext.next().await {
            ToExtension::UploadChunk {
                id: of,
                file,
                index,
                data,
            } => {
                assert_eq!((of.as_str(), file, index), (id.as_str(), 0, expected));
                assert!(data.len() <= bridge::upload::CHUNK_BASE64);
                joined.push_str(&data);
            }
            other => panic!("expected upload_chunk {expected}, got {other:?}"),
        }
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(joined)
        .unwrap();
    assert!(decoded == bytes, "the chunks carry the file's bytes");
    ext.say(
        &hub,
        json!({"type": "call_tool_result", "id": id, "result": {"ok": true}}),
    );
    assert_eq!(op.await.unwrap().unwrap(), json!({"ok": true}));

    // A routed call's files were read by the peer: the hub sends them as they are.
    let read = UploadFile {
        name: "elsewhere.txt".into(),
        mime: "text/plain".into(),
        data: "aGk=".into(),
    };
    let op = spawn_upload(&hub, CallFiles::Read(vec![read]));
    let ToExtension::PageOp {
        call: PageCall { files, .. },
        ..
    } = ext.next().await
    else {
        panic!("expected page_op")
    };
    assert_eq!(
        (files[0].name.as_str(), files[0].size),
        ("elsewhere.txt", 2)
    );
    assert!(matches!(
        ext.next().await,
        ToExtension::UploadChunk { data, .. } if data == "aGk="
    ));
    op.abort();
    assert!(matches!(ext.next().await, ToExtension::Cancel { .. }));

    // The socket drops mid-upload: the call fails typed at once.
    let op = spawn_upload(&hub, CallFiles::Named(vec!["big.bin".into()]));
    assert!(matches!(ext.next().await, ToExtension::PageOp { .. }));
    hub.disconnect(ext.conn);
    assert_eq!(code(op.await.unwrap()), ErrorCode::NotConnected);
    let mut ext = two_tabs(&hub);

    // Over the cap: refused before anything is sent.
    let file = std::fs::File::create(dir.path().join("up/big.bin")).unwrap();
    file.set_len(bridge::upload::MAX_UPLOAD_BYTES + 1).unwrap();
    let refused = spawn_upload(&hub, CallFiles::Named(vec!["big.bin".into()]));
    assert_eq!(code(refused.await.unwrap()), ErrorCode::TooLarge);
    assert!(ext.frames.try_recv().is_err(), "nothing was sent");
}

#[tokio::test]
async fn tabs_tools_and_pending_calls_are_bounded_with_typed_errors() {
    let hub = hub();
    let mut ext = FakeExtension::connect(&hub);
    // A snapshot of more tabs than a connection may have keeps the first ones.
    let many: Vec<Value> = (0..MAX_TABS_PER_CONNECTION as u64 + 10)
        .map(|tab| {
            json!({"tab": tab, "url": "http://todomvc.com/x", "title": "t",
                          "tools": [tool("todomvc_a")]})
        })
        .collect();
    ext.say(&hub, json!({"type": "tools_snapshot", "tabs": many}));
    assert_eq!(hub.tabs().len(), MAX_TABS_PER_CONNECTION);
    match ext.next().await {
        ToExtension::Error { error, .. } => {
            assert_eq!(error.code, ErrorCode::TooMany);
            assert!(error.message.starts_with("10 tab(s) refused"), "{error}");
        }
        other => panic!("expected an error frame, got {other:?}"),
    }
    // One more tab is refused; a known tab still updates.
    let extra = json!({"type": "tools_updated", "tab": 100_000, "url": "http://todomvc.com/x",
                       "title": "t", "tools": [tool("todomvc_a")]});
    ext.say(&hub, extra);
    assert!(matches!(ext.next().await, ToExtension::Error { .. }));
    assert_eq!(hub.tabs().len(), MAX_TABS_PER_CONNECTION);
    let known = json!({"type": "tools_updated", "tab": 0, "url": "http://todomvc.com/x",
                       "title": "renamed", "tools": [tool("todomvc_a"), tool("todomvc_b")]});
    ext.say(&hub, known);
    assert!(hub.tabs().iter().any(|t| t.id == 0 && t.title == "renamed"));

    // A tab offering more tools than allowed keeps the first ones.
    let hub = hub_with_timeout(Duration::from_secs(30));
    let ext = FakeExtension::connect(&hub);
    let tools: Vec<Value> = (0..MAX_TOOLS_PER_TAB + 5)
        .map(|i| tool(&format!("webmcp_t{i}")))
        .collect();
    ext.say(
        &hub,
        json!({"type": "tools_snapshot", "tabs": [
            {"tab": 1, "url": "http://a/", "title": "t", "tools": tools}]}),
    );
    assert_eq!(hub.tabs()[0].tools.len(), MAX_TOOLS_PER_TAB);
}

#[tokio::test]
async fn past_the_pending_bound_a_call_fails_at_once_with_too_many() {
    let hub = hub();
    let mut ext = two_tabs(&hub);
    let waiting: Vec<_> = (0..MAX_PENDING)
        .map(|_| spawn_call(&hub, "todomvc_a", Some(1)))
        .collect();
    for _ in 0..MAX_PENDING {
        ext.next_call().await;
    }
    let refused = hub.call_tool("todomvc_a", json!({}), Some(1)).await;
    assert_eq!(code(refused), ErrorCode::TooMany);
    for call in waiting {
        call.abort();
    }
}

#[tokio::test]
async fn hello_is_answered_with_welcome_and_the_adapters() {
    let hub = hub();
    let mut ext = FakeExtension::connect(&hub);
    ext.says_hello(&hub, json!({"instance_id": "b1"}));
    match ext.next().await {
        ToExtension::Welcome {
            protocol,
            instance_id,
            adapters,
            ..
        } => {
            assert_eq!(protocol, PROTOCOL_VERSION);
            assert_eq!(instance_id, "test");
            assert!(adapters.iter().any(|a| a.name == "todomvc"));
        }
        other => panic!("expected welcome, got {other:?}"),
    }
    ext.pings(&hub, 7).await;
}

#[tokio::test]
async fn new_adapters_are_pushed_to_every_extension_and_greet_later_ones() {
    let hub = hub();
    let mut first = FakeExtension::connect(&hub);
    let mut second = FakeExtension::connect(&hub);
    let mut renamed = hub.adapters()[0].clone();
    renamed.name = "renamed".into();
    hub.set_adapters(vec![renamed]);
    for ext in [&mut first, &mut second] {
        match ext.next().await {
            ToExtension::AdaptersUpdated { adapters } => {
                assert_eq!(adapters.len(), 1);
                assert_eq!(adapters[0].name, "renamed");
            }
            other => panic!("expected adapters_updated, got {other:?}"),
        }
    }
    assert_eq!(hub.adapters()[0].name, "renamed");
    let mut late = FakeExtension::connect(&hub);
    late.says_hello(&hub, json!({}));
    match late.next().await {
        ToExtension::Welcome { adapters, .. } => assert_eq!(adapters[0].name, "renamed"),
        other => panic!("expected welcome, got {other:?}"),
    }
}

#[tokio::test]
async fn without_tab_id_calls_go_to_the_most_recently_focused_tab_offering_the_tool() {
    let hub = hub();
    let mut ext = two_tabs(&hub);
    // Nobody focused yet: the most recently registered tab offering it (2).
    let call = spawn_call(&hub, "todomvc_a", None);
    let (id, tab, tool, args) = ext.next_call().await;
    assert_eq!(
        (tab, tool.as_str(), args),
        (2, "todomvc_a", json!({"x": 1}))
    );
    ext.say(
        &hub,
        json!({"type": "call_tool_result", "id": id, "result": "two"}),
    );
    assert_eq!(call.await.unwrap(), Ok(json!("two")));

    ext.say(&hub, json!({"type": "tab_focused", "tab": 1}));
    let call = spawn_call(&hub, "todomvc_a", None);
    let (id, tab, ..) = ext.next_call().await;
    assert_eq!(tab, 1);
    ext.say(
        &hub,
        json!({"type": "call_tool_result", "id": id, "result": "one"}),
    );
    assert_eq!(call.await.unwrap(), Ok(json!("one")));

    // Only tab 2 offers todomvc_b, focused or not.
    let call = spawn_call(&hub, "todomvc_b", None);
    let (id, tab, ..) = ext.next_call().await;
    assert_eq!(tab, 2);
    ext.say(
        &hub,
        json!({"type": "call_tool_result", "id": id, "result": {}}),
    );
    assert!(call.await.unwrap().is_ok());

    let focused: Vec<_> = hub
        .tabs()
        .into_iter()
        .filter(|t| t.focused)
        .map(|t| t.id)
        .collect();
    assert_eq!(focused, [1]);
}

#[tokio::test]
async fn explicit_tab_id_wins_and_is_checked_at_once() {
    let hub = hub();
    let mut ext = two_tabs(&hub);
    ext.say(&hub, json!({"type": "tab_focused", "tab": 2}));
    let call = spawn_call(&hub, "todomvc_a", Some(1));
    let (id, tab, ..) = ext.next_call().await;
    assert_eq!(tab, 1);
    ext.say(
        &hub,
        json!({"type": "call_tool_result", "id": id, "result": 1}),
    );
    assert_eq!(call.await.unwrap(), Ok(json!(1)));

    assert_eq!(
        code(hub.call_tool("todomvc_a", json!({}), Some(99)).await),
        ErrorCode::NoSuchTab
    );
    assert_eq!(
        code(hub.call_tool("todomvc_b", json!({}), Some(1)).await),
        ErrorCode::NoSuchTool
    );
    assert_eq!(
        code(hub.call_tool("todomvc_zzz", json!({}), None).await),
        ErrorCode::NoSuchTool
    );
    assert!(ext.frames.is_empty(), "refused calls send nothing");
}

#[tokio::test]
async fn concurrent_calls_are_correlated_by_id() {
    let hub = hub();
    let mut ext = two_tabs(&hub);
    let calls: Vec<_> = (0..16)
        .map(|_| spawn_call(&hub, "todomvc_a", Some(1)))
        .collect();
    let mut ids = Vec::new();
    for _ in 0..16 {
        ids.push(ext.next_call().await.0);
    }
    // Answer in reverse order, each with its own id as the result.
    for id in ids.iter().rev() {
        ext.say(
            &hub,
            json!({"type": "call_tool_result", "id": id, "result": id}),
        );
    }
    let mut answered = Vec::new();
    for call in calls {
        answered.push(call.await.unwrap().unwrap());
    }
    let mut expected: Vec<Value> = ids.iter().map(|id| json!(id)).collect();
    expected.sort_by_key(|v| v.to_string());
    answered.sort_by_key(|v| v.to_string());
    assert_eq!(answered, expected);
}

#[tokio::test]
async fn page_errors_reach_the_caller() {
    let hub = hub();
    let mut ext = two_tabs(&hub);
    let call = spawn_call(&hub, "todomvc_a", None);
    let (id, ..) = ext.next_call().await;
    ext.say(
        &hub,
        json!({"type": "call_tool_error", "id": id, "error": {"code": "ELEMENT_NOT_FOUND", "message": "no .x"}}),
    );
    assert_eq!(
        call.await.unwrap(),
        Err(WireError::new(ErrorCode::ElementNotFound, "no .x"))
    );
}

#[tokio::test(start_paused = true)]
async fn a_timeout_fails_the_call_and_cancels_it_on_the_page() {
    let hub = hub_with_timeout(Duration::from_millis(500));
    let mut ext = two_tabs(&hub);
    let call = spawn_call(&hub, "todomvc_a", None);
    let (id, ..) = ext.next_call().await;
    let outcome = call.await.unwrap();
    assert_eq!(code(outcome.clone()), ErrorCode::Timeout, "{outcome:?}");
    assert_eq!(ext.next().await, ToExtension::Cancel { id: id.clone() });
    // A late answer is dropped quietly, and the hub keeps working.
    ext.say(
        &hub,
        json!({"type": "call_tool_result", "id": id, "result": 1}),
    );
    assert_eq!(hub.registry().pending_requests(), 0);
    assert!(ext.frames.is_empty(), "a late answer gets no reply");
}

#[tokio::test]
async fn a_closed_tab_fails_its_pending_calls_at_once() {
    let hub = hub();
    let mut ext = two_tabs(&hub);
    let on_tab_1 = spawn_call(&hub, "todomvc_a", Some(1));
    ext.next_call().await;
    let on_tab_2 = spawn_call(&hub, "todomvc_a", Some(2));
    let (id2, ..) = ext.next_call().await;
    let mut tools = hub.subscribe_tools();
    ext.say(&hub, json!({"type": "tab_closed", "tab": 1}));
    assert_eq!(code(on_tab_1.await.unwrap()), ErrorCode::TabClosed);
    // Tab 2's tools are the same set, so closing tab 1 changed nothing for MCP clients.
    assert!(!tools.has_changed().unwrap());
    ext.say(
        &hub,
        json!({"type": "call_tool_result", "id": id2, "result": 2}),
    );
    assert_eq!(on_tab_2.await.unwrap(), Ok(json!(2)));
    ext.say(&hub, json!({"type": "tab_closed", "tab": 2}));
    assert!(tools.has_changed().unwrap());
    tools.mark_unchanged();
    assert!(hub.exported_tools().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_closed_socket_fails_its_pending_calls_and_drops_its_tabs() {
    let hub = hub();
    let mut ext = two_tabs(&hub);
    let call = spawn_call(&hub, "todomvc_a", None);
    ext.next_call().await;
    let tools = hub.subscribe_tools();
    hub.disconnect(ext.conn);
    let outcome = call.await.unwrap();
    assert_eq!(code(outcome.clone()), ErrorCode::NotConnected);
    assert!(
        outcome
            .unwrap_err()
            .message
            .contains("disconnected during the call")
    );
    assert!(tools.has_changed().unwrap());
    assert!(hub.tabs().is_empty());
    let err = hub
        .call_tool("todomvc_a", json!({}), None)
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::NotConnected);
    assert!(err.message.contains("not connected"), "{err}");
}

#[tokio::test(start_paused = true)]
async fn a_call_made_while_the_browser_reconnects_waits_for_its_tab() {
    let hub = hub();
    let ext = two_tabs(&hub);
    hub.disconnect(ext.conn);
    // Named and unnamed: both wait, then go to the tab the new connection re-announced.
    let named = spawn_call(&hub, "todomvc_b", Some(2));
    let unnamed = spawn_call(&hub, "todomvc_a", None);
    tokio::time::sleep(REANNOUNCE_GRACE / 2).await;
    assert!(!named.is_finished() && !unnamed.is_finished());
    let mut back = two_tabs(&hub);
    let mut calls = Vec::new();
    for _ in 0..2 {
        let (id, tab, tool, _) = back.next_call().await;
        back.say(
            &hub,
            json!({"type": "call_tool_result", "id": id, "result": tab}),
        );
        calls.push((tool, tab));
    }
    assert!(calls.contains(&("todomvc_b".to_owned(), 2)), "{calls:?}");
    assert_eq!(named.await.unwrap(), Ok(json!(2)));
    assert!(unnamed.await.unwrap().is_ok());
}

#[tokio::test(start_paused = true)]
async fn a_tab_that_does_not_come_back_is_not_connected_or_gone_after_the_grace() {
    let hub = hub();
    let ext = two_tabs(&hub);
    hub.disconnect(ext.conn);
    // No browser came back: a retryable NOT_CONNECTED once the grace period is over.
    let started = Instant::now();
    let err = hub
        .call_tool("todomvc_b", json!({}), Some(2))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::NotConnected, "{err}");
    assert!(started.elapsed() >= REANNOUNCE_GRACE);
    // The browser comes back without tab 2 (closed meanwhile): after the grace, no such tab.
    let again = two_tabs(&hub);
    hub.disconnect(again.conn);
    let back = FakeExtension::connect(&hub);
    back.say(&hub, json!({"type": "tools_snapshot", "tabs": [
        {"tab": 1, "url": "http://todomvc.com/examples/a", "title": "A", "tools": [tool("todomvc_a")]},
    ]}));
    let err = hub
        .call_tool("todomvc_b", json!({}), Some(2))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::NoSuchTab, "{err}");
}

#[tokio::test]
async fn a_closed_tab_keeps_its_last_state_marked_closed_and_is_not_asked_again() {
    let hub = hub();
    let ext = two_tabs(&hub);
    let mut changes = hub.subscribe_states();
    ext.say(
        &hub,
        json!({"type": "state_update", "tab": 1, "state": {"n": 1}, "ts": 5}),
    );
    assert_eq!(changes.recv().await.unwrap(), 1);
    ext.say(&hub, json!({"type": "tab_closed", "tab": 1}));
    assert_eq!(
        changes.recv().await.unwrap(),
        1,
        "subscribers hear that the tab closed"
    );
    let last = hub.cached_state(1).expect("the closed tab's state is kept");
    assert!(last.tab_closed);
    assert_eq!(last.state, json!({"n": 1}));
    assert_eq!(hub.tabs_with_state(), vec![1]);
    let err = hub.request_state(1).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::TabClosed, "{err}");
}

#[tokio::test]
async fn port_in_use_is_explained() {
    let hub = hub();
    hub.set_link(Link::PortInUse);
    let err = hub
        .call_tool("todomvc_a", json!({}), None)
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::NotConnected);
    assert!(
        err.message.starts_with(
            "No browser can connect: something else is listening on port 17373 of 127.0.0.1 and did not prove"
        ),
        "{err}"
    );
    assert!(err.message.contains("tabwire setup --port N"), "{err}");
}

#[tokio::test]
async fn answers_for_unknown_ids_are_dropped() {
    let hub = hub();
    let mut ext = two_tabs(&hub);
    ext.say(
        &hub,
        json!({"type": "call_tool_result", "id": "nobody", "result": 1}),
    );
    // The only reply is the pong: nothing was sent about the unknown id.
    ext.pings(&hub, 1).await;
}

#[tokio::test]
async fn answers_from_another_socket_are_ignored() {
    let hub = hub();
    let mut ext = two_tabs(&hub);
    let intruder = FakeExtension::connect(&hub);
    let call = spawn_call(&hub, "todomvc_a", Some(1));
    let (id, ..) = ext.next_call().await;
    intruder.say(
        &hub,
        json!({"type": "call_tool_result", "id": id, "result": "forged"}),
    );
    ext.say(
        &hub,
        json!({"type": "call_tool_result", "id": id, "result": "real"}),
    );
    assert_eq!(call.await.unwrap(), Ok(json!("real")));
}

#[tokio::test]
async fn bad_frames_get_an_error_reply_and_fail_their_request() {
    let hub = hub();
    let mut ext = two_tabs(&hub);
    hub.handle_frame(ext.conn, "not json");
    match ext.next().await {
        ToExtension::Error {
            in_reply_to: None,
            error,
        } => {
            assert_eq!(error.code, ErrorCode::Protocol);
            assert!(error.message.contains("not JSON"), "{error}");
        }
        other => panic!("expected error, got {other:?}"),
    }
    ext.say(&hub, json!({"type": "launch_missiles"}));
    assert!(matches!(ext.next().await, ToExtension::Error { .. }));

    let call = spawn_call(&hub, "todomvc_a", None);
    let (id, ..) = ext.next_call().await;
    // A result frame missing its `result`: the call fails now instead of timing out.
    ext.say(&hub, json!({"type": "call_tool_result", "id": id}));
    let outcome = call.await.unwrap();
    assert_eq!(code(outcome.clone()), ErrorCode::Protocol, "{outcome:?}");
    match ext.next().await {
        ToExtension::Error { in_reply_to, error } => {
            assert_eq!(in_reply_to.as_deref(), Some(id.as_str()));
            assert_eq!(error.code, ErrorCode::Protocol);
        }
        other => panic!("expected error, got {other:?}"),
    }
    // The socket is still usable.
    ext.pings(&hub, 2).await;
}

#[tokio::test]
async fn the_tool_generation_moves_only_when_the_tool_set_changes() {
    let hub = hub();
    let mut tools = hub.subscribe_tools();
    let ext = two_tabs(&hub);
    assert!(tools.has_changed().unwrap());
    tools.mark_unchanged();
    let names: Vec<_> = hub
        .exported_tools()
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert_eq!(names, ["todomvc_a", "todomvc_b"]);

    // The same tools registered again (a reload): no change.
    ext.say(
        &hub,
        json!({"type": "tools_updated", "tab": 1, "url": "http://todomvc.com/examples/a",
                         "title": "A", "tools": [tool("todomvc_a")]}),
    );
    ext.say(&hub, json!({"type": "tab_focused", "tab": 1}));
    assert!(!tools.has_changed().unwrap());

    // Navigating tab 2 away from every adapter's pages drops its tools.
    ext.say(
        &hub,
        json!({"type": "tab_navigated", "tab": 2, "url": "https://example.com/"}),
    );
    assert!(tools.has_changed().unwrap());
    let names: Vec<_> = hub
        .exported_tools()
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert_eq!(names, ["todomvc_a"]);
}

/// A `wait_for_tools` on `tab` for `adapters` (none: any adapter's) since `since`, answered by the
/// extension registering the tool `name` there, on a page at `url`: the wait sees exactly that tool.
async fn wait_sees_the_tools_registered(
    hub: &Arc<Hub>,
    ext: &mut FakeExtension,
    tab: TabId,
    adapters: &'static [&'static str],
    since: u64,
    (url, name): (&str, &str),
) {
    let waiter = {
        let hub = hub.clone();
        tokio::spawn(async move {
            hub.wait_for_tools(tab, adapters, since, Duration::from_secs(5))
                .await
        })
    };
    ext.say(
        hub,
        json!({"type": "tools_updated", "tab": tab, "url": url, "title": "X", "tools": [tool(name)]}),
    );
    assert_eq!(
        waiter.await.unwrap(),
        ToolsWait::Registered(vec![name.into()])
    );
}

#[tokio::test]
async fn open_tab_returns_the_tab_and_waiting_for_tools_sees_the_registration() {
    let hub = hub();
    let mut ext = FakeExtension::connect(&hub);
    ext.say(&hub, json!({"type": "tools_snapshot", "tabs": []}));
    assert!(hub.wait_for_browser(Duration::from_secs(1)).await);
    let since = hub.now();
    let opener = {
        let hub = hub.clone();
        tokio::spawn(async move {
            hub.open_tab("http://todomvc.com/examples/x", None, None)
                .await
        })
    };
    let id = match ext.next().await {
        ToExtension::OpenTab {
            id,
            url,
            tab: None,
            wait_loaded_ms: None,
        } => {
            assert_eq!(url, "http://todomvc.com/examples/x");
            id
        }
        other => panic!("expected open_tab, got {other:?}"),
    };
    ext.say(&hub, json!({"type": "open_tab_result", "id": id, "tab": 5}));
    assert_eq!(
        opener.await.unwrap(),
        Ok(OpenedTab {
            tab: 5,
            loaded: None
        })
    );

    let registered = ("http://todomvc.com/examples/x", "todomvc_a");
    wait_sees_the_tools_registered(&hub, &mut ext, 5, &["todomvc"], since, registered).await;
}

#[tokio::test]
async fn hello_names_code_adapters_and_open_tab_can_wait_for_the_page_to_load() {
    let hub = hub();
    let mut ext = FakeExtension::connect(&hub);
    ext.says_hello(
        &hub,
        json!({"code_adapters": [
            {"name": "listcode", "match": ["http://127.0.0.1/*", "not a pattern"], "tools": []},
            {"name": "other", "match": ["https://example.com/*"], "tools": []}
        ]}),
    );
    ext.say(&hub, json!({"type": "tools_snapshot", "tabs": []}));
    assert!(hub.wait_for_browser(Duration::from_secs(1)).await);
    assert_eq!(
        hub.code_adapters_matching("http://127.0.0.1:8000/live/"),
        ["listcode"]
    );
    assert!(hub.code_adapters_matching("http://localhost/").is_empty());

    let since = hub.now();
    let opener = {
        let hub = hub.clone();
        tokio::spawn(async move {
            hub.open_tab("http://127.0.0.1/x", None, Some(Duration::from_millis(700)))
                .await
        })
    };
    let id = loop {
        match ext.next().await {
            ToExtension::OpenTab {
                id, wait_loaded_ms, ..
            } => {
                assert_eq!(wait_loaded_ms, Some(700));
                break id;
            }
            ToExtension::Welcome { .. } => continue,
            other => panic!("expected open_tab, got {other:?}"),
        }
    };
    ext.say(
        &hub,
        json!({"type": "open_tab_result", "id": id, "tab": 6, "loaded": {"runtime": true}}),
    );
    assert_eq!(
        opener.await.unwrap(),
        Ok(OpenedTab {
            tab: 6,
            loaded: Some(LoadedPage { runtime: true })
        })
    );
    // Waiting for any adapter's tools: a WebMCP page's.
    let registered = ("http://127.0.0.1/x", "webmcp_note");
    wait_sees_the_tools_registered(&hub, &mut ext, 6, &[], since, registered).await;
}

#[tokio::test]
async fn a_calls_input_is_trusted_where_the_user_granted_it_and_no_effect_says_how() {
    let dir = tempfile::tempdir().unwrap();
    let grants = crate::grants::Grants::new(dir.path().join("grants.json"));
    let hub = hub_with(Duration::from_secs(30), Some(grants.clone()));
    let mut ext = two_tabs(&hub);

    // No grant: synthetic input, and a NO_EFFECT answer names the setting for the tab's origin.
    let call = spawn_call(&hub, "todomvc_a", Some(1));
    let (id, trusted_input) = ext.next_call_input().await;
    assert!(!trusted_input);
    ext.say(
        &hub,
        json!({"type": "call_tool_error", "id": id,
               "error": {"code": "NO_EFFECT", "message": "`#name` kept its value"}}),
    );
    let error = call.await.unwrap().unwrap_err();
    assert_eq!(error.code, ErrorCode::NoEffect);
    assert!(
        error
            .message
            .starts_with("`#name` kept its value. If this page ignores synthetic input")
            && error
                .message
                .contains("`tabwire allow --trusted-input http://todomvc.com`")
            && error.message.contains("debugging this browser"),
        "{}",
        error.message
    );

    // Granted: the call's input is trusted, in that origin's tabs only; a page op's as the gate
    // decided it (permission.rs).
    grants
        .allow(
            &bridge::Origin::parse("http://todomvc.com").unwrap(),
            crate::grants::Need::TrustedInput,
        )
        .unwrap();
    let call = spawn_call(&hub, "todomvc_a", Some(1));
    let (id, trusted_input) = ext.next_call_input().await;
    assert!(trusted_input);
    // A NO_EFFECT under trusted input is the page's own answer: no advice to turn it on.
    ext.say(
        &hub,
        json!({"type": "call_tool_error", "id": id,
               "error": {"code": "NO_EFFECT", "message": "kept its value"}}),
    );
    assert_eq!(call.await.unwrap().unwrap_err().message, "kept its value");
    let op = {
        let hub = hub.clone();
        tokio::spawn(async move {
            let click = json!({"selector": "#go", "action": "click"});
            let click = bridge::page_ops::parse(bridge::page_ops::ACT, click).unwrap();
            hub.page_op(
                &click,
                Some(2),
                None,
                None,
                true,
                CallFiles::Named(Vec::new()),
            )
            .await
        })
    };
    let ToExtension::PageOp { call, .. } = ext.next().await else {
        panic!("expected page_op")
    };
    assert!(call.trusted_input);
    op.abort();
    grants
        .revoke(
            &bridge::Origin::parse("http://todomvc.com").unwrap(),
            crate::grants::Need::TrustedInput,
        )
        .unwrap();
    // (The aborted page op is cancelled first.)
    assert!(matches!(ext.next().await, ToExtension::Cancel { .. }));
    let _call = spawn_call(&hub, "todomvc_a", Some(1));
    let ToExtension::CallTool { trusted_input, .. } = ext.next().await else {
        panic!("expected call_tool")
    };
    assert!(!trusted_input, "a revoke takes effect at once");
}

//! End to end against the real `tabwire` binary (rmcp's client on stdio, a fake extension on
//! the WebSocket): the state cache and `site_state`, the tab and state resources with
//! `resources/updated`, cancellation of a call in the page, and progress with its timeout
//! restart and hard ceiling.

mod support;

use rmcp::model::{
    CallToolRequest, ClientRequest, ProgressNotificationParam, ReadResourceRequestParams,
    ResourceUpdatedNotificationParam, SubscribeRequestParams,
};
use rmcp::service::PeerRequestOptions;
use support::*;
use tokio::sync::mpsc;

/// Records the notifications the tests wait for.
#[derive(Clone)]
struct Recorder {
    events: mpsc::UnboundedSender<Event>,
}

#[derive(Debug)]
enum Event {
    Progress(ProgressNotificationParam),
    Updated(String),
}

impl ClientHandler for Recorder {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.events.send(Event::Progress(params));
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.events.send(Event::Updated(params.uri));
    }
}

struct Session {
    client: RunningService<RoleClient, Recorder>,
    events: mpsc::UnboundedReceiver<Event>,
    socket: Socket,
    _setup: Setup,
}

impl Session {
    /// A binary with one fake browser whose tab 7 offers the todomvc tools.
    async fn start(extra: &[&str]) -> Session {
        let setup = Setup::new();
        let (transport, _stderr) = TokioChildProcess::builder(setup.command(extra))
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let (events_tx, events) = mpsc::unbounded_channel();
        let client = Recorder { events: events_tx }
            .serve(transport)
            .await
            .unwrap();
        let mut socket = setup.extension().await;
        offer_todomvc_tab(&mut socket, "http://todomvc.com/examples/vanillajs/").await;
        let mut session = Session {
            client,
            events,
            socket,
            _setup: setup,
        };
        // The snapshot has arrived once the tab is listed.
        let deadline = Instant::now() + DEADLINE;
        loop {
            let tabs = session.spawn_call("browser_tabs", json!({}));
            // browser_tabs asks the browser for its other tabs: this one has none.
            let list = session.expect_frame("browser").await;
            let answer =
                json!({"type": "browser_result", "id": list["id"], "result": {"tabs": []}});
            send(&mut session.socket, answer).await;
            let tabs = tabs.await.unwrap();
            if tabs.structured_content.unwrap()["tabs"][0]["id"] == 7 {
                break session;
            }
            assert!(Instant::now() < deadline, "the snapshot never arrived");
            tokio::task::yield_now().await;
        }
    }

    async fn call(&self, name: &'static str, args: Value) -> CallToolResult {
        let args: JsonObject = serde_json::from_value(args).unwrap();
        self.client
            .call_tool(CallToolRequestParams::new(name).with_arguments(args))
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    /// Starts a call in the background.
    fn spawn_call(
        &self,
        name: &'static str,
        args: Value,
    ) -> tokio::task::JoinHandle<CallToolResult> {
        let peer = self.client.peer().clone();
        let args: JsonObject = serde_json::from_value(args).unwrap();
        tokio::spawn(async move {
            peer.call_tool(CallToolRequestParams::new(name).with_arguments(args))
                .await
                .unwrap()
        })
    }

    /// The next frame of `kind` the server sent to the extension (pongs and such skipped).
    async fn expect_frame(&mut self, kind: &str) -> Value {
        loop {
            let frame = receive(&mut self.socket).await;
            if frame["type"] == kind {
                return frame;
            }
            assert!(
                !["call_tool", "request_state", "cancel"]
                    .contains(&frame["type"].as_str().unwrap()),
                "expected {kind}, got {frame}"
            );
        }
    }

    async fn next_event(&mut self) -> Event {
        tokio::time::timeout(DEADLINE, self.events.recv())
            .await
            .expect("a notification within the deadline")
            .expect("the client is running")
    }
}

fn structured(result: &CallToolResult) -> Value {
    result
        .structured_content
        .clone()
        .expect("structured content")
}

#[tokio::test]
async fn site_state_serves_the_cache_asks_the_page_and_falls_back_with_a_note() {
    let mut s = Session::start(&["--call-timeout-ms", "5000"]).await;

    // No cache yet: the page is asked.
    let call = s.spawn_call("site_state", json!({}));
    let request = s.expect_frame("request_state").await;
    assert_eq!(request["tab"], 7);
    send(
        &mut s.socket,
        json!({"type": "state_response", "id": request["id"], "state": {"todos": 1}}),
    )
    .await;
    let out = structured(&call.await.unwrap());
    assert_eq!(out["source"], "page", "{out}");
    assert_eq!(out["state"], json!({"todos": 1}));
    assert_eq!(out["tab_id"], 7);

    // A pushed state is served from the cache without asking the page.
    send(
        &mut s.socket,
        json!({"type": "state_update", "tab": 7, "state": {"todos": 2}, "ts": 1_700_000_000_000u64}),
    )
    .await;
    let deadline = Instant::now() + DEADLINE;
    let out = loop {
        let out = structured(&s.call("site_state", json!({"tab_id": 7})).await);
        if out["state"] == json!({"todos": 2}) {
            break out;
        }
        assert!(
            Instant::now() < deadline,
            "the pushed state never arrived: {out}"
        );
    };
    assert_eq!(out["source"], "cache");
    assert_eq!(out["cached_from"], "state_update");
    assert_eq!(out["page_ts"], 1_700_000_000_000u64);
    assert!(out["age_ms"].as_u64().is_some(), "{out}");

    // force_refresh asks the page; when it fails, the cache comes back with a note.
    let call = s.spawn_call("site_state", json!({"force_refresh": true}));
    let request = s.expect_frame("request_state").await;
    send(
        &mut s.socket,
        json!({"type": "state_error", "id": request["id"],
               "error": {"code": "ADAPTER_ERROR", "message": "state extractor threw"}}),
    )
    .await;
    let result = call.await.unwrap();
    assert_eq!(result.is_error, Some(false));
    let out = structured(&result);
    assert_eq!(out["source"], "cache");
    assert_eq!(out["state"], json!({"todos": 2}));
    let note = out["note"].as_str().expect("a note");
    assert!(
        note.contains("ADAPTER_ERROR: state extractor threw"),
        "{out}"
    );

    // A closed tab keeps its last state readable, saying it closed; calls answer TAB_CLOSED at once.
    send(&mut s.socket, json!({"type": "tab_closed", "tab": 7})).await;
    let deadline = Instant::now() + DEADLINE;
    loop {
        let out = s
            .call("site_state", json!({"tab_id": 7, "force_refresh": true}))
            .await;
        let out = structured(&out);
        if out["tab_closed"] == json!(true) {
            assert_eq!(out["state"], json!({"todos": 2}));
            let note = out["note"].as_str().expect("a note");
            assert!(note.starts_with("tab 7 was closed"), "{out}");
            break;
        }
        assert!(Instant::now() < deadline, "tab 7 never closed");
    }
    let out = s
        .call("todomvc_add_todo", json!({"title": "x", "tab_id": 7}))
        .await;
    assert!(text(&out).starts_with("TAB_CLOSED: "), "{}", text(&out));
    // A malformed argument is the model's to correct: a tool failure naming it (SEP-1303).
    let args: JsonObject = serde_json::from_value(json!({"force_refresh": "yes"})).unwrap();
    let out = s
        .client
        .call_tool(CallToolRequestParams::new("site_state").with_arguments(args))
        .await
        .unwrap();
    assert_eq!(
        text(&out),
        "INVALID_ARGS: site_state: argument \"force_refresh\" must be of type boolean, got \"yes\""
    );
}

#[tokio::test]
#[allow(deprecated)] // resources/subscribe: the path of clients before 2026-07-28
async fn state_resources_are_listed_read_and_subscribed() {
    let mut s = Session::start(&["--call-timeout-ms", "5000"]).await;
    let resources = s.client.list_all_resources().await.unwrap();
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["tabwire://tabs", "tabwire://tabs/7/state"]);
    let templates = s.client.list_all_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "tabwire://tabs/{tab_id}/state");

    let tabs = s
        .client
        .read_resource(ReadResourceRequestParams::new("tabwire://tabs"))
        .await
        .unwrap();
    let text_of = |result: &rmcp::model::ReadResourceResult| -> Value {
        match &result.contents[0] {
            rmcp::model::ResourceContents::TextResourceContents { text, .. } => {
                serde_json::from_str(text).unwrap()
            }
            other => panic!("expected text contents, got {other:?}"),
        }
    };
    assert_eq!(text_of(&tabs)["tabs"][0]["id"], 7);

    s.client
        .subscribe(SubscribeRequestParams::new("tabwire://tabs/7/state"))
        .await
        .unwrap();
    send(
        &mut s.socket,
        json!({"type": "state_update", "tab": 7, "state": {"todos": 3}, "ts": 1u64}),
    )
    .await;
    match s.next_event().await {
        Event::Updated(uri) => assert_eq!(uri, "tabwire://tabs/7/state"),
        Event::Progress(p) => panic!("unexpected progress {p:?}"),
    }
    let state = s
        .client
        .read_resource(ReadResourceRequestParams::new("tabwire://tabs/7/state"))
        .await
        .unwrap();
    let state = text_of(&state);
    assert_eq!(state["state"], json!({"todos": 3}));
    assert_eq!(state["source"], "cache");

    // Unknown resources and lookalike URIs are JSON-RPC errors, and the session lives on.
    for bad in [
        "tabwire://tabs/x/state",
        "file:///etc/passwd",
        "tabwire://tabs/99/state",
    ] {
        let err = s
            .client
            .read_resource(ReadResourceRequestParams::new(bad))
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains(bad) || err.to_string().contains("99"),
            "{err}"
        );
    }
    assert!(
        s.client
            .subscribe(SubscribeRequestParams::new("tabwire://nothing"))
            .await
            .is_err()
    );
    assert_eq!(
        s.call("browser_tabs", json!({})).await.is_error,
        Some(false)
    );
}

#[tokio::test]
async fn a_cancelled_call_is_cancelled_in_the_page_and_frees_its_entry() {
    let mut s = Session::start(&["--call-timeout-ms", "5000"]).await;
    let args: JsonObject = serde_json::from_value(json!({"title": "slow"})).unwrap();
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("todomvc_add_todo").with_arguments(args),
    ));
    let handle = s
        .client
        .peer()
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    let call = s.expect_frame("call_tool").await;
    handle
        .cancel(Some("the user changed their mind".into()))
        .await
        .unwrap();
    let cancel = s.expect_frame("cancel").await;
    assert_eq!(cancel["id"], call["id"]);
    // A late answer to the cancelled call is dropped; the next call works normally.
    send(
        &mut s.socket,
        json!({"type": "call_tool_result", "id": call["id"], "result": "late"}),
    )
    .await;
    let next = s.spawn_call("todomvc_add_todo", json!({"title": "next"}));
    let frame = s.expect_frame("call_tool").await;
    assert_ne!(frame["id"], call["id"]);
    send(
        &mut s.socket,
        json!({"type": "call_tool_result", "id": frame["id"], "result": {"added": "next"}}),
    )
    .await;
    assert_eq!(structured(&next.await.unwrap()), json!({"added": "next"}));
}

#[tokio::test]
async fn progress_reaches_the_client_and_restarts_the_timeout_up_to_a_ceiling() {
    // A 600 ms timeout: the page below takes longer, kept alive by progress every 150 ms.
    let mut s = Session::start(&["--call-timeout-ms", "600"]).await;
    let call = s.spawn_call("todomvc_add_todo", json!({"title": "slow"}));
    let frame = s.expect_frame("call_tool").await;
    let started = Instant::now();
    let mut ticks = tokio::time::interval(Duration::from_millis(150));
    let mut sent = 0;
    while started.elapsed() < Duration::from_millis(1200) {
        ticks.tick().await;
        sent += 1;
        send(
            &mut s.socket,
            json!({"type": "progress", "id": frame["id"], "message": format!("step {sent}"),
                   "progress": sent, "total": 20}),
        )
        .await;
    }
    send(
        &mut s.socket,
        json!({"type": "call_tool_result", "id": frame["id"], "result": {"added": "slow"}}),
    )
    .await;
    let out = call.await.unwrap();
    assert_eq!(out.is_error, Some(false), "{out:?}");
    let mut seen = Vec::new();
    while let Ok(event) = s.events.try_recv() {
        if let Event::Progress(p) = event {
            seen.push(p);
        }
    }
    // Notifications may trail the result; wait for the first few at least.
    while seen.len() < 3 {
        if let Event::Progress(p) = s.next_event().await {
            seen.push(p);
        }
    }
    assert_eq!(seen[0].message.as_deref(), Some("step 1"));
    assert_eq!(seen[0].total, Some(20.0));
    assert!(seen.windows(2).all(|w| w[1].progress > w[0].progress));

    // A page that reports progress forever is stopped at the ceiling (4 timeouts).
    let call = s.spawn_call("todomvc_add_todo", json!({"title": "forever"}));
    let frame = s.expect_frame("call_tool").await;
    let started = Instant::now();
    let mut ticks = tokio::time::interval(Duration::from_millis(150));
    let out = loop {
        ticks.tick().await;
        if call.is_finished() {
            break call.await.unwrap();
        }
        assert!(started.elapsed() < DEADLINE, "the ceiling never struck");
        send(
            &mut s.socket,
            json!({"type": "progress", "id": frame["id"], "message": "still going"}),
        )
        .await;
    };
    assert!(text(&out).starts_with("TIMEOUT: "), "{}", text(&out));
    assert!(
        text(&out).contains("still reporting progress"),
        "{}",
        text(&out)
    );
    assert!(started.elapsed() >= Duration::from_millis(2000));
    assert_eq!(s.expect_frame("cancel").await["id"], frame["id"]);
}

#[tokio::test]
async fn a_2026_07_28_client_hears_of_state_changes_through_its_subscription() {
    use rmcp::model::{ServerNotification, SubscriptionFilter};
    let setup = Setup::new();
    let client = setup.start_2026_07_28().await;
    let filter = SubscriptionFilter::builder()
        .resource_subscription("tabwire://tabs/7/state")
        .build();
    let mut subscription = client.listen(filter).await.unwrap();
    assert_eq!(
        subscription.acknowledged().resource_subscriptions,
        Some(vec!["tabwire://tabs/7/state".to_owned()])
    );

    let mut socket = setup.extension().await;
    hello(&mut socket).await;
    // Another tab's state is not what this subscription asked for; tab 7's is.
    for tab in [8, 7] {
        send(
            &mut socket,
            json!({"type": "state_update", "tab": tab, "state": {"n": tab}, "ts": 1u64}),
        )
        .await;
    }
    let notification = tokio::time::timeout(DEADLINE, subscription.next())
        .await
        .expect("a notification within the deadline")
        .unwrap()
        .expect("the subscription is open");
    match notification {
        ServerNotification::ResourceUpdatedNotification(updated) => {
            assert_eq!(updated.params.uri, "tabwire://tabs/7/state")
        }
        other => panic!("expected resources/updated, got {other:?}"),
    }
    client.cancel().await.unwrap();
}

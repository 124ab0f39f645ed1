//! End to end against the real `tabwire` binary: rmcp's own client over stdio on one side, a
//! fake browser extension over the authenticated WebSocket on the other.

mod support;

use support::*;

#[tokio::test]
async fn an_mcp_client_drives_a_fake_extension_through_the_binary() {
    let setup = Setup::new();
    let (client, counter) = setup.start(&["--call-timeout-ms", "5000"]).await;

    let names = |tools: &[rmcp::model::Tool]| -> Vec<String> {
        tools.iter().map(|t| t.name.to_string()).collect()
    };
    let before = client.list_all_tools().await.unwrap();
    // The tools every client sees, in the order the reserved names list them.
    assert_eq!(names(&before), bridge::names::META_TOOL_NAMES);

    // Without a browser, site tools of loaded adapters answer NOT_CONNECTED.
    let out = call(&client, "todomvc_list_todos", json!({})).await;
    assert_eq!(out.is_error, Some(true));
    assert!(text(&out).starts_with("NOT_CONNECTED: "), "{}", text(&out));

    let mut socket = setup.extension().await;
    let seen = counter.count();
    let welcome = offer_todomvc_tab(&mut socket, "http://todomvc.com/examples/vanillajs/").await;
    assert_eq!(welcome["protocol"], bridge::PROTOCOL_VERSION);
    counter.wait_above(seen).await;
    let page = tokio::spawn(play_page(socket));

    let tools = client.list_all_tools().await.unwrap();
    let listed = names(&tools);
    for expected in [
        "browser_tabs",
        "browser_open",
        "site_call",
        "todomvc_add_todo",
        "todomvc_list_todos",
        "todomvc_toggle_todo",
        "todomvc_clear_completed",
    ] {
        assert!(
            listed.iter().any(|n| n == expected),
            "{expected} in {listed:?}"
        );
    }
    let add = tools.iter().find(|t| t.name == "todomvc_add_todo").unwrap();
    assert_eq!(add.input_schema["properties"]["tab_id"]["type"], "integer");
    let list = tools
        .iter()
        .find(|t| t.name == "todomvc_list_todos")
        .unwrap();
    assert_eq!(
        list.annotations.as_ref().unwrap().read_only_hint,
        Some(true)
    );

    let out = call(&client, "todomvc_add_todo", json!({"title": "Buy milk"})).await;
    assert_eq!(out.is_error, Some(false), "{out:?}");
    assert_eq!(
        out.structured_content,
        Some(json!({"added": "Buy milk", "tab": 7}))
    );

    let out = call(&client, "todomvc_list_todos", json!({})).await;
    assert_eq!(
        out.structured_content,
        Some(json!({"result": [{"title": "Buy milk", "completed": false}]}))
    );
    assert!(text(&out).contains("Buy milk"));

    let out = call(&client, "todomvc_toggle_todo", json!({"title": "Nope"})).await;
    assert_eq!(out.is_error, Some(true));
    assert_eq!(text(&out), "ELEMENT_NOT_FOUND: no todo titled that");
    assert_eq!(
        out.structured_content.unwrap()["error"]["code"],
        "ELEMENT_NOT_FOUND"
    );

    let started = Instant::now();
    let out = call(
        &client,
        "todomvc_add_todo",
        json!({"title": "x", "tab_id": 999}),
    )
    .await;
    assert_eq!(out.is_error, Some(true));
    assert!(text(&out).starts_with("NO_SUCH_TAB: "), "{}", text(&out));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "NO_SUCH_TAB must not wait"
    );

    let out = call(
        &client,
        "site_call",
        json!({"tool": "todomvc_add_todo", "args": {"title": "Via site_call"}, "tab_id": 7}),
    )
    .await;
    assert_eq!(
        out.structured_content,
        Some(json!({"added": "Via site_call", "tab": 7}))
    );

    let out = call(&client, "browser_tabs", json!({})).await;
    let tabs = &out.structured_content.unwrap()["tabs"];
    assert_eq!(tabs[0]["id"], 7);
    assert_eq!(tabs[0]["url"], "http://todomvc.com/examples/vanillajs/");
    assert!(
        tabs[0]["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("todomvc_add_todo"))
    );

    // An unknown tool is a JSON-RPC error; arguments that do not fit the tool's schema are a tool
    // failure the model reads and corrects (SEP-1303), in the words of bridge::args.
    let unknown = client
        .call_tool(CallToolRequestParams::new("no_such_tool"))
        .await;
    assert!(unknown.is_err(), "{unknown:?}");
    let missing_title = client
        .call_tool(CallToolRequestParams::new("todomvc_add_todo").with_arguments(JsonObject::new()))
        .await
        .unwrap();
    assert_eq!(missing_title.is_error, Some(true));
    assert_eq!(
        missing_title.content[0].as_text().unwrap().text,
        "INVALID_ARGS: todomvc_add_todo: missing required argument \"title\""
    );

    client.cancel().await.unwrap();
    page.abort();
}

#[tokio::test]
async fn a_2026_07_28_client_hears_of_new_tools_through_its_subscription() {
    use rmcp::model::{ServerNotification, SubscriptionFilter};
    let setup = Setup::new();
    let client = setup.start_2026_07_28().await;
    let mut subscription = client
        .listen(SubscriptionFilter::builder().tools_list_changed().build())
        .await
        .unwrap();
    assert_eq!(subscription.acknowledged().tools_list_changed, Some(true));

    let mut socket = setup.extension().await;
    // Several tabs in one snapshot.
    offer_todomvc_tabs(&mut socket, 5).await;

    let notification = tokio::time::timeout(DEADLINE, subscription.next())
        .await
        .expect("a notification within the deadline")
        .unwrap()
        .expect("the subscription is open");
    assert!(
        matches!(
            notification,
            ServerNotification::ToolListChangedNotification(_)
        ),
        "{notification:?}"
    );
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "todomvc_add_todo"));
    // An open subscription must not hold up the exit (rmcp's client kills a child that has
    // not exited after 3 s).
    let started = Instant::now();
    client.cancel().await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "exit took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn the_websocket_refuses_foreign_origins_and_bad_secrets() {
    let setup = Setup::new();
    let (client, _) = setup.start(&[]).await;
    let good_origin = setup.origin();
    let good_protocols = setup.protocols();
    let look_alike = format!("{good_origin}.evil");
    let old_protocol = format!("tabwire.v1, tabwire.secret.{}", setup.secret);
    let in_url = format!("/?secret={}", setup.secret);
    let cases: [(&str, &str, Option<&str>, Option<&str>); 7] = [
        (
            "web page",
            "/",
            Some("http://127.0.0.1:8080"),
            Some(&good_protocols),
        ),
        (
            "other extension",
            "/",
            Some("chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
            Some(&good_protocols),
        ),
        ("look-alike", "/", Some(&look_alike), Some(&good_protocols)),
        ("no origin", "/", None, Some(&good_protocols)),
        ("no nonce", "/", Some(&good_origin), Some("tabwire.v3")),
        ("protocol 1", "/", Some(&good_origin), Some(&old_protocol)),
        (
            "secret in URL",
            &in_url,
            Some(&good_origin),
            Some("tabwire.v3"),
        ),
    ];
    for (case, path, origin, protocols) in cases {
        match setup.handshake(path, origin, protocols).await {
            Err(WsError::Http(response)) => {
                assert_eq!(response.status(), 403, "{case}");
                let body = String::from_utf8_lossy(response.body().as_deref().unwrap_or_default())
                    .into_owned();
                assert!(
                    !body.contains(&setup.secret),
                    "{case}: the body echoes the secret"
                );
                if case == "protocol 1" {
                    let ours = format!("protocol {}", bridge::PROTOCOL_VERSION);
                    assert!(body.contains(&ours), "{case}: {body}");
                }
            }
            Ok(_) => panic!("{case}: accepted"),
            Err(e) => panic!("{case}: expected HTTP 403, got {e}"),
        }
    }

    // A client with another secret finds the server's proof wrong, and tells it so.
    let mut socket = setup
        .handshake("/", Some(&good_origin), Some(&good_protocols))
        .await
        .unwrap();
    let wrong = "0".repeat(64);
    assert_eq!(
        setup.prove(&mut socket, &wrong).await,
        Err(HandshakeError::WrongProof)
    );
    // A client that does not know the secret gets nothing but the server's proof: its own
    // wrong proof (or any other frame in its place) closes the socket.
    for first in [
        json!({"type": "client_proof", "proof": "00".repeat(32)}),
        json!({"type": "hello", "protocol": 2}),
    ] {
        let mut socket = setup
            .handshake("/", Some(&good_origin), Some(&good_protocols))
            .await
            .unwrap();
        let _server_proof = receive_text(&mut socket).await;
        send(&mut socket, first.clone()).await;
        let next = tokio::time::timeout(DEADLINE, socket.next())
            .await
            .expect("the server answers at once");
        match next {
            Some(Ok(Message::Close(Some(close)))) => {
                assert_eq!(u16::from(close.code), handshake::CLOSE_BAD_PROOF, "{first}")
            }
            other => panic!("{first}: expected a close, got {other:?}"),
        }
    }
    // And the right one still gets in.
    let _extension = setup.welcomed_extension().await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_head_probe_hears_that_the_server_is_up_and_nothing_more() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let setup = Setup::new();
    let (client, _) = setup.start(&[]).await;
    // The extension probes with HEAD before opening its WebSocket (see worker/src/backoff.rs).
    // Whole, and in pieces (the method split across segments, the head across reads).
    let request: &[u8] =
        b"HEAD / HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.example\r\n\r\n";
    for pieces in [
        vec![request],
        vec![&request[..2], &request[2..30], &request[30..]],
    ] {
        let mut probe = setup.connect().await;
        probe.set_nodelay(true).unwrap();
        for piece in pieces {
            probe.write_all(piece).await.unwrap();
            probe.flush().await.unwrap();
        }
        let mut answer = String::new();
        tokio::time::timeout(
            std::time::Duration::from_secs(10),
            probe.read_to_string(&mut answer),
        )
        .await
        .expect("the probe is answered and closed")
        .unwrap();
        assert_eq!(
            answer,
            "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n"
        );
    }
    // A WebSocket handshake is still a WebSocket handshake.
    let _extension = setup.welcomed_extension().await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_port_held_by_another_program_leaves_mcp_working() {
    let setup = Setup::new();
    let holder = std::net::TcpListener::bind(("127.0.0.1", setup.port)).unwrap();
    let (client, _) = setup.start(&[]).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(
        tools.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>(),
        bridge::names::META_TOOL_NAMES,
        "the meta-tools, the browser's own tools and the page tools"
    );
    let out = call(&client, "todomvc_list_todos", json!({})).await;
    let expected = format!(
        "NOT_CONNECTED: No browser can connect: something else is listening on port {} of \
         127.0.0.1 and did not prove it knows the pairing secret",
        setup.port
    );
    // The listener reports the busy port as soon as it tried; the MCP side may be faster.
    let deadline = Instant::now() + DEADLINE;
    let mut out = out;
    while !text(&out).starts_with(&expected) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
        out = call(&client, "todomvc_list_todos", json!({})).await;
    }
    assert!(text(&out).starts_with(&expected), "{}", text(&out));
    // Once the program lets the port go, tabwire takes it and the extension gets in.
    drop(holder);
    let _extension = setup.welcomed_extension().await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_process_exits_when_stdin_closes() {
    let setup = Setup::new();
    use tokio::io::AsyncWriteExt;
    for handshake in [
        // Closed before any MCP message.
        "",
        // Closed after a complete initialization.
        concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","#,
            r#""capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "\n"
        ),
    ] {
        let mut child = setup
            .command(&[])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(handshake.as_bytes()).await.unwrap();
        drop(stdin);
        let status = tokio::time::timeout(DEADLINE, child.wait())
            .await
            .expect("tabwire exits after stdin closes")
            .unwrap();
        assert!(status.success(), "{handshake:?}: {status}");
    }
}

//! Several MCP clients, one browser, with the real binary: two `tabwire mcp` processes on one
//! port and secret (the first is the hub, the second its peer), each driven by rmcp's client,
//! a fake extension on the hub; `tabwire status`; and the peer taking over when the hub dies.

mod support;

use support::*;

type Client = RunningService<RoleClient, Counter>;

/// Starts one `tabwire mcp` and returns its client, its tools/list_changed counter and its pid.
async fn start(setup: &Setup) -> (Client, Counter, u32) {
    let (transport, _stderr) = TokioChildProcess::builder(setup.command(&[]))
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let pid = transport.id().expect("the child's pid");
    let counter = Counter::default();
    let client = counter.clone().serve(transport).await.unwrap();
    (client, counter, pid)
}

/// Waits until whether `client` lists `tool` is `listed`, re-listing after each tools/list_changed.
async fn wait_for_listing(client: &Client, counter: &Counter, tool: &str, listed: bool) {
    loop {
        let seen = counter.count();
        let tools = client.list_all_tools().await.unwrap();
        if tools.iter().any(|t| t.name == tool) == listed {
            return;
        }
        counter.wait_above(seen).await;
    }
}

async fn wait_for_tool(client: &Client, counter: &Counter, tool: &str) {
    wait_for_listing(client, counter, tool, true).await
}

async fn wait_without_tool(client: &Client, counter: &Counter, tool: &str) {
    wait_for_listing(client, counter, tool, false).await
}

/// Connects a fake extension offering TodoMVC's tools in tab 7 and plays the page.
async fn attach_extension(setup: &Setup) -> tokio::task::JoinHandle<()> {
    let mut socket = setup.extension().await;
    offer_todomvc_tab(&mut socket, "http://127.0.0.1/todomvc/").await;
    tokio::spawn(play_page(socket))
}

/// Starts the first `tabwire mcp` (the hub: the fake extension reaching the port proves it owns
/// it), attaches the extension to it, and waits until its client lists the page's tools; its
/// client, pid, and the page's task.
async fn start_hub_with_the_page(setup: &Setup) -> (Client, u32, tokio::task::JoinHandle<()>) {
    let (client, counter, pid) = start(setup).await;
    let page = attach_extension(setup).await;
    wait_for_tool(&client, &counter, "todomvc_add_todo").await;
    (client, pid, page)
}

async fn add(client: &Client, title: String) -> (String, CallToolResult) {
    let out = call(client, "todomvc_add_todo", json!({"title": title})).await;
    (title, out)
}

fn assert_added(title: &str, out: &CallToolResult) {
    assert_ne!(out.is_error, Some(true), "{}", text(out));
    let result: Value = serde_json::from_str(text(out)).unwrap();
    assert_eq!(result["added"], title, "{result}");
    assert_eq!(result["tab"], 7, "{result}");
}

/// Asserts that `tabwire status` printed each of `parts`.
fn assert_says(printed: &str, parts: &[&str]) {
    for part in parts {
        assert!(printed.contains(part), "no {part:?} in:\n{printed}");
    }
}

async fn status(setup: &Setup) -> std::process::Output {
    let binary = env!("CARGO_BIN_EXE_tabwire");
    let run = tokio::process::Command::new(binary)
        .arg("status")
        .args(["--port", &setup.port.to_string()])
        .arg("--secret-file")
        .arg(setup.dir.path().join("secret"))
        .env("RUST_LOG", "warn")
        .output();
    tokio::time::timeout(DEADLINE, run)
        .await
        .expect("tabwire status ends")
        .unwrap()
}

#[tokio::test]
async fn two_processes_share_one_browser_and_the_peer_takes_over_when_the_hub_dies() {
    let setup = Setup::new();
    let (hub_client, hub_pid, page) = start_hub_with_the_page(&setup).await;

    let (peer_client, peer_counter, peer_pid) = start(&setup).await;
    wait_for_tool(&peer_client, &peer_counter, "todomvc_add_todo").await;
    let (title, out) = add(&peer_client, "from the peer".to_owned()).await;
    assert_added(&title, &out);

    // Both clients at once: each gets its own answers.
    let from_hub = (0..8).map(|i| add(&hub_client, format!("hub {i}")));
    let from_peer = (0..8).map(|i| add(&peer_client, format!("peer {i}")));
    let (hub_answers, peer_answers) = tokio::join!(
        futures_util::future::join_all(from_hub),
        futures_util::future::join_all(from_peer)
    );
    for (title, out) in hub_answers.iter().chain(&peer_answers) {
        assert_added(title, out);
    }

    let shown = status(&setup).await;
    let printed = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.status.success(), "{printed} {:?}", shown);
    let (hub, peer) = (
        format!("hub: pid {hub_pid},"),
        format!("peer: pid {peer_pid},"),
    );
    assert_says(
        &printed,
        &[
            &hub,
            "peers: 1",
            &peer,
            "browser: fake 0",
            "tab 7",
            "todomvc_add_todo",
        ],
    );
    assert!(!printed.contains(&setup.secret), "{printed}");
    assert!(
        !String::from_utf8_lossy(&shown.stderr).contains(&setup.secret),
        "the secret leaked to stderr"
    );

    // The hub dies without warning; the peer takes the port, the extension comes back to it.
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &hub_pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    tokio::time::timeout(DEADLINE, page)
        .await
        .expect("the extension's socket to the dead hub closes")
        .unwrap();
    let page = attach_extension(&setup).await;
    wait_for_tool(&peer_client, &peer_counter, "todomvc_add_todo").await;
    let (title, out) = add(&peer_client, "after the takeover".to_owned()).await;
    assert_added(&title, &out);

    let shown = status(&setup).await;
    let printed = String::from_utf8_lossy(&shown.stdout);
    assert_says(&printed, &[&format!("hub: pid {peer_pid},"), "peers: 0"]);

    drop(hub_client);
    peer_client.cancel().await.unwrap();
    page.abort();
}

#[tokio::test]
async fn status_without_a_hub_fails_clearly() {
    let setup = Setup::new();
    let shown = status(&setup).await;
    assert!(!shown.status.success());
    let said = String::from_utf8_lossy(&shown.stderr);
    assert!(
        said.contains(&format!(
            "no tabwire hub is running on 127.0.0.1:{}",
            setup.port
        )),
        "{said}"
    );
}

#[tokio::test]
async fn a_peer_without_a_browser_says_not_connected_relays_page_errors_and_the_wrong_secret_is_no_peer()
 {
    let setup = Setup::new();
    let (hub_client, hub_counter, _) = start(&setup).await;
    let (peer_client, peer_counter, peer_pid) = start(&setup).await;
    // Joined, but with no browser behind the hub yet: the peer says so, as a hub would.
    let deadline = Instant::now() + DEADLINE;
    while !String::from_utf8_lossy(&status(&setup).await.stdout)
        .contains(&format!("peer: pid {peer_pid},"))
    {
        assert!(Instant::now() < deadline, "the peer never joined the hub");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let out = call(&peer_client, "todomvc_list_todos", json!({})).await;
    assert!(text(&out).starts_with("NOT_CONNECTED: "), "{}", text(&out));

    let page = attach_extension(&setup).await;
    wait_for_tool(&hub_client, &hub_counter, "todomvc_add_todo").await;
    wait_for_tool(&peer_client, &peer_counter, "todomvc_toggle_todo").await;
    let out = call(
        &peer_client,
        "todomvc_toggle_todo",
        json!({"title": "nope"}),
    )
    .await;
    assert_eq!(out.is_error, Some(true));
    assert!(
        text(&out).starts_with("ELEMENT_NOT_FOUND: no todo titled that"),
        "{}",
        text(&out)
    );

    // The browser goes away: the peer says NOT_CONNECTED again, as the hub does.
    page.abort();
    wait_without_tool(&peer_client, &peer_counter, "todomvc_list_todos").await;
    let out = call(&peer_client, "todomvc_list_todos", json!({})).await;
    assert!(text(&out).starts_with("NOT_CONNECTED: "), "{}", text(&out));
    let page = attach_extension(&setup).await;
    wait_for_tool(&peer_client, &peer_counter, "todomvc_add_todo").await;
    let (title, out) = add(&peer_client, "with the browser back".to_owned()).await;
    assert_added(&title, &out);

    // A process with another secret does not believe the hub (which cannot prove a secret it
    // does not hold), tells it nothing, and says something else listens on the port.
    let other = Setup::new();
    std::fs::write(
        other.dir.path().join("secret"),
        format!("{}\n", "ab".repeat(32)),
    )
    .unwrap();
    let stranger = Setup {
        dir: other.dir,
        secret: "ab".repeat(32),
        port: setup.port,
    };
    let (stranger_client, _, _) = start(&stranger).await;
    let expected = format!(
        "NOT_CONNECTED: No browser can connect: something else is listening on port {} of \
         127.0.0.1",
        setup.port
    );
    let deadline = Instant::now() + DEADLINE;
    let mut out = call(&stranger_client, "todomvc_list_todos", json!({})).await;
    while !text(&out).starts_with(&expected) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
        out = call(&stranger_client, "todomvc_list_todos", json!({})).await;
    }
    assert!(text(&out).starts_with(&expected), "{}", text(&out));

    stranger_client.cancel().await.unwrap();
    peer_client.cancel().await.unwrap();
    hub_client.cancel().await.unwrap();
    page.abort();
}

#[tokio::test]
async fn of_two_peers_one_takes_over_and_the_other_joins_it() {
    let setup = Setup::new();
    let (hub_client, hub_pid, page) = start_hub_with_the_page(&setup).await;
    let (first, first_counter, first_pid) = start(&setup).await;
    let (second, second_counter, second_pid) = start(&setup).await;
    wait_for_tool(&first, &first_counter, "todomvc_add_todo").await;
    wait_for_tool(&second, &second_counter, "todomvc_add_todo").await;

    std::process::Command::new("kill")
        .args(["-KILL", &hub_pid.to_string()])
        .status()
        .unwrap();
    tokio::time::timeout(DEADLINE, page).await.unwrap().unwrap();
    let page = attach_extension(&setup).await;
    for (client, counter, name) in [
        (&first, &first_counter, "first"),
        (&second, &second_counter, "second"),
    ] {
        wait_for_tool(client, counter, "todomvc_add_todo").await;
        let (title, out) = add(client, format!("{name} after the takeover")).await;
        assert_added(&title, &out);
    }
    let shown = status(&setup).await;
    let printed = String::from_utf8_lossy(&shown.stdout);
    let (new_hub, still_peer) = if printed.contains(&format!("hub: pid {first_pid},")) {
        (first_pid, second_pid)
    } else {
        (second_pid, first_pid)
    };
    let (hub, peer) = (
        format!("hub: pid {new_hub},"),
        format!("peer: pid {still_peer},"),
    );
    assert_says(&printed, &[&hub, &peer, "peers: 1"]);

    drop(hub_client);
    first.cancel().await.unwrap();
    second.cancel().await.unwrap();
    page.abort();
}

/// The next frame of type `kind` from the hub to the fake extension (others are skipped).
async fn expect_frame(socket: &mut Socket, kind: &str) -> Value {
    loop {
        let frame = receive(socket).await;
        if frame["type"] == kind {
            return frame;
        }
    }
}

#[tokio::test]
async fn a_call_the_peers_client_cancels_is_cancelled_in_the_page() {
    use rmcp::model::{CallToolRequest, ClientRequest};
    use rmcp::service::PeerRequestOptions;

    let setup = Setup::new();
    let (hub_client, hub_counter, _) = start(&setup).await;
    let mut socket = setup.extension().await;
    offer_todomvc_tab(&mut socket, "http://127.0.0.1/todomvc/").await;
    wait_for_tool(&hub_client, &hub_counter, "todomvc_add_todo").await;
    let (peer_client, peer_counter, _) = start(&setup).await;
    wait_for_tool(&peer_client, &peer_counter, "todomvc_add_todo").await;

    let args: JsonObject = serde_json::from_value(json!({"title": "slow"})).unwrap();
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("todomvc_add_todo").with_arguments(args),
    ));
    let handle = peer_client
        .peer()
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    let call = expect_frame(&mut socket, "call_tool").await;
    assert_eq!(call["args"]["title"], "slow");
    handle.cancel(Some("changed my mind".into())).await.unwrap();
    let cancel = expect_frame(&mut socket, "cancel").await;
    assert_eq!(cancel["id"], call["id"]);

    // The peer's next call still works, through a fresh id.
    let page = tokio::spawn(play_page(socket));
    let (title, out) = add(&peer_client, "next".to_owned()).await;
    assert_added(&title, &out);

    peer_client.cancel().await.unwrap();
    hub_client.cancel().await.unwrap();
    page.abort();
}

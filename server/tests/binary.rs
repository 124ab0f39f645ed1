//! End to end against the real `tabwire` binary: rmcp's own client over stdio on one side, a
//! fake browser extension over the authenticated WebSocket on the other.

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

const EXTENSION_ID: &str = "nfoddanklbblmbkneanahdhgiikgphao";
const DEADLINE: Duration = Duration::from_secs(10);

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A temp HOME, a secret file and a free port for one `tabwire mcp`.
struct Setup {
    dir: tempfile::TempDir,
    secret: String,
    port: u16,
}

impl Setup {
    fn new() -> Setup {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let secret = "0123456789abcdef".repeat(4);
        let path = dir.path().join("secret");
        std::fs::write(&path, format!("{secret}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        Setup { dir, secret, port }
    }

    fn command(&self, extra: &[&str]) -> tokio::process::Command {
        // TABWIRE_BIN: measure another build (e.g. the release one) with the benchmark below.
        let binary =
            std::env::var_os("TABWIRE_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_tabwire").into());
        let mut command = tokio::process::Command::new(binary);
        command
            .arg("mcp")
            .args(["--port", &self.port.to_string()])
            .arg("--secret-file")
            .arg(self.dir.path().join("secret"))
            .args(extra)
            .env("HOME", self.dir.path())
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("RUST_LOG", "warn");
        command
    }

    async fn start(&self, extra: &[&str]) -> (RunningService<RoleClient, Counter>, Counter) {
        let (transport, _stderr) = TokioChildProcess::builder(self.command(extra))
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let counter = Counter::default();
        let client = counter.clone().serve(transport).await.unwrap();
        (client, counter)
    }

    fn origin(&self) -> String {
        format!("chrome-extension://{EXTENSION_ID}")
    }

    fn protocols(&self) -> String {
        format!("tabwire.v1, tabwire.secret.{}", self.secret)
    }

    /// Opens the WebSocket with these headers, retrying while the port is not bound yet.
    async fn handshake(
        &self,
        path: &str,
        origin: Option<&str>,
        protocols: Option<&str>,
    ) -> Result<Socket, WsError> {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let mut request = format!("ws://127.0.0.1:{}{path}", self.port)
                .into_client_request()
                .unwrap();
            if let Some(origin) = origin {
                request
                    .headers_mut()
                    .insert("Origin", HeaderValue::from_str(origin).unwrap());
            }
            if let Some(protocols) = protocols {
                request.headers_mut().insert(
                    "Sec-WebSocket-Protocol",
                    HeaderValue::from_str(protocols).unwrap(),
                );
            }
            match tokio_tungstenite::connect_async(request).await {
                // Not listening yet: the process is still starting.
                Err(WsError::Io(_)) if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Ok((socket, response)) => {
                    assert_eq!(
                        response.headers().get("Sec-WebSocket-Protocol").unwrap(),
                        "tabwire.v1"
                    );
                    return Ok(socket);
                }
                Err(e) => return Err(e),
            }
        }
    }

    async fn extension(&self) -> Socket {
        self.handshake("/", Some(&self.origin()), Some(&self.protocols()))
            .await
            .expect("our extension is accepted")
    }
}

/// Counts `notifications/tools/list_changed`.
#[derive(Clone, Default)]
struct Counter {
    list_changed: Arc<AtomicUsize>,
    changed: Arc<Notify>,
}

impl Counter {
    fn count(&self) -> usize {
        self.list_changed.load(Ordering::SeqCst)
    }

    async fn wait_above(&self, before: usize) {
        let deadline = tokio::time::Instant::now() + DEADLINE;
        while self.count() <= before {
            let notified = self.changed.notified();
            if self.count() > before {
                break;
            }
            tokio::time::timeout_at(deadline, notified)
                .await
                .expect("tools/list_changed within the deadline");
        }
    }
}

impl ClientHandler for Counter {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_waiters();
    }
}

async fn send(socket: &mut Socket, frame: Value) {
    socket.send(Message::text(frame.to_string())).await.unwrap();
}

async fn receive(socket: &mut Socket) -> Value {
    loop {
        let frame = tokio::time::timeout(DEADLINE, socket.next())
            .await
            .expect("a frame within the deadline")
            .expect("socket open")
            .expect("frame");
        if let Message::Text(text) = frame {
            return serde_json::from_str(text.as_str()).unwrap();
        }
    }
}

/// Says hello and returns the welcome.
async fn hello(socket: &mut Socket) -> Value {
    send(
        socket,
        json!({"type": "hello", "protocol": 1, "extension_version": "test", "instance_id": "fake",
               "browser": {"name": "fake", "version": "0", "user_agent": "test"}}),
    )
    .await;
    let welcome = receive(socket).await;
    assert_eq!(welcome["type"], "welcome", "{welcome}");
    welcome
}

/// The todomvc tools as a page registers them, built from the adapter in `welcome`.
fn todomvc_tools(welcome: &Value) -> Vec<Value> {
    let adapter = welcome["adapters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "todomvc")
        .expect("welcome carries the todomvc adapter");
    adapter["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| {
            json!({"name": format!("todomvc_{}", tool["name"].as_str().unwrap()),
                   "adapter": "todomvc", "description": tool["description"],
                   "input_schema": tool.get("input_schema").cloned()
                        .unwrap_or(json!({"type": "object", "properties": {}})),
                   "annotations": tool.get("annotations").cloned().unwrap_or(json!({}))})
        })
        .collect()
}

/// Plays the page: answers each call_tool like a TodoMVC tab would.
async fn play_page(mut socket: Socket) {
    while let Some(Ok(frame)) = socket.next().await {
        let Message::Text(text) = frame else { continue };
        let frame: Value = serde_json::from_str(text.as_str()).unwrap();
        if frame["type"] != "call_tool" {
            continue;
        }
        let id = frame["id"].clone();
        let answer = match frame["tool"].as_str().unwrap() {
            "todomvc_add_todo" => {
                json!({"type": "call_tool_result", "id": id,
                       "result": {"added": frame["args"]["title"], "tab": frame["tab"]}})
            }
            "todomvc_list_todos" => json!({"type": "call_tool_result", "id": id,
                       "result": [{"title": "Buy milk", "completed": false}]}),
            _ => json!({"type": "call_tool_error", "id": id,
                        "error": {"code": "ELEMENT_NOT_FOUND", "message": "no todo titled that"}}),
        };
        send(&mut socket, answer).await;
    }
}

async fn call(
    client: &RunningService<RoleClient, Counter>,
    name: &'static str,
    args: Value,
) -> CallToolResult {
    let args: JsonObject = serde_json::from_value(args).unwrap();
    client
        .call_tool(CallToolRequestParams::new(name).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn text(result: &CallToolResult) -> &str {
    &result.content[0].as_text().expect("a text content").text
}

#[tokio::test]
async fn an_mcp_client_drives_a_fake_extension_through_the_binary() {
    let setup = Setup::new();
    let (client, counter) = setup.start(&["--call-timeout-ms", "5000"]).await;

    let names = |tools: &[rmcp::model::Tool]| -> Vec<String> {
        tools.iter().map(|t| t.name.to_string()).collect()
    };
    let before = client.list_all_tools().await.unwrap();
    assert_eq!(
        names(&before),
        ["browser_tabs", "browser_open", "site_call"]
    );

    // Without a browser, site tools of loaded adapters answer NOT_CONNECTED.
    let out = call(&client, "todomvc_list_todos", json!({})).await;
    assert_eq!(out.is_error, Some(true));
    assert!(text(&out).starts_with("NOT_CONNECTED: "), "{}", text(&out));

    let mut socket = setup.extension().await;
    let welcome = hello(&mut socket).await;
    assert_eq!(welcome["protocol"], 1);
    let seen = counter.count();
    send(
        &mut socket,
        json!({"type": "tools_snapshot", "tabs": [
            {"tab": 7, "url": "http://todomvc.com/examples/vanillajs/", "title": "TodoMVC",
             "tools": todomvc_tools(&welcome)}]}),
    )
    .await;
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

    // Unknown tools and malformed arguments are JSON-RPC errors, not tool results.
    let unknown = client
        .call_tool(CallToolRequestParams::new("no_such_tool"))
        .await;
    assert!(unknown.is_err(), "{unknown:?}");
    let missing_title = client
        .call_tool(CallToolRequestParams::new("todomvc_add_todo").with_arguments(JsonObject::new()))
        .await;
    assert!(missing_title.is_err(), "{missing_title:?}");

    client.cancel().await.unwrap();
    page.abort();
}

#[tokio::test]
async fn a_2026_07_28_client_hears_of_new_tools_through_its_subscription() {
    use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
    let setup = Setup::new();
    let (transport, _stderr) = TokioChildProcess::builder(setup.command(&[]))
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let client = Counter::default()
        .serve_with_lifecycle(
            transport,
            rmcp::ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap();
    let mut subscription = client
        .listen(SubscriptionFilter::builder().tools_list_changed().build())
        .await
        .unwrap();
    assert_eq!(subscription.acknowledged().tools_list_changed, Some(true));

    let mut socket = setup.extension().await;
    let welcome = hello(&mut socket).await;
    // Several tabs in one snapshot.
    let tabs: Vec<Value> = (1..=5)
        .map(|tab| {
            json!({"tab": tab, "url": "http://todomvc.com/examples/x/", "title": "T",
                          "tools": todomvc_tools(&welcome)})
        })
        .collect();
    send(&mut socket, json!({"type": "tools_snapshot", "tabs": tabs})).await;

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
    let wrong_secret = format!("tabwire.v1, tabwire.secret.{}", "0".repeat(64));
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
        ("no secret", "/", Some(&good_origin), Some("tabwire.v1")),
        ("wrong secret", "/", Some(&good_origin), Some(&wrong_secret)),
        (
            "secret in URL",
            &in_url,
            Some(&good_origin),
            Some("tabwire.v1"),
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
            }
            Ok(_) => panic!("{case}: accepted"),
            Err(e) => panic!("{case}: expected HTTP 403, got {e}"),
        }
    }
    // And the right one still gets in.
    let mut socket = setup.extension().await;
    hello(&mut socket).await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_port_held_by_another_program_leaves_mcp_working() {
    let setup = Setup::new();
    let holder = std::net::TcpListener::bind(("127.0.0.1", setup.port)).unwrap();
    let (client, _) = setup.start(&[]).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 3);
    let out = call(&client, "todomvc_list_todos", json!({})).await;
    let expected = format!(
        "NOT_CONNECTED: port {} on 127.0.0.1 is in use by another program; start tabwire with --port N",
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
    drop(holder);
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

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Round trips through the real binary with an instant fake page: latency of sequential calls,
/// throughput with 16 in flight over 4 tabs, and the server's RSS. The client (this test) is part
/// of the measurement, so measure with a release build of it too when the numbers matter:
/// `TABWIRE_BIN=target/release/tabwire cargo test --release -p server --test binary -- --ignored --nocapture`
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a benchmark; run it with --ignored --nocapture"]
async fn bench_round_trips() {
    use futures_util::stream::{self, StreamExt as _};
    let setup = Setup::new();
    let (transport, _stderr) = TokioChildProcess::builder(setup.command(&[]))
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let pid = transport.id().unwrap();
    let client = Arc::new(Counter::default().serve(transport).await.unwrap());
    let mut socket = setup.extension().await;
    let welcome = hello(&mut socket).await;
    let tabs: Vec<Value> = (1..=4)
        .map(|tab| {
            json!({"tab": tab, "url": "http://todomvc.com/examples/x/", "title": "T",
                          "tools": todomvc_tools(&welcome)})
        })
        .collect();
    send(&mut socket, json!({"type": "tools_snapshot", "tabs": tabs})).await;
    let page = tokio::spawn(play_page(socket));
    client.list_all_tools().await.unwrap();
    let idle_rss = rss_kib(pid);

    for _ in 0..300 {
        call(&client, "todomvc_list_todos", json!({})).await;
    }
    let mut latencies = Vec::new();
    for _ in 0..3000 {
        let started = Instant::now();
        let out = call(&client, "todomvc_list_todos", json!({})).await;
        latencies.push(started.elapsed());
        assert_eq!(out.is_error, Some(false));
    }
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() as f64) * q) as usize];

    let total = 10_000;
    let started = Instant::now();
    let errors = stream::iter(0..total)
        .map(|i| {
            let client = client.clone();
            async move {
                let tab = (i % 4) + 1;
                call(&client, "todomvc_list_todos", json!({"tab_id": tab})).await
            }
        })
        .buffer_unordered(16)
        .filter(|out| std::future::ready(out.is_error != Some(false)))
        .count()
        .await;
    let elapsed = started.elapsed();
    assert_eq!(errors, 0);
    eprintln!(
        "sequential: p50 {:?} p90 {:?} p99 {:?}; 16 in flight: {:.0} calls/s; RSS idle {} KiB, after {} KiB",
        at(0.5),
        at(0.9),
        at(0.99),
        total as f64 / elapsed.as_secs_f64(),
        idle_rss,
        rss_kib(pid)
    );
    page.abort();
}

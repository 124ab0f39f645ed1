//! Shared by the binary tests and the round-trip benchmark: a temp HOME, secret and port for
//! one real `tabwire mcp`, rmcp's client on its stdio, and a fake extension on its WebSocket.
// Each includer uses a different subset.
#![allow(dead_code, unused_imports)]

pub use std::process::Stdio;
pub use std::sync::Arc;
pub use std::sync::atomic::{AtomicUsize, Ordering};
pub use std::time::{Duration, Instant};

pub use bridge::handshake::{self, Exchange, HandshakeError, Nonce, Role};
pub use futures_util::{SinkExt, StreamExt};
pub use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
pub use rmcp::service::{NotificationContext, RunningService};
pub use rmcp::transport::TokioChildProcess;
pub use rmcp::{ClientHandler, ClientServiceExt, RoleClient, ServiceExt};
pub use serde_json::{Value, json};
pub use tokio::net::TcpStream;
pub use tokio::sync::Notify;
pub use tokio_tungstenite::tungstenite::client::IntoClientRequest;
pub use tokio_tungstenite::tungstenite::http::HeaderValue;
pub use tokio_tungstenite::tungstenite::{Error as WsError, Message};
pub use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub const EXTENSION_ID: &str = "nfoddanklbblmbkneanahdhgiikgphao";
pub const DEADLINE: Duration = Duration::from_secs(10);

pub type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A temp HOME, a secret file and a free port for one `tabwire mcp`.
pub struct Setup {
    pub dir: tempfile::TempDir,
    pub secret: String,
    pub port: u16,
}

impl Setup {
    pub fn new() -> Setup {
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

    pub fn command(&self, extra: &[&str]) -> tokio::process::Command {
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

    pub async fn start(&self, extra: &[&str]) -> (RunningService<RoleClient, Counter>, Counter) {
        let (transport, _stderr) = TokioChildProcess::builder(self.command(extra))
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let counter = Counter::default();
        let client = counter.clone().serve(transport).await.unwrap();
        (client, counter)
    }

    /// rmcp's client speaking 2026-07-28: discovery instead of `initialize`, notifications only
    /// through `subscriptions/listen`.
    pub async fn start_2026_07_28(&self) -> RunningService<RoleClient, Counter> {
        let (transport, _stderr) = TokioChildProcess::builder(self.command(&[]))
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        Counter::default()
            .serve_with_lifecycle(
                transport,
                rmcp::ClientLifecycleMode::Discover {
                    preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
                },
            )
            .await
            .unwrap()
    }

    pub fn origin(&self) -> String {
        format!("chrome-extension://{EXTENSION_ID}")
    }

    /// What the extension offers: its role and a nonce (fixed here: every handshake still gets
    /// the server's fresh one).
    pub fn protocols(&self) -> String {
        format!("tabwire.v3, {}", self.nonce().subprotocol())
    }

    pub fn nonce(&self) -> Nonce {
        Nonce([0x42; handshake::NONCE_BYTES])
    }

    /// A plain TCP connection to the port, retrying while the server is not listening yet (it
    /// listens once it knows it is the port's hub, a moment after MCP is up).
    pub async fn connect(&self) -> TcpStream {
        let deadline = Instant::now() + DEADLINE;
        loop {
            match TcpStream::connect(("127.0.0.1", self.port)).await {
                Ok(stream) => return stream,
                Err(_) if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(20)).await
                }
                Err(e) => panic!("the server never listened on {}: {e}", self.port),
            }
        }
    }

    /// Opens the WebSocket with these headers, retrying while the port is not bound yet; the
    /// server's answer and first frame are not checked here.
    pub async fn handshake(
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
                Ok((socket, _)) => return Ok(socket),
                Err(e) => return Err(e),
            }
        }
    }

    /// The extension's side of the exchange of proofs, with `secret`: checks the server's proof
    /// (the server's first frame), then sends its own.
    pub async fn prove(&self, socket: &mut Socket, secret: &str) -> Result<(), HandshakeError> {
        let first = receive_text(socket).await;
        let exchange =
            Exchange::accept_server_proof(Role::Browser, self.port, self.nonce(), secret, &first)?;
        let answer = exchange.client_proof_frame(secret);
        socket.send(Message::text(answer)).await.unwrap();
        Ok(())
    }

    /// A socket that proved the secret both ways, ready for `hello`.
    pub async fn extension(&self) -> Socket {
        let mut socket = self
            .handshake("/", Some(&self.origin()), Some(&self.protocols()))
            .await
            .expect("our extension is accepted");
        self.prove(&mut socket, &self.secret)
            .await
            .expect("the server proves it knows the secret");
        socket
    }

    /// An `extension()` that said hello and was welcomed (the welcome is checked).
    pub async fn welcomed_extension(&self) -> Socket {
        let mut socket = self.extension().await;
        hello(&mut socket).await;
        socket
    }
}

/// Counts `notifications/tools/list_changed`.
#[derive(Clone, Default)]
pub struct Counter {
    list_changed: Arc<AtomicUsize>,
    changed: Arc<Notify>,
}

impl Counter {
    pub fn count(&self) -> usize {
        self.list_changed.load(Ordering::SeqCst)
    }

    pub async fn wait_above(&self, before: usize) {
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

pub async fn send(socket: &mut Socket, frame: Value) {
    socket.send(Message::text(frame.to_string())).await.unwrap();
}

pub async fn receive(socket: &mut Socket) -> Value {
    serde_json::from_str(&receive_text(socket).await).unwrap()
}

pub async fn receive_text(socket: &mut Socket) -> String {
    loop {
        let frame = tokio::time::timeout(DEADLINE, socket.next())
            .await
            .expect("a frame within the deadline")
            .expect("socket open")
            .expect("frame");
        if let Message::Text(text) = frame {
            return text.as_str().to_owned();
        }
    }
}

/// Says hello and returns the welcome.
pub async fn hello(socket: &mut Socket) -> Value {
    send(
        socket,
        json!({"type": "hello", "protocol": bridge::PROTOCOL_VERSION, "extension_version": "test",
               "instance_id": "fake",
               "browser": {"name": "fake", "version": "0", "user_agent": "test"}}),
    )
    .await;
    let welcome = receive(socket).await;
    assert_eq!(welcome["type"], "welcome", "{welcome}");
    welcome
}

/// Says hello and reports one TodoMVC tab (tab 7 at `url`) with the todomvc adapter's tools, as
/// the extension's first snapshot; returns the welcome.
pub async fn offer_todomvc_tab(socket: &mut Socket, url: &str) -> Value {
    let welcome = hello(socket).await;
    send(
        socket,
        json!({"type": "tools_snapshot", "tabs": [
            {"tab": 7, "url": url, "title": "TodoMVC", "tools": todomvc_tools(&welcome)}]}),
    )
    .await;
    welcome
}

/// Says hello and reports `count` TodoMVC tabs (ids 1 to `count`) with the todomvc adapter's
/// tools in one snapshot, as the extension's first.
pub async fn offer_todomvc_tabs(socket: &mut Socket, count: u64) {
    let welcome = hello(socket).await;
    let tabs: Vec<Value> = (1..=count)
        .map(|tab| {
            json!({"tab": tab, "url": "http://todomvc.com/examples/x/", "title": "T",
                          "tools": todomvc_tools(&welcome)})
        })
        .collect();
    send(socket, json!({"type": "tools_snapshot", "tabs": tabs})).await;
}

/// The todomvc tools as a page announces them (by name: the server describes them), from the
/// adapter in `welcome`.
pub fn todomvc_tools(welcome: &Value) -> Vec<Value> {
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
        .map(|tool| json!(format!("todomvc_{}", tool["name"].as_str().unwrap())))
        .collect()
}

/// Plays the page: answers each call_tool like a TodoMVC tab would.
pub async fn play_page(mut socket: Socket) {
    while let Some(Ok(frame)) = socket.next().await {
        let Message::Text(text) = frame else { continue };
        let frame: Value = serde_json::from_str(text.as_str()).unwrap();
        if frame["type"] == "browser" {
            // A browser with no other tab than the ones it offered tools in.
            let answer =
                json!({"type": "browser_result", "id": frame["id"], "result": {"tabs": []}});
            send(&mut socket, answer).await;
            continue;
        }
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

pub async fn call(
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

pub fn text(result: &CallToolResult) -> &str {
    &result.content[0].as_text().expect("a text content").text
}

pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

//! The browser WebSocket on 127.0.0.1: binding the port (a port held by another program is
//! reported, never fought over; one held by another tabwire is joined as a peer and taken over
//! when that process exits), the authenticated handshake, and one reader loop plus one
//! writer task per socket, which feed the [`Hub`] (peer and status sockets go to [`peer`]).

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode, header};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};

use crate::auth::{self, Client, HandshakePolicy};
use crate::hub::{ConnId, Hub, Link};
use crate::peer::{self, Peers};

/// A client that connects but does not finish its handshake is dropped after this long.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum BindError {
    #[error("port {0} on 127.0.0.1 is in use by another program")]
    InUse(u16),
    #[error("cannot listen on 127.0.0.1:{port}: {source}")]
    Other { port: u16, source: io::Error },
}

/// Binds 127.0.0.1:`port` (loopback only: never every interface).
pub async fn bind(port: u16) -> Result<TcpListener, BindError> {
    TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
        .await
        .map_err(|source| match source.kind() {
            io::ErrorKind::AddrInUse => BindError::InUse(port),
            _ => BindError::Other { port, source },
        })
}

/// How many times in a row a peer finds the port taken but nobody answering on it before it
/// gives up (each try waits a jittered 20-150 ms): a few seconds in all.
const TAKEOVER_TRIES: u32 = 40;

/// Binds the port and serves extensions on it until the process ends. When another tabwire
/// holds the port, joins it as a peer, and tries to take the port over when that hub exits.
/// When another program holds it, the hub learns why (its browser tools answer NOT_CONNECTED
/// saying so) and MCP goes on. No process ever ends another.
pub async fn run(
    port: u16,
    hub: Arc<Hub>,
    policy: Arc<HandshakePolicy>,
    seen_marker: Option<PathBuf>,
) {
    let mut vacant_tries = 0;
    loop {
        let error = match bind(port).await {
            Ok(listener) => {
                hub.set_link(Link::Listening);
                tracing::info!(%port, "waiting for the browser extension on ws://127.0.0.1:{port}/");
                serve(listener, hub, policy, seen_marker).await;
                return;
            }
            Err(e) => e,
        };
        if let BindError::InUse(_) = error {
            match peer::connect(port, policy.secret(), auth::PEER_PROTOCOL).await {
                Ok(socket) => {
                    vacant_tries = 0;
                    hub.set_link(Link::Listening);
                    tracing::info!(%port, "another tabwire owns port {port}: joined it as a peer");
                    peer::relay(socket, &hub).await;
                    tracing::info!(%port, "the hub went away; trying to take over port {port}");
                    jitter().await;
                    continue;
                }
                Err(peer::ConnectError::NoHub(_)) if vacant_tries < TAKEOVER_TRIES => {
                    // The hub is exiting and the port not free yet, or another peer is
                    // binding it right now: look again shortly.
                    vacant_tries += 1;
                    jitter().await;
                    continue;
                }
                Err(_) => {}
            }
        }
        match &error {
            BindError::InUse(_) => {
                tracing::error!(
                    "{error}; browser tools will answer NOT_CONNECTED. Start tabwire \
                    with --port N (and set the same port in the extension) to use another port"
                );
                hub.set_link(Link::PortInUse);
            }
            BindError::Other { .. } => {
                tracing::error!("{error}; browser tools will answer NOT_CONNECTED");
                hub.set_link(Link::Failed(error.to_string()));
            }
        }
        return;
    }
}

/// Waits 20-150 ms, differently in each process, so that peers racing for a freed port
/// spread out.
async fn jitter() {
    let mut bytes = [0u8; 1];
    let random = getrandom::fill(&mut bytes).map_or(std::process::id() as u8, |()| bytes[0]);
    let millis = 20 + u64::from(random) * 130 / 255;
    tokio::time::sleep(Duration::from_millis(millis)).await;
}

/// Accepts sockets on `listener` forever.
pub async fn serve(
    listener: TcpListener,
    hub: Arc<Hub>,
    policy: Arc<HandshakePolicy>,
    seen_marker: Option<PathBuf>,
) {
    let seen_marker: Option<Arc<Path>> = seen_marker.map(Arc::from);
    let peers = Arc::new(Peers::default());
    let port = listener.local_addr().map_or(0, |a| a.port());
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                let (hub, policy, seen_marker) = (hub.clone(), policy.clone(), seen_marker.clone());
                let peers = peers.clone();
                tokio::spawn(async move {
                    let Some((socket, client)) = accept(stream, peer, &policy).await else {
                        return;
                    };
                    match client {
                        Client::Browser => serve_browser(socket, peer, hub, seen_marker).await,
                        Client::Peer => peer::serve_peer(socket, hub, peers).await,
                        Client::Status => peer::serve_status(socket, &hub, &peers, port).await,
                    }
                });
            }
            Err(e) => {
                // Out of file descriptors and the like: wait a little rather than spin.
                tracing::warn!(error = %e, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// Accepts the upgrade with subprotocol `tabwire.v1`, or refuses it with HTTP 403.
#[allow(
    clippy::result_large_err,
    reason = "tungstenite's handshake callback fixes these types"
)]
fn answer_handshake(
    policy: &HandshakePolicy,
    peer: SocketAddr,
    request: &Request,
    mut response: Response,
) -> Result<Response, ErrorResponse> {
    match auth::authorize(policy, request.headers()) {
        Ok(client) => {
            response.headers_mut().insert(
                header::SEC_WEBSOCKET_PROTOCOL,
                HeaderValue::from_static(client.protocol()),
            );
            Ok(response)
        }
        Err(refusal) => {
            if refusal == auth::Refusal::BadSecret {
                let origin = request.headers().get(header::ORIGIN);
                crate::diagnostics::pairing_failed(origin.and_then(|o| o.to_str().ok()));
            }
            // The origin is no secret; the protocol list (which may hold one) is never logged.
            tracing::warn!(%peer, origin = ?request.headers().get(header::ORIGIN),
                reason = %refusal, "refused a WebSocket handshake");
            let mut refused = ErrorResponse::new(Some(refusal.to_string()));
            *refused.status_mut() = StatusCode::FORBIDDEN;
            Err(refused)
        }
    }
}

/// Runs the authenticated handshake; says who connected.
async fn accept(
    mut stream: TcpStream,
    peer: SocketAddr,
    policy: &HandshakePolicy,
) -> Option<(WebSocketStream<TcpStream>, Client)> {
    // Calls are small request/response frames: send each at once.
    if let Err(e) = stream.set_nodelay(true) {
        tracing::debug!(error = %e, "TCP_NODELAY not set");
    }
    // One deadline for the probe check and the handshake: a silent connection is dropped after
    // HANDSHAKE_TIMEOUT, not twice that.
    let deadline = tokio::time::Instant::now() + HANDSHAKE_TIMEOUT;
    if answered_probe(&mut stream, deadline).await {
        crate::diagnostics::probe_answered();
        return None;
    }
    let mut client = Client::Browser;
    #[allow(
        clippy::result_large_err,
        reason = "tungstenite's handshake callback fixes these types"
    )]
    let check = |request: &Request, response: Response| {
        if let Ok(who) = auth::authorize(policy, request.headers()) {
            client = who;
        }
        answer_handshake(policy, peer, request, response)
    };
    let config = WebSocketConfig::default()
        .max_message_size(Some(bridge::MAX_MESSAGE_BYTES))
        .max_frame_size(Some(bridge::MAX_MESSAGE_BYTES));
    let handshake = tokio_tungstenite::accept_hdr_async_with_config(stream, check, Some(config));
    let socket = match tokio::time::timeout_at(deadline, handshake).await {
        Ok(Ok(socket)) => socket,
        Ok(Err(e)) => {
            tracing::debug!(%peer, error = %e, "WebSocket handshake failed");
            return None;
        }
        Err(_) => {
            tracing::debug!(%peer, "WebSocket handshake timed out");
            return None;
        }
    };
    Some((socket, client))
}

/// What a `HEAD` request on the port gets: an empty answer that only says "tabwire listens here".
const PROBE_ANSWER: &[u8] = b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n";

/// Answers a `HEAD` request (the extension's cheap "is the server up yet?" probe) and says so.
/// The extension probes before opening a WebSocket because Chrome delays every WebSocket a
/// page or worker opens by 1-5 s once about 16 of its handshakes failed within minutes, which a
/// worker retrying while no server runs soon reaches. WebSocket handshakes are always `GET`.
async fn answered_probe(stream: &mut TcpStream, deadline: tokio::time::Instant) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const METHOD: &[u8] = b"HEAD ";
    /// More than any probe sends; a longer request is not ours and is answered all the same.
    const MAX_REQUEST: usize = 8 * 1024;
    let is_probe = async {
        let mut start = [0u8; METHOD.len()];
        loop {
            let n = stream.peek(&mut start).await.ok()?;
            // A prefix of "HEAD " may be followed by the rest in a later segment.
            if n == 0 || start[..n] != METHOD[..n] {
                return Some(false);
            }
            if n == METHOD.len() {
                return Some(true);
            }
            // peek has no "wait for more": poll briefly (bounded by the deadline) for the rest.
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
    };
    if tokio::time::timeout_at(deadline, is_probe).await != Ok(Some(true)) {
        return false;
    }
    // Read the whole request head so that closing does not reset the connection under the answer.
    let answered = async {
        let mut request = Vec::with_capacity(512);
        let mut chunk = [0u8; 1024];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") && request.len() < MAX_REQUEST {
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                break;
            }
            request.extend_from_slice(&chunk[..n]);
        }
        stream.write_all(PROBE_ANSWER).await?;
        stream.shutdown().await
    };
    match tokio::time::timeout_at(deadline, answered).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::debug!(error = %e, "answering a probe failed"),
        Err(_) => tracing::debug!("answering a probe timed out"),
    }
    true
}

async fn serve_browser(
    socket: WebSocketStream<TcpStream>,
    peer: SocketAddr,
    hub: Arc<Hub>,
    seen_marker: Option<Arc<Path>>,
) {
    if let Some(marker) = seen_marker {
        remember_browser(&marker);
    }

    let (mut sink, mut frames) = socket.split();
    let (outbox, mut queue) = mpsc::unbounded_channel::<String>();
    let conn = hub.connect(outbox);
    tracing::info!(conn, %peer, "browser extension connected");

    // The writer sends everything queued, then flushes once: a burst costs one syscall.
    let writer = tokio::spawn(async move {
        while let Some(frame) = queue.recv().await {
            let mut result = sink.feed(Message::Text(Utf8Bytes::from(frame))).await;
            while result.is_ok()
                && let Ok(frame) = queue.try_recv()
            {
                result = sink.feed(Message::Text(Utf8Bytes::from(frame))).await;
            }
            if let Err(e) = result.and(sink.flush().await) {
                tracing::debug!(error = %e, "writing to the browser socket failed");
                break;
            }
        }
        let _ = sink.close().await;
    });

    read_frames(conn, &hub, &mut frames).await;
    hub.disconnect(conn);
    writer.abort();
    tracing::info!(conn, "browser extension disconnected");
}

async fn read_frames<S>(conn: ConnId, hub: &Hub, frames: &mut S)
where
    S: futures_util::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin,
{
    while let Some(frame) = frames.next().await {
        match frame {
            Ok(Message::Text(text)) => hub.handle_frame(conn, text.as_str()),
            Ok(Message::Binary(_)) => hub.refuse_binary_frame(conn),
            Ok(Message::Close(_)) => break,
            // Pings are answered by tungstenite itself.
            Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_)) => {}
            Err(tokio_tungstenite::tungstenite::Error::Capacity(e)) => {
                tracing::warn!(conn, error = %e, limit = bridge::MAX_MESSAGE_BYTES,
                    "the extension sent a frame over the size limit; closing its socket");
                break;
            }
            Err(e) => {
                tracing::debug!(conn, error = %e, "browser socket error");
                break;
            }
        }
    }
}

/// Leaves the marker that makes the next process's first `tools/list` wait for the browser.
fn remember_browser(marker: &Path) {
    if marker.exists() {
        return;
    }
    if let Err(e) = std::fs::write(marker, b"") {
        tracing::debug!(path = %marker.display(), error = %e, "cannot write the browser-seen marker");
    }
}

//! The browser WebSocket on 127.0.0.1: binding the port (a port held by another program is
//! reported, never fought over; one held by another tabwire is joined as a peer and taken over
//! when that process exits), the handshake (the origin check, then the mutual proof of the
//! secret: this side proves first), and what every socket shares: the writer task, the reader's
//! frame-rate bound and the size limits. Until a client proved itself it costs at most what
//! [`preauth`] allows (a few KB, a short deadline, a bounded pool that evicts its oldest), and
//! every refusal is logged through [`Refusals`]. Browser sockets feed the [`Hub`]; peer and status
//! sockets go to [`peer`].

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bridge::handshake::{self, Exchange, Nonce, Role};
use futures_util::stream::SplitSink;
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode, header};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};

use crate::auth::{self, HandshakePolicy, Offer, ProofFailure, ProofFailureKind, ProofFailures};
use crate::hub::{ConnId, Hub, Link, Outbox};
use crate::listen::{self, AcceptErrors, Refusals};
use crate::peer::{self, Peers};
use crate::port_hold;
use crate::preauth::{self, Admission, Metered};

/// A socket to tabwire's port, read within its pre-authentication budget until it proved itself.
pub type Connection = Metered<TcpStream>;

/// At most this many connections may be in their handshake (the upgrade and both proofs, within
/// [`preauth::PREAUTH_DEADLINE`]) at once; a new one evicts the oldest, so a flood of silent
/// connections neither holds the process's file descriptors nor keeps the extension out.
const MAX_HANDSHAKING: usize = 128;

/// At most this many authenticated sockets (browsers, peers, status) at once.
const MAX_SOCKETS: usize = 64;

/// How often a peer that found the port held by something else looks again.
const HELD_PORT_RETRY: Duration = Duration::from_secs(3);

/// Frames a socket may send per second before its reader is throttled (a flood costs the
/// flooder time, not the server CPU; no frame is lost). Far above any browser's real rate.
pub const MAX_FRAMES_PER_SECOND: u32 = 10_000;

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
/// Where the OS allows it, every tabwire of this user holds the port the whole time
/// ([`port_hold`]: the hub is whoever holds the hub lock), so the hand-over leaves no gap; a
/// short-lived command (`co_bind` false) binds the port alone.
/// When something else holds it (a program that cannot prove it knows the pairing secret), the
/// hub learns why (its browser tools answer NOT_CONNECTED saying so), MCP goes on, and the port
/// is looked at again every few seconds. No process ever ends another.
pub async fn run(
    port: u16,
    hub: Arc<Hub>,
    policy: Arc<HandshakePolicy>,
    seen_marker: Option<PathBuf>,
    co_bind: bool,
) {
    match co_bind.then(|| port_hold::hold(port)) {
        Some(Ok(held)) => return run_holding(held, port, hub, policy, seen_marker).await,
        None => {}
        // Another program holds the port (or an older tabwire, which binds it alone): below.
        Some(Err(e)) if e.kind() == io::ErrorKind::AddrInUse => {}
        Some(Err(e)) if e.kind() == io::ErrorKind::Unsupported => {}
        Some(Err(e)) => {
            tracing::debug!(error = %e, "cannot co-bind port {port}; binding it alone");
        }
    }
    let mut vacant_tries = 0;
    let mut reported_held = false;
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
        if let BindError::Other { .. } = error {
            tracing::error!("{error}; browser tools will answer NOT_CONNECTED");
            hub.set_link(Link::Failed(error.to_string()));
            return;
        }
        let held = match peer::connect(port, policy.secret(), Role::Peer).await {
            Ok(socket) => {
                vacant_tries = 0;
                reported_held = false;
                hub.set_link(Link::Listening);
                tracing::info!(%port, "another tabwire owns port {port}: joined it as a peer");
                peer::relay(socket, &hub).await;
                tracing::info!(%port, "the hub went away; trying to take over port {port}");
                jitter().await;
                continue;
            }
            // The hub is exiting and the port not free yet, or another peer is binding it
            // right now: look again shortly.
            Err(peer::ConnectError::NoHub(_)) if vacant_tries < TAKEOVER_TRIES => {
                vacant_tries += 1;
                jitter().await;
                continue;
            }
            Err(e) => e,
        };
        if !reported_held {
            let owner = match port_hold::listener_owner(port) {
                Some((uid, false)) => format!(" (a program of another user, uid {uid})"),
                Some((_, true)) | None => String::new(),
            };
            tracing::error!(
                "{held}{owner}; browser tools will answer NOT_CONNECTED. Start tabwire with --port N \
                 (and set the same port in the extension) to use another port; tabwire looks \
                 at port {port} again every {} s",
                HELD_PORT_RETRY.as_secs()
            );
            reported_held = true;
        }
        hub.set_link(Link::PortInUse);
        vacant_tries = 0;
        tokio::time::sleep(HELD_PORT_RETRY).await;
    }
}

/// [`run`] while this process holds the port: the holder of the hub lock listens on it, the
/// others join that hub as peers and keep holding the port.
async fn run_holding(
    held: port_hold::HeldPort,
    port: u16,
    hub: Arc<Hub>,
    policy: Arc<HandshakePolicy>,
    seen_marker: Option<PathBuf>,
) {
    let mut reported_unproven = false;
    loop {
        let lock = port_hold::try_lock_hub(policy.secret(), port);
        // Whoever listens already is asked first, lock or not: a tabwire of this user paired with
        // another secret co-binds the port too, and must never share its connections.
        match peer::connect(port, policy.secret(), Role::Peer).await {
            Ok(socket) => {
                drop(lock);
                reported_unproven = false;
                hub.set_link(Link::Listening);
                tracing::info!(%port, "another tabwire owns port {port}: joined it as a peer (this process holds the port too)");
                peer::relay(socket, &hub).await;
                tracing::info!(%port, "the hub went away; taking over port {port} if this process is first");
            }
            // Nobody listens: the holder of the lock does; the others look again shortly.
            Err(peer::ConnectError::NoHub(_)) => {
                if let Some(_lock) = lock {
                    match held.listen() {
                        Ok(listener) => {
                            hub.set_link(Link::Listening);
                            tracing::info!(%port, "waiting for the browser extension on ws://127.0.0.1:{port}/ \
                                (the port stays held while any tabwire of this user runs)");
                            serve(listener, hub, policy, seen_marker).await;
                        }
                        Err(e) => {
                            let error = BindError::Other { port, source: e };
                            tracing::error!("{error}; browser tools will answer NOT_CONNECTED");
                            hub.set_link(Link::Failed(error.to_string()));
                        }
                    }
                    return;
                }
            }
            // Something that cannot prove our secret listens (a tabwire of this user paired with
            // another secret): never listen beside it.
            Err(e) => {
                drop(lock);
                if !reported_unproven {
                    tracing::error!("{e}; browser tools will answer NOT_CONNECTED");
                    reported_unproven = true;
                }
                hub.set_link(Link::PortInUse);
                tokio::time::sleep(HELD_PORT_RETRY).await;
            }
        }
        jitter().await;
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
    let refusals = Arc::new(Refusals::default());
    let failures = Arc::new(ProofFailures::new(refusals.clone()));
    let peers = Arc::new(Peers::default());
    let port = listener.local_addr().map_or(0, |a| a.port());
    let pool = preauth::Pool::new(MAX_HANDSHAKING, MAX_SOCKETS);
    let mut errors = AcceptErrors::default();
    loop {
        let (stream, peer) = listen::accept(&listener, &mut errors, "WebSocket").await;
        let Some((stream, admission, evicted)) = pool.admit_stream(stream, peer) else {
            continue;
        };
        if evicted {
            refusals.warn(
                "evicted",
                format_args!(
                    "{MAX_HANDSHAKING} connections were waiting to prove the pairing secret: \
                     closed the oldest without a whole request head to let one from {peer} in"
                ),
            );
        }
        let (hub, policy, seen_marker) = (hub.clone(), policy.clone(), seen_marker.clone());
        let (peers, failures, refusals) = (peers.clone(), failures.clone(), refusals.clone());
        tokio::spawn(async move {
            let accepted = tokio::select! {
                accepted = accept(stream, peer, port, &policy, &failures, &refusals, &admission) => accepted,
                lost = admission.lost() => {
                    tracing::debug!(%peer, ?lost, "closed a connection that had not proved the pairing secret");
                    None
                }
            };
            let Some((socket, role)) = accepted else {
                return;
            };
            if !admission.authenticate() {
                refusals.warn(
                    "sockets",
                    format_args!(
                        "{MAX_SOCKETS} sockets are open already: closed a new one from {peer}"
                    ),
                );
                return;
            }
            // `admission` lives as long as the socket: it holds the socket's slot.
            match role {
                Role::Browser => serve_browser(socket, peer, hub, seen_marker).await,
                Role::Peer => peer::serve_peer(socket, hub, peers).await,
                Role::Status => peer::serve_status(socket, &hub, &peers, port).await,
            }
        });
        // Let the new connection read what it was sent before the next accept: a backlog of a
        // flood's connections, accepted in one burst, would otherwise evict it unread.
        tokio::task::yield_now().await;
    }
}

/// Accepts the upgrade with the client's role as subprotocol, or refuses it with HTTP 403.
#[allow(
    clippy::result_large_err,
    reason = "tungstenite's handshake callback fixes these types"
)]
fn answer_handshake(
    decision: Result<Offer, auth::Refusal>,
    peer: SocketAddr,
    request: &Request,
    mut response: Response,
    refusals: &Refusals,
) -> Result<Response, ErrorResponse> {
    match decision {
        Ok(offer) => {
            response.headers_mut().insert(
                header::SEC_WEBSOCKET_PROTOCOL,
                HeaderValue::from_static(offer.role.subprotocol()),
            );
            Ok(response)
        }
        Err(refusal) => {
            // The origin is no secret; the protocol list (an old client's holds its secret)
            // is never logged.
            let origin = request
                .headers()
                .get(header::ORIGIN)
                .map_or_else(|| "none".into(), |o| String::from_utf8_lossy(o.as_bytes()));
            refusals.warn(
                &format!("{refusal:?} {origin}"),
                format_args!(
                    "refused a WebSocket handshake from {peer} (origin {origin}): {refusal}"
                ),
            );
            let mut refused = ErrorResponse::new(Some(refusal.to_string()));
            *refused.status_mut() = StatusCode::FORBIDDEN;
            Err(refused)
        }
    }
}

/// Runs the handshake: the origin check, the upgrade, then the exchange of proofs. Says who
/// connected, once it proved it knows the secret.
async fn accept(
    mut stream: TcpStream,
    peer: SocketAddr,
    port: u16,
    policy: &HandshakePolicy,
    failures: &ProofFailures,
    refusals: &Refusals,
    admission: &Admission,
) -> Option<(WebSocketStream<Connection>, Role)> {
    // Calls are small request/response frames: send each at once.
    if let Err(e) = stream.set_nodelay(true) {
        tracing::debug!(error = %e, "TCP_NODELAY not set");
    }
    // One deadline for the probe check, the upgrade and the proofs.
    let deadline = admission.deadline();
    if answered_probe(&mut stream, deadline).await {
        crate::diagnostics::probe_answered();
        return None;
    }
    let mut offer = None;
    let mut origin = None;
    #[allow(
        clippy::result_large_err,
        reason = "tungstenite's handshake callback fixes these types"
    )]
    let check = |request: &Request, response: Response| {
        let decision = auth::authorize(policy, request.headers());
        origin = request
            .headers()
            .get(header::ORIGIN)
            .and_then(|o| o.to_str().ok())
            .map(str::to_owned);
        if let Err(auth::Refusal::OldProtocol(role)) = decision {
            failures.record(&ProofFailure::new(
                role,
                origin.as_deref(),
                ProofFailureKind::OldProtocol,
            ));
        }
        offer = decision.ok();
        answer_handshake(decision, peer, request, response, refusals)
    };
    let handshake = tokio_tungstenite::accept_hdr_async_with_config(
        admission.meter(stream),
        check,
        Some(socket_config()),
    );
    let mut socket = match tokio::time::timeout_at(deadline, handshake).await {
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
    let offer = offer?;
    let proved = prove(&mut socket, offer, port, policy, deadline).await;
    // A Firefox add-on origin that proved the secret pins itself, if no other is pinned.
    let pinned = match (&proved, offer.role, origin.as_deref()) {
        (Ok(()), Role::Browser, Some(origin))
            if crate::firefox_pin::is_firefox_extension_origin(origin) =>
        {
            policy.firefox_pin().pin(origin)
        }
        _ => Ok(()),
    };
    if let Err(refused) = pinned {
        refusals.warn(
            "firefox pin",
            format!(
                "refused the Firefox add-on at {}: {refused}; to pair this one instead, run \
                 `tabwire extension install --browser firefox DIR` and load it",
                origin.as_deref().unwrap_or_default()
            ),
        );
        let close = CloseFrame {
            code: CloseCode::Policy,
            reason: Utf8Bytes::from_static("another Firefox add-on is paired"),
        };
        let _ = tokio::time::timeout_at(deadline, socket.close(Some(close))).await;
        return None;
    }
    match proved {
        Ok(()) => Some((socket, offer.role)),
        Err(failure) => {
            failures.record(&ProofFailure::new(offer.role, origin.as_deref(), failure));
            let close = CloseFrame {
                code: CloseCode::from(handshake::CLOSE_BAD_PROOF),
                reason: Utf8Bytes::from_static("the pairing secret was not proved"),
            };
            let _ = tokio::time::timeout_at(deadline, socket.close(Some(close))).await;
            None
        }
    }
}

/// This side of the exchange (`bridge::handshake`): sends the server's proof, then waits for
/// the client's and checks it. Nothing else is read or sent before.
async fn prove<S>(
    socket: &mut WebSocketStream<S>,
    offer: Offer,
    port: u16,
    policy: &HandshakePolicy,
    deadline: tokio::time::Instant,
) -> Result<(), ProofFailureKind>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let exchange = Exchange {
        role: offer.role,
        port,
        client: offer.nonce,
        server: fresh_nonce(),
    };
    let secret = policy.secret().expose();
    let first = Message::Text(Utf8Bytes::from(exchange.server_proof_frame(secret)));
    let sent = tokio::time::timeout_at(deadline, socket.send(first)).await;
    if !matches!(sent, Ok(Ok(()))) {
        return Err(ProofFailureKind::NoProof);
    }
    loop {
        let frame = match tokio::time::timeout_at(deadline, socket.next()).await {
            Err(_) | Ok(None) => return Err(ProofFailureKind::NoProof),
            Ok(Some(frame)) => frame,
        };
        return match frame {
            Ok(Message::Text(text)) => exchange
                .check_client_proof_frame(secret, text.as_str())
                .map_err(|_| ProofFailureKind::WrongProof),
            Ok(Message::Close(Some(close)))
                if u16::from(close.code) == handshake::CLOSE_UNPROVEN =>
            {
                Err(ProofFailureKind::OtherSecret)
            }
            Ok(Message::Ping(_) | Message::Pong(_)) => continue,
            Ok(Message::Close(_)) | Err(_) => Err(ProofFailureKind::NoProof),
            Ok(Message::Binary(_) | Message::Frame(_)) => Err(ProofFailureKind::WrongProof),
        };
    }
}

/// A fresh nonce from the operating system's generator.
pub fn fresh_nonce() -> Nonce {
    let mut bytes = [0u8; handshake::NONCE_BYTES];
    getrandom::fill(&mut bytes).expect("the operating system's random generator works");
    Nonce(bytes)
}

/// The limits every socket to tabwire has, both ways.
pub fn socket_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(bridge::MAX_MESSAGE_BYTES))
        .max_frame_size(Some(bridge::MAX_MESSAGE_BYTES))
}

/// The one writer task of a socket: sends everything queued, then flushes once (a burst costs
/// one syscall), until the queue's senders are gone or the socket fails; then closes it.
pub fn spawn_writer<S>(mut sink: SplitSink<WebSocketStream<S>, Message>) -> (Outbox, JoinHandle<()>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (outbox, mut queue) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        while let Some(frame) = queue.recv().await {
            let mut result = sink.feed(Message::Text(Utf8Bytes::from(frame))).await;
            while result.is_ok()
                && let Ok(frame) = queue.try_recv()
            {
                result = sink.feed(Message::Text(Utf8Bytes::from(frame))).await;
            }
            if let Err(e) = result.and(sink.flush().await) {
                tracing::debug!(error = %e, "writing to a socket failed");
                break;
            }
        }
        let _ = sink.close().await;
    });
    (outbox, writer)
}

/// Bounds how fast one socket's frames are read: a token bucket of
/// [`MAX_FRAMES_PER_SECOND`]; past it the reader waits (logged once per socket).
pub struct FrameRate {
    tokens: f64,
    last: tokio::time::Instant,
    warned: bool,
}

impl Default for FrameRate {
    fn default() -> Self {
        FrameRate {
            tokens: f64::from(MAX_FRAMES_PER_SECOND),
            last: tokio::time::Instant::now(),
            warned: false,
        }
    }
}

impl FrameRate {
    /// Takes one frame's token, waiting for it when the socket is over its rate.
    pub async fn admit(&mut self, who: &str) {
        let rate = f64::from(MAX_FRAMES_PER_SECOND);
        let now = tokio::time::Instant::now();
        self.tokens = (self.tokens + now.duration_since(self.last).as_secs_f64() * rate).min(rate);
        self.last = now;
        if self.tokens < 1.0 {
            if !self.warned {
                tracing::warn!(
                    "{who} sends more than {MAX_FRAMES_PER_SECOND} frames a second: throttled"
                );
                self.warned = true;
            }
            let wait = Duration::from_secs_f64((1.0 - self.tokens) / rate);
            tokio::time::sleep(wait).await;
            self.tokens = 1.0;
            self.last = tokio::time::Instant::now();
        }
        self.tokens -= 1.0;
    }
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
    socket: WebSocketStream<Connection>,
    peer: SocketAddr,
    hub: Arc<Hub>,
    seen_marker: Option<Arc<Path>>,
) {
    if let Some(marker) = seen_marker {
        remember_browser(&marker);
    }

    let (sink, mut frames) = socket.split();
    let (outbox, writer) = spawn_writer(sink);
    let conn = hub.connect(outbox);
    tracing::info!(conn, %peer, "browser extension connected");

    read_frames(conn, &hub, &mut frames).await;
    hub.disconnect(conn);
    writer.abort();
    tracing::info!(conn, "browser extension disconnected");
}

async fn read_frames<S>(conn: ConnId, hub: &Hub, frames: &mut S)
where
    S: futures_util::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin,
{
    let mut rate = FrameRate::default();
    let who = format!("browser socket {conn}");
    while let Some(frame) = frames.next().await {
        rate.admit(&who).await;
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

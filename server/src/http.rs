//! MCP over Streamable HTTP, on rmcp's documented pattern: rmcp's service mounted at `/mcp` only,
//! one `TabwireMcp` per session, and a graceful shutdown (on SIGINT/SIGTERM: no new connection,
//! sessions cancelled, open connections given a few seconds). In front of it, every request must
//! name a loopback `Host`, carry no foreign `Origin` (so a web page cannot reach it through DNS
//! rebinding or a cross-origin POST) and present the pairing secret as a bearer token
//! (`Authorization: Bearer <secret>`, compared in constant time): another local user cannot use
//! the browser. What a client can make tabwire hold is bounded: sessions, connections, the time
//! to send a request's headers and the time a connection may sit idle. A connection whose
//! requests have not yet presented the bearer costs at most what [`preauth`] allows (a few KB, a
//! short deadline, a bounded pool that evicts its oldest), so clients without the secret cannot
//! keep one that has it out. Refusals are logged (a few lines a minute), never with the token.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use subtle::ConstantTimeEq;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::hub::Hub;
use crate::listen::{self, AcceptErrors, Refusals};
use crate::mcp::TabwireMcp;
use crate::pairing::Secret;
use crate::preauth::{self, Metered};

/// The one path MCP is served at.
pub const MCP_PATH: &str = "/mcp";
/// MCP sessions one process keeps at once; an `initialize` past it gets 503.
pub const MAX_SESSIONS: usize = 32;
/// Connections that presented the bearer, open at once; a request on one more gets 503.
pub const MAX_CONNECTIONS: usize = 64;
/// Connections that have not presented the bearer yet; a new one evicts the oldest.
pub const MAX_UNAUTHENTICATED: usize = 128;
/// The time a client has to send a request's headers (slowloris).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// A connection with no byte either way for this long is closed (an open SSE stream gets a
/// keep-alive every 15 s, so it is never idle that long).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// A session no request used for this long is closed.
pub const SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// A session that was created but never initialized is closed after this long.
pub const SESSION_INIT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long open connections get to finish once the server shuts down.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("{0} is not a loopback address; tabwire serves HTTP on 127.0.0.1 or [::1] only")]
    NotLoopback(SocketAddr),
    #[error("listening for MCP over HTTP on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// The hosts and origins a request may name for a server on `port`.
fn allowed(port: u16) -> (Vec<String>, Vec<String>) {
    let hosts = ["localhost", "127.0.0.1", "[::1]"];
    let authorities = hosts
        .iter()
        .flat_map(|h| [(*h).to_owned(), format!("{h}:{port}")])
        .chain(["::1".to_owned()])
        .collect();
    let origins = hosts.iter().map(|h| format!("http://{h}:{port}")).collect();
    (authorities, origins)
}

type Body = BoxBody<Bytes, Infallible>;

/// What every request must get past before rmcp sees it.
struct Gate {
    secret: Secret,
    hosts: Vec<String>,
    origins: Vec<String>,
    sessions: Arc<LocalSessionManager>,
    refusals: Refusals,
}

/// Why a request was refused: its status and the body's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    NotMcpPath,
    ForeignHost,
    ForeignOrigin,
    NoBearer,
    WrongBearer,
    TooManySessions,
    TooManyConnections,
}

impl Refusal {
    fn status(self) -> StatusCode {
        match self {
            Refusal::NotMcpPath => StatusCode::NOT_FOUND,
            Refusal::ForeignHost | Refusal::ForeignOrigin => StatusCode::FORBIDDEN,
            Refusal::NoBearer | Refusal::WrongBearer => StatusCode::UNAUTHORIZED,
            Refusal::TooManySessions | Refusal::TooManyConnections => {
                StatusCode::SERVICE_UNAVAILABLE
            }
        }
    }

    fn text(self) -> &'static str {
        match self {
            Refusal::NotMcpPath => "tabwire serves MCP at /mcp only",
            Refusal::ForeignHost => "Host not allowed",
            Refusal::ForeignOrigin => "Origin not allowed",
            Refusal::NoBearer => {
                "the pairing secret is required: Authorization: Bearer <the secret tabwire pair wrote>"
            }
            Refusal::WrongBearer => "wrong bearer token",
            Refusal::TooManySessions => "too many MCP sessions are open; close one and try again",
            Refusal::TooManyConnections => {
                "too many HTTP connections are open; close one and try again"
            }
        }
    }
}

impl Gate {
    fn header(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
        headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The decision on a request's head (`None`: let it through).
    fn check(&self, path: &str, headers: &HeaderMap, sessions_open: usize) -> Option<Refusal> {
        if path != MCP_PATH {
            return Some(Refusal::NotMcpPath);
        }
        let host = Self::header(headers, header::HOST).unwrap_or_default();
        if !self.hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
            return Some(Refusal::ForeignHost);
        }
        if let Some(origin) = headers.get(header::ORIGIN)
            && !self
                .origins
                .iter()
                .any(|o| o.as_bytes() == origin.as_bytes())
        {
            return Some(Refusal::ForeignOrigin);
        }
        let Some(token) = Self::header(headers, header::AUTHORIZATION)
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
        else {
            return Some(Refusal::NoBearer);
        };
        if !bool::from(token.as_bytes().ct_eq(self.secret.expose().as_bytes())) {
            return Some(Refusal::WrongBearer);
        }
        // A request without a session id may start one (legacy `initialize`).
        let starts_session = !headers.contains_key("mcp-session-id");
        if starts_session && sessions_open >= MAX_SESSIONS {
            return Some(Refusal::TooManySessions);
        }
        None
    }

    fn refuse(
        &self,
        refusal: Refusal,
        request: &Request<Incoming>,
        peer: SocketAddr,
    ) -> Response<Body> {
        let origin = Self::header(request.headers(), header::ORIGIN).unwrap_or("none");
        self.refusals.warn(
            &format!("{refusal:?} {origin}"),
            format_args!(
                "refused an HTTP request ({} {} from {peer}, origin {origin}): {}",
                request.method(),
                request.uri().path(),
                refusal.text()
            ),
        );
        let mut response =
            Response::new(Full::new(Bytes::from_static(refusal.text().as_bytes())).boxed());
        *response.status_mut() = refusal.status();
        // A refused connection is closed, not kept alive: idle in the waiting pool it would only
        // take a place a client with the bearer may need.
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        if matches!(refusal, Refusal::NoBearer | Refusal::WrongBearer) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

/// Serves MCP on `addr` until SIGINT or SIGTERM, then shuts down gracefully.
pub async fn serve_http(
    hub: Arc<Hub>,
    safeguards: Arc<crate::mcp::Safeguards>,
    addr: SocketAddr,
    browser_expected: bool,
    secret: Secret,
) -> Result<(), HttpError> {
    if !addr.ip().is_loopback() {
        return Err(HttpError::NotLoopback(addr));
    }
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| HttpError::Bind { addr, source })?;
    let local = listener
        .local_addr()
        .map_err(|source| HttpError::Bind { addr, source })?;
    let (hosts, origins) = allowed(local.port());
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts.clone())
        .with_allowed_origins(origins.clone())
        .enforce_origin_validation();
    let stop_sessions = config.cancellation_token.clone();
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(SESSION_IDLE_TIMEOUT);
    sessions.session_config.init_timeout = Some(SESSION_INIT_TIMEOUT);
    let sessions = Arc::new(sessions);
    // HTTP sessions have no stdin to close: this sender lives as long as the server.
    let (_open, closing) = watch::channel(false);
    let service = StreamableHttpService::new(
        move || {
            Ok(TabwireMcp::new(
                hub.clone(),
                safeguards.clone(),
                browser_expected,
                closing.clone(),
            ))
        },
        sessions.clone(),
        config,
    );
    let gate = Arc::new(Gate {
        secret,
        hosts,
        origins,
        sessions,
        refusals: Refusals::default(),
    });
    tracing::info!(%local, "serving MCP over Streamable HTTP at http://{local}{MCP_PATH} (bearer: the pairing secret)");

    let pool = preauth::Pool::new(MAX_UNAUTHENTICATED, MAX_CONNECTIONS);
    let graceful = GracefulShutdown::new();
    let mut errors = AcceptErrors::default();
    let shutdown = shutdown_signal();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listen::accept(&listener, &mut errors, "HTTP") => accepted,
            () = &mut shutdown => break,
        };
        let Some((stream, admission, evicted)) = pool.admit_stream(stream, peer) else {
            continue;
        };
        if evicted {
            gate.refusals.warn(
                "evicted",
                format_args!(
                    "{MAX_UNAUTHENTICATED} HTTP connections were waiting without the bearer: \
                     closed the oldest without a whole request head to let one from {peer} in"
                ),
            );
        }
        let admission = Arc::new(admission);
        let (gate, service, admitted) = (gate.clone(), service.clone(), admission.clone());
        let handler = hyper::service::service_fn(move |request: Request<Incoming>| {
            let (gate, service, admission) = (gate.clone(), service.clone(), admitted.clone());
            async move {
                let open = gate.sessions.sessions.read().await.len();
                let refusal = gate
                    .check(request.uri().path(), request.headers(), open)
                    .or_else(|| (!admission.authenticate()).then_some(Refusal::TooManyConnections));
                Ok::<_, Infallible>(match refusal {
                    Some(refusal) => gate.refuse(refusal, &request, peer),
                    None => service.handle(request).await,
                })
            }
        });
        let activity = Activity::default();
        let io = TokioIo::new(Watched {
            inner: admission.meter(stream),
            activity: activity.clone(),
        });
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(HEADER_READ_TIMEOUT)
            .serve_connection(io, handler);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            tokio::select! {
                served = connection => if let Err(e) = served {
                    tracing::debug!(%peer, error = %e, "HTTP connection ended with an error");
                },
                () = activity.idle_for(IDLE_TIMEOUT) => {
                    tracing::debug!(%peer, "closed an HTTP connection idle for {} s", IDLE_TIMEOUT.as_secs());
                }
                lost = admission.lost() => {
                    tracing::debug!(%peer, ?lost, "closed an HTTP connection that never presented the bearer");
                }
            }
        });
        // Let the new connection read its request before the next accept: a backlog of a flood's
        // connections, accepted in one burst, would otherwise evict it unread.
        tokio::task::yield_now().await;
    }
    tracing::info!("shutting down the HTTP server");
    stop_sessions.cancel();
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::info!(
            "HTTP connections still open after {} s: closed",
            SHUTDOWN_GRACE.as_secs()
        );
    }
    Ok(())
}

/// SIGINT or SIGTERM.
async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                .expect("a SIGTERM handler can be installed");
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
}

/// When a connection last moved a byte (milliseconds since it was accepted).
#[derive(Clone)]
struct Activity {
    since: Instant,
    last_ms: Arc<AtomicU64>,
}

impl Default for Activity {
    fn default() -> Self {
        Activity {
            since: Instant::now(),
            last_ms: Arc::new(AtomicU64::new(0)),
        }
    }
}

impl Activity {
    fn touch(&self) {
        let now = self.since.elapsed().as_millis() as u64;
        self.last_ms.store(now, Ordering::Relaxed);
    }

    /// Resolves once no byte moved for `idle`.
    async fn idle_for(&self, idle: Duration) {
        loop {
            let last = self.since + Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
            if last.elapsed() >= idle {
                return;
            }
            tokio::time::sleep_until(last + idle).await;
        }
    }
}

/// A connection's stream that records when it last moved a byte.
struct Watched {
    inner: Metered<TcpStream>,
    activity: Activity,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let Watched { inner, activity } = &mut *self;
        preauth::poll_read_seeing(inner, cx, buf, |_| {
            activity.touch();
            Ok(())
        })
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, data);
        if let Poll::Ready(Ok(n)) = &polled
            && *n > 0
        {
            self.activity.touch();
        }
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_hosts_and_our_own_origins_are_allowed() {
        let (hosts, origins) = allowed(8123);
        assert!(hosts.contains(&"127.0.0.1:8123".to_owned()));
        assert!(hosts.contains(&"localhost".to_owned()));
        assert!(!hosts.iter().any(|h| h.contains("0.0.0.0")));
        assert_eq!(
            origins,
            [
                "http://localhost:8123",
                "http://127.0.0.1:8123",
                "http://[::1]:8123"
            ]
        );
    }

    fn gate() -> Gate {
        let (hosts, origins) = allowed(8123);
        Gate {
            secret: Secret::parse(&"ab".repeat(32)).unwrap(),
            hosts,
            origins,
            sessions: Arc::new(LocalSessionManager::default()),
            refusals: Refusals::default(),
        }
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(k, v)| {
                (
                    header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                    HeaderValue::from_str(v).unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn a_request_needs_the_path_a_loopback_host_no_foreign_origin_and_the_bearer() {
        let gate = gate();
        let bearer = format!("Bearer {}", "ab".repeat(32));
        let good = [
            ("host", "127.0.0.1:8123"),
            ("authorization", bearer.as_str()),
        ];
        assert_eq!(gate.check("/mcp", &headers(&good), 0), None);
        let with_origin = [
            ("host", "localhost:8123"),
            ("origin", "http://127.0.0.1:8123"),
            ("authorization", bearer.as_str()),
        ];
        assert_eq!(gate.check("/mcp", &headers(&with_origin), 0), None);
        for (path, pairs, refusal) in [
            ("/", &good[..], Refusal::NotMcpPath),
            ("/mcp/x", &good[..], Refusal::NotMcpPath),
            (
                "/mcp",
                &[("host", "evil.example:8123"), ("authorization", &bearer)][..],
                Refusal::ForeignHost,
            ),
            (
                "/mcp",
                &[
                    ("host", "127.0.0.1:8123"),
                    ("origin", "http://127.0.0.1:9999"),
                    ("authorization", &bearer),
                ][..],
                Refusal::ForeignOrigin,
            ),
            ("/mcp", &[("host", "127.0.0.1:8123")][..], Refusal::NoBearer),
            (
                "/mcp",
                &[("host", "127.0.0.1:8123"), ("authorization", "Basic x")][..],
                Refusal::NoBearer,
            ),
            (
                "/mcp",
                &[
                    ("host", "127.0.0.1:8123"),
                    ("authorization", &format!("Bearer {}", "ab".repeat(31))),
                ][..],
                Refusal::WrongBearer,
            ),
        ] {
            assert_eq!(
                gate.check(path, &headers(pairs), 0),
                Some(refusal),
                "{path} {pairs:?}"
            );
        }
    }

    #[test]
    fn sessions_are_capped_but_a_session_in_use_goes_on() {
        let gate = gate();
        let bearer = format!("Bearer {}", "ab".repeat(32));
        let mut request = vec![("host", "127.0.0.1:8123"), ("authorization", &bearer)];
        assert_eq!(
            gate.check("/mcp", &headers(&request), MAX_SESSIONS),
            Some(Refusal::TooManySessions)
        );
        // The same request in a session that exists goes on.
        request.push(("mcp-session-id", "s1"));
        assert_eq!(gate.check("/mcp", &headers(&request), MAX_SESSIONS), None);
    }

    #[test]
    fn refusal_texts_never_hold_a_token() {
        for refusal in [
            Refusal::NotMcpPath,
            Refusal::ForeignHost,
            Refusal::ForeignOrigin,
            Refusal::NoBearer,
            Refusal::WrongBearer,
            Refusal::TooManySessions,
            Refusal::TooManyConnections,
        ] {
            assert!(!refusal.text().contains(&"ab".repeat(32)));
        }
    }
}

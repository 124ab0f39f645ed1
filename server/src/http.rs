//! MCP over Streamable HTTP: rmcp's tower service on hyper, one `TabwireMcp` per session,
//! listening on a loopback address only. `Host` must name a loopback host and a present
//! `Origin` must be this server's own, so a web page cannot reach it through DNS rebinding
//! (rmcp answers both refusals with a 403).

use std::net::SocketAddr;
use std::sync::Arc;

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::hub::Hub;
use crate::mcp::TabwireMcp;

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

/// Serves MCP on `addr` until the process ends.
pub async fn serve_http(
    hub: Arc<Hub>,
    addr: SocketAddr,
    browser_expected: bool,
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
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation();
    // HTTP sessions have no stdin to close: this sender lives as long as the server.
    let (_open, closing) = watch::channel(false);
    let service = StreamableHttpService::new(
        move || {
            Ok(TabwireMcp::new(
                hub.clone(),
                browser_expected,
                closing.clone(),
            ))
        },
        LocalSessionManager::default().into(),
        config,
    );
    tracing::info!(%local, "serving MCP over Streamable HTTP at http://{local}/mcp");
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!(error = %e, "accepting an HTTP connection failed");
                continue;
            }
        };
        let service = TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let served = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
            if let Err(e) = served {
                tracing::debug!(%peer, error = %e, "HTTP connection ended with an error");
            }
        });
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
}

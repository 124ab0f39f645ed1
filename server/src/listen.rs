//! Accept loops that never spin: a failed `accept` (out of file descriptors, most often) pauses
//! before the next try, longer while it keeps failing, and its warning is logged at most once a
//! second with the count of those left out. Shared by the WebSocket and the HTTP listeners.

use std::fmt::Display;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

/// The first pause after a failed accept; doubled while failures continue, up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(50);
const MAX_PAUSE: Duration = Duration::from_secs(1);

/// A warning logged at most once per second; the ones left out are counted in the next.
#[derive(Default)]
pub struct RateLimitedLog {
    last: Option<Instant>,
    left_out: u64,
}

impl RateLimitedLog {
    const EVERY: Duration = Duration::from_secs(1);

    /// Whether a line may be logged now (and how many were left out since the last one).
    fn allow(&mut self) -> Option<u64> {
        let now = Instant::now();
        if self
            .last
            .is_some_and(|at| now.duration_since(at) < Self::EVERY)
        {
            self.left_out += 1;
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.left_out))
    }

    pub fn warn(&mut self, message: impl Display) {
        match self.allow() {
            Some(0) => tracing::warn!("{message}"),
            Some(left_out) => tracing::warn!("{message} ({left_out} more like it not logged)"),
            None => {}
        }
    }
}

/// The state of one listener's failing accepts.
#[derive(Default)]
pub struct AcceptErrors {
    pause: Option<Duration>,
    log: RateLimitedLog,
}

/// The next connection on `listener`; on errors, pauses and retries (never returns an error).
pub async fn accept(
    listener: &TcpListener,
    errors: &mut AcceptErrors,
    what: &str,
) -> (TcpStream, SocketAddr) {
    loop {
        match listener.accept().await {
            Ok(accepted) => {
                errors.pause = None;
                return accepted;
            }
            Err(e) => {
                let pause = errors.pause.map_or(FIRST_PAUSE, |p| (p * 2).min(MAX_PAUSE));
                errors.pause = Some(pause);
                errors.log.warn(format_args!(
                    "accepting a {what} connection failed: {e}; pausing {} ms",
                    pause.as_millis()
                ));
                tokio::time::sleep(pause).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_burst_of_warnings_logs_one_a_second_and_counts_the_rest() {
        let mut log = RateLimitedLog::default();
        assert_eq!(log.allow(), Some(0));
        for _ in 0..1000 {
            assert_eq!(log.allow(), None);
        }
        tokio::time::advance(Duration::from_millis(1001)).await;
        assert_eq!(log.allow(), Some(1000));
        assert_eq!(log.allow(), None);
    }
}

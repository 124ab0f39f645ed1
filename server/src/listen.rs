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

/// Warnings logged at most `per_second` a second (one by default); the ones left out are
/// counted in the next.
pub struct RateLimitedLog {
    per_second: u32,
    window: Option<Instant>,
    in_window: u32,
    left_out: u64,
}

impl Default for RateLimitedLog {
    fn default() -> Self {
        RateLimitedLog::per_second(1)
    }
}

impl RateLimitedLog {
    const WINDOW: Duration = Duration::from_secs(1);

    pub fn per_second(per_second: u32) -> Self {
        RateLimitedLog {
            per_second,
            window: None,
            in_window: 0,
            left_out: 0,
        }
    }

    /// Whether a line may be logged now (and how many were left out since the last one).
    fn allow(&mut self) -> Option<u64> {
        let now = Instant::now();
        if self
            .window
            .is_none_or(|start| now.duration_since(start) >= Self::WINDOW)
        {
            self.window = Some(now);
            self.in_window = 0;
        }
        if self.in_window >= self.per_second {
            self.left_out += 1;
            return None;
        }
        self.in_window += 1;
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
        let mut burst = RateLimitedLog::per_second(3);
        assert_eq!([burst.allow(), burst.allow(), burst.allow()], [Some(0); 3]);
        assert_eq!(burst.allow(), None);
    }
}

//! Accept loops that never spin: a failed `accept` (out of file descriptors, most often) pauses
//! before the next try, longer while it keeps failing, and its warning is logged at most once a
//! second with the count of those left out. Shared by the WebSocket and the HTTP listeners, with
//! the log of refusals ([`Refusals`]): a flood of refused clients writes a few lines a minute.

use std::collections::HashMap;
use std::fmt::Display;
use std::net::SocketAddr;
use std::sync::{Mutex, PoisonError};
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

/// The log of one listener's refusals: in each minute, the first [`Refusals::LINES_PER_KIND`]
/// lines of each kind of refusal (a kind: why, and from which origin) for at most
/// [`Refusals::KINDS`] kinds; the rest are counted, and the count is said in the next line logged
/// ("N more refusals in the last minute"). A flood of refused clients, however varied, writes at
/// most `KINDS * LINES_PER_KIND` lines a minute.
#[derive(Default)]
pub struct Refusals {
    state: Mutex<RefusalState>,
}

#[derive(Default)]
struct RefusalState {
    window: Option<Instant>,
    lines: HashMap<String, u32>,
    left_out: u64,
}

impl Refusals {
    pub const LINES_PER_KIND: u32 = 5;
    pub const KINDS: usize = 8;
    const WINDOW: Duration = Duration::from_secs(60);

    /// Logs `message`, a refusal of kind `kind`, unless this minute's lines are spent. The
    /// message is printed escaped (a client's origin can hold anything) and capped.
    pub fn warn(&self, kind: &str, message: impl Display) {
        if let Some(left_out) = self.allow(kind) {
            let message = crate::audit::printable(&message.to_string());
            match left_out {
                0 => tracing::warn!("{message}"),
                n => tracing::warn!("{message} ({n} more refusals in the last minute, not logged)"),
            }
        }
    }

    /// Whether a line of `kind` may be logged now (and how many were left out before it).
    fn allow(&self, kind: &str) -> Option<u64> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        if state
            .window
            .is_none_or(|start| now.duration_since(start) >= Self::WINDOW)
        {
            state.window = Some(now);
            state.lines.clear();
        }
        let known = state.lines.len();
        let lines = match state.lines.get_mut(kind) {
            Some(lines) => lines,
            None if known < Self::KINDS => state.lines.entry(kind.to_owned()).or_insert(0),
            None => {
                state.left_out += 1;
                return None;
            }
        };
        if *lines >= Self::LINES_PER_KIND {
            state.left_out += 1;
            return None;
        }
        *lines += 1;
        Some(std::mem::take(&mut state.left_out))
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

    #[tokio::test(start_paused = true)]
    async fn refusals_log_a_few_lines_a_minute_however_varied_and_count_the_rest() {
        let refusals = Refusals::default();
        let (mut logged, mut counted) = (0, 0);
        let mut note = |allowed: Option<u64>| {
            if let Some(left_out) = allowed {
                logged += 1;
                counted += left_out;
            }
        };
        for i in 0..10_000 {
            note(refusals.allow(&format!("origin {i}")));
            note(refusals.allow("one origin"));
        }
        // Eight kinds a minute ("one origin" among them), five lines each at most.
        assert!(
            logged <= Refusals::KINDS * Refusals::LINES_PER_KIND as usize,
            "{logged}"
        );
        assert_eq!(logged, 5 + 7);
        tokio::time::advance(Duration::from_secs(61)).await;
        // Every refusal is either logged or counted in a later line.
        let next = refusals.allow("one origin").unwrap();
        assert_eq!(counted + next, 20_000 - 12);
        assert_eq!(refusals.allow("one origin"), Some(0));
    }
}

//! Reconnect delays: capped exponential backoff with jitter. The cap is low on purpose: the
//! product promise is "server starts → extension connected within a second", and a refused
//! connection to 127.0.0.1 costs next to nothing. Each attempt first probes the port with an
//! HTTP `HEAD` ([`open_socket`] decides whether to open the WebSocket): Chrome delays every
//! WebSocket of a process by 1-5 s once about 16 of its handshakes failed within a few minutes,
//! and failed probes do not count.

/// First retry delay.
pub const FIRST_DELAY_MS: f64 = 100.0;
/// Longest delay between two attempts.
pub const MAX_DELAY_MS: f64 = 500.0;
/// Each delay is scaled by a random factor in `[1 - JITTER, 1 + JITTER)` so several browsers do
/// not hammer a restarting server in lockstep.
pub const JITTER: f64 = 0.2;

/// Without an answer to the probe (a server that does not answer `HEAD`, a probe that is
/// blocked), a WebSocket is still tried this often: rarely enough that Chrome's throttle stays
/// far away (a handful of failures in its window), often enough to connect in the end.
pub const BLIND_SOCKET_EVERY_MS: f64 = 30_000.0;

/// Whether to open the WebSocket now: when the server answered the probe, or when the last
/// socket attempt (at `last_socket_ms`, none yet: `None`) is [`BLIND_SOCKET_EVERY_MS`] old.
pub fn open_socket(probe_answered: bool, now_ms: f64, last_socket_ms: Option<f64>) -> bool {
    probe_answered || last_socket_ms.is_none_or(|last| now_ms - last >= BLIND_SOCKET_EVERY_MS)
}

#[derive(Debug, Default, Clone)]
pub struct Backoff {
    failures: u32,
}

impl Backoff {
    /// The delay before the next attempt; `random` is uniform in `[0, 1)`.
    pub fn next_delay_ms(&mut self, random: f64) -> u32 {
        let base = FIRST_DELAY_MS * 2f64.powi(self.failures.min(16) as i32);
        self.failures = self.failures.saturating_add(1);
        let jitter = 1.0 + JITTER * (2.0 * random.clamp(0.0, 1.0) - 1.0);
        (base.min(MAX_DELAY_MS) * jitter).round() as u32
    }

    /// A connection succeeded: the next failure starts from the first delay again.
    pub fn reset(&mut self) {
        self.failures = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_then_caps() {
        let mut b = Backoff::default();
        let delays: Vec<u32> = (0..7).map(|_| b.next_delay_ms(0.5)).collect();
        assert_eq!(delays, vec![100, 200, 400, 500, 500, 500, 500]);
    }

    #[test]
    fn jitter_stays_within_bounds_and_reset_restarts() {
        let mut b = Backoff::default();
        assert_eq!(b.next_delay_ms(0.0), 80);
        for _ in 0..10 {
            b.next_delay_ms(0.3);
        }
        let d = b.next_delay_ms(0.999_999);
        assert!((575..=600).contains(&d), "{d}");
        b.reset();
        assert_eq!(b.next_delay_ms(0.5), 100);
    }

    #[test]
    fn the_socket_opens_when_the_probe_answers_or_rarely_without() {
        assert!(open_socket(true, 1_000.0, Some(999.0)));
        // The first attempt tries the socket whatever the probe said.
        assert!(open_socket(false, 1_000.0, None));
        assert!(!open_socket(false, 1_000.0, Some(0.0)));
        assert!(!open_socket(false, 29_999.0, Some(0.0)));
        assert!(open_socket(false, 30_000.0, Some(0.0)));
    }
}

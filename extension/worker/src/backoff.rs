//! Reconnect delays: capped exponential backoff with jitter. The cap is low on purpose: the
//! product promise is "server starts → extension connected within a second", and a refused
//! connection to 127.0.0.1 costs next to nothing.

/// First retry delay.
pub const FIRST_DELAY_MS: f64 = 100.0;
/// Longest delay between two attempts.
pub const MAX_DELAY_MS: f64 = 1000.0;
/// Each delay is scaled by a random factor in `[1 - JITTER, 1 + JITTER)` so several browsers do
/// not hammer a restarting server in lockstep.
pub const JITTER: f64 = 0.2;

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
        assert_eq!(delays, vec![100, 200, 400, 800, 1000, 1000, 1000]);
    }

    #[test]
    fn jitter_stays_within_bounds_and_reset_restarts() {
        let mut b = Backoff::default();
        assert_eq!(b.next_delay_ms(0.0), 80);
        for _ in 0..10 {
            b.next_delay_ms(0.3);
        }
        let d = b.next_delay_ms(0.999_999);
        assert!((1150..=1200).contains(&d), "{d}");
        b.reset();
        assert_eq!(b.next_delay_ms(0.5), 100);
    }
}

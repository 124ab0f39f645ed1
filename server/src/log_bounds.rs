//! The stderr log's size bounds. Whatever a client, a page or a flood of connections makes tabwire
//! log, one line is at most [`MAX_LINE_BYTES`] (a 64 KB tool name is cut, saying how much was cut)
//! and the log grows by at most [`MAX_BYTES_PER_MINUTE`]; lines past that budget are counted, and
//! the count is written once the next minute begins. The writer `tracing` formats into.

use std::io::{self, Write};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use tracing_subscriber::fmt::MakeWriter;

/// The most bytes one log line keeps.
pub const MAX_LINE_BYTES: usize = 4 * 1024;
/// The most bytes the log grows by in a minute.
pub const MAX_BYTES_PER_MINUTE: usize = 1024 * 1024;
const WINDOW: Duration = Duration::from_secs(60);

/// What the budget of the current minute has spent.
struct Budget {
    window: Instant,
    spent: usize,
    left_out_lines: u64,
    left_out_bytes: u64,
}

/// Stderr, bounded per line and per minute.
pub struct BoundedStderr {
    budget: Mutex<Budget>,
}

impl Default for BoundedStderr {
    fn default() -> Self {
        BoundedStderr {
            budget: Mutex::new(Budget {
                window: Instant::now(),
                spent: 0,
                left_out_lines: 0,
                left_out_bytes: 0,
            }),
        }
    }
}

/// `line` cut to [`MAX_LINE_BYTES`] (at a character boundary), saying how much was cut.
fn bounded_line(line: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if line.len() <= MAX_LINE_BYTES {
        return line.into();
    }
    let mut end = MAX_LINE_BYTES;
    // Back off to the start of a UTF-8 character.
    while end > 0 && (line[end] & 0b1100_0000) == 0b1000_0000 {
        end -= 1;
    }
    let mut cut = line[..end].to_vec();
    cut.extend_from_slice(format!("… [{} bytes cut]\n", line.len() - end).as_bytes());
    cut.into()
}

impl BoundedStderr {
    /// Writes one formatted event to `out` within the bounds.
    fn write_event(&self, event: &[u8], out: &mut impl Write) -> io::Result<()> {
        let line = bounded_line(event);
        let mut budget = self.budget.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        if now.duration_since(budget.window) >= WINDOW {
            if budget.left_out_lines > 0 {
                writeln!(
                    out,
                    "tabwire: {} log lines ({} bytes) were left out in the last minute: the log \
                     grows by at most {} KiB a minute",
                    budget.left_out_lines,
                    budget.left_out_bytes,
                    MAX_BYTES_PER_MINUTE / 1024
                )?;
            }
            *budget = Budget {
                window: now,
                spent: 0,
                left_out_lines: 0,
                left_out_bytes: 0,
            };
        }
        if budget.spent + line.len() > MAX_BYTES_PER_MINUTE {
            budget.left_out_lines += 1;
            budget.left_out_bytes += line.len() as u64;
            return Ok(());
        }
        budget.spent += line.len();
        out.write_all(&line)
    }
}

/// One event's writer: `tracing` writes each formatted event in one `write_all`.
pub struct EventWriter<'a> {
    log: &'a BoundedStderr,
}

impl Write for EventWriter<'_> {
    fn write(&mut self, event: &[u8]) -> io::Result<usize> {
        self.log.write_event(event, &mut io::stderr().lock())?;
        Ok(event.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stderr().flush()
    }
}

impl<'a> MakeWriter<'a> for BoundedStderr {
    type Writer = EventWriter<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        EventWriter { log: self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_line_is_cut_at_a_character_saying_how_much() {
        let log = BoundedStderr::default();
        let mut out = Vec::new();
        let line = format!("tool {}\n", "é".repeat(32 * 1024));
        log.write_event(line.as_bytes(), &mut out).unwrap();
        assert!(out.len() < MAX_LINE_BYTES + 64, "{}", out.len());
        let text = String::from_utf8(out).expect("cut at a character boundary");
        assert!(
            text.ends_with(" bytes cut]\n"),
            "{}",
            &text[text.len() - 40..]
        );
        let mut short = Vec::new();
        log.write_event(b"a short line\n", &mut short).unwrap();
        assert_eq!(short, b"a short line\n");
    }

    #[test]
    fn a_flood_stops_at_the_budget_and_is_counted_in_the_next_minute() {
        let log = BoundedStderr::default();
        let mut out = Vec::new();
        let line = vec![b'x'; MAX_LINE_BYTES];
        for _ in 0..10_000 {
            log.write_event(&line, &mut out).unwrap();
        }
        assert!(out.len() <= MAX_BYTES_PER_MINUTE, "{}", out.len());
        let written = out.len() / MAX_LINE_BYTES;
        let past = Instant::now().checked_sub(WINDOW).unwrap();
        log.budget.lock().unwrap().window = past;
        let mut next = Vec::new();
        log.write_event(b"after\n", &mut next).unwrap();
        let text = String::from_utf8(next).unwrap();
        assert!(
            text.starts_with(&format!("tabwire: {} log lines", 10_000 - written)),
            "{text}"
        );
        assert!(text.ends_with("after\n"), "{text}");
    }
}

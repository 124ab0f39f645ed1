//! Where an act's time goes, for profiling (`scripts/bench_page_tools.py --builds`): compiled in
//! only when the runtime is built with `TABWIRE_PROFILE` set, and then written as the answer's
//! last line; shipped builds have none of it (`ON` is a constant false there).

use std::cell::{Cell, RefCell};

/// Whether this build measures.
pub const ON: bool = option_env!("TABWIRE_PROFILE").is_some();

thread_local! {
    /// The page's clock (`performance.now()`), which the browser glue gives at start: this module
    /// names no browser binding.
    static CLOCK: Cell<Option<fn() -> f64>> = const { Cell::new(None) };
    /// Spans measured inside a phase (the settle point of the step interpreter).
    static INSIDE: RefCell<Vec<(&'static str, f64)>> = const { RefCell::new(Vec::new()) };
}

/// Gives the clock spans are measured with (the runtime's start does, in the browser).
pub fn set_clock(clock: fn() -> f64) {
    CLOCK.with(|c| c.set(Some(clock)));
}

fn now() -> f64 {
    match CLOCK.with(Cell::get) {
        Some(clock) if ON => clock(),
        _ => 0.0,
    }
}

/// Times `part` (inside a phase), in a profiling build.
pub async fn span<T>(name: &'static str, part: impl Future<Output = T>) -> T {
    let start = now();
    let out = part.await;
    if ON {
        INSIDE.with(|i| i.borrow_mut().push((name, now() - start)));
    }
    out
}

/// The phases measured so far: `name ms` each.
pub struct Phases {
    last: f64,
    line: String,
}

impl Phases {
    pub fn start() -> Phases {
        INSIDE.with(|i| i.borrow_mut().clear());
        Phases {
            last: now(),
            line: String::new(),
        }
    }

    /// The phase `name` ended now.
    pub fn mark(&mut self, name: &str) {
        if ON {
            let at = now();
            self.line
                .push_str(&format!(" {name} {:.2}", at - self.last));
            self.last = at;
        }
    }

    /// The answer's line (`profile: lookup 0.05 before 0.00 …`), in a profiling build.
    pub fn write(self, out: &mut String) {
        if ON {
            let inside = INSIDE.with(|i| i.take());
            let inside: String = inside
                .iter()
                .map(|(name, ms)| format!(" {name} {ms:.2}"))
                .collect();
            out.push_str(&format!("profile:{}{inside}\n", self.line));
        }
    }
}
